// The partitioner on random graphs and wide joins, with the ready-made specs and the default
// budgets: every searcher answers, soundly, without a budget cutting anything, and exact search is
// never worse than the others (the benchmark of the same sweep is bench/sweep_bench.cpp).

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "collage/partitioner.hpp"
#include "common/random_ops_graph.hpp"
#include "common/sweep_problems.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
namespace sweep = testing_ir::sweep;

constexpr SearchAlgorithm kSearchers[] = {SearchAlgorithm::exact, SearchAlgorithm::beam, SearchAlgorithm::greedy};

/// Partitions `graph` with `specs` by each searcher; checks each answer and returns the costs
/// (exact, beam, greedy).
std::vector<double> partition_by_each(const DataflowGraph<ExprGraph>& graph, const std::vector<PartitionSpec<ExprGraph>>& specs) {
  std::vector<double> totals;
  for (SearchAlgorithm algorithm : kSearchers) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    auto oracle = sweep::sweep_oracle();
    PartitionerOptions options;
    options.algorithm = algorithm;
    auto r = partition(graph, specs, oracle, options);
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return {};
    }
    for (const std::string& warning : r->warnings) ADD_FAILURE() << "a budget cut: " << warning;
    EXPECT_FALSE(r->exact_gave_up);
    EXPECT_EQ(sweep::unsound(graph, r->partitioning), "");
    // Polynomial at a fixed depth on these graphs: far fewer candidates than the budget allows.
    EXPECT_LE(r->candidates.size(), 40 * graph.size());
    totals.push_back(r->partitioning.effective_total.raw());
  }
  return totals;
}

TEST(PartitionerSweep, RandomGraphsOf20To200NodesAnswerSoundlyWithinTheBudgets) {
  std::mt19937_64 rng(2026112701);
  const auto specs = sweep::ready_made_specs();
  std::size_t largest = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Operands from the 5 or 8 latest values, as in the random DAGs (tuples of two or three
    // fields, splits read through projections, constants, every operator kind), or from any
    // earlier value (dense: nodes feed nodes far down the graph).
    const std::size_t steps = 18 + rng() % 168;
    const std::size_t windows[] = {5, 8, 0};
    const ExprGraph ir = testing_ir::random_ops_graph(rng, steps, windows[trial % 3]);
    auto graph = DataflowGraph<ExprGraph>::build(ir);
    ASSERT_TRUE(graph.ok()) << graph.error().message;
    largest = std::max(largest, graph->size());
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(graph->size()) + " nodes");
    const std::vector<double> totals = partition_by_each(*graph, specs);
    ASSERT_EQ(totals.size(), 3u);
    EXPECT_LE(totals[0], totals[1] + 1e-9) << "exact worse than beam";
    EXPECT_LE(totals[0], totals[2] + 1e-9) << "exact worse than greedy";
  }
  EXPECT_GE(largest, 200u);  // the sweep reaches the size it is named for
}

TEST(PartitionerSweep, ChainsJoinedByOneWideTupleAnswerWithinTheBudgets) {
  // 4, 8 and 16 chains joined by concat(tuple(...)): a join that once proposed 590,297 native
  // candidates for 16 chains of 290 nodes.
  for (std::size_t branches : {4, 8, 16}) {
    SCOPED_TRACE(std::to_string(branches) + " chains");
    const ExprGraph ir = sweep::parallel_chains(branches, 290);
    auto graph = DataflowGraph<ExprGraph>::build(ir);
    ASSERT_TRUE(graph.ok()) << graph.error().message;
    const std::vector<double> native = partition_by_each(*graph, sweep::native_only_specs());
    ASSERT_EQ(native.size(), 3u);
    EXPECT_LE(native[0], native[1] + 1e-9);
    EXPECT_LE(native[0], native[2] + 1e-9);
    const std::vector<double> all = partition_by_each(*graph, sweep::ready_made_specs());
    ASSERT_EQ(all.size(), 3u);
    EXPECT_LE(all[0], native[0] + 1e-9) << "more targets cannot cost more";
  }
}

}  // namespace
}  // namespace collage
