#include "collage/partition/valid_superset.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "collage/partition/sub_graph.hpp"
#include "common/expr_ir.hpp"
#include "common/random_ops_graph.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// The rules' fixture (an IR, its graph) with the two questions these tests ask of a set of nodes.
struct Fixture : testing_ir::RulesFixture {
  bool may_grow_valid(std::initializer_list<const Expr*> nodes, const SubGraphConfig& config) const {
    return ValidSupersetTest<ExprGraph>(*graph, config).may_grow_valid(set(nodes));
  }
  Validity check(std::initializer_list<const Expr*> nodes, const SubGraphConfig& config) const {
    return SubGraph(*graph, set(nodes)).check(*graph, config);
  }
};

SubGraphConfig kernel(std::size_t depth) { return SubGraphConfig{1, false, depth}; }

TEST(ValidSuperset, ATapTakesInThePathsToWhatItFeeds) {
  // a feeds b, and through c1 -> c2 -> c3 also d: a kernel holding a and b holds c1 and d (a is
  // no exit), so the path a, c1, c2, c3, d of five nodes.
  Fixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("tanh", {a});
  auto c1 = f.ir.call("relu", {a});
  auto c2 = f.ir.call("tanh", {c1});
  auto c3 = f.ir.call("relu", {c2});
  auto d = f.ir.call("add", {a, c3});
  auto out = f.ir.call("add", {b, d});
  f.ir.output(out);
  f.build();
  EXPECT_FALSE(f.may_grow_valid({a, b}, kernel(4)));
  EXPECT_EQ(f.check({a, b, c1, c2, c3, d, out}, kernel(6)), Validity::valid);
  EXPECT_TRUE(f.may_grow_valid({a, b}, kernel(6)));
  // With taps allowed {a, b} is a kernel of its own; without a depth bound nothing is too deep.
  EXPECT_EQ(f.check({a, b}, SubGraphConfig{2, true, 2}), Validity::valid);
  EXPECT_TRUE(f.may_grow_valid({a, b}, SubGraphConfig{2, true, 2}));
  EXPECT_TRUE(f.may_grow_valid({a, b}, kernel(0)));
}

TEST(ValidSuperset, AResultStaysAnExit) {
  Fixture f;
  auto x = f.ir.var("x");
  auto p = f.ir.call("relu", {x});
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("tanh", {a});
  f.ir.output(p);
  f.ir.output(f.ir.call("add", {b, p}));
  f.ir.output(a);
  f.build();
  ASSERT_LT(f.at(p), f.at(b));
  // a is a result that feeds b: without taps no kernel holds both, at any depth.
  EXPECT_FALSE(f.may_grow_valid({a, b}, kernel(0)));
  EXPECT_TRUE(f.may_grow_valid({a, b}, SubGraphConfig{2, true, 0}));
  // a and p are both results: one exit is too few.
  EXPECT_FALSE(f.may_grow_valid({a, p}, kernel(0)));
  EXPECT_TRUE(f.may_grow_valid({a, p}, SubGraphConfig{2, false, 0}));
  // With one exit, every node reaches it, so it is the last node or beyond: p (a result) comes
  // before b, so it cannot be.
  EXPECT_FALSE(f.may_grow_valid({p, b}, kernel(0)));
  EXPECT_TRUE(f.may_grow_valid({p, b}, SubGraphConfig{2, false, 0}));
}

TEST(ValidSuperset, OtherExitsFeedOnlyTheKernel) {
  // p and q feed r; p also feeds s, which feeds r. With one exit, p's consumer s is inside.
  Fixture f;
  auto x = f.ir.var("x");
  auto p = f.ir.call("relu", {x});
  auto q = f.ir.call("tanh", {x});
  auto s = f.ir.call("relu", {p});
  auto t = f.ir.tuple({p, q, s});
  auto r = f.ir.call("concat", {t});
  f.ir.output(r);
  f.build();
  const auto pi = f.at(p);
  const auto qi = f.at(q);
  ASSERT_LT(pi, qi);  // p is not the last node of {p, q}
  // A kernel with p and q holds s and the tuple (p is not its exit): p, s, tuple is 3 deep.
  EXPECT_FALSE(f.may_grow_valid({p, q}, kernel(2)));
  EXPECT_EQ(f.check({p, q, s, t, r}, kernel(4)), Validity::valid);
  EXPECT_TRUE(f.may_grow_valid({p, q}, kernel(4)));
  // Both may stay exits: nothing is forced in.
  EXPECT_TRUE(f.may_grow_valid({p, q}, SubGraphConfig{2, false, 1}));
}

TEST(ValidSuperset, OperatorsOfConstantsAloneDoNotDeepen) {
  // k1 and k2 derive from a constant only: inside a kernel that holds the constant they add no
  // depth, so {c, k1, k2, a} is one deep, and a set holding k1 and a may grow into it.
  Fixture f;
  auto x = f.ir.var("x");
  auto c = f.ir.constant("c");
  auto k1 = f.ir.call("relu", {c});
  auto k2 = f.ir.call("tanh", {k1});
  auto a = f.ir.call("add", {x, k2});
  f.ir.output(f.ir.call("relu", {a}));
  f.build();
  EXPECT_EQ(f.check({c, k1, k2, a}, kernel(1)), Validity::valid);
  EXPECT_TRUE(f.may_grow_valid({k1, a}, kernel(1)));
}

TEST(ValidSuperset, OneExitPostDominatesTheSetAndHoldsEveryPathToIt) {
  // a feeds two chains, b1 -> b2 -> b3 -> b4 and c1, which meet at m. No path runs between b1 and
  // c1, but a kernel with one exit that holds both holds everything up to m, where both chains
  // end: b1, b2, b3, b4, m is five deep.
  Fixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b1 = f.ir.call("relu", {a});
  auto b2 = f.ir.call("tanh", {b1});
  auto b3 = f.ir.call("relu", {b2});
  auto b4 = f.ir.call("tanh", {b3});
  auto c1 = f.ir.call("tanh", {a});
  auto m = f.ir.call("add", {b4, c1});
  f.ir.output(f.ir.call("relu", {m}));
  f.build();
  ASSERT_LT(f.at(b1), f.at(c1));  // so c1 is the set's last node, and only b1's consumer is forced in
  EXPECT_FALSE(f.may_grow_valid({b1, c1}, kernel(4)));
  EXPECT_EQ(f.check({b1, b2, b3, b4, c1, m}, kernel(5)), Validity::valid);
  EXPECT_TRUE(f.may_grow_valid({b1, c1}, kernel(5)));
  // Two exits need not meet.
  EXPECT_TRUE(f.may_grow_valid({b1, c1}, SubGraphConfig{2, false, 2}));
}

TEST(ValidSuperset, OneExitNeedsANodeThatPostDominatesTheSet) {
  // p and q each reach a result of their own: every kernel with one exit that holds both would
  // need a node on every path from each to the results, and there is none (at any depth).
  Fixture f;
  auto x = f.ir.var("x");
  auto p = f.ir.call("relu", {x});
  auto q = f.ir.call("tanh", {x});
  f.ir.output(f.ir.call("relu", {p}));
  f.ir.output(f.ir.call("tanh", {q}));
  f.build();
  EXPECT_FALSE(f.may_grow_valid({p, q}, kernel(0)));
  EXPECT_TRUE(f.may_grow_valid({p, q}, SubGraphConfig{2, false, 0}));
  EXPECT_TRUE(f.may_grow_valid({p}, kernel(1)));
}

/// Every set of nodes of `graph` (small enough to list) that some valid sub-graph contains must be
/// let through; returns how many of the others were ruled out.
std::size_t check_every_set(const Graph& graph, const SubGraphConfig& config, std::size_t* sets_outside) {
  const std::size_t n = graph.size();
  std::vector<IndexSet> valid;
  std::vector<IndexSet> all;
  for (std::uint32_t bits = 1; bits < (std::uint32_t{1} << n); ++bits) {
    IndexSet s(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (bits >> i & 1) s.add(i);
    }
    if (SubGraph(graph, s).is_valid(graph, config)) valid.push_back(s);
    all.push_back(std::move(s));
  }
  ValidSupersetTest<ExprGraph> test(graph, config);
  std::size_t ruled_out = 0;
  for (const IndexSet& x : all) {
    const bool inside_valid = std::any_of(valid.begin(), valid.end(), [&](const IndexSet& s) { return x.is_subset_of(s); });
    const bool let_through = test.may_grow_valid(x);
    if (inside_valid) {
      EXPECT_TRUE(let_through) << x.to_string() << " lies in a valid sub-graph, config " << to_string(config);
    } else {
      ++*sets_outside;
      ruled_out += let_through ? 0 : 1;
    }
  }
  return ruled_out;
}

TEST(ValidSuperset, NeverRulesOutASetThatAValidSubGraphContains) {
  // Small random graphs, every set of their nodes, several configs: a set inside some valid
  // sub-graph is always let through (the property combine relies on), and most sets no valid
  // sub-graph contains are ruled out.
  std::mt19937_64 rng(26);
  const SubGraphConfig configs[] = {{1, false, 1}, {1, false, 2}, {1, false, 3}, {1, false, 0},
                                    {2, false, 2}, {1, true, 2},  {0, false, 2}, {2, true, 0}};
  std::size_t outside = 0;
  std::size_t ruled_out = 0;
  std::size_t graphs = 0;
  while (graphs < 30) {
    Fixture f;
    f.ir = testing_ir::random_ops_graph(rng, 3 + rng() % 5, rng() % 2 == 0 ? 0 : 3);
    const Graph& graph = f.build();
    if (graph.size() > 12) continue;
    ++graphs;
    for (const SubGraphConfig& config : configs) ruled_out += check_every_set(graph, config, &outside);
  }
  RecordProperty("sets_outside_valid", std::to_string(outside));
  RecordProperty("ruled_out", std::to_string(ruled_out));
  EXPECT_GT(ruled_out, outside / 2);
}

}  // namespace
}  // namespace collage
