#include "collage/rules/base_rules.hpp"

#include <gtest/gtest.h>

#include <random>

#include "collage/rules/combinators.hpp"
#include "collage/rules/partition_rule.hpp"
#include "common/expr_ir.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using testing_ir::RulesFixture;

TEST(OpKindRule, OneCandidatePerOperatorUpToTheKind) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto conv = f.ir.call("conv2d", {x, f.ir.constant("w")});
  auto add = f.ir.call("add", {conv, f.ir.scalar("one")});
  auto relu = f.ir.call("relu", {add});
  auto sm = f.ir.call("softmax", {relu});
  f.ir.output(sm);
  f.build();
  EXPECT_EQ(f.describe(op_kind<ExprGraph>(OpKind::anchor), "tvm"),
            f.lines({"tvm:op_kind:conv2d{" + f.idx(conv) + "}", "tvm:op_kind:add{" + f.idx(add) + "}",
                     "tvm:op_kind:relu{" + f.idx(relu) + "}"}));
  EXPECT_EQ(f.describe(op_kind<ExprGraph>(OpKind::elemwise), "tvm"),
            f.lines({"tvm:op_kind:relu{" + f.idx(relu) + "}"}));
}

TEST(OpPredicateRule, PredicateAndConstants) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto w = f.ir.constant("w");
  auto dense = f.ir.call("dense", {x, w});
  auto relu = f.ir.call("relu", {dense});
  f.ir.output(relu);
  f.build();
  auto is_dense = [](const DataflowGraph<ExprGraph>& g, std::size_t i) { return g.op_name(i) == "dense"; };
  EXPECT_EQ(f.describe(op_predicate<ExprGraph>("cublas", is_dense), "cublas"),
            f.lines({"cublas:cublas:dense{" + f.idx(dense) + "}"}));
  EXPECT_EQ(f.describe(op_predicate<ExprGraph>("cublas", is_dense, true), "cublas"),
            f.lines({"cublas:cublas:dense{" + f.idx(w) + "," + f.idx(dense) + "}"}));
}

TEST(HostRule, ZeroCostSingletonsForNodesWithoutKernels) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto t = f.ir.tuple({a, x});
  auto p = f.ir.get_item(t, 0);
  f.ir.output(p);
  f.build();
  auto host_candidates = host<ExprGraph>().all_candidates(*f.graph, "host");
  ASSERT_EQ(host_candidates.size(), 3u);
  for (const Candidate& c : host_candidates) {
    EXPECT_TRUE(c.cost.is_zero());
  }
  EXPECT_EQ(f.describe(host<ExprGraph>(), "host"),
            f.lines({"host:host:x{" + f.idx(x) + "}", "host:host:tuple{" + f.idx(t) + "}",
                     "host:host:get_item{" + f.idx(p) + "}"}));
  (void)a;
}

TEST(Combinators, CompositePrimitiveUnionOnlyValid) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {x});
  f.ir.output(f.ir.call("add", {a, b}));
  f.build();
  auto relus = op_predicate<ExprGraph>("relu", [](const auto& g, std::size_t i) { return g.op_name(i) == "relu"; });
  auto abses = op_predicate<ExprGraph>("abs", [](const auto& g, std::size_t i) { return g.op_name(i) == "abs"; });
  const std::string ia = f.idx(a);
  const std::string ib = f.idx(b);
  EXPECT_EQ(f.describe(composite("lib.relu", relus), "lib"),
            f.lines({"lib:composite.relu:relu{" + ia + "}[Composite=lib.relu:relu{" + ia + "}]"}));
  EXPECT_EQ(f.describe(primitive(relus), "trt"),
            f.lines({"trt:primitive.relu:relu{" + ia + "}[Compiler=trt,Primitive=1:relu{" + ia + "}]"}));
  EXPECT_EQ(f.describe(primitive(relus, false), "tvm"),
            f.lines({"tvm:primitive.relu:relu{" + ia + "}[Primitive=1:relu{" + ia + "}]"}));
  // union: ordered by first inside index, duplicates (same sub-graph and target) removed.
  EXPECT_EQ(f.describe(union_of<ExprGraph>({abses, relus, relus}), "t"),
            f.lines({"t:relu:relu{" + ia + "}", "t:abs:abs{" + ib + "}"}));
  auto both = op_predicate<ExprGraph>("both", [](const auto& g, std::size_t i) { return g.needs_kernel(i); });
  EXPECT_EQ(f.describe(only_valid(both, SubGraphConfig{1, false, 0}), "t").size(), 3u);
  EXPECT_EQ(only_valid(both, SubGraphConfig{1, false, 0}).describe(),
            "only_valid(op_predicate(both), {max_exits 1, taps forbidden, max_depth 0})");
}

/// A candidate over `inside`; with `nested`, the whole set is one group {Composite=lib}.
Candidate candidate_over(const DataflowGraph<ExprGraph>& g, const IndexSet& inside, const char* target,
                         const char* rule, bool nested) {
  std::vector<NestedSubGraph> groups;
  if (nested) groups.push_back(NestedSubGraph{SubGraph(g, inside), {{"Composite", "lib"}}});
  return Candidate{SubGraph(g, inside, groups), target, rule};
}

TEST(MergeCanonical, EqualsCanonicalizingTheConcatenation) {
  // Lists in any order, duplicates within and across lists (same sub-graph and target; the
  // smallest rule name stays), nested groups and several targets.
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto sum = f.ir.call("add", {a, b});
  f.ir.output(sum);
  f.build();
  const auto& g = *f.graph;
  const std::size_t n = g.size();
  auto cand = [&](std::initializer_list<std::size_t> nodes, const char* target, const char* rule, bool nested) {
    return candidate_over(g, IndexSet(n, nodes), target, rule, nested);
  };
  const std::size_t ia = g.index_of(a);
  const std::size_t ib = g.index_of(b);
  const std::size_t iadd = g.index_of(sum);
  std::vector<std::vector<Candidate>> lists = {
      {cand({iadd}, "t", "r2", false), cand({ia}, "t", "r2", false), cand({ia, ib}, "u", "r", true)},
      {cand({ia}, "t", "r1", false), cand({ib}, "t", "r", false), cand({ia, ib}, "u", "r", false)},
      {},
      {cand({iadd}, "t", "r1", false), cand({ia}, "u", "r", false), cand({ia}, "t", "r3", false)}};
  std::vector<Candidate> expected;
  for (const auto& list : lists) expected.insert(expected.end(), list.begin(), list.end());
  canonicalize(expected);
  std::vector<Candidate> merged = merge_canonical(lists);
  ASSERT_EQ(merged.size(), expected.size());
  EXPECT_EQ(merged.size(), 6u);  // {a}:t, {a}:u, {a,b}:u twice (with and without the group), {b}:t, {add}:t
  for (std::size_t k = 0; k < merged.size(); ++k) {
    EXPECT_EQ(merged[k], expected[k]) << k;
    EXPECT_EQ(merged[k].rule_name, expected[k].rule_name) << k;
  }
  EXPECT_EQ(merged[0].rule_name, "r1");  // {a}:t, the smallest of r1, r2, r3
}

TEST(MergeCanonical, RandomCanonicalListsAsCanonicalizingTheirConcatenation) {
  // Canonical lists, as rules return them: 2 to 17 of them, with random sub-graphs of a chain whose
  // first nodes, targets, rule names and nesting overlap, so lists share duplicates.
  RulesFixture f;
  const testing_ir::Expr* e = f.ir.var("x");
  for (int k = 0; k < 10; ++k) e = f.ir.call(k % 2 == 0 ? "relu" : "abs", {e});
  f.ir.output(e);
  f.build();
  const auto& g = *f.graph;
  std::mt19937_64 rng(12345);
  auto next = [&](std::uint64_t bound) { return rng() % bound; };
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::vector<Candidate>> lists(2 + next(16));
    for (auto& list : lists) {
      for (std::size_t c = next(12); c-- > 0;) {
        const std::size_t first = 1 + next(g.size() - 1);
        IndexSet inside(g.size());
        inside.add(first);
        for (std::size_t i = first + 1; i < g.size() && i < first + 3; ++i) {
          if (next(2) == 0) inside.add(i);
        }
        const bool nested = next(3) == 0;
        list.push_back(candidate_over(g, inside, next(2) == 0 ? "t" : "u", next(2) == 0 ? "r1" : "r2", nested));
      }
      canonicalize(list);
    }
    std::vector<Candidate> expected;
    for (const auto& list : lists) expected.insert(expected.end(), list.begin(), list.end());
    canonicalize(expected);
    const std::vector<Candidate> merged = merge_canonical(lists);
    ASSERT_EQ(merged.size(), expected.size()) << "trial " << trial;
    for (std::size_t k = 0; k < merged.size(); ++k) {
      ASSERT_EQ(merged[k], expected[k]) << "trial " << trial << ", candidate " << k;
      ASSERT_EQ(merged[k].rule_name, expected[k].rule_name) << "trial " << trial << ", candidate " << k;
    }
  }
}

}  // namespace
}  // namespace collage
