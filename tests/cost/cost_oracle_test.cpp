#include "collage/cost/cost_oracle.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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
    return Candidate{SubGraph(*graph, s), std::move(target), "rule", std::nullopt};
  }
};

/// Costs a candidate as the number of body nodes; counts estimate() calls.
class BodySizeOracle final : public CostOracle<ExprGraph> {
 public:
  Result<Cost> estimate(const Graph&, const Candidate&, const ExtractionView& view) override {
    ++calls;
    return Cost::value(static_cast<double>(view.body.size()));
  }
  std::size_t calls = 0;
};

/// Measures a candidate as its body size, spread 0.25, 7 samples.
class BodySizeMeter final : public MeasuringOracle<ExprGraph> {
 public:
  Result<Measurement> measure(const Graph&, const Candidate&, const ExtractionView& view) override {
    ++calls;
    return Measurement{Cost::value(static_cast<double>(view.body.size())), 0.25, 7};
  }
  std::size_t calls = 0;
};

TEST(CostOracle, MakeOracleFromCostCallableSeesTheView) {
  Fixture f;
  std::vector<std::size_t> seen_params;
  auto oracle = make_oracle<ExprGraph>("size", [&](const Graph&, const Candidate& c, const ExtractionView& v) {
    seen_params = v.params;
    return Cost::value(static_cast<double>(v.body.size()) + (c.target == "t" ? 0.5 : 0.0));
  });
  Candidate c = f.candidate({f.dense, f.bias});
  Result<Cost> cost = oracle->estimate(*f.graph, c, extract(*f.graph, c.sub_graph));
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(*cost, Cost::value(2.5));
  EXPECT_EQ(seen_params.size(), 3u);  // x, w, b
  EXPECT_EQ(oracle->name(), "size");
  EXPECT_EQ(oracle->wrapped(), nullptr);
}

TEST(CostOracle, MakeOracleFromResultCallablePassesErrors) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("picky", [](const Graph&, const Candidate& c, const ExtractionView&) {
    return c.target == "ok" ? Result<Cost>(Cost::value(1)) : Result<Cost>(Error{ErrorCode::oracle, "unsupported target"});
  });
  Candidate good = f.candidate({f.relu}, "ok");
  Candidate bad = f.candidate({f.relu}, "nope");
  Result<Cost> a = oracle->estimate(*f.graph, good, extract(*f.graph, good.sub_graph));
  Result<Cost> b = oracle->estimate(*f.graph, bad, extract(*f.graph, bad.sub_graph));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, Cost::value(1));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "unsupported target");
}

TEST(CostOracle, MakeOracleFromMeasurementCallableKeepsSpread) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("meter", [](const Graph&, const Candidate&, const ExtractionView&) {
    return Measurement{Cost::value(3), 0.125, 9};
  });
  Candidate c = f.candidate({f.relu});
  Result<Measurement> m = oracle->measure(*f.graph, c, extract(*f.graph, c.sub_graph));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->cost, Cost::value(3));
  EXPECT_EQ(m->spread, 0.125);
  EXPECT_EQ(m->samples, 9u);
  Result<Cost> cost = oracle->estimate(*f.graph, c, extract(*f.graph, c.sub_graph));
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(*cost, Cost::value(3));
  std::vector<Result<Measurement>> batch = oracle->measure_batch(*f.graph, {&c, &c});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1]->samples, 9u);
}

TEST(CostOracle, DefaultBatchEstimatesEachCandidateInOrder) {
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
  EXPECT_TRUE(oracle.estimate_batch(*f.graph, {}).empty());
}

TEST(CostOracle, DefaultMeasureIsOneSampleWithoutSpread) {
  Fixture f;
  BodySizeOracle oracle;
  Candidate c = f.candidate({f.bias, f.relu});
  std::vector<Result<Measurement>> ms = oracle.measure_batch(*f.graph, {&c});
  ASSERT_EQ(ms.size(), 1u);
  ASSERT_TRUE(ms[0].ok());
  EXPECT_EQ(ms[0]->cost, Cost::value(2));
  EXPECT_EQ(ms[0]->spread, 0.0);
  EXPECT_EQ(ms[0]->samples, 1u);
  EXPECT_EQ(oracle.stats().calls, 0u);  // a plain oracle keeps no counters
}

TEST(CostOracle, MeasuringOracleDerivesEstimatesFromMeasure) {
  Fixture f;
  BodySizeMeter meter;
  Candidate a = f.candidate({f.relu});
  Candidate b = f.candidate({f.dense, f.bias});
  std::vector<Result<Cost>> costs = meter.estimate_batch(*f.graph, {&a, &b});
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_EQ(*costs[0], Cost::value(1));
  EXPECT_EQ(*costs[1], Cost::value(2));
  EXPECT_EQ(meter.calls, 2u);
  std::vector<Result<Measurement>> ms = meter.measure_batch(*f.graph, {&b});
  EXPECT_EQ(ms[0]->spread, 0.25);
  EXPECT_EQ(ms[0]->samples, 7u);
}

TEST(CostOracle, SafeEstimateTurnsAnErrorIntoInvalidWithAMessage) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("backend", [](const Graph&, const Candidate&, const ExtractionView&) {
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
  auto oracle = make_oracle<ExprGraph>("mute", [](const Graph&, const Candidate&, const ExtractionView&) {
    return Result<Cost>(Error{ErrorCode::oracle, ""});
  });
  SafeEstimate e = safe_estimate(*oracle, *f.graph, f.candidate({f.relu}));
  EXPECT_TRUE(e.failed());
  EXPECT_TRUE(e.cost.is_invalid());
}

TEST(CostOracle, SafeEstimatePassesKnownUnknownAndInvalidCosts) {
  Fixture f;
  double next = 4.0;
  auto oracle = make_oracle<ExprGraph>("seq", [&](const Graph&, const Candidate&, const ExtractionView&) {
    return Cost::value(next);
  });
  Candidate c = f.candidate({f.relu});
  SafeEstimate known = safe_estimate(*oracle, *f.graph, c);
  EXPECT_FALSE(known.failed());
  EXPECT_EQ(known.cost, Cost::value(4));
  next = std::numeric_limits<double>::quiet_NaN();
  SafeEstimate unknown = safe_estimate(*oracle, *f.graph, c);
  EXPECT_FALSE(unknown.failed());
  EXPECT_TRUE(unknown.cost.is_unknown());
  next = std::numeric_limits<double>::infinity();
  SafeEstimate invalid = safe_estimate(*oracle, *f.graph, c);
  EXPECT_FALSE(invalid.failed());
  EXPECT_TRUE(invalid.cost.is_invalid());
}

#if defined(__cpp_exceptions)
TEST(CostOracle, SafeEstimateCatchesExceptions) {
  Fixture f;
  auto oracle = make_oracle<ExprGraph>("thrower", [](const Graph&, const Candidate&, const ExtractionView&) -> Cost {
    throw std::runtime_error("device lost");
  });
  Candidate c = f.candidate({f.relu});
  SafeEstimate e = safe_estimate(*oracle, *f.graph, c);
  EXPECT_TRUE(e.cost.is_invalid());
  EXPECT_NE(e.error.find("device lost"), std::string::npos) << e.error;
  EXPECT_NE(e.error.find("thrower"), std::string::npos) << e.error;

  auto odd = make_oracle<ExprGraph>("odd", [](const Graph&, const Candidate&, const ExtractionView&) -> Cost {
    throw 42;
  });
  std::vector<SafeEstimate> batch = safe_estimate_batch(*odd, *f.graph, {&c, &c});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_TRUE(batch[0].cost.is_invalid());
  EXPECT_TRUE(batch[1].failed());
}
#endif

/// An oracle whose batch form drops the last answer.
class ShortBatchOracle final : public CostOracle<ExprGraph> {
 public:
  Result<Cost> estimate(const Graph&, const Candidate&, const ExtractionView&) override { return Cost::value(1); }
  std::vector<Result<Cost>> estimate_batch(const Graph& g, const std::vector<const Candidate*>& cs) override {
    std::vector<Result<Cost>> out = CostOracle::estimate_batch(g, cs);
    out.pop_back();
    return out;
  }
  std::string name() const override { return "short"; }
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
  EXPECT_TRUE(ms[0].ok());
  EXPECT_FALSE(ms[1].ok());
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
