#include "collage/rules/combine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/combinators.hpp"
#include "common/expr_ir.hpp"
#include "common/random_ops_graph.hpp"
#include "common/rules_fixture.hpp"
#include "common/sweep_problems.hpp"
#include "common/tvm_combine.hpp"

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

TEST(Combine, ByKindAcceptsUpToEachBound) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto relu = f.ir.call("relu", {x});
  auto add = f.ir.call("add", {relu, f.ir.constant("b")});
  auto conv = f.ir.call("conv2d", {add, f.ir.constant("w")});
  auto sum = f.ir.call("sum", {conv});
  f.ir.output(sum);
  const auto& g = f.build();
  auto one = [&](const testing_ir::Expr* e) { return SubGraph(g, IndexSet(g.size(), {f.at(e)})); };
  const SubGraph s_relu = one(relu), s_add = one(add), s_conv = one(conv), s_sum = one(sum);
  ASSERT_EQ(s_relu.kind(), OpKind::elemwise);
  ASSERT_EQ(s_add.kind(), OpKind::broadcast);
  ASSERT_EQ(s_conv.kind(), OpKind::anchor);
  ASSERT_EQ(s_sum.kind(), OpKind::reduce);
  const C anchor_broadcast = C::by_kind(OpKind::anchor, OpKind::broadcast);
  EXPECT_EQ(anchor_broadcast.describe(), "by_kind(anchor,broadcast)");
  EXPECT_EQ(anchor_broadcast.mode(), C::Mode::pair);
  EXPECT_TRUE(anchor_broadcast.accepts(g, s_relu, s_add));   // below both bounds
  EXPECT_TRUE(anchor_broadcast.accepts(g, s_conv, s_add));   // at both bounds
  EXPECT_FALSE(anchor_broadcast.accepts(g, s_add, s_conv));  // downstream above its bound
  EXPECT_FALSE(anchor_broadcast.accepts(g, s_conv, s_sum));
  const C broadcast_reduce = C::by_kind(OpKind::broadcast, OpKind::reduce);
  EXPECT_TRUE(broadcast_reduce.accepts(g, s_add, s_sum));
  EXPECT_FALSE(broadcast_reduce.accepts(g, s_conv, s_sum));  // upstream above its bound
  // A user combiner still decides through its predicate.
  const C none =
      C::pairwise("none", [](const DataflowGraph<ExprGraph>&, const SubGraph&, const SubGraph&) { return false; });
  EXPECT_FALSE(none.accepts(g, s_relu, s_add));
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
  EXPECT_EQ(f.insides(proj, "t"), f.lines({"{1}", "{1,2}", "{1,2,4}", "{1,4}", "{3}", "{5}", "{7}"}));
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

/// The graph of issue 26's reproducer (62 nodes: splits read through projections, two tuples
/// concatenated, constants), in the expression IR. Ops take their kinds from default_kind(), except
/// those listed by the reproducer with another kind.
struct SlowCandidatesGraph : RulesFixture {
  SlowCandidatesGraph() {
    struct Row {
      const char* id;
      const char* op;
      std::vector<std::string> inputs;
    };
    const std::vector<Row> rows = {
      {"x", "input", {}},
      {"w0", "const", {}},
      {"n0", "bias_add", {"x", "w0"}},
      {"n1", "transpose", {"n0"}},
      {"n2", "relu", {"n1"}},
      {"n3", "sigmoid", {"x"}},
      {"n4", "add", {"n3", "n2"}},
      {"n5", "add", {"n4", "n3"}},
      {"n6", "multiply", {"n0", "n2"}},
      {"n7", "multiply", {"n6", "n2"}},
      {"n8", "exp", {"n7"}},
      {"n9", "sigmoid", {"n3"}},
      {"w10", "const", {}},
      {"n10", "conv2d", {"x", "w10"}},
      {"n11", "multiply", {"n10", "x"}},
      {"n12", "multiply", {"n11", "n3"}},
      {"g13", "const", {}},
      {"b13", "const", {}},
      {"n13", "layer_norm", {"n12", "g13", "b13"}},
      {"n14", "transpose", {"n13"}},
      {"n15", "sigmoid", {"n14"}},
      {"n16", "unknown_op", {"n15"}},
      {"w17", "const", {}},
      {"n17", "conv2d", {"n16", "w17"}},
      {"n18", "relu", {"n17"}},
      {"w19", "const", {}},
      {"n19", "dense", {"x", "w19"}},
      {"w20", "const", {}},
      {"n20", "conv2d", {"n19", "w20"}},
      {"n21", "gelu", {"n15"}},
      {"n22", "multiply", {"n18", "n1"}},
      {"n23", "relu", {"n22"}},
      {"n24", "reshape", {"n23"}},
      {"n25", "split", {"n24"}},
      {"n25.0", "get_item", {"n25"}},
      {"n25.1", "get_item", {"n25"}},
      {"n26", "sigmoid", {"n25.1"}},
      {"n27", "split", {"x"}},
      {"n27.0", "get_item", {"n27"}},
      {"n27.1", "get_item", {"n27"}},
      {"t28", "tuple", {"n27.1", "n9", "n25.1"}},
      {"n28", "concat", {"t28"}},
      {"n29", "transpose", {"n28"}},
      {"w30", "const", {}},
      {"n30", "dense", {"n29", "w30"}},
      {"n31", "gelu", {"n9"}},
      {"s32", "const", {}},
      {"n32", "multiply", {"n31", "s32"}},
      {"n33", "add", {"n32", "n12"}},
      {"n34", "add", {"n33", "n4"}},
      {"n35", "reshape", {"n34"}},
      {"n36", "reshape", {"n27.0"}},
      {"t37", "tuple", {"n36", "n4"}},
      {"n37", "concat", {"t37"}},
      {"n38", "relu", {"n37"}},
      {"n39", "add", {"n8", "n29"}},
      {"n40", "sigmoid", {"n6"}},
      {"w41", "const", {}},
      {"n41", "dense", {"n40", "w41"}},
      {"n42", "add", {"n36", "n29"}},
      {"n43", "add", {"n40", "n25.1"}},
      {"n44", "batch_matmul", {"n43", "n27.1"}},
    };
    const std::map<std::string, OpKind> kinds = {{"sigmoid", OpKind::elemwise},   {"gelu", OpKind::elemwise},
                                                 {"layer_norm", OpKind::reduce},  {"unknown_op", OpKind::opaque},
                                                 {"bias_add", OpKind::broadcast}, {"batch_matmul", OpKind::anchor}};
    std::map<std::string, const testing_ir::Expr*> at;
    for (const Row& row : rows) {
      std::vector<const testing_ir::Expr*> args;
      for (const std::string& in : row.inputs) args.push_back(at.at(in));
      const std::string op = row.op;
      const std::string id = row.id;
      if (op == "input") {
        at[id] = ir.var(id);
      } else if (op == "const") {
        at[id] = ir.constant(id);
      } else if (op == "tuple") {
        at[id] = ir.tuple(args);
      } else if (op == "get_item") {
        at[id] = ir.get_item(args.at(0), static_cast<std::size_t>(id.back() - '0'));
      } else {
        auto kind = kinds.find(op);
        at[id] = kind == kinds.end() ? ir.call(op, args) : ir.call(op, args, kind->second);
      }
    }
    for (const char* id : {"n5", "n20", "n21", "n25.0", "n26", "n30", "n35", "n38", "n39", "n41", "n42", "n44"}) ir.output(at.at(id));
    build();
  }
};

TEST(Combine, OnlyValidBoundsEveryJoinByItsDepth) {
  // Issue 26: FuseOps' combiners under only_valid at depth 3 on the reproducer's graph. A join is
  // at least as deep as its parts, so joins deeper than the enclosing only_valid allows are never
  // built; with tuples and projections counted in the depth (as TVM counts them) the run ends after
  // a few hundred joins. Unbounded tuple and projection joins grew past any budget here.
  SlowCandidatesGraph f;
  CombineStats stats;
  CombineLimits limits;
  limits.max_depth = 3;
  limits.max_candidates = 2000;
  limits.report = [&](const CombineStats& s) { stats = s; };
  const auto fused = combine(op_kind<ExprGraph>(OpKind::anchor), fuse_ops_combiners(), limits);
  const auto rule = only_valid(fused, SubGraphConfig{1, false, 3});
  const std::vector<Candidate> valid = rule.all_candidates(*f.graph, "t");
  EXPECT_FALSE(stats.truncated) << stats.stopped_by;
  EXPECT_LT(stats.joins_built, 1000u);
  // Nothing the unbounded run keeps is lost: the same candidates as filtering its result (which
  // here stops at the candidate budget, so compare against what it found).
  CombineLimits unbounded = limits;
  unbounded.max_candidates = 1500;
  std::vector<Candidate> filtered;
  for (Candidate& c : combine(op_kind<ExprGraph>(OpKind::anchor), fuse_ops_combiners(), unbounded)
                          .all_candidates(*f.graph, "t")) {
    if (c.sub_graph.is_valid(*f.graph, SubGraphConfig{1, false, 3})) filtered.push_back(std::move(c));
  }
  for (const Candidate& c : filtered) {
    EXPECT_TRUE(std::find(valid.begin(), valid.end(), c) != valid.end()) << c.to_string(*f.graph);
  }
}

TEST(Combine, UnderOnlyValidLeavesOutOnlyJoinsNoValidSubGraphContains) {
  // Under only_valid, combine leaves out the joins that no sub-graph valid under its config
  // contains (ValidSupersetTest), and so everything grown from them: what it returns must be what
  // filtering the whole run returns. Random graphs with operands from any earlier value (dense)
  // or the latest five, random configs and depth bounds, with and without the constant combiner.
  std::mt19937_64 rng(261);
  std::size_t compared = 0;
  std::size_t ruled_out = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    RulesFixture f;
    f.ir = testing_ir::random_ops_graph(rng, 8 + rng() % 30, trial % 2 == 0 ? 0 : 5);
    f.build();
    const SubGraphConfig config{rng() % 3, rng() % 4 == 0, rng() % 5};
    CombineLimits limits;
    limits.max_depth = 1 + rng() % 4;
    limits.max_candidates = 20000;
    CombineStats pruned;
    limits.report = [&](const CombineStats& s) { pruned = s; };
    std::vector<C> combiners = fuse_ops_combiners();
    if (rng() % 2 == 0) combiners.push_back(C::constant());
    const auto rule = combine(op_kind<ExprGraph>(OpKind::opaque), combiners, limits);
    const std::vector<std::string> kept = f.describe(only_valid(rule, config), "t");
    CombineLimits whole_limits = limits;
    CombineStats whole;
    whole_limits.report = [&](const CombineStats& s) { whole = s; };
    CandidateRun run;
    std::vector<std::string> filtered;
    for (const Candidate& c : combine(op_kind<ExprGraph>(OpKind::opaque), combiners, whole_limits)
                                  .all_candidates(*f.graph, "t", RuleContext{&run}.within_depth(config.max_depth))) {
      if (c.sub_graph.is_valid(*f.graph, config)) filtered.push_back(c.to_string(*f.graph));
    }
    if (whole.truncated || whole.tuple_joins_capped != 0 || whole.exits_capped != 0) continue;
    ASSERT_EQ(kept, filtered) << "trial " << trial << ", config " << to_string(config);
    EXPECT_EQ(whole.joins_ruled_out, 0u);
    ++compared;
    ruled_out += pruned.joins_ruled_out;
  }
  RecordProperty("joins_ruled_out", std::to_string(ruled_out));
  EXPECT_GT(compared, 900u);
  EXPECT_GT(ruled_out, 2000u);
}

/// What FuseOps' combiners under only_valid({1 exit, no taps, depth 4}) return on f's graph with
/// `limits`: the candidates, the run's warnings and its CombineStats.
struct LimitedRun {
  std::vector<Candidate> candidates;
  std::vector<std::string> warnings;
  CombineStats stats;
};
LimitedRun fuse_ops_within(const RulesFixture& f, CombineLimits limits) {
  LimitedRun out;
  limits.report = [&](const CombineStats& s) { out.stats = s; };
  CandidateRun candidate_run;
  const auto rule = only_valid(combine(op_kind<ExprGraph>(OpKind::opaque), fuse_ops_combiners(), limits),
                               SubGraphConfig{1, false, 4});
  out.candidates = rule.all_candidates(*f.graph, "t", RuleContext{&candidate_run});
  out.warnings = candidate_run.take_warnings();
  return out;
}

TEST(Combine, TupleArgStopsAtMaxTupleJoinsAroundOneTuple) {
  // 12 elementwise chains joined by concat(tuple(...)): each end has two fusible producers (itself
  // and the pair ending there), so the joins of the concat, the tuple and one producer per field
  // number 2^12. Pairwise joins stop at depth 2, so no pairwise join grows a tuple join (depth 3
  // or more) into another.
  RulesFixture f;
  f.ir = testing_ir::sweep::parallel_chains(12, 12 * 6, true);
  f.build();
  CombineLimits limits;
  limits.max_depth = 2;
  limits.max_tuple_joins = 0;
  const LimitedRun all = fuse_ops_within(f, limits);
  limits.max_tuple_joins = 100;
  const LimitedRun capped = fuse_ops_within(f, limits);
  EXPECT_EQ(all.stats.tuple_joins_capped, 0u);
  EXPECT_TRUE(all.warnings.empty());
  EXPECT_GT(all.candidates.size(), 4000u);  // 2^12 joins around the tuple alone
  EXPECT_EQ(capped.stats.tuple_joins_capped, 1u);
  EXPECT_LT(capped.candidates.size(), all.candidates.size());
  ASSERT_EQ(capped.warnings.size(), 1u);
  EXPECT_NE(capped.warnings[0].find("tuple_arg offered at most 100 joins around a tuple (max_tuple_joins)"),
            std::string::npos)
      << capped.warnings[0];
}

/// The most candidates of `candidates` with one exit set.
std::size_t most_with_one_exit_set(const std::vector<Candidate>& candidates) {
  std::map<std::string, std::size_t> per_exit;
  for (const Candidate& c : candidates) ++per_exit[c.sub_graph.exit().to_string()];
  std::size_t most = 0;
  for (const auto& [exits, count] : per_exit) most = std::max(most, count);
  return most;
}

TEST(Combine, KeepsAtMostMaxJoinsPerExitWithTheSameExits) {
  // 8 elementwise chains joined by concat(tuple(...)): a join rooted at the concat may take in the
  // tail of any subset of the chains at the same depth, all with the concat as their one exit.
  RulesFixture f;
  f.ir = testing_ir::sweep::parallel_chains(8, 8 * 6, true);
  f.build();
  CombineLimits limits;
  limits.max_depth = 4;
  limits.max_tuple_joins = 0;
  limits.max_joins_per_exit = 0;
  const LimitedRun all = fuse_ops_within(f, limits);
  limits.max_joins_per_exit = 40;
  const LimitedRun capped = fuse_ops_within(f, limits);
  EXPECT_EQ(all.stats.exits_capped, 0u);
  EXPECT_TRUE(all.warnings.empty());
  EXPECT_GT(most_with_one_exit_set(all.candidates), 200u);
  EXPECT_GE(capped.stats.exits_capped, 1u);
  EXPECT_LE(most_with_one_exit_set(capped.candidates), 40u + 1);  // the joins kept and the seed with those exits
  EXPECT_LT(capped.stats.joins_built, all.stats.joins_built);
  ASSERT_EQ(capped.warnings.size(), 1u);
  EXPECT_NE(capped.warnings[0].find("kept at most 40 joins with the same exit nodes (max_joins_per_exit)"),
            std::string::npos)
      << capped.warnings[0];
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

// ---------------------------------------------------------------------------------------------
// TVM's own tests of its combiner rules (Apache TVM v0.19.0, tests/cpp/relay/collage/
// partition_rule_test.cc), on the same graphs. Node members are named after TVM's post-DFS index
// (t6 is TVM's node 6) so the expected sets read as TVM's do. combine must propose at least TVM's
// candidates; where it proposes more, the extra sets are listed with the reason (see
// docs/rules.md).

using Sets = std::set<std::string>;
using testing_ir::Expr;

/// The inside sets of `rule`'s candidates, as "{...}" strings.
Sets proposed(const RulesFixture& f, const PartitionRule<ExprGraph>& rule) {
  const std::vector<std::string> all = f.insides(rule, "t");
  return Sets(all.begin(), all.end());
}

/// The inside sets `groups` list, as "{...}" strings.
Sets sets_of(const RulesFixture& f, std::initializer_list<std::initializer_list<const Expr*>> groups) {
  Sets out;
  for (const auto& g : groups) out.insert(f.set(g).to_string());
  return out;
}

/// TVM's GPT2ExtractOps: dense + bias, then the tanh approximation of gelu.
struct Gpt2Ops : RulesFixture {
  const Expr* x = ir.var("x");
  const Expr* t5 = ir.constant("W");
  const Expr* t6 = ir.call("dense", {x, t5});                                 // A
  const Expr* t7 = ir.constant("b");
  const Expr* t8 = ir.call("add", {t6, t7});                                  // B
  const Expr* t9 = ir.call("reshape", {t8});                                  // I
  const Expr* t15 = ir.call("power", {t9, ir.scalar("3f")});                  // B
  const Expr* t17 = ir.call("multiply", {t15, ir.scalar("0.044715f")});       // B
  const Expr* t18 = ir.call("add", {t9, t17});                                // B
  const Expr* t20 = ir.call("multiply", {t18, ir.scalar("0.797885f")});       // B
  const Expr* t21 = ir.call("tanh", {t20});                                   // E
  const Expr* t11 = ir.call("multiply", {t9, ir.scalar("0.5f")});             // B
  const Expr* t23 = ir.call("add", {t21, ir.scalar("1f")});                   // B
  const Expr* t24 = ir.call("multiply", {t11, t23});                          // B
  Gpt2Ops() {
    ir.output(t24);
    build();
  }
  /// The 11 operator calls, each a candidate of op_kind.
  Sets calls() const { return sets_of(*this, {{t6}, {t8}, {t9}, {t11}, {t15}, {t17}, {t18}, {t20}, {t21}, {t23}, {t24}}); }
  /// What combine_by_kind_A_B proposes here beyond TVM (see CombineLikeTvm.ByKind).
  Sets beyond_tvm_a_b() const { return sets_of(*this, {{t11, t23, t24}, {t11, t21, t23, t24}}); }
  /// TVM's candidates of combine_by_kind_A_B at max_depth 3 beyond the calls.
  Sets by_kind_a_b() const {
    return sets_of(*this, {{t6, t8},           {t9, t11},          {t9, t15},          {t9, t11, t15},
                           {t9, t15, t17},     {t9, t11, t15, t17}, {t11, t24},         {t15, t17},
                           {t17, t18},         {t18, t20},         {t20, t21},         {t21, t23},
                           {t23, t24},         {t15, t17, t18},    {t17, t18, t20},    {t18, t20, t21},
                           {t20, t21, t23},    {t21, t23, t24}});
  }
};

/// TVM's GPT2ExtractTuples: a split whose second and third fields are reshaped, transposed and
/// concatenated again.
struct Gpt2Tuples : RulesFixture {
  const Expr* x = ir.var("x");
  const Expr* t6 = ir.call("split", {x});                                     // I
  const Expr* t7 = ir.get_item(t6, 1);
  const Expr* t8 = ir.call("reshape", {t7});                                  // I
  const Expr* t11 = ir.get_item(t6, 2);
  const Expr* t12 = ir.call("reshape", {t11});                                // I
  const Expr* t13 = ir.call("transpose", {t12});                              // I
  const Expr* t9 = ir.call("transpose", {t8});                                // I
  const Expr* t10 = ir.call("expand_dims", {t9}, OpKind::broadcast);          // B
  const Expr* t14 = ir.call("expand_dims", {t13}, OpKind::broadcast);         // B
  const Expr* t15 = ir.tuple({t10, t14});
  const Expr* t16 = ir.call("concatenate", {t15}, OpKind::injective);         // I
  Gpt2Tuples() {
    ir.output(t16);
    build();
  }
  Sets calls() const { return sets_of(*this, {{t6}, {t8}, {t9}, {t10}, {t12}, {t13}, {t14}, {t16}}); }
};

Sets united(Sets a, const Sets& b) {
  a.insert(b.begin(), b.end());
  return a;
}

/// The sets of `a` that are not in `b`.
Sets minus(const Sets& a, const Sets& b) {
  Sets out;
  for (const std::string& x : a) {
    if (b.count(x) == 0) out.insert(x);
  }
  return out;
}

/// Checks that `ours` holds every set of `tvm`, and exactly `extra` besides.
void expect_tvm_and(const Sets& ours, const Sets& tvm, const Sets& extra) {
  EXPECT_EQ(minus(tvm, ours), Sets{}) << "proposed by TVM, missing here";
  EXPECT_EQ(minus(ours, tvm), extra) << "proposed here, not by TVM";
}

TEST(CombineLikeTvm, ByKind) {
  Gpt2Ops f;
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor), {C::by_kind(OpKind::anchor, OpKind::broadcast)}, {3});
  // Beyond TVM: {t11, t23, t24}, the multiply t11 with {t23, t24} (TVM joins an upstream candidate
  // only in the round after it was made, a bug: t11 is a seed, {t23, t24} a join of round 1); and
  // {t11, t21, t23, t24}, whose depth is 3 (t21, t23, t24) where TVM bounds the sum of the parts'
  // depths (1 + 3).
  expect_tvm_and(proposed(f, rule), united(f.calls(), f.by_kind_a_b()), f.beyond_tvm_a_b());
}

TEST(CombineLikeTvm, TupleArg) {
  Gpt2Tuples f;
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor), {C::tuple_arg()}, {3});
  // The concatenate((expand_dims(...), expand_dims(...))) is grouped.
  EXPECT_EQ(proposed(f, rule), united(f.calls(), sets_of(f, {{f.t10, f.t14, f.t15, f.t16}})));
}

TEST(CombineLikeTvm, TupleProj) {
  Gpt2Tuples f;
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor), {C::tuple_proj()}, {3});
  // The split with either projection, or both.
  EXPECT_EQ(proposed(f, rule), united(f.calls(), sets_of(f, {{f.t6, f.t7}, {f.t6, f.t11}, {f.t6, f.t7, f.t11}})));
}

TEST(CombineLikeTvm, Constant) {
  Gpt2Ops f;
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor), {C::constant()}, {3});
  // The dense and the add with their tensor constants (the scalars are inlined, never joined).
  EXPECT_EQ(proposed(f, rule), united(f.calls(), sets_of(f, {{f.t5, f.t6}, {f.t7, f.t8}})));
}

TEST(CombineLikeTvm, Mixed) {
  Gpt2Ops f;
  // FuseOps' pairwise rules and the constant combiner.
  auto rule = combine(op_kind<ExprGraph>(OpKind::anchor),
                      {C::by_kind(OpKind::anchor, OpKind::broadcast), C::by_kind(OpKind::broadcast, OpKind::reduce),
                       C::by_kind(OpKind::injective, OpKind::injective), C::constant()},
                      {3});
  const Sets tvm = united(united(f.calls(), f.by_kind_a_b()),
                          sets_of(f, {// constant args
                                      {f.t5, f.t6}, {f.t7, f.t8},
                                      // B -> R
                                      {f.t8, f.t9}, {f.t8, f.t9, f.t11}, {f.t8, f.t9, f.t15},
                                      // constants and A -> B
                                      {f.t5, f.t6, f.t8}, {f.t5, f.t6, f.t7, f.t8},
                                      // constants and B -> R: grown by a constant in one round, by
                                      // a pairwise join in a later one, within depth 3
                                      {f.t7, f.t8, f.t9}, {f.t7, f.t8, f.t9, f.t11}, {f.t7, f.t8, f.t9, f.t15}}));
  // Beyond TVM, for the same two reasons as in ByKind: those of ByKind; {t6, t7, t8}, the seed t6
  // with {t7, t8} (an old upstream candidate); {t7, t8, t9, t11, t15} and {t8, t9, t11, t15}, of
  // depth 3 (t8, t9 and t11 or t15) where the parts' depths add up to 4.
  expect_tvm_and(proposed(f, rule), tvm,
                 united(f.beyond_tvm_a_b(),
                        sets_of(f, {{f.t6, f.t7, f.t8}, {f.t7, f.t8, f.t9, f.t11, f.t15}, {f.t8, f.t9, f.t11, f.t15}})));
}

TEST(CombineLikeTvm, OnlyValid) {
  Gpt2Ops f;
  auto rule = only_valid(combine(op_kind<ExprGraph>(OpKind::anchor), {C::by_kind(OpKind::anchor, OpKind::broadcast)},
                                 {3}),
                         SubGraphConfig{1, false, 2});
  // Of by_kind_a_b, those of two or three exits are dropped: {9,11}, {9,15}, {9,11,15}, {9,15,17},
  // {15,17,18}, {17,18,20}, {18,20,21}, {20,21,23}, {21,23,24}, {9,11,15,17}.
  expect_tvm_and(proposed(f, rule),
                 united(f.calls(), sets_of(f, {{f.t6, f.t8}, {f.t11, f.t24}, {f.t15, f.t17}, {f.t17, f.t18},
                                               {f.t18, f.t20}, {f.t20, f.t21}, {f.t21, f.t23}, {f.t23, f.t24}})),
                 sets_of(f, {{f.t11, f.t23, f.t24}}));  // one exit, depth 2: see ByKind
}

/// The graph as "index:op(inputs)" items, for failure messages.
std::string graph_text(const DataflowGraph<ExprGraph>& graph) {
  std::string out;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    out += " " + std::to_string(i) + ":" + graph.op_name(i) + "(";
    for (std::size_t k = 0; k < graph.inputs(i).size(); ++k) out += (k == 0 ? "" : ",") + std::to_string(graph.inputs(i)[k]);
    out += ")";
  }
  return out;
}

TEST(CombineLikeTvm, AtLeastTvmsCandidatesOnRandomGraphs) {
  // Against a port of TVM's CombinePartitionRule (tests/common/tvm_combine.hpp): random graphs,
  // random sets of combiners, depth bounds 0 (none) to 4. Every convex candidate TVM proposes must
  // be proposed here. (TVM's tuple_arg does not check convexity: its non-convex unions could never
  // be kernels.)
  using Tvm = testing_ir::TvmCombine<ExprGraph>;
  std::mt19937_64 rng(16);
  std::size_t tvm_total = 0;
  std::size_t extra_total = 0;
  std::size_t non_convex = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    RulesFixture f;
    f.ir = testing_ir::random_ops_graph(rng, 6 + rng() % 10);
    f.build();
    const auto& graph = *f.graph;
    std::vector<C> combiners;
    Tvm::Rules tvm_rules;
    const std::pair<OpKind, OpKind> kinds[] = {{OpKind::anchor, OpKind::broadcast},
                                               {OpKind::broadcast, OpKind::reduce},
                                               {OpKind::injective, OpKind::injective},
                                               {OpKind::opaque, OpKind::opaque}};
    for (const auto& [up, down] : kinds) {
      if (rng() % 2 != 0) continue;
      combiners.push_back(C::by_kind(up, down));
      tvm_rules.simple.push_back({up, down});
    }
    if ((tvm_rules.tuple_arg = rng() % 2 == 0)) combiners.push_back(C::tuple_arg());
    if ((tvm_rules.tuple_proj = rng() % 2 == 0)) combiners.push_back(C::tuple_proj());
    if ((tvm_rules.constant = rng() % 2 == 0)) combiners.push_back(C::constant());
    const std::size_t max_depth = rng() % 5 == 0 ? 0 : 1 + rng() % 4;
    SCOPED_TRACE("trial " + std::to_string(trial) + ", max_depth " + std::to_string(max_depth));

    auto seeds_rule = op_kind<ExprGraph>(OpKind::anchor);
    std::vector<std::size_t> seeds;
    for (const Candidate& c : seeds_rule.all_candidates(graph, "t")) seeds.push_back(c.sub_graph.first_inside());
    const Sets ours = proposed(f, combine(seeds_rule, combiners, {max_depth}));
    Sets tvm;
    for (const IndexSet& inside : Tvm(graph, tvm_rules, max_depth).run(seeds)) {
      if (is_convex(graph, inside)) {
        tvm.insert(inside.to_string());
      } else {
        ++non_convex;
      }
    }
    ASSERT_EQ(minus(tvm, ours), Sets{}) << "proposed by TVM, missing here; combiners "
                                         << combine(seeds_rule, combiners, {max_depth}).describe() << "; graph "
                                         << graph_text(graph);
    tvm_total += tvm.size();
    extra_total += minus(ours, tvm).size();
  }
  RecordProperty("tvm_candidates", std::to_string(tvm_total));
  RecordProperty("extra_candidates", std::to_string(extra_total));
  RecordProperty("tvm_non_convex", std::to_string(non_convex));
  EXPECT_GT(tvm_total, 10000u);
}

}  // namespace
}  // namespace collage
