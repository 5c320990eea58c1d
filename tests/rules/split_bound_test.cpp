#include "collage/rules/split_bound.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "common/expr_ir.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using testing_ir::RulesFixture;
using C = Combiner<ExprGraph>;

/// x -> relu -> relu -> ... (n relus); x=0, relu k = k.
void relu_chain(RulesFixture& f, int n) {
  const Expr* h = f.ir.var("x");
  for (int i = 0; i < n; ++i) h = f.ir.call("relu", {h});
  f.ir.output(h);
  f.build();
}

/// A rule with fixed candidates (inside sets, each optionally wrapped in a Composite group).
class FixedRule final : public detail::RuleImpl<ExprGraph> {
 public:
  explicit FixedRule(std::vector<std::pair<std::vector<std::size_t>, std::string>> sets)
      : sets_(std::move(sets)), name_("fixed") {}
  std::vector<Candidate> candidates(const DataflowGraph<ExprGraph>& graph, const Name& target,
                                    const RuleContext&) const override {
    std::vector<Candidate> result;
    for (const auto& [nodes, composite] : sets_) {
      IndexSet inside = graph.empty_set();
      for (std::size_t i : nodes) inside.add(i);
      SubGraph s(graph, std::move(inside));
      if (!composite.empty()) s = s.with_attrs(graph, {{"Composite", composite}});
      result.push_back(Candidate{std::move(s), target, name_});
    }
    canonicalize(result);
    return result;
  }
  std::string describe() const override { return "fixed"; }
  const std::string& name() const override { return name_; }

 private:
  std::vector<std::pair<std::vector<std::size_t>, std::string>> sets_;
  std::string name_;
};

TEST(SplitBound, ChainOfFiveWithZeroOneAndTwoSplits) {
  RulesFixture f;
  relu_chain(f, 5);
  auto seeds = op_kind<ExprGraph>(OpKind::elemwise);
  // The one maximal region is {1..5}. No split: the region and the seeds.
  EXPECT_EQ(f.describe(combine_split_bounded(seeds, {C::all()}, 0), "t"),
            f.lines({"t:op_kind:relu{1}", "t:combine_split_bounded:relu+relu+relu+relu+relu{1..5}", "t:op_kind:relu{2}",
                     "t:op_kind:relu{3}", "t:op_kind:relu{4}", "t:op_kind:relu{5}"}));
  // One split: prefixes and suffixes.
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 1), "t"),
            f.lines({"{1}", "{1,2}", "{1..3}", "{1..4}", "{1..5}", "{2}", "{2..5}", "{3}", "{3..5}", "{4}", "{4,5}",
                     "{5}"}));
  // Two splits: every contiguous run (5*6/2 = 15), as combine(all) without a depth bound gives.
  const std::vector<std::string> every_run =
      f.lines({"{1}", "{1,2}", "{1..3}", "{1..4}", "{1..5}", "{2}", "{2,3}", "{2..4}", "{2..5}", "{3}", "{3,4}",
               "{3..5}", "{4}", "{4,5}", "{5}"});
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 2), "t"), every_run);
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 7), "t"), every_run);
  EXPECT_EQ(f.insides(combine(seeds, {C::all()}, {0}), "t"), every_run);
}

TEST(SplitBound, DiamondSegmentsMustBeConnected) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto c = f.ir.call("exp", {a});
  auto d = f.ir.call("add", {b, c});
  auto e = f.ir.call("tanh", {d});
  f.ir.output(e);
  f.build();
  // x=0 a=1 b=2 c=3 d=4 e=5: one region {1..5}, in order 1 2 3 4 5.
  ASSERT_EQ(f.at(e), 5u);
  auto seeds = op_kind<ExprGraph>(OpKind::broadcast);
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 0), "t"),
            f.lines({"{1}", "{1..5}", "{2}", "{3}", "{4}", "{5}"}));
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 1), "t"),
            f.lines({"{1}", "{1,2}", "{1..3}", "{1..4}", "{1..5}", "{2}", "{2..5}", "{3}", "{3..5}", "{4}", "{4,5}",
                     "{5}"}));
  // Two splits add the inner segments, except {2,3}: b and c are not connected inside it.
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 2), "t"),
            f.lines({"{1}", "{1,2}", "{1..3}", "{1..4}", "{1..5}", "{2}", "{2..4}", "{2..5}", "{3}", "{3,4}", "{3..5}",
                     "{4}", "{4,5}", "{5}"}));
}

TEST(SplitBound, RegionsOnlyGrowWhileConvex) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {a});
  auto sm = f.ir.call("softmax", {a});
  auto d = f.ir.call("add", {b, sm});
  f.ir.output(d);
  f.build();
  // x=0 a=1 b=2 softmax=3 d=4. The softmax is no seed (opaque): {1,2} cannot take {4} (the path
  // 1 -> 3 -> 4 would leave and re-enter), so the regions are {1,2} and {4}.
  ASSERT_EQ(f.at(d), 4u);
  auto seeds = op_kind<ExprGraph>(OpKind::broadcast);
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 0), "t"), f.lines({"{1}", "{1,2}", "{2}", "{4}"}));
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, {C::all()}, 2), "t"), f.lines({"{1}", "{1,2}", "{2}", "{4}"}));
}

TEST(SplitBound, ByKindCombinersFormFuseOpsRegions) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto conv = f.ir.call("conv2d", {x, f.ir.constant("w")});
  auto add = f.ir.call("add", {conv, f.ir.constant("b")});
  auto relu = f.ir.call("relu", {add});
  auto sum = f.ir.call("sum", {relu});
  f.ir.output(sum);
  f.build();
  // x=0 w=1 conv=2 b=3 add=4 relu=5 sum=6. conv+add+relu form a region; the sum (a reduction)
  // does not join it under by_kind(anchor, broadcast) and by_kind(broadcast, reduce) accepts only an
  // upstream of kind <= broadcast, while the region's kind is anchor.
  ASSERT_EQ(f.at(sum), 6u);
  std::vector<C> combiners{C::by_kind(OpKind::anchor, OpKind::broadcast), C::by_kind(OpKind::broadcast, OpKind::reduce),
                           C::by_kind(OpKind::injective, OpKind::injective)};
  auto seeds = op_kind<ExprGraph>(OpKind::anchor);
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, combiners, 0), "t"),
            f.lines({"{2}", "{2,4,5}", "{4}", "{5}", "{6}"}));
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, combiners, 1), "t"),
            f.lines({"{2}", "{2,4}", "{2,4,5}", "{4}", "{4,5}", "{5}", "{6}"}));
  // With the constant combiner the region also takes its tensor constants w and b.
  combiners.push_back(C::constant());
  EXPECT_EQ(f.insides(combine_split_bounded(seeds, combiners, 0), "t"),
            f.lines({"{1..5}", "{2}", "{4}", "{5}", "{6}"}));
}

TEST(SplitBound, TupleCombinersJoinASplitConcatDiamond) {
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
  // x=0 split=1 p0=2 relu=3 p1=4 abs=5 tuple=6 concat=7. The split takes its projections
  // (tuple_proj), then relu and abs (by_kind); the concat takes the tuple and the region producing
  // its fields (tuple_arg): one region {1..7}.
  ASSERT_EQ(f.at(cat), 7u);
  std::vector<C> combiners{C::by_kind(OpKind::anchor, OpKind::broadcast), C::by_kind(OpKind::broadcast, OpKind::reduce),
                           C::by_kind(OpKind::injective, OpKind::injective), C::tuple_arg(), C::tuple_proj()};
  EXPECT_EQ(f.insides(combine_split_bounded(op_kind<ExprGraph>(OpKind::anchor), combiners, 0), "t"),
            f.lines({"{1}", "{1..7}", "{3}", "{5}", "{7}"}));
  // Only tuple_proj: the split region is {1,2,4}.
  EXPECT_EQ(f.insides(combine_split_bounded(op_kind<ExprGraph>(OpKind::anchor), {C::tuple_proj()}, 0), "t"),
            f.lines({"{1}", "{1,2,4}", "{3}", "{5}", "{7}"}));
}

TEST(SplitBound, SegmentsNeverCutANestedGroup) {
  RulesFixture f;
  relu_chain(f, 4);
  auto seeds = make_rule<ExprGraph, FixedRule>(
      std::vector<std::pair<std::vector<std::size_t>, std::string>>{{{1, 2}, "c"}, {{3}, ""}, {{4}, ""}});
  // One region {1..4} holding the composite {1,2}: no segment may hold 1 without 2 or vice versa.
  EXPECT_EQ(f.describe(combine_split_bounded(seeds, {C::all()}, 1), "t"),
            f.lines({"t:fixed:relu+relu{1,2}[Composite=c:relu+relu{1,2}]",
                     "t:combine_split_bounded:relu+relu+relu{1..3}[Composite=c:relu+relu{1,2}]",
                     "t:combine_split_bounded:relu+relu+relu+relu{1..4}[Composite=c:relu+relu{1,2}]", "t:fixed:relu{3}",
                     "t:combine_split_bounded:relu+relu{3,4}", "t:fixed:relu{4}"}));
}

TEST(SplitBound, OverlappingSeedsArePickedGreedily) {
  RulesFixture f;
  relu_chain(f, 4);
  // Seeds {1,2} {2,3} {4}: the greedy disjoint pick is {1,2} {4}; {2,3} stays a candidate as given.
  auto seeds = make_rule<ExprGraph, FixedRule>(
      std::vector<std::pair<std::vector<std::size_t>, std::string>>{{{1, 2}, ""}, {{2, 3}, ""}, {{4}, ""}});
  auto rule = combine_split_bounded(seeds, {C::all()}, 0);
  // {1,2} cannot take {4} (not touching), so each is its own region.
  EXPECT_EQ(f.insides(rule, "t"), f.lines({"{1}", "{1,2}", "{2}", "{2,3}", "{4}"}));
}

TEST(SplitBound, CandidateBudgetCutsDeterministically) {
  RulesFixture f;
  relu_chain(f, 30);
  SplitBoundLimits limits;
  limits.max_splits = 2;
  limits.max_candidates = 100;
  auto rule = combine_split_bounded(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, limits);
  auto first = f.insides(rule, "t");
  EXPECT_EQ(first.size(), 100u);
  EXPECT_EQ(f.insides(rule, "t"), first);
  limits.max_candidates = 1000000;
  EXPECT_EQ(f.insides(combine_split_bounded(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, limits), "t").size(),
            465u);
  // One split: 30 prefixes + 29 suffixes + 28 inner singletons.
  EXPECT_EQ(f.insides(combine_split_bounded(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, 1), "t").size(), 87u);
}

TEST(SplitBound, DescribeAndName) {
  auto rule = combine_split_bounded(op_kind<ExprGraph>(OpKind::elemwise), {C::all(), C::tuple_proj()}, 1);
  EXPECT_EQ(rule.describe(), "combine_split_bounded(op_kind(elemwise), [all, tuple_proj], max_splits 1)");
  EXPECT_EQ(rule.name(), "combine_split_bounded");
  EXPECT_EQ(combine_split_bounded(op_kind<ExprGraph>(OpKind::elemwise), {C::all()}, 0, "big").name(), "big");
}

}  // namespace
}  // namespace collage
