#include "collage/search/quotient.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/adjacency_ir.hpp"
#include "common/brute_force.hpp"
#include "common/random_dag.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;

TEST(QuotientOrder, TheCrossedPairsFormACycle) {
  // Parts {a, d} and {b, c}: each part feeds the other.
  AdjacencyGraph ir = testing_ir::crossed_pairs();
  const int a = 0, b = 1, c = 2, d = 3;
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  std::vector<std::size_t> owner(g.size(), npos);
  owner[g.index_of(a)] = owner[g.index_of(d)] = 0;
  owner[g.index_of(b)] = owner[g.index_of(c)] = 1;
  QuotientOrder crossed = quotient_order(g, owner, 2);
  EXPECT_FALSE(crossed.acyclic());
  EXPECT_TRUE(crossed.parts.empty());
  std::vector<std::size_t> cycle = crossed.cycle;
  std::sort(cycle.begin(), cycle.end());
  EXPECT_EQ(cycle, (std::vector<std::size_t>{0, 1}));

  // {a, b} then {c, d}: in order.
  owner[g.index_of(b)] = 0;
  owner[g.index_of(d)] = 1;
  QuotientOrder stacked = quotient_order(g, owner, 2);
  ASSERT_TRUE(stacked.acyclic());
  EXPECT_EQ(stacked.parts, (std::vector<std::size_t>{0, 1}));
}

TEST(QuotientOrder, DependenciesPassThroughNodesInNoPart) {
  // a -> h -> b and a -> c, with h in no part. The part {b, c} comes after {a} (through h);
  // a part {a, b} around h is a cycle with the host node.
  AdjacencyGraph ir;
  int a = ir.add();
  int h = ir.add({a});
  int b = ir.add({h});
  int c = ir.add({a});
  ir.roots = {b, c};
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  std::vector<std::size_t> owner(g.size(), npos);
  owner[g.index_of(b)] = owner[g.index_of(c)] = 0;
  owner[g.index_of(a)] = 1;
  QuotientOrder order = quotient_order(g, owner, 2);
  ASSERT_TRUE(order.acyclic());
  EXPECT_EQ(order.parts, (std::vector<std::size_t>{1, 0}));

  std::fill(owner.begin(), owner.end(), npos);
  owner[g.index_of(a)] = owner[g.index_of(b)] = 0;
  QuotientOrder around = quotient_order(g, owner, 1);
  ASSERT_FALSE(around.acyclic());
  EXPECT_EQ(around.cycle.size(), 2u);  // the part and the host node h
  EXPECT_TRUE(std::find(around.cycle.begin(), around.cycle.end(), 1 + g.index_of(h)) != around.cycle.end());
}

TEST(QuotientOrder, AgreesWithTheBruteForceCheckOnRandomPartitionings) {
  std::mt19937_64 rng(99);
  int cyclic = 0;
  for (int trial = 0; trial < 500; ++trial) {
    AdjacencyGraph ir = testing_ir::random_dag(rng, 4 + rng() % 9, 3, 0);
    auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
    ASSERT_TRUE(graph.ok());
    const std::size_t n = graph->size();
    const std::size_t parts = 1 + rng() % 4;
    std::vector<std::size_t> owner(n);
    std::vector<IndexSet> sets(parts, IndexSet(n));
    for (std::size_t i = 0; i < n; ++i) {
      owner[i] = rng() % (parts + 1);
      if (owner[i] == parts) {
        owner[i] = npos;  // left to the host
      } else {
        sets[owner[i]].add(i);
      }
    }
    QuotientOrder order = quotient_order(*graph, owner, parts);
    const bool expected = testing_ir::quotient_is_acyclic(*graph, sets);
    ASSERT_EQ(order.acyclic(), expected) << "trial " << trial;
    if (!expected) {
      ++cyclic;
      continue;
    }
    // Every part comes after the parts that feed it.
    ASSERT_EQ(order.parts.size(), parts);
    std::vector<std::size_t> position(parts);
    for (std::size_t k = 0; k < parts; ++k) position[order.parts[k]] = k;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (owner[i] == npos || owner[j] == npos || owner[i] == owner[j]) continue;
        if (graph->reaches(i, j)) {
          EXPECT_LT(position[owner[i]], position[owner[j]]) << "trial " << trial;
        }
      }
    }
  }
  EXPECT_GT(cyclic, 50);
}

}  // namespace
}  // namespace collage
