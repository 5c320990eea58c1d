#include "collage/cost/cost_oracle.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collage/cost/mock_oracle.hpp"
#include "collage/partitioner.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// x -> dense(x, w) -> bias_add(., b) -> relu -> output, with candidates over it.
struct Fixture {
  ExprGraph ir;
  std::optional<Graph> graph;
  const Expr* dense = nullptr;
  const Expr* bias = nullptr;
  const Expr* relu = nullptr;

  Fixture() {
    auto x = ir.var("x");
    dense = ir.call("dense", {x, ir.constant("w")});
    bias = ir.call("bias_add", {dense, ir.constant("b")});
    relu = ir.call("relu", {bias});
    ir.output(relu);
    auto r = Graph::build(ir);
    EXPECT_TRUE(r.ok());
    graph.emplace(std::move(r).value());
  }
  Candidate candidate(std::initializer_list<const Expr*> nodes, std::string target = "t") const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(graph->index_of(e));
    return Candidate{SubGraph(*graph, s), std::move(target), "rule"};
  }
};

/// Costs a candidate as the number of body nodes, one candidate at a time; counts candidates and
/// batches.
class BodySizeOracle final : public CostOracle<ExprGraph> {
 public:
  std::size_t calls = 0;
  std::size_t batches = 0;

 private:
  std::vector<Result<Measurement>> do_measure_batch(const Graph& g, const std::vector<const Candidate*>& cs) override {
    ++batches;
    return measure_each(g, cs, [&](const Graph&, const Candidate&, const ExtractedFunction& view) {
      ++calls;
      return static_cast<double>(view.body.size());
    });
  }
};

/// Measures a whole batch at once: each candidate as its body size, spread 0.25, 7 samples.
class BodySizeMeter final : public CostOracle<ExprGraph> {
 public:
  std::vector<std::size_t> batch_sizes;

 private:
  std::vector<Result<Measurement>> do_measure_batch(const Graph& g, const std::vector<const Candidate*>& cs) override {
    batch_sizes.push_back(cs.size());
    std::vector<Result<Measurement>> out;
    for (const Candidate* c : cs) {
      out.push_back(make_measurement(static_cast<double>(extract(g, c->sub_graph).body.size()), 0.25, 7));
    }
    return out;
  }
};

TEST(CostOracle, MakeOracleFromCostCallableSeesTheView) {
  Fixture f;
  std::vector<std::size_t> seen_params;
  auto oracle = make_oracle<ExprGraph>("size", [&](const Graph&, const Candidate& c, const ExtractedFunction& v) {
    seen_params = v.params;
    return Cost::value(static_cast<double>(v.body.size()) + (c.target == "t" ? 0.5 : 0.0));
  });
  Candidate c = f.candidate({f.dense, f.bias});
  Result<Cost> cost = oracle->estimate(*f.graph, c);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(*cost, Cost::value(2.5));
  EXPECT_EQ(seen_params.size(), 3u);  // x, w, b
  EXPECT_EQ(oracle->name(), "size");
  EXPECT_EQ(oracle->wrapped(), nullptr);
}

TEST(CostOracle, MakeOracleFromResultCallablePassesErrors) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("picky", [](const Graph&, const Candidate& c, const ExtractedFunction&) {
    return c.target == "ok" ? Result<Cost>(Cost::value(1)) : Result<Cost>(Error{ErrorCode::oracle, "unsupported target"});
  });
  Candidate good = f.candidate({f.relu}, "ok");
  Candidate bad = f.candidate({f.relu}, "nope");
  Result<Cost> a = oracle->estimate(*f.graph, good);
  Result<Cost> b = oracle->estimate(*f.graph, bad);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, Cost::value(1));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "unsupported target");
}

TEST(CostOracle, MakeOracleFromMeasurementCallableKeepsSpread) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("meter", [](const Graph&, const Candidate&, const ExtractedFunction&) {
    return Measurement{Cost::value(3), 0.125, 9};
  });
  Candidate c = f.candidate({f.relu});
  Result<Measurement> m = oracle->measure(*f.graph, c);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->cost, Cost::value(3));
  EXPECT_EQ(m->spread, 0.125);
  EXPECT_EQ(m->samples, 9u);
  Result<Cost> cost = oracle->estimate(*f.graph, c);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(*cost, Cost::value(3));
  std::vector<Result<Measurement>> batch = oracle->measure_batch(*f.graph, {&c, &c});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1]->samples, 9u);
}

TEST(CostOracle, MeasureEachAnswersEachCandidateInOrder) {
  Fixture f;
  BodySizeOracle oracle;
  Candidate one = f.candidate({f.relu});
  Candidate three = f.candidate({f.dense, f.bias, f.relu});
  Candidate two = f.candidate({f.bias, f.relu});
  std::vector<Result<Cost>> costs = oracle.estimate_batch(*f.graph, {&one, &three, &two});
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_EQ(*costs[0], Cost::value(1));
  EXPECT_EQ(*costs[1], Cost::value(3));
  EXPECT_EQ(*costs[2], Cost::value(2));
  EXPECT_EQ(oracle.calls, 3u);
  EXPECT_EQ(oracle.batches, 1u);
  // An empty batch is answered without asking the oracle.
  EXPECT_TRUE(oracle.estimate_batch(*f.graph, {}).empty());
  EXPECT_TRUE(oracle.measure_batch(*f.graph, {}).empty());
  EXPECT_EQ(oracle.batches, 1u);
}

TEST(CostOracle, ANumberIsOneSampleWithoutSpread) {
  Fixture f;
  BodySizeOracle oracle;
  Candidate c = f.candidate({f.bias, f.relu});
  Result<Measurement> m = oracle.measure(*f.graph, c);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->cost, Cost::value(2));
  EXPECT_EQ(m->spread, 0.0);
  EXPECT_EQ(m->samples, 1u);
  EXPECT_EQ(oracle.stats().calls, 0u);  // a plain oracle keeps no counters
}

TEST(CostOracle, EveryHelperGoesThroughTheOneBatchEntryPoint) {
  Fixture f;
  BodySizeMeter meter;
  Candidate a = f.candidate({f.relu});
  Candidate b = f.candidate({f.dense, f.bias});
  std::vector<Result<Cost>> costs = meter.estimate_batch(*f.graph, {&a, &b});
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_EQ(*costs[0], Cost::value(1));
  EXPECT_EQ(*costs[1], Cost::value(2));
  std::vector<Result<Measurement>> ms = meter.measure_batch(*f.graph, {&b});
  EXPECT_EQ(ms[0]->spread, 0.25);
  EXPECT_EQ(ms[0]->samples, 7u);
  EXPECT_EQ(*meter.estimate(*f.graph, b), Cost::value(2));
  EXPECT_EQ(meter.measure(*f.graph, a)->samples, 7u);
  EXPECT_EQ(safe_estimate(meter, *f.graph, a).cost, Cost::value(1));
  EXPECT_EQ(meter.batch_sizes, (std::vector<std::size_t>{2, 1, 1, 1, 1}));
}

TEST(CostOracle, MakeMeasurementChecksTheNumbers) {
  Result<Measurement> known = make_measurement(2.5, 0.5, 3);
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(known->cost, Cost::value(2.5));
  EXPECT_EQ(known->spread, 0.5);
  EXPECT_EQ(known->samples, 3u);
  EXPECT_TRUE(make_measurement(0.0)->cost.is_zero());
  EXPECT_TRUE(make_measurement(std::numeric_limits<double>::infinity())->cost.is_invalid());
  EXPECT_TRUE(make_measurement(1.0, std::numeric_limits<double>::infinity()).ok());  // a spread over a zero median
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {-1.0, -1e-300, nan, -inf}) {
    Result<Measurement> m = make_measurement(bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.error().code, ErrorCode::oracle);
    EXPECT_NE(m.error().message.find("a cost of " + format_double(bad)), std::string::npos) << m.error().message;
  }
  for (double bad : {-0.5, nan}) {
    Result<Measurement> m = make_measurement(1.0, bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.error().message.find("a spread of " + format_double(bad)), std::string::npos) << m.error().message;
  }
}

TEST(CostOracle, SafeEstimateTurnsAnErrorIntoInvalidWithAMessage) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("backend", [](const Graph&, const Candidate&, const ExtractedFunction&) {
    return Result<Cost>(Error{ErrorCode::oracle, "cannot compile"});
  });
  Candidate c = f.candidate({f.relu}, "gpu");
  SafeEstimate e = safe_estimate(*oracle, *f.graph, c);
  EXPECT_TRUE(e.failed());
  EXPECT_TRUE(e.cost.is_invalid());
  EXPECT_NE(e.error.find("backend"), std::string::npos) << e.error;
  EXPECT_NE(e.error.find("cannot compile"), std::string::npos) << e.error;
  EXPECT_NE(e.error.find("gpu:rule:relu"), std::string::npos) << e.error;
}

TEST(CostOracle, SafeEstimateNamesAnErrorWithoutMessage) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("mute", [](const Graph&, const Candidate&, const ExtractedFunction&) {
    return Result<Cost>(Error{ErrorCode::oracle, ""});
  });
  SafeEstimate e = safe_estimate(*oracle, *f.graph, f.candidate({f.relu}));
  EXPECT_TRUE(e.failed());
  EXPECT_TRUE(e.cost.is_invalid());
}

TEST(CostOracle, SafeEstimatePassesKnownUnknownAndInvalidCosts) {
  Fixture f;
  Cost next = Cost::value(4.0);
  auto oracle = make_oracle<ExprGraph>("seq", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
    return next;
  });
  Candidate c = f.candidate({f.relu});
  SafeEstimate known = safe_estimate(*oracle, *f.graph, c);
  EXPECT_FALSE(known.failed());
  EXPECT_EQ(known.cost, Cost::value(4));
  next = Cost::unknown();
  SafeEstimate unknown = safe_estimate(*oracle, *f.graph, c);
  EXPECT_FALSE(unknown.failed());
  EXPECT_TRUE(unknown.cost.is_unknown());
  next = Cost::invalid();
  SafeEstimate invalid = safe_estimate(*oracle, *f.graph, c);
  EXPECT_FALSE(invalid.failed());
  EXPECT_TRUE(invalid.cost.is_invalid());
}

TEST(CostOracle, ANumberThatIsNotACostIsAnOracleErrorNamingIt) {
  Fixture f;
  double next = 0;
  auto oracle = make_oracle<ExprGraph>("model", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
    return next;
  });
  Candidate c = f.candidate({f.relu}, "gpu");
  next = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(safe_estimate(*oracle, *f.graph, c).cost.is_invalid());
  EXPECT_FALSE(safe_estimate(*oracle, *f.graph, c).failed());
  for (double bad : {-0.25, std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    next = bad;
    SafeEstimate e = safe_estimate(*oracle, *f.graph, c);
    EXPECT_TRUE(e.failed()) << bad;
    EXPECT_TRUE(e.cost.is_invalid()) << bad;
    EXPECT_NE(e.error.find("cost oracle 'model'"), std::string::npos) << e.error;
    EXPECT_NE(e.error.find("gpu:rule:relu"), std::string::npos) << e.error;
    EXPECT_NE(e.error.find("a cost of " + format_double(bad)), std::string::npos) << e.error;
    std::vector<SafeEstimate> batch = safe_estimate_batch(*oracle, *f.graph, {&c, &c});
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[1].error, e.error);
  }
}

TEST(CostOracle, ANegativeCostValueIsAnOracleErrorLikeTheNumber) {
  // Cost::value() of a negative number or -inf, answered as a Cost or inside a Measurement, is the
  // same mistake as answering the number: an Error naming the oracle, the candidate and the value.
  Fixture f;
  Cost next = Cost::zero();
  auto as_cost = make_oracle<ExprGraph>("model", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
    return next;
  });
  auto as_measurement = make_oracle<ExprGraph>(
      "model", [&](const Graph&, const Candidate&, const ExtractedFunction&) { return Measurement{next, 0.0, 1}; });
  Candidate c = f.candidate({f.relu}, "gpu");
  for (double bad : {-1.0, -1e-300, -std::numeric_limits<double>::infinity()}) {
    next = Cost::value(bad);
    EXPECT_TRUE(next.is_invalid()) << bad;  // to the search, it stays a cost no candidate can have
    EXPECT_EQ(next.not_a_cost(), std::optional<double>(bad));
    for (CostOracle<ExprGraph>* oracle : {as_cost.get(), as_measurement.get()}) {
      SafeEstimate e = safe_estimate(*oracle, *f.graph, c);
      EXPECT_TRUE(e.failed()) << bad;
      EXPECT_TRUE(e.cost.is_invalid()) << bad;
      EXPECT_NE(e.error.find("cost oracle 'model'"), std::string::npos) << e.error;
      EXPECT_NE(e.error.find("gpu:rule:relu"), std::string::npos) << e.error;
      EXPECT_NE(e.error.find("a cost of " + format_double(bad)), std::string::npos) << e.error;
      Result<Measurement> m = oracle->measure(*f.graph, c);
      ASSERT_FALSE(m.ok()) << bad;
      EXPECT_EQ(m.error().code, ErrorCode::oracle);
    }
  }
  // What the oracle means to say stays silent: Invalid, Unknown, zero.
  for (Cost fine : {Cost::invalid(), Cost::value(std::numeric_limits<double>::infinity()), Cost::unknown(),
                    Cost::value(std::numeric_limits<double>::quiet_NaN()), Cost::value(-0.0), Cost::zero()}) {
    next = fine;
    EXPECT_FALSE(next.not_a_cost().has_value()) << fine;
    SafeEstimate e = safe_estimate(*as_cost, *f.graph, c);
    EXPECT_FALSE(e.failed()) << fine << ": " << e.error;
    EXPECT_EQ(e.cost, fine);
  }
}

TEST(CostOracle, PartitionListsANumberThatIsNotACostInOracleErrors) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  auto g = Graph::build(ir);
  ASSERT_TRUE(g.ok());
  auto every_op = [](const std::string& target) {
    return PartitionSpec<ExprGraph>{
        target, op_predicate<ExprGraph>(target, [](const Graph& gg, std::size_t i) { return gg.needs_kernel(i); })};
  };
  for (double bad : {-2.0, std::numeric_limits<double>::quiet_NaN()}) {
    MockOracle<ExprGraph> oracle({{"a", bad}, {"b", 1.0}});
    Result<PartitionResult> r = partition(*g, {every_op("a"), every_op("b")}, oracle);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->oracle_errors.size(), 1u) << bad;
    EXPECT_NE(r->oracle_errors[0].find("cost oracle '"), std::string::npos) << r->oracle_errors[0];
    EXPECT_NE(r->oracle_errors[0].find("mock"), std::string::npos) << r->oracle_errors[0];
    EXPECT_NE(r->oracle_errors[0].find("a:"), std::string::npos) << r->oracle_errors[0];
    EXPECT_NE(r->oracle_errors[0].find("a cost of " + format_double(bad)), std::string::npos) << r->oracle_errors[0];
    ASSERT_EQ(r->partitioning.parts.size(), 1u);
    EXPECT_EQ(r->partitioning.parts[0].target, "b");
  }
}

TEST(CostOracle, AMeasurementWithABadSpreadFailsItsCandidate) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("noisy", [](const Graph&, const Candidate& c, const ExtractedFunction&) {
    return Measurement{Cost::value(1), c.target == "nan" ? std::numeric_limits<double>::quiet_NaN() : 0.5, 4};
  });
  Candidate good = f.candidate({f.relu}, "ok");
  Candidate bad = f.candidate({f.relu}, "nan");
  std::vector<SafeEstimate> out = safe_estimate_batch(*oracle, *f.graph, {&good, &bad});
  EXPECT_FALSE(out[0].failed());
  EXPECT_TRUE(out[1].failed());
  EXPECT_NE(out[1].error.find("a spread of nan"), std::string::npos) << out[1].error;
}

#if defined(__cpp_exceptions)
TEST(CostOracle, SafeEstimateCatchesExceptions) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("thrower", [](const Graph&, const Candidate&, const ExtractedFunction&) -> Cost {
    throw std::runtime_error("device lost");
  });
  Candidate c = f.candidate({f.relu});
  SafeEstimate e = safe_estimate(*oracle, *f.graph, c);
  EXPECT_TRUE(e.cost.is_invalid());
  EXPECT_NE(e.error.find("device lost"), std::string::npos) << e.error;
  EXPECT_NE(e.error.find("thrower"), std::string::npos) << e.error;

  auto odd = make_oracle<ExprGraph>("odd", [](const Graph&, const Candidate&, const ExtractedFunction&) -> Cost {
    throw 42;
  });
  std::vector<SafeEstimate> batch = safe_estimate_batch(*odd, *f.graph, {&c, &c});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_TRUE(batch[0].cost.is_invalid());
  EXPECT_TRUE(batch[1].failed());
}
#endif

/// An oracle whose batch drops the last answer.
class ShortBatchOracle final : public CostOracle<ExprGraph> {
 public:
  std::string name() const override { return "short"; }

 private:
  std::vector<Result<Measurement>> do_measure_batch(const Graph&, const std::vector<const Candidate*>& cs) override {
    return std::vector<Result<Measurement>>(cs.size() - 1, Measurement{Cost::value(1), 0.0, 1});
  }
};

TEST(CostOracle, BatchOfTheWrongLengthFailsEveryCandidate) {
  Fixture f;
  ShortBatchOracle oracle;
  Candidate a = f.candidate({f.relu});
  Candidate b = f.candidate({f.bias});
  std::vector<SafeEstimate> out = safe_estimate_batch(oracle, *f.graph, {&a, &b});
  ASSERT_EQ(out.size(), 2u);
  for (const SafeEstimate& e : out) {
    EXPECT_TRUE(e.cost.is_invalid());
    EXPECT_NE(e.error.find("returned 1 answers for 2 candidates"), std::string::npos) << e.error;
  }
  std::vector<Result<Measurement>> ms = oracle.measure_batch(*f.graph, {&a, &b});
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_FALSE(ms[0].ok());
  EXPECT_EQ(ms[1].error().code, ErrorCode::oracle);
  Result<Cost> single = oracle.estimate(*f.graph, a);  // no answer at all for one candidate
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.error().message.find("returned 0 answers for 1 candidates"), std::string::npos);
}

TEST(CostOracle, SafeEstimateBatchKeepsOrder) {
  Fixture f;
  BodySizeOracle oracle;
  Candidate a = f.candidate({f.dense, f.bias, f.relu});
  Candidate b = f.candidate({f.relu});
  std::vector<SafeEstimate> out = safe_estimate_batch(oracle, *f.graph, {&a, &b, &a});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].cost, Cost::value(3));
  EXPECT_EQ(out[1].cost, Cost::value(1));
  EXPECT_EQ(out[2].cost, Cost::value(3));
  EXPECT_FALSE(out[1].failed());
}

}  // namespace
}  // namespace collage
