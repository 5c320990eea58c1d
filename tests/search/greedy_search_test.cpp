#include "collage/search/greedy_search.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/search/exact_search.hpp"
#include "common/adjacency_ir.hpp"
#include "common/brute_force.hpp"
#include "common/random_candidates.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;

TEST(GreedySearch, AcyclicAndNeverBetterThanExactOnRandomDags) {
  int compared = 0;
  testing_ir::for_each_random_problem(2024, 1000, [&](int trial, const DataflowGraph<AdjacencyGraph>& graph,
                                                      const SearchProblem<AdjacencyGraph>& problem) {
    auto exact = exact_search(problem);
    if (!exact.ok()) return;
    ++compared;
    // Greedy ignores costs; exact is never worse than it.
    auto greedy = greedy_search(problem, {"t0", "t1", "t2", "t3"});
    ASSERT_TRUE(greedy.ok()) << "trial " << trial << ": " << greedy.error().message;
    EXPECT_GE(greedy->effective_total.raw() + 1e-9, exact->effective_total.raw());
    std::vector<IndexSet> greedy_parts;
    for (const Candidate& c : greedy->parts) greedy_parts.push_back(c.sub_graph.inside());
    EXPECT_TRUE(testing_ir::quotient_is_acyclic(graph, greedy_parts));
  });
  EXPECT_EQ(compared, 1000);
}

TEST(GreedySearch, PriorityThenSizeAndNoCyclicClaims) {
  // The crossed pairs a->c, a->d, b->c, b->d: {a, d} and {b, c} are convex but feed each other. The
  // first target claims {a, d} (its largest), must skip {b, c}, and the second target's singletons
  // cover b and c, whatever the costs say.
  AdjacencyGraph ir = testing_ir::crossed_pairs();
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  const std::size_t n = g.size();
  const std::size_t a = g.index_of(0), b = g.index_of(1), c = g.index_of(2), d = g.index_of(3);
  auto candidate = [&](std::initializer_list<std::size_t> nodes, const char* target, double cost) {
    return Candidate{SubGraph(g, IndexSet(n, nodes)), target, "test", Cost::value(cost)};
  };
  std::vector<Candidate> all = {candidate({a, d}, "big", 10), candidate({b, c}, "big", 10),
                                candidate({a}, "small", 1),   candidate({b}, "small", 1),
                                candidate({c}, "small", 1),   candidate({d}, "small", 1)};
  auto problem = SearchProblem<AdjacencyGraph>::build(g, all);
  ASSERT_TRUE(problem.ok());
  auto greedy = greedy_search(*problem, {"big", "small"});
  ASSERT_TRUE(greedy.ok()) << greedy.error().message;
  std::vector<std::string> parts;
  for (const Candidate& part : greedy->parts) parts.push_back(part.target + ":" + part.sub_graph.inside().to_string());
  EXPECT_EQ(parts, (std::vector<std::string>{"small:{" + std::to_string(b) + "}", "big:" + IndexSet(n, {a, d}).to_string(),
                                             "small:{" + std::to_string(c) + "}"}));
  EXPECT_EQ(greedy->total, Cost::value(12));
  EXPECT_EQ(greedy->stats.algorithm, "greedy");
  // With the priorities swapped, the singletons win and the pairs are never claimed.
  auto swapped = greedy_search(*problem, {"small", "big"});
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(swapped->parts.size(), 4u);
  EXPECT_EQ(swapped->total, Cost::value(4));
}

}  // namespace
}  // namespace collage
