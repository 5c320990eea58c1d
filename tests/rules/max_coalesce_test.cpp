#include "collage/rules/max_coalesce.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/combine.hpp"
#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"
#include "common/random_dag.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using testing_ir::RulesFixture;

/// A singleton part {i} for `target`, with rule name "seed" and a known cost.
template <class G>
Candidate part(const DataflowGraph<G>& graph, std::size_t i, const std::string& target) {
  return Candidate{SubGraph(graph, IndexSet(graph.size(), {i})), target, "seed", Cost::value(1.0)};
}

template <class G>
std::vector<std::string> strings(const DataflowGraph<G>& graph, const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) out.push_back(c.to_string(graph));
  return out;
}

/// x -> relu -> relu -> ... (n relus); x=0, relu k = k.
const Expr* relu_chain(RulesFixture& f, int n) {
  const Expr* h = f.ir.var("x");
  for (int i = 0; i < n; ++i) h = f.ir.call("relu", {h});
  f.ir.output(h);
  f.build();
  return h;
}

TEST(Coalesce, ChainCollapsesIntoOnePart) {
  RulesFixture f;
  relu_chain(f, 5);
  const auto& g = *f.graph;
  std::vector<Candidate> parts;
  for (std::size_t i = 1; i <= 5; ++i) parts.push_back(part(g, i, "t"));
  std::vector<Candidate> merged = coalesce(g, parts, SubGraphConfig{});
  EXPECT_EQ(strings(g, merged), f.lines({"t:max_coalesce:relu+relu+relu+relu+relu{1..5}"}));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_TRUE(merged[0].cost.is_unknown());
}

TEST(Coalesce, RespectsMaxDepth) {
  RulesFixture f;
  relu_chain(f, 5);
  const auto& g = *f.graph;
  std::vector<Candidate> parts;
  for (std::size_t i = 1; i <= 5; ++i) parts.push_back(part(g, i, "t"));
  SubGraphConfig config;
  config.max_depth = 2;
  std::vector<Candidate> merged = coalesce(g, parts, config);
  // {1} takes {2}; {1,2} cannot take {3} (depth 3); {3} takes {4}; {5} stays as it was given.
  EXPECT_EQ(strings(g, merged),
            f.lines({"t:max_coalesce:relu+relu{1,2}", "t:max_coalesce:relu+relu{3,4}", "t:seed:relu{5}"}));
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_TRUE(merged[0].cost.is_unknown());
  ASSERT_FALSE(merged[2].cost.is_unknown());  // unmerged parts keep their cost
  EXPECT_EQ(merged[2].cost, Cost::value(1.0));
  // Depth 3: one merge per visit, so pass 1 pairs {1,2} and {3,4}; in pass 2 {1,2} cannot take
  // {3,4} (depth 4) but {3,4} takes {5}.
  config.max_depth = 3;
  EXPECT_EQ(strings(g, coalesce(g, parts, config)),
            f.lines({"t:max_coalesce:relu+relu{1,2}", "t:max_coalesce:relu+relu+relu{3..5}"}));
}

TEST(Coalesce, NeverMergesDifferentTargets) {
  RulesFixture f;
  relu_chain(f, 5);
  const auto& g = *f.graph;
  // targets along the chain: a a b a a
  std::vector<Candidate> parts{part(g, 1, "a"), part(g, 2, "a"), part(g, 3, "b"), part(g, 4, "a"), part(g, 5, "a")};
  EXPECT_EQ(strings(g, coalesce(g, parts, SubGraphConfig{})),
            f.lines({"a:max_coalesce:relu+relu{1,2}", "b:seed:relu{3}", "a:max_coalesce:relu+relu{4,5}"}));
  // {1,2} and {4,5} of target a would make {1,2,4,5}, not touching (3 lies between): never joined,
  // even though {1..5} is convex.
}

TEST(Coalesce, DifferentTargetInTheMiddleOfADiamondBlocksTheJoin) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto c = f.ir.call("exp", {a});
  auto d = f.ir.call("add", {b, c});
  f.ir.output(d);
  const auto& g = f.build();
  // x=0 a=1 b=2 c=3 d=4; c belongs to another target, so {1,2,4} would not be convex.
  ASSERT_EQ(f.at(d), 4u);
  std::vector<Candidate> parts{part(g, 1, "t"), part(g, 2, "t"), part(g, 3, "u"), part(g, 4, "t")};
  // Taps forbidden (the default): {1,2} would tap (1 feeds 2 inside and 3 outside); {2} takes {4}.
  EXPECT_EQ(strings(g, coalesce(g, parts, SubGraphConfig{})),
            f.lines({"t:seed:relu{1}", "t:max_coalesce:abs+add{2,4}", "u:seed:exp{3}"}));
  // Taps allowed: {1} takes {2}; {1,2} + {4} is not convex (the path 1 -> 3 -> 4 leaves and re-enters).
  SubGraphConfig taps;
  taps.allow_taps = true;
  EXPECT_EQ(strings(g, coalesce(g, parts, taps)),
            f.lines({"t:max_coalesce:relu+abs{1,2}", "u:seed:exp{3}", "t:seed:add{4}"}));
  // All of one target: one part.
  std::vector<Candidate> same{part(g, 1, "t"), part(g, 2, "t"), part(g, 3, "t"), part(g, 4, "t")};
  EXPECT_EQ(strings(g, coalesce(g, same, SubGraphConfig{})), f.lines({"t:max_coalesce:relu+abs+exp+add{1..4}"}));
  // One exit allowed: the diamond is still one part (its only exit is d).
  SubGraphConfig one_exit;
  one_exit.max_exits = 1;
  EXPECT_EQ(strings(g, coalesce(g, same, one_exit)), f.lines({"t:max_coalesce:relu+abs+exp+add{1..4}"}));
}

TEST(Coalesce, RespectsMaxExitsAndTaps) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto c = f.ir.call("exp", {a});
  f.ir.output(b);
  f.ir.output(c);
  const auto& g = f.build();
  // x=0 a=1 b=2 c=3; b and c are results.
  ASSERT_EQ(f.at(c), 3u);
  std::vector<Candidate> parts{part(g, 1, "t"), part(g, 2, "t"), part(g, 3, "t")};
  const std::vector<std::string> unmerged = f.lines({"t:seed:relu{1}", "t:seed:abs{2}", "t:seed:exp{3}"});
  // {1,2} would have exits 1 and 2, and a tap (1 feeds 2 inside and 3 outside); the whole fan-out
  // {1,2,3} has exits 2 and 3.
  SubGraphConfig one_exit;
  one_exit.max_exits = 1;
  EXPECT_EQ(strings(g, coalesce(g, parts, one_exit)), unmerged);
  SubGraphConfig two_exits;
  two_exits.max_exits = 2;
  // Without taps no single branch may join, but the whole fan-out may.
  EXPECT_EQ(strings(g, coalesce(g, parts, two_exits)), f.lines({"t:max_coalesce:relu+abs+exp{1..3}"}));
  two_exits.allow_taps = true;
  EXPECT_EQ(strings(g, coalesce(g, parts, two_exits)), f.lines({"t:max_coalesce:relu+abs+exp{1..3}"}));
  // With taps allowed but at most 2 exits and depth 1, nothing can join.
  two_exits.max_depth = 1;
  EXPECT_EQ(strings(g, coalesce(g, parts, two_exits)), unmerged);
}

TEST(Coalesce, NeverMakesThePartsCyclic) {
  // Edges a->d, b->c, a->c, b->d: {a,d} and {b,c} are both convex, yet each feeds the other.
  RulesFixture f;
  auto x = f.ir.var("x");
  auto y = f.ir.var("y");
  auto b = f.ir.call("abs", {y});
  auto a = f.ir.call("relu", {x});
  auto c = f.ir.call("add", {b, a});
  auto d = f.ir.call("add", {a, b});
  f.ir.output(c);
  f.ir.output(d);
  const auto& g = f.build();
  // y=0 b=1 x=2 a=3 c=4 d=5
  ASSERT_EQ(f.at(b), 1u);
  ASSERT_EQ(f.at(a), 3u);
  ASSERT_EQ(f.at(d), 5u);
  SubGraphConfig taps;
  taps.allow_taps = true;
  std::vector<Candidate> parts{part(g, 1, "u"), part(g, 3, "t"), part(g, 4, "u"), part(g, 5, "t")};
  // {1} takes {4} first (b,c); then {3,5} (a,d) would close the cycle and is refused.
  EXPECT_EQ(strings(g, coalesce(g, parts, taps)),
            f.lines({"u:max_coalesce:abs+add{1,4}", "t:seed:relu{3}", "t:seed:add{5}"}));
  ASSERT_TRUE(SubGraph(g, f.set({a, d})).is_valid(g, taps));  // node-level, {a,d} alone is fine
}

TEST(Coalesce, KeepsNestedGroups) {
  RulesFixture f;
  relu_chain(f, 3);
  const auto& g = *f.graph;
  std::vector<Candidate> parts;
  parts.push_back(Candidate{SubGraph(g, IndexSet(g.size(), {1, 2})).with_attrs(g, {{"Composite", "two"}}), "t", "p"});
  parts.push_back(Candidate{SubGraph(g, IndexSet(g.size(), {3})).with_attrs(g, {{"Composite", "one"}}), "t", "p"});
  std::vector<Candidate> merged = coalesce(g, parts, SubGraphConfig{});
  EXPECT_EQ(strings(g, merged),
            f.lines({"t:max_coalesce:relu+relu+relu{1..3}[Composite=two:relu+relu{1,2}][Composite=one:relu{3}]"}));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_TRUE(merged[0].sub_graph.is_valid(g, SubGraphConfig{}));
}

TEST(Coalesce, OverlappingPartsArePassedThroughUnmerged) {
  RulesFixture f;
  relu_chain(f, 3);
  const auto& g = *f.graph;
  std::vector<Candidate> parts{part(g, 1, "t"), part(g, 2, "t"), part(g, 3, "t"),
                               Candidate{SubGraph(g, IndexSet(g.size(), {2, 3})), "t", "other"}};
  // Canonical order: {1}, {2}, {2,3}, {3}: {2,3} overlaps {2} and takes no part.
  EXPECT_EQ(strings(g, coalesce(g, parts, SubGraphConfig{})),
            f.lines({"t:max_coalesce:relu+relu+relu{1..3}", "t:other:relu+relu{2,3}"}));
}

TEST(Coalesce, DeterministicWhateverTheInputOrder) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto c = f.ir.call("exp", {a});
  auto d = f.ir.call("add", {b, c});
  auto e = f.ir.call("tanh", {d});
  auto h = f.ir.call("sqrt", {d});
  f.ir.output(e);
  f.ir.output(h);
  const auto& g = f.build();
  std::vector<Candidate> parts;
  const char* targets[] = {"t", "u", "t", "t", "u", "t"};
  for (std::size_t i = 1; i < g.size(); ++i) parts.push_back(part(g, i, targets[i - 1]));
  SubGraphConfig config;
  config.max_exits = 1;
  const std::vector<std::string> expected = strings(g, coalesce(g, parts, config));
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(parts.begin(), parts.end(), rng);
    EXPECT_EQ(strings(g, coalesce(g, parts, config)), expected);
  }
}

TEST(MaxCoalesceRule, TakesDisjointCandidatesThenMerges) {
  RulesFixture f;
  relu_chain(f, 3);
  using C = Combiner<ExprGraph>;
  // combine(all) proposes every run: {1} {1,2} {1..3} {2} {2,3} {3}; the greedy disjoint pick is
  // {1} {2} {3}.
  auto sub = combine(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, {0});
  EXPECT_EQ(f.describe(max_coalesce(sub, SubGraphConfig{}), "t"), f.lines({"t:max_coalesce:relu+relu+relu{1..3}"}));
  SubGraphConfig config;
  config.max_depth = 2;
  EXPECT_EQ(f.describe(max_coalesce(sub, config), "t"),
            f.lines({"t:max_coalesce:relu+relu{1,2}", "t:op_kind:relu{3}"}));
  auto rule = max_coalesce(op_kind<ExprGraph>(OpKind::elemwise), config);
  EXPECT_EQ(rule.describe(), "max_coalesce(op_kind(elemwise), {max_exits 0, taps forbidden, max_depth 2})");
  EXPECT_EQ(rule.name(), "max_coalesce");
}

/// Whether `groups` (disjoint, covering every node) are acyclic as a quotient graph (Kahn).
template <class G>
bool quotient_acyclic(const DataflowGraph<G>& g, const std::vector<IndexSet>& groups) {
  std::vector<std::size_t> owner(g.size(), 0);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    for (std::size_t i : groups[k]) owner[i] = k;
  }
  std::vector<std::vector<std::size_t>> succ(groups.size());
  std::vector<std::size_t> indegree(groups.size(), 0);
  for (std::size_t i = 0; i < g.size(); ++i) {
    for (std::size_t o : g.outputs(i)) {
      if (owner[o] != owner[i]) succ[owner[i]].push_back(owner[o]);
    }
  }
  for (auto& next : succ) {
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    for (std::size_t q : next) ++indegree[q];
  }
  std::vector<std::size_t> ready;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (indegree[k] == 0) ready.push_back(k);
  }
  std::size_t consumed = 0;
  while (!ready.empty()) {
    const std::size_t k = ready.back();
    ready.pop_back();
    ++consumed;
    for (std::size_t q : succ[k]) {
      if (--indegree[q] == 0) ready.push_back(q);
    }
  }
  return consumed == groups.size();
}

// Property: on random DAGs with random targets, the parts stay disjoint, cover the same nodes and
// stay acyclic as a quotient graph; merged parts are valid; no part can absorb a downstream
// neighbour of its target (alone or all together) without breaking validity or acyclicity; and the
// result does not depend on the input order.
TEST(Coalesce, RandomGraphsReachAValidDeterministicFixpoint) {
  using testing_ir::AdjacencyGraph;
  std::mt19937_64 rng(20240611);
  std::size_t merges = 0;
  for (int round = 0; round < 40; ++round) {
    AdjacencyGraph ir = testing_ir::random_dag(rng, 40, 3, 8);
    auto built = DataflowGraph<AdjacencyGraph>::build(ir);
    ASSERT_TRUE(built.ok());
    const auto& g = built.value();
    SubGraphConfig config;
    config.max_exits = static_cast<std::size_t>(round % 3);  // 0 (unlimited), 1, 2
    config.allow_taps = round % 2 == 0;
    config.max_depth = static_cast<std::size_t>(round % 4 == 3 ? 4 : 0);
    std::vector<Candidate> parts;
    for (std::size_t i = 0; i < g.size(); ++i) {
      parts.push_back(part(g, i, std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? "u" : "t"));
    }
    std::vector<Candidate> merged = coalesce(g, parts, config);
    merges += g.size() - merged.size();
    std::vector<std::size_t> owner(g.size(), npos);
    std::vector<IndexSet> groups;
    for (std::size_t k = 0; k < merged.size(); ++k) {
      const Candidate& c = merged[k];
      if (c.rule_name == "max_coalesce") {
        EXPECT_TRUE(c.sub_graph.is_valid(g, config)) << c.to_string();
      }
      for (std::size_t i : c.sub_graph.inside()) {
        EXPECT_EQ(owner[i], npos);
        owner[i] = k;
        EXPECT_EQ(c.target, parts[i].target);
      }
      groups.push_back(c.sub_graph.inside());
    }
    for (std::size_t i = 0; i < g.size(); ++i) ASSERT_NE(owner[i], npos);
    EXPECT_TRUE(quotient_acyclic(g, groups)) << "round " << round;
    // Whether merging the parts `with` into part k would be allowed.
    auto could_merge = [&](std::size_t k, const std::vector<std::size_t>& with) {
      std::vector<IndexSet> after;
      IndexSet joined = groups[k];
      for (std::size_t q = 0; q < groups.size(); ++q) {
        if (std::find(with.begin(), with.end(), q) != with.end()) {
          joined |= groups[q];
        } else if (q != k) {
          after.push_back(groups[q]);
        }
      }
      after.push_back(joined);
      return SubGraph(g, joined).is_valid(g, config) && quotient_acyclic(g, after);
    };
    for (std::size_t k = 0; k < merged.size(); ++k) {
      std::vector<std::size_t> same;
      for (std::size_t o : merged[k].sub_graph.output()) {
        const std::size_t q = owner[o];
        if (merged[q].target == merged[k].target && std::find(same.begin(), same.end(), q) == same.end()) {
          same.push_back(q);
          EXPECT_FALSE(could_merge(k, {q})) << merged[k].to_string() << " + " << merged[q].to_string();
        }
      }
      if (same.size() >= 2) {
        EXPECT_FALSE(could_merge(k, same)) << merged[k].to_string();
      }
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    EXPECT_EQ(strings(g, coalesce(g, parts, config)), strings(g, merged));
  }
  EXPECT_GT(merges, 200u);  // the property is not vacuous
}

}  // namespace
}  // namespace collage
