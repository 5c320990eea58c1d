#include "collage/rules/combine.hpp"

#include <gtest/gtest.h>

#include "collage/rules/base_rules.hpp"
#include "common/expr_ir.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using testing_ir::RulesFixture;
using C = Combiner<ExprGraph>;

std::vector<C> fuse_ops_combiners() {
  return {C::by_kind(OpKind::anchor, OpKind::broadcast), C::by_kind(OpKind::broadcast, OpKind::reduce),
          C::by_kind(OpKind::injective, OpKind::injective), C::tuple_arg(), C::tuple_proj()};
}

TEST(Combine, ChainGrowsToMaxDepth) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto conv = f.ir.call("conv2d", {x, f.ir.constant("w")});
  auto add = f.ir.call("add", {conv, f.ir.constant("b")});
  auto relu = f.ir.call("relu", {add});
  f.ir.output(relu);
  f.build();
  // x=0 w=1 conv=2 b=3 add=4 relu=5
  ASSERT_EQ(f.at(relu), 5u);
  auto rule3 = combine(op_kind<ExprGraph>(OpKind::anchor), fuse_ops_combiners(), {3});
  EXPECT_EQ(f.insides(rule3, "tvm"), f.lines({"{2}", "{2,4}", "{2,4,5}", "{4}", "{4,5}", "{5}"}));
  auto rule2 = combine(op_kind<ExprGraph>(OpKind::anchor), fuse_ops_combiners(), {2});
  EXPECT_EQ(f.insides(rule2, "tvm"), f.lines({"{2}", "{2,4}", "{4}", "{4,5}", "{5}"}));
  // Joined candidates carry the combine rule's name; seeds keep theirs.
  auto all = rule3.all_candidates(*f.graph, "tvm");
  EXPECT_EQ(all[0].rule_name, "op_kind");
  EXPECT_EQ(all[1].rule_name, "combine");
  EXPECT_EQ(all[1].target, "tvm");
}

TEST(Combine, ByKindRespectsDirectionAndKinds) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto relu = f.ir.call("relu", {x});
  auto conv = f.ir.call("conv2d", {relu, f.ir.constant("w")});
  auto sum = f.ir.call("sum", {conv});
  f.ir.output(sum);
  f.build();
  // x=0 relu=1 w=2 conv=3 sum=4. relu->conv: the downstream conv is an anchor, above broadcast and
  // reduce; conv->sum: sum is a reduction, above broadcast. Nothing joins under FuseOps' rules.
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor), fuse_ops_combiners(), {0});
  EXPECT_EQ(f.insides(rule, "tvm"), f.lines({"{1}", "{3}", "{4}"}));
  // With `all`, every touching pair joins.
  auto everything = combine(op_kind<ExprGraph>(OpKind::anchor), {C::all()}, {0});
  EXPECT_EQ(f.insides(everything, "t"), f.lines({"{1}", "{1,3}", "{1,3,4}", "{3}", "{3,4}", "{4}"}));
}

TEST(Combine, DiamondJoinsOnlyConvexUnions) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto c = f.ir.call("exp", {a});
  auto d = f.ir.call("add", {b, c});
  f.ir.output(d);
  f.build();
  // x=0 a=1 b=2 c=3 d=4. {1,4} is never formed (not touching); {1,2,4} would skip c: not convex.
  auto rule = combine(op_kind<ExprGraph>(OpKind::broadcast), {C::all()}, {0});
  EXPECT_EQ(f.insides(rule, "t"),
            f.lines({"{1}", "{1,2}", "{1..3}", "{1..4}", "{1,3}", "{2}", "{2..4}", "{2,4}", "{3}", "{3,4}", "{4}"}));
}

TEST(Combine, TupleProjectionsAndTupleArguments) {
  // A split feeding two branches joined by a concat over a tuple.
  RulesFixture f;
  auto x = f.ir.var("x");
  auto split = f.ir.call("split", {x});
  auto p0 = f.ir.get_item(split, 0);
  auto p1 = f.ir.get_item(split, 1);
  auto r = f.ir.call("relu", {p0});
  auto a = f.ir.call("abs", {p1});
  auto t = f.ir.tuple({r, a});
  auto cat = f.ir.call("concat", {t});
  f.ir.output(cat);
  f.build();
  // x=0 split=1 p0=2 relu=3 p1=4 abs=5 tuple=6 concat=7
  ASSERT_EQ(f.at(cat), 7u);
  auto proj = combine(op_kind<ExprGraph>(OpKind::injective), {C::tuple_proj()}, {0});
  EXPECT_EQ(f.insides(proj, "t"), f.lines({"{1}", "{1,2,4}", "{3}", "{5}", "{7}"}));
  auto arg = combine(op_kind<ExprGraph>(OpKind::injective), {C::tuple_arg()}, {0});
  EXPECT_EQ(f.insides(arg, "t"), f.lines({"{1}", "{3}", "{3,5..7}", "{5}", "{7}"}));
  // Together with the FuseOps combiners the whole diamond becomes one candidate.
  auto native = combine(op_kind<ExprGraph>(OpKind::anchor), fuse_ops_combiners(), {0});
  auto all = f.insides(native, "t");
  EXPECT_NE(std::find(all.begin(), all.end(), "{1..7}"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "{1,2,4}"), all.end());
}

TEST(Combine, ConstantCombinerPullsTensorConstants) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto w = f.ir.constant("w");
  auto dense = f.ir.call("dense", {x, w, f.ir.scalar("alpha")});
  f.ir.output(dense);
  f.build();
  // x=0 w=1 alpha=2 dense=3: the scalar is inlinable and never pulled in.
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor), {C::constant()}, {0});
  EXPECT_EQ(f.insides(rule, "t"), f.lines({"{1,3}", "{3}"}));
}

TEST(Combine, CandidateBudgetStopsGrowthDeterministically) {
  RulesFixture f;
  const testing_ir::Expr* h = f.ir.var("x");
  for (int i = 0; i < 30; ++i) h = f.ir.call("relu", {h});
  f.ir.output(h);
  f.build();
  std::vector<CombineStats> reports;
  CombineLimits limits;
  limits.max_candidates = 100;
  limits.report = [&](const CombineStats& s) { reports.push_back(s); };
  auto rule = combine(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, limits);
  auto first = f.insides(rule, "t");
  EXPECT_EQ(first.size(), 100u);
  EXPECT_EQ(f.insides(rule, "t"), first);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].truncated);
  EXPECT_EQ(reports[0].candidates, 100u);
  EXPECT_EQ(reports[0].joins_built, 70u);  // the cut also bounds the joins built, within a round
  // Unbounded, a 30-op chain has 30*31/2 contiguous runs.
  limits.max_candidates = 465;
  EXPECT_EQ(f.insides(combine(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, limits), "t").size(), 465u);
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_FALSE(reports[2].truncated);
}

TEST(Combine, CustomPairwiseCombinerAndDescribe) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("relu", {a});
  auto c = f.ir.call("abs", {b});
  f.ir.output(c);
  f.build();
  auto same_label = C::pairwise("same_op", [](const DataflowGraph<ExprGraph>& g, const SubGraph& up, const SubGraph& down) {
    return up.label(g) == down.label(g);
  });
  auto rule = combine(op_kind<ExprGraph>(OpKind::elemwise), {same_label}, {0}, "relu_runs");
  EXPECT_EQ(f.insides(rule, "t"), f.lines({"{1}", "{1,2}", "{2}", "{3}"}));
  EXPECT_EQ(rule.describe(), "combine(op_kind(elemwise), [same_op], max_depth 0)");
  EXPECT_EQ(rule.name(), "relu_runs");
}

}  // namespace
}  // namespace collage
