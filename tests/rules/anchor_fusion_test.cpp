#include "collage/rules/anchor_fusion.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/rules/combinators.hpp"
#include "common/expr_ir.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using testing_ir::RulesFixture;

TEST(AnchorFusion, QkvProjectionsShareTheirInput) {
  // One input x feeding three dense ops, each followed by bias_add (the q/k/v projections).
  RulesFixture f;
  auto x = f.ir.var("x");
  std::vector<const Expr*> biased;
  for (const char* name : {"q", "k", "v"}) {
    auto dense = f.ir.call("dense", {x, f.ir.constant(std::string("w") + name)});
    biased.push_back(f.ir.call("bias_add", {dense, f.ir.constant(std::string("b") + name)}));
  }
  for (const Expr* b : biased) f.ir.output(b);
  f.build();
  // x=0 wq=1 dense_q=2 bq=3 bias_q=4 wk=5 dense_k=6 bk=7 bias_k=8 wv=9 dense_v=10 bv=11 bias_v=12
  ASSERT_EQ(f.at(biased[2]), 12u);
  auto rule = anchor_fusion<ExprGraph>();
  EXPECT_EQ(f.describe(rule, "cutlass"),
            f.lines({
                "cutlass:anchor_fusion.vertical:dense{2}",
                "cutlass:anchor_fusion.vertical:dense+bias_add{2,4}",
                "cutlass:anchor_fusion.horizontal:dense+bias_add+dense+bias_add+dense+bias_add{2,4,6,8,10,12}",
                "cutlass:anchor_fusion.horizontal:dense+dense+dense{2,6,10}",
                "cutlass:anchor_fusion.vertical:dense{6}",
                "cutlass:anchor_fusion.vertical:dense+bias_add{6,8}",
                "cutlass:anchor_fusion.vertical:dense{10}",
                "cutlass:anchor_fusion.vertical:dense+bias_add{10,12}",
            }));
  // The horizontal candidates have three exits (multi-output).
  for (const Candidate& c : rule.all_candidates(*f.graph, "cutlass")) {
    if (c.rule_name == "anchor_fusion.horizontal") {
      EXPECT_EQ(c.sub_graph.exit().count(), 3u);
    }
  }
  // Without horizontal grouping only the vertical ones remain.
  AnchorFusionOptions vertical_only;
  vertical_only.horizontal = false;
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(vertical_only), "t"),
            f.lines({"{2}", "{2,4}", "{6}", "{6,8}", "{10}", "{10,12}"}));
}

TEST(AnchorFusion, HorizontalGroupsByOpAndNeedsOneEpilogueEach) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto d1 = f.ir.call("dense", {x, f.ir.constant("w1")});
  auto d2 = f.ir.call("dense", {x, f.ir.constant("w2")});
  auto mm = f.ir.call("matmul", {x, f.ir.constant("w3")});
  auto r1 = f.ir.call("relu", {d1});
  auto a1 = f.ir.call("abs", {d1});
  auto r2 = f.ir.call("relu", {d2});
  f.ir.output(r1);
  f.ir.output(a1);
  f.ir.output(r2);
  f.ir.output(mm);
  f.build();
  // x=0 w1=1 d1=2 r1=3 a1=4 w2=5 d2=6 r2=7 w3=8 mm=9
  ASSERT_EQ(f.at(mm), 9u);
  // The matmul is alone in its group: no horizontal candidate for it. d1 has two epilogue
  // consumers, so the group {d1, d2} gets no epilogue variant; vertically d1 branches.
  EXPECT_EQ(f.describe(anchor_fusion<ExprGraph>(), "t"),
            f.lines({
                "t:anchor_fusion.vertical:dense{2}",
                "t:anchor_fusion.vertical:dense+relu{2,3}",
                "t:anchor_fusion.vertical:dense+abs{2,4}",
                "t:anchor_fusion.horizontal:dense+dense{2,6}",
                "t:anchor_fusion.vertical:dense{6}",
                "t:anchor_fusion.vertical:dense+relu{6,7}",
                "t:anchor_fusion.vertical:matmul{9}",
            }));
}

TEST(AnchorFusion, ConvEpilogueChainWithTransposePrologue) {
  // transpose -> conv2d -> add -> relu
  RulesFixture f;
  auto x = f.ir.var("x");
  auto t = f.ir.call("transpose", {x});
  auto conv = f.ir.call("conv2d", {t, f.ir.constant("w")});
  auto add = f.ir.call("add", {conv, f.ir.constant("b")});
  auto relu = f.ir.call("relu", {add});
  f.ir.output(relu);
  f.build();
  // x=0 transpose=1 w=2 conv=3 b=4 add=5 relu=6
  ASSERT_EQ(f.at(relu), 6u);
  EXPECT_EQ(f.describe(anchor_fusion<ExprGraph>(), "t"),
            f.lines({
                "t:anchor_fusion.vertical:transpose+conv2d{1,3}",
                "t:anchor_fusion.vertical:transpose+conv2d+add{1,3,5}",
                "t:anchor_fusion.vertical:transpose+conv2d+add+relu{1,3,5,6}",
                "t:anchor_fusion.vertical:conv2d{3}",
                "t:anchor_fusion.vertical:conv2d+add{3,5}",
                "t:anchor_fusion.vertical:conv2d+add+relu{3,5,6}",
            }));
  AnchorFusionOptions short_epilogue;
  short_epilogue.max_epilogue = 1;
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(short_epilogue), "t"), f.lines({"{1,3}", "{1,3,5}", "{3}", "{3,5}"}));
  AnchorFusionOptions no_epilogue;
  no_epilogue.max_epilogue = 0;
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(no_epilogue), "t"), f.lines({"{1,3}", "{3}"}));
  // Only elementwise epilogues: add (broadcast) stops the chain.
  AnchorFusionOptions elemwise;
  elemwise.epilogue_max_kind = OpKind::elemwise;
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(elemwise), "t"), f.lines({"{1,3}", "{3}"}));
  // Only broadcast prologues: the transpose (injective) is not taken.
  AnchorFusionOptions narrow_prologue;
  narrow_prologue.prologue_max_kind = OpKind::broadcast;
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(narrow_prologue), "t"), f.lines({"{3}", "{3,5}", "{3,5,6}"}));
}

TEST(AnchorFusion, PrologueOnlyWhenTheAnchorIsItsOnlyConsumer) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto y = f.ir.var("y");
  auto tx = f.ir.call("transpose", {x});
  auto ry = f.ir.call("reshape", {y});
  auto mm = f.ir.call("matmul", {tx, ry});
  auto other = f.ir.call("relu", {ry});
  f.ir.output(mm);
  f.ir.output(other);
  f.build();
  // x=0 tx=1 y=2 ry=3 mm=4 other=5: ry also feeds the relu, so only tx is a prologue.
  ASSERT_EQ(f.at(other), 5u);
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(), "t"), f.lines({"{1,4}", "{4}"}));
}

TEST(AnchorFusion, AllPrologueOpsTogether) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto y = f.ir.var("y");
  auto tx = f.ir.call("transpose", {x});
  auto ry = f.ir.call("reshape", {y});
  auto mm = f.ir.call("matmul", {tx, ry});
  auto relu = f.ir.call("relu", {mm});
  f.ir.output(relu);
  f.build();
  // x=0 tx=1 y=2 ry=3 mm=4 relu=5
  ASSERT_EQ(f.at(relu), 5u);
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(), "t"), f.lines({"{1,3,4}", "{1,3..5}", "{4}", "{4,5}"}));
}

TEST(AnchorFusion, EveryEpilogueBranchAndMultiOutput) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto conv = f.ir.call("conv2d", {x, f.ir.constant("w")});
  auto relu = f.ir.call("relu", {conv});
  auto add = f.ir.call("add", {conv, relu});
  auto tanh = f.ir.call("tanh", {relu});
  f.ir.output(add);
  f.ir.output(tanh);
  f.build();
  // x=0 w=1 conv=2 relu=3 add=4 tanh=5. Chains: conv-relu, conv-relu-add, conv-relu-tanh,
  // conv-add. conv-add alone is not convex (conv -> relu -> add leaves and re-enters).
  ASSERT_EQ(f.at(tanh), 5u);
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(), "t"), f.lines({"{2}", "{2,3}", "{2..4}", "{2,3,5}"}));
  // {2,3,5}: conv and relu also feed add outside, so they are exits next to tanh.
  auto all = anchor_fusion<ExprGraph>().all_candidates(*f.graph, "t");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[3].sub_graph.exit().to_string(), "{2,3,5}");
}

TEST(AnchorFusion, DropsNonConvexCandidates) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto dense = f.ir.call("dense", {x, f.ir.constant("w")});
  auto sm = f.ir.call("softmax", {dense});
  auto relu = f.ir.call("relu", {dense});
  auto add = f.ir.call("add", {relu, sm});
  f.ir.output(add);
  f.build();
  // x=0 w=1 dense=2 relu=3 sm=4 add=5? Inputs of add are relu then sm: relu comes first.
  ASSERT_EQ(f.at(relu), 3u);
  ASSERT_EQ(f.at(sm), 4u);
  // dense-relu-add would skip the softmax on dense -> softmax -> add: not convex.
  EXPECT_EQ(f.insides(anchor_fusion<ExprGraph>(), "t"), f.lines({"{2}", "{2,3}"}));
}

TEST(AnchorFusion, IsDeterministicAndDescribesItsOptions) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto d1 = f.ir.call("dense", {x, f.ir.constant("w1")});
  auto d2 = f.ir.call("dense", {x, f.ir.constant("w2")});
  f.ir.output(f.ir.call("add", {d1, d2}));
  f.build();
  auto rule = anchor_fusion<ExprGraph>();
  // x=0 w1=1 d1=2 w2=3 d2=4 add=5: both denses share the add as their one epilogue.
  EXPECT_EQ(f.insides(rule, "t"), f.lines({"{2}", "{2,4}", "{2,4,5}", "{2,5}", "{4}", "{4,5}"}));
  EXPECT_EQ(f.describe(rule, "t"), f.describe(rule, "t"));
  EXPECT_EQ(rule.describe(),
            "anchor_fusion(epilogue_max_kind broadcast, max_epilogue 3, prologue_max_kind injective, horizontal on)");
  EXPECT_EQ(rule.name(), "anchor_fusion");
  AnchorFusionOptions o;
  o.epilogue_max_kind = OpKind::elemwise;
  o.max_epilogue = 1;
  o.prologue_max_kind = OpKind::broadcast;
  o.horizontal = false;
  EXPECT_EQ(anchor_fusion<ExprGraph>(o).describe(),
            "anchor_fusion(epilogue_max_kind elemwise, max_epilogue 1, prologue_max_kind broadcast, horizontal off)");
  // Composes with only_valid: one exit.
  SubGraphConfig one_exit;
  one_exit.max_exits = 1;
  EXPECT_EQ(f.insides(only_valid(rule, one_exit), "t"), f.lines({"{2}", "{2,4,5}", "{2,5}", "{4}", "{4,5}"}));
}

}  // namespace
}  // namespace collage
