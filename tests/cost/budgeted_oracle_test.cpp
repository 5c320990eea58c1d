#include "collage/cost/budgeted_oracle.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "collage/cost/caching_oracle.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// A chain x -> op_0 -> op_1 -> ... of distinct ops, one single-op candidate per op.
struct Chain {
  ExprGraph ir;
  std::optional<Graph> graph;
  std::vector<Candidate> candidates;

  explicit Chain(int n) {
    const Expr* h = ir.var("x");
    std::vector<const Expr*> ops;
    for (int k = 0; k < n; ++k) {
      h = ir.call("op" + std::to_string(k), {h});
      ops.push_back(h);
    }
    ir.output(h);
    auto built = Graph::build(ir);
    EXPECT_TRUE(built.ok());
    graph.emplace(std::move(built).value());
    for (const Expr* e : ops) {
      IndexSet s(graph->size());
      s.add(graph->index_of(e));
      candidates.push_back(Candidate{SubGraph(*graph, s), "t", "rule"});
    }
  }
  std::vector<const Candidate*> pointers() const {
    std::vector<const Candidate*> out;
    for (const Candidate& c : candidates) out.push_back(&c);
    return out;
  }
};

/// Costs a candidate as 1 + its first index; records calls and batch sizes, and can advance a
/// fake clock per call.
class CountingOracle final : public CostOracle<ExprGraph> {
 public:
  std::string name() const override { return "counting"; }
  std::size_t calls = 0;
  std::vector<std::size_t> batch_sizes;
  double* clock = nullptr;
  double seconds_per_call = 1.0;

 private:
  std::vector<Result<Measurement>> do_measure_batch(const Graph& g, const std::vector<const Candidate*>& cs) override {
    batch_sizes.push_back(cs.size());
    return measure_each(g, cs, [&](const Graph&, const Candidate& c, const ExtractedFunction&) {
      ++calls;
      if (clock != nullptr) *clock += seconds_per_call;
      return 1.0 + static_cast<double>(c.sub_graph.first_inside());
    });
  }
};

TEST(BudgetedOracle, RefusesOnceTheCallBudgetIsSpent) {
  Chain f(5);
  CountingOracle inner;
  BudgetedOracle<ExprGraph> oracle(inner, OracleBudget{3, 0});
  std::vector<Cost> costs;
  for (const Candidate& c : f.candidates) costs.push_back(safe_estimate(oracle, *f.graph, c).cost);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_TRUE(costs[k].is_known()) << k;
  EXPECT_TRUE(costs[3].is_unknown());
  EXPECT_TRUE(costs[4].is_unknown());
  EXPECT_EQ(inner.calls, 3u);
  EXPECT_TRUE(oracle.exhausted());
  EXPECT_EQ(oracle.calls_used(), 3u);
  OracleStats s = oracle.stats();
  EXPECT_EQ(s.calls, 5u);
  EXPECT_EQ(s.budget_refusals, 2u);
  EXPECT_EQ(s.backend_calls, 3u);
  EXPECT_EQ(oracle.name(), "budgeted(counting)");
}

TEST(BudgetedOracle, BatchIsCutToTheCallsLeft) {
  Chain f(6);
  CountingOracle inner;
  BudgetedOracle<ExprGraph> oracle(inner, OracleBudget{4, 0});
  oracle.set_chunk_size(0);  // whole batches
  std::vector<Result<Cost>> costs = oracle.estimate_batch(*f.graph, f.pointers());
  ASSERT_EQ(costs.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) {
    ASSERT_TRUE(costs[k].ok());
    EXPECT_EQ(costs[k]->is_known(), k < 4) << k;
  }
  EXPECT_EQ(inner.batch_sizes, std::vector<std::size_t>{4});
  EXPECT_EQ(oracle.stats().budget_refusals, 2u);
  // Refused estimates carry no samples.
  std::vector<Result<Measurement>> ms = oracle.measure_batch(*f.graph, {&f.candidates[0]});
  EXPECT_TRUE(ms[0]->cost.is_unknown());
  EXPECT_EQ(ms[0]->samples, 0u);
  EXPECT_EQ(inner.batch_sizes, std::vector<std::size_t>{4});
}

TEST(BudgetedOracle, RefusesOnceTheTimeBudgetIsSpent) {
  Chain f(6);
  double now = 100.0;
  CountingOracle inner;
  inner.clock = &now;
  inner.seconds_per_call = 1.0;
  BudgetedOracle<ExprGraph> oracle(inner, OracleBudget{0, 2.5});
  oracle.set_clock([&] { return now; });
  EXPECT_EQ(oracle.seconds_used(), 0.0);
  std::vector<Result<Cost>> costs = oracle.estimate_batch(*f.graph, f.pointers());
  // Calls start at 0, 1 and 2 seconds; at 3 seconds the budget is spent.
  EXPECT_EQ(inner.calls, 3u);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(costs[k]->is_known(), k < 3) << k;
  EXPECT_EQ(oracle.seconds_used(), 3.0);
  EXPECT_EQ(oracle.stats().budget_refusals, 3u);
  // A fresh budget starts a new clock.
  oracle.reset();
  EXPECT_FALSE(oracle.exhausted());
  EXPECT_TRUE(safe_estimate(oracle, *f.graph, f.candidates[5]).cost.is_known());
  EXPECT_EQ(inner.calls, 4u);
}

TEST(BudgetedOracle, ReportsProgressPerChunk) {
  Chain f(4);
  CountingOracle inner;
  std::vector<std::tuple<std::string, std::size_t, std::size_t>> seen;
  auto record = [&](std::string_view phase, std::size_t done, std::size_t total) {
    seen.emplace_back(std::string(phase), done, total);
  };
  BudgetedOracle<ExprGraph> oracle(inner, OracleBudget{}, record);
  std::vector<Result<Cost>> costs = oracle.estimate_batch(*f.graph, f.pointers());
  using P = std::tuple<std::string, std::size_t, std::size_t>;
  EXPECT_EQ(seen, (std::vector<P>{{"estimate", 0, 4}, {"estimate", 1, 4}, {"estimate", 2, 4}, {"estimate", 3, 4},
                                  {"estimate", 4, 4}}));
  EXPECT_EQ(inner.batch_sizes, (std::vector<std::size_t>{1, 1, 1, 1}));
  EXPECT_EQ(*costs[2], Cost::value(1.0 + static_cast<double>(f.candidates[2].sub_graph.first_inside())));

  seen.clear();
  oracle.set_chunk_size(3);
  (void)oracle.estimate_batch(*f.graph, f.pointers());
  EXPECT_EQ(seen, (std::vector<P>{{"estimate", 0, 4}, {"estimate", 3, 4}, {"estimate", 4, 4}}));
  EXPECT_EQ(inner.batch_sizes, (std::vector<std::size_t>{1, 1, 1, 1, 3, 1}));
}

TEST(BudgetedOracle, ProgressJumpsToTheEndWhenTheBudgetRunsOut) {
  Chain f(5);
  CountingOracle inner;
  std::vector<std::size_t> done_seen;
  BudgetedOracle<ExprGraph> oracle(inner, OracleBudget{2, 0},
                                   [&](std::string_view, std::size_t done, std::size_t) { done_seen.push_back(done); });
  (void)oracle.estimate_batch(*f.graph, f.pointers());
  EXPECT_EQ(done_seen, (std::vector<std::size_t>{0, 1, 2, 5}));
}

TEST(BudgetedOracle, ErrorsPassThroughAndAreCounted) {
  Chain f(3);
  std::size_t calls = 0;
  auto failing = make_oracle<ExprGraph>("failing", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
    ++calls;
    return Result<Cost>(Error{ErrorCode::oracle, "out of device memory"});
  });
  BudgetedOracle<ExprGraph> oracle(std::move(failing), OracleBudget{10, 0});
  SafeEstimate single = safe_estimate(oracle, *f.graph, f.candidates[0]);
  EXPECT_TRUE(single.cost.is_invalid());
  EXPECT_NE(single.error.find("out of device memory"), std::string::npos) << single.error;
  std::vector<SafeEstimate> batch = safe_estimate_batch(oracle, *f.graph, f.pointers());
  for (const SafeEstimate& e : batch) EXPECT_TRUE(e.failed());
  EXPECT_EQ(calls, 4u);
  EXPECT_EQ(oracle.stats().errors, 4u);
  EXPECT_EQ(oracle.calls_used(), 4u);  // failed calls use the budget too
}

#if defined(__cpp_exceptions)
TEST(BudgetedOracle, ExceptionsBecomeErrors) {
  Chain f(3);
  auto throwing = make_oracle<ExprGraph>("throwing", [](const Graph&, const Candidate&, const ExtractedFunction&) -> Cost {
    throw std::runtime_error("driver crashed");
  });
  BudgetedOracle<ExprGraph> oracle(*throwing, OracleBudget{});
  oracle.set_chunk_size(0);
  std::vector<Result<Cost>> costs = oracle.estimate_batch(*f.graph, f.pointers());
  ASSERT_EQ(costs.size(), 3u);
  for (const Result<Cost>& c : costs) {
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("driver crashed"), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find("throwing"), std::string::npos) << c.error().message;
  }
  Result<Cost> single = oracle.estimate(*f.graph, f.candidates[0]);
  EXPECT_FALSE(single.ok());
  EXPECT_EQ(oracle.stats().errors, 4u);
  EXPECT_TRUE(safe_estimate(oracle, *f.graph, f.candidates[1]).cost.is_invalid());
}
#endif

/// Twelve identical relu nodes (one structural key) and a singleton candidate of each.
struct TwelveRelus {
  ExprGraph ir;
  std::optional<Graph> graph;
  std::vector<Candidate> candidates;
  std::vector<const Candidate*> pointers;

  TwelveRelus() {
    const Expr* x = ir.var("x");
    std::vector<const Expr*> relus;
    for (int k = 0; k < 12; ++k) relus.push_back(ir.call("relu", {x}));
    ir.output(ir.tuple(relus));
    auto built = Graph::build(ir);
    EXPECT_TRUE(built.ok());
    graph.emplace(std::move(built).value());
    for (const Expr* r : relus) {
      IndexSet s(graph->size());
      s.add(graph->index_of(r));
      candidates.push_back(Candidate{SubGraph(*graph, s), "t", "rule"});
    }
    for (const Candidate& c : candidates) pointers.push_back(&c);
  }
};

TEST(BudgetedOracle, OverACacheAnswersWithoutTheBackendAreFree) {
  // The budget sits above the cache (as partition() puts it above a caller's database): only the
  // one candidate that reaches the backend uses it, so the other eleven are answered too.
  TwelveRelus f;
  CountingOracle inner;
  CachingOracle<ExprGraph> cache(inner);
  BudgetedOracle<ExprGraph> budgeted(cache, OracleBudget{2, 0});
  std::vector<SafeEstimate> out = safe_estimate_batch(budgeted, *f.graph, f.pointers);
  for (const SafeEstimate& e : out) EXPECT_TRUE(e.cost.is_known());
  EXPECT_EQ(inner.calls, 1u);
  EXPECT_EQ(budgeted.calls_used(), 1u);
  EXPECT_EQ(budgeted.stats().budget_refusals, 0u);
}

TEST(BudgetedOracle, UnderACacheTheBudgetCountsOnlyMisses) {
  TwelveRelus f;
  CountingOracle inner;
  BudgetedOracle<ExprGraph> budgeted(inner, OracleBudget{1, 0});
  CachingOracle<ExprGraph> cache(budgeted);
  std::vector<SafeEstimate> out = safe_estimate_batch(cache, *f.graph, f.pointers);
  for (const SafeEstimate& e : out) EXPECT_TRUE(e.cost.is_known());
  OracleStats s = cache.stats();
  EXPECT_EQ(s.calls, 12u);
  EXPECT_EQ(s.cache_hits, 11u);
  EXPECT_EQ(s.cache_misses, 1u);
  EXPECT_EQ(s.budget_refusals, 0u);
  EXPECT_EQ(s.backend_calls, 1u);
  EXPECT_EQ(inner.calls, 1u);
  EXPECT_EQ(cache.name(), "caching(budgeted(counting))");
  EXPECT_EQ(cache.wrapped(), &budgeted);
  EXPECT_EQ(budgeted.wrapped(), &inner);
}

TEST(BudgetedOracle, ASpentBudgetStillServesWhatTheCacheBelowKnows) {
  // As partition() stacks it over a caller's cache or database: once the budget is spent, the
  // answers below it that cost no measurement still come back, and only the rest are Unknown.
  Chain f(6);
  CountingOracle inner;
  CachingOracle<ExprGraph> cache(inner);
  const std::vector<const Candidate*> all = f.pointers();
  const std::vector<const Candidate*> first_three(all.begin(), all.begin() + 3);
  for (const SafeEstimate& e : safe_estimate_batch(cache, *f.graph, first_three)) EXPECT_TRUE(e.cost.is_known());
  BudgetedOracle<ExprGraph> budgeted(cache, OracleBudget{1, 0});
  budgeted.set_chunk_size(1);
  // Candidate 3 is measured (the one call allowed); then 0-2 come from the cache, 4-5 are refused.
  std::vector<const Candidate*> order{&f.candidates[3], &f.candidates[0], &f.candidates[4], &f.candidates[1],
                                      &f.candidates[5], &f.candidates[2]};
  std::vector<SafeEstimate> out = safe_estimate_batch(budgeted, *f.graph, order);
  ASSERT_EQ(out.size(), 6u);
  const std::vector<bool> known{true, true, false, true, false, true};
  for (std::size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(out[k].cost.is_known(), known[k]) << k;
    if (known[k]) {
      EXPECT_EQ(out[k].cost.raw(), 1.0 + static_cast<double>(order[k]->sub_graph.first_inside())) << k;
    }
  }
  EXPECT_EQ(inner.calls, 4u);
  EXPECT_EQ(budgeted.stats().budget_refusals, 2u);
  // Without a cache below, a spent budget knows nothing.
  CountingOracle bare;
  BudgetedOracle<ExprGraph> alone(bare, OracleBudget{1, 0});
  std::vector<SafeEstimate> cold = safe_estimate_batch(alone, *f.graph, all);
  EXPECT_TRUE(cold[0].cost.is_known());
  for (std::size_t k = 1; k < cold.size(); ++k) EXPECT_TRUE(cold[k].cost.is_unknown()) << k;
  EXPECT_EQ(bare.calls, 1u);
}

}  // namespace
}  // namespace collage
