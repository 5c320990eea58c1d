#include "collage/search/evolver.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "common/adjacency_ir.hpp"
#include "common/brute_force.hpp"
#include "common/random_candidates.hpp"
#include "common/random_dag.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;
using Graph = DataflowGraph<AdjacencyGraph>;

/// Whether `items` form a partitioning of `problem`'s graph: disjoint, every node covered (every
/// node of this IR needs a kernel), and acyclic as a quotient graph.
bool is_partitioning(const SearchProblem<AdjacencyGraph>& problem, const std::vector<std::size_t>& items) {
  const std::size_t n = problem.graph().size();
  IndexSet used(n);
  std::vector<IndexSet> parts;
  for (std::size_t id : items) {
    if (problem[id].inside.intersects(used)) return false;
    used |= problem[id].inside;
    parts.push_back(problem[id].inside);
  }
  return used.count() == n && testing_ir::quotient_is_acyclic(problem.graph(), parts);
}

/// Items in the order given, each taken when it is disjoint from those before (a random cover of
/// part of the graph, often complete, sometimes cyclic).
std::vector<std::size_t> random_items(const SearchProblem<AdjacencyGraph>& problem, std::mt19937_64& rng) {
  std::vector<std::size_t> ids(problem.size());
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = k;
  std::shuffle(ids.begin(), ids.end(), rng);
  IndexSet used(problem.graph().size());
  std::vector<std::size_t> items;
  for (std::size_t id : ids) {
    if (problem[id].inside.intersects(used)) continue;
    used |= problem[id].inside;
    items.push_back(id);
  }
  if (!items.empty() && rng() % 8 == 0) items.pop_back();  // now and then one part short
  return items;
}

TEST(Evolver, OrderAcceptsExactlyThePartitioningsInATopologicalOrder) {
  std::mt19937_64 rng(5);
  int valid = 0;
  int invalid = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const AdjacencyGraph ir = testing_ir::random_dag(rng, 5 + rng() % 8, 3, 0);
    auto graph = Graph::build(ir);
    ASSERT_TRUE(graph.ok());
    auto problem = SearchProblem<AdjacencyGraph>::build(*graph, testing_ir::random_candidates(*graph, rng, 2));
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    detail::Evolver<AdjacencyGraph> evolver(*problem, 1);
    const std::vector<std::size_t> items = random_items(*problem, rng);
    const std::optional<std::vector<std::size_t>> order = evolver.order(items);
    ASSERT_EQ(order.has_value(), is_partitioning(*problem, items)) << "trial " << trial;
    if (!order) {
      ++invalid;
      continue;
    }
    ++valid;
    std::vector<std::size_t> sorted = *order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> expected = items;
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(sorted, expected);
    // Each part comes after every part that feeds it.
    std::vector<std::size_t> position(graph->size());
    for (std::size_t k = 0; k < order->size(); ++k) {
      for (std::size_t i : (*problem)[(*order)[k]].inside) position[i] = k;
    }
    for (std::size_t v = 0; v < graph->size(); ++v) {
      for (std::size_t u : graph->inputs(v)) ASSERT_LE(position[u], position[v]) << "trial " << trial;
    }
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(invalid, 50);
}

TEST(Evolver, MovesKeepTheItemsAPartitioningOrSayTheyFailed) {
  // Mutations and crossover may produce invalid individuals (order() then rejects them), but never
  // overlapping ones, and they are deterministic in the seed.
  std::mt19937_64 rng(6);
  int children = 0;
  int valid_children = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const AdjacencyGraph ir = testing_ir::random_dag(rng, 6 + rng() % 8, 3, 0);
    auto graph = Graph::build(ir);
    ASSERT_TRUE(graph.ok());
    auto problem = SearchProblem<AdjacencyGraph>::build(*graph, testing_ir::random_candidates(*graph, rng, 2));
    ASSERT_TRUE(problem.ok());
    detail::Evolver<AdjacencyGraph> evolver(*problem, 42);
    detail::Evolver<AdjacencyGraph> twin(*problem, 42);
    std::vector<std::vector<std::size_t>> population;
    for (int k = 0; k < 4 && population.size() < 2; ++k) {
      if (auto order = evolver.order(random_items(*problem, rng))) population.push_back(*order);
    }
    if (population.size() < 2) continue;
    for (int m = 0; m < 20; ++m) {
      std::vector<std::size_t> child = population[m % 2];
      std::vector<std::size_t> twin_child = child;
      if (m % 4 == 3) {
        child = evolver.crossover(population[0], population[1]);
        twin_child = twin.crossover(population[0], population[1]);
      } else {
        evolver.mutate(child);
        twin.mutate(twin_child);
      }
      ASSERT_EQ(child, twin_child) << "trial " << trial;
      if (child.empty()) continue;
      ++children;
      IndexSet used(graph->size());
      for (std::size_t id : child) {
        ASSERT_FALSE((*problem)[id].inside.intersects(used)) << "trial " << trial;
        used |= (*problem)[id].inside;
      }
      const bool valid = evolver.order(child).has_value();
      ASSERT_EQ(valid, is_partitioning(*problem, child)) << "trial " << trial;
      valid_children += valid ? 1 : 0;
    }
  }
  EXPECT_GT(children, 500);
  EXPECT_GT(valid_children, 300);
}

}  // namespace
}  // namespace collage
