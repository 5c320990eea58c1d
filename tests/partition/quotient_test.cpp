#include "collage/partition/quotient.hpp"

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

TEST(QuotientCycleCheck, TheCrossedPairsCloseACycle) {
  // With {a, d} a part, {b, c} closes a cycle although both are convex; {b} alone does not, nor
  // does {b, c} when the part is {a} alone.
  AdjacencyGraph ir = testing_ir::crossed_pairs();
  const int a = 0, b = 1, c = 2, d = 3;
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  const std::size_t n = g.size();
  std::vector<std::size_t> owner(n, npos);
  owner[g.index_of(a)] = owner[g.index_of(d)] = 0;
  std::vector<SubGraph> parts{SubGraph(g, IndexSet(n, {g.index_of(a), g.index_of(d)}))};
  auto sub_graph_of = [&](std::size_t p) -> const SubGraph& { return parts[p]; };
  QuotientCycleCheck check;
  EXPECT_TRUE(check.closes_cycle(g, SubGraph(g, IndexSet(n, {g.index_of(b), g.index_of(c)})), owner, 1, sub_graph_of));
  EXPECT_FALSE(check.closes_cycle(g, SubGraph(g, IndexSet(n, {g.index_of(b)})), owner, 1, sub_graph_of));
  parts[0] = SubGraph(g, IndexSet(n, {g.index_of(a)}));
  owner[g.index_of(d)] = npos;
  EXPECT_FALSE(check.closes_cycle(g, SubGraph(g, IndexSet(n, {g.index_of(b), g.index_of(c)})), owner, 1, sub_graph_of));
}

TEST(QuotientCycleCheck, AgreesWithTheBruteForceCheckOnRandomPartitionings) {
  // Random acyclic partial partitionings and a random region of free nodes, sometimes together with
  // a whole part it absorbs (still listed as that part's in `owner`, as when regions merge).
  std::mt19937_64 rng(7);
  QuotientCycleCheck check;  // one check across all trials: its scratch must not leak between calls
  int cycles = 0;
  int compared = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    AdjacencyGraph ir = testing_ir::random_dag(rng, 4 + rng() % 12, 3, 0);
    auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
    ASSERT_TRUE(graph.ok());
    const auto& g = *graph;
    const std::size_t n = g.size();
    const std::size_t part_count = 1 + rng() % 3;
    std::vector<std::size_t> owner(n, npos);
    std::vector<IndexSet> sets(part_count, IndexSet(n));
    IndexSet joined(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = rng() % (part_count + 2);
      if (r < part_count) {
        owner[i] = r;
        sets[r].add(i);
      } else if (r == part_count) {
        joined.add(i);
      }
    }
    if (joined.empty() || !testing_ir::quotient_is_acyclic(g, sets)) continue;
    std::vector<IndexSet> after;
    std::vector<SubGraph> parts;
    const std::size_t absorbed = rng() % 2 == 0 ? rng() % part_count : npos;
    for (std::size_t p = 0; p < part_count; ++p) {
      parts.emplace_back(g, sets[p]);
      if (p == absorbed) {
        joined |= sets[p];
      } else {
        after.push_back(sets[p]);
      }
    }
    after.push_back(joined);
    const bool expected = !testing_ir::quotient_is_acyclic(g, after);
    const bool got = check.closes_cycle(g, SubGraph(g, joined), owner, part_count,
                                        [&](std::size_t p) -> const SubGraph& { return parts[p]; });
    ASSERT_EQ(got, expected) << "trial " << trial << ": joined " << joined;
    cycles += expected ? 1 : 0;
    ++compared;
  }
  EXPECT_GT(compared, 800);
  EXPECT_GT(cycles, 150);
  EXPECT_LT(cycles, compared - 150);
}

}  // namespace
}  // namespace collage
