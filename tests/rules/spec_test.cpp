#include "collage/rules/partition_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collage/rules/pattern_rule.hpp"
#include "collage/search/exact_search.hpp"
#include "collage/search/greedy_search.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"
#include "common/random_ops_graph.hpp"
#include "common/rules_fixture.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using testing_ir::RulesFixture;
namespace models = testing_ir::models;

Pattern<ExprGraph> parse(const std::string& text) {
  auto r = parse_pattern<ExprGraph>(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : Pattern<ExprGraph>();
}

NodePredicate<ExprGraph> ops_named(std::set<std::string> names) {
  return [names = std::move(names)](const DataflowGraph<ExprGraph>& g, std::size_t i) {
    return names.count(g.op_name(i)) != 0;
  };
}

// ---------------------------------------------------------------------------------------------
// pattern

// x=0 w=1 conv2d=2 b=3 add=4 relu=5 abs=6
struct ConvGraph : RulesFixture {
  ConvGraph() {
    auto x = ir.var("x");
    auto conv = ir.call("conv2d", {x, ir.constant("w")});
    auto add = ir.call("add", {conv, ir.constant("b")});
    auto relu = ir.call("relu", {add});
    ir.output(ir.call("abs", {relu}));
    build();
  }
};

TEST(PatternRule, CandidatePerMatch) {
  ConvGraph f;
  auto rule = pattern<ExprGraph>("conv_bias_relu", parse("relu(add(conv2d(*, const), *))"));
  EXPECT_EQ(f.describe(rule, "lib"), f.lines({"lib:conv_bias_relu:conv2d+add+relu{2,4,5}"}));
  EXPECT_EQ(rule.name(), "conv_bias_relu");
  EXPECT_EQ(rule.describe(), "pattern(conv_bias_relu, relu(add(conv2d(*, const), *)))");
}

TEST(PatternRule, OverlappingMatchesAllKept) {
  ConvGraph f;
  // relu(*) matches at 5; abs(relu(*)) | abs(*) at 6 in two ways.
  auto rule = pattern<ExprGraph>("act", parse("relu(*) | abs(relu(*)) | abs(*)"));
  EXPECT_EQ(f.describe(rule, "t"), f.lines({"t:act:relu{5}", "t:act:relu+abs{5,6}", "t:act:abs{6}"}));
}

TEST(PatternRule, PredicateRejectsMatches) {
  ConvGraph f;
  SubGraphPredicate<ExprGraph> small = [](const DataflowGraph<ExprGraph>&, const SubGraph& s) {
    return s.size() <= 1;
  };
  auto rule = pattern<ExprGraph>("act", parse("relu(*) | abs(relu(*)) | abs(*)"), small);
  EXPECT_EQ(f.describe(rule, "t"), f.lines({"t:act:relu{5}", "t:act:abs{6}"}));
  EXPECT_EQ(rule.describe(), "pattern(act, relu(*) | abs(relu(*)) | abs(*), with predicate)");
  SubGraphPredicate<ExprGraph> none = [](const DataflowGraph<ExprGraph>&, const SubGraph&) { return false; };
  EXPECT_TRUE(f.describe(pattern<ExprGraph>("act", parse("relu(*)"), none), "t").empty());
}

TEST(PatternRule, TextOverload) {
  ConvGraph f;
  auto ok = pattern<ExprGraph>("bias", "add(kind:anchor, const)");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(f.describe(ok.value(), "t"), f.lines({"t:bias:conv2d+add{2,4}"}));
  // Named predicates are available to the text.
  PredicateTable<ExprGraph> table{{"is_relu", [](const DataflowGraph<ExprGraph>& g, std::size_t i) {
                                     return g.op_name(i) == "relu";
                                   }}};
  auto with_table = pattern<ExprGraph>("r", "?is_relu(add(*, *))", {}, table);
  ASSERT_TRUE(with_table.ok()) << with_table.error().message;
  EXPECT_EQ(f.describe(with_table.value(), "t"), f.lines({"t:r:add+relu{4,5}"}));
  // Parse errors pass through unchanged.
  auto bad = pattern<ExprGraph>("bad", "relu(add(*");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "pattern 'relu(add(*' at column 10: expected ',' or ')'");
  auto unknown = pattern<ExprGraph>("bad", "?nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "pattern '?nope' at column 1: unknown predicate 'nope' (no predicates are defined)");
}

// ---------------------------------------------------------------------------------------------
// Native fusion

TEST(NativeFusion, Gpt2ChainMaxDepth3) {
  RulesFixture f;
  models::gpt2_chain(f.ir);
  f.build();
  ASSERT_EQ(f.graph->size(), 11u);
  // x=0 W=1 dense=2 b=3 add=4 reshape=5 c=6 multiply=7 3.0=8 power=9 tanh=10.
  // Kinds: dense anchor, add / multiply / power broadcast, reshape injective, tanh elemwise.
  // Joins that fire:
  //   dense+add         by_kind(anchor,broadcast)
  //   add+reshape       by_kind(broadcast,reduce)      (injective <= reduce)
  //   reshape+multiply  by_kind(injective,injective)   (broadcast <= injective)
  //   multiply+power, power+tanh   by_kind(broadcast,reduce)
  //   add+reshape+multiply, reshape+multiply+power, multiply+power+tanh   (depth 3)
  // Never: dense+add+reshape (an anchor group only takes broadcast or less: the downstream
  // reshape is injective, and the upstream {dense,add} is an anchor for the other two rules).
  const std::string n = "[Primitive=1:";
  auto kernel = [&](const std::string& rule, const std::string& sub) {
    return "tvm:primitive." + rule + ":" + sub + n + sub + "]";
  };
  EXPECT_EQ(f.describe(native_fusion_rule<ExprGraph>(3), "tvm"),
            f.lines({
                kernel("op_kind", "dense{2}"),
                kernel("fuse", "dense+add{2,4}"),
                kernel("op_kind", "add{4}"),
                kernel("fuse", "add+reshape{4,5}"),
                kernel("fuse", "add+reshape+multiply{4,5,7}"),
                kernel("op_kind", "reshape{5}"),
                kernel("fuse", "reshape+multiply{5,7}"),
                kernel("fuse", "reshape+multiply+power{5,7,9}"),
                kernel("op_kind", "multiply{7}"),
                kernel("fuse", "multiply+power{7,9}"),
                kernel("fuse", "multiply+power+tanh{7,9,10}"),
                kernel("op_kind", "power{9}"),
                kernel("fuse", "power+tanh{9,10}"),
                kernel("op_kind", "tanh{10}"),
            }));
  // Depth 2 keeps exactly the singletons and pairs.
  EXPECT_EQ(f.insides(native_fusion_rule<ExprGraph>(2), "tvm"),
            f.lines({"{2}", "{2,4}", "{4}", "{4,5}", "{5}", "{5,7}", "{7}", "{7,9}", "{9}", "{9,10}", "{10}"}));
}

TEST(NativeFusion, DescribeAndSpec) {
  RulesFixture f;
  models::gpt2_chain(f.ir);
  f.build();
  auto rule = native_fusion_rule<ExprGraph>(3);
  EXPECT_EQ(rule.describe(),
            "primitive[native](only_valid(combine(op_kind(opaque), [by_kind(anchor,broadcast), "
            "by_kind(broadcast,reduce), by_kind(injective,injective), tuple_arg, tuple_proj], max_depth 3), "
            "{max_exits 1, taps forbidden, max_depth 3}))");
  PartitionSpec<ExprGraph> spec = native_fusion_spec<ExprGraph>("tvm", 3, 0.5);
  EXPECT_EQ(spec.target, "tvm");
  EXPECT_EQ(spec.penalty, 0.5);
  std::vector<std::string> from_spec;
  for (const Candidate& c : spec.all_candidates(*f.graph)) from_spec.push_back(c.to_string(*f.graph));
  EXPECT_EQ(from_spec, f.describe(rule, "tvm"));
  // A spec is a plain aggregate.
  PartitionSpec<ExprGraph> custom{"cpu", op_kind<ExprGraph>(OpKind::anchor)};
  EXPECT_EQ(custom.penalty, 0.0);
  EXPECT_EQ(custom.all_candidates(*f.graph).size(), 6u);
}

TEST(NativeFusion, SplitBranchesConcatOverTuple) {
  // A split feeding two branches joined by a concat over a tuple.
  RulesFixture f;
  auto x = f.ir.var("x");
  auto split = f.ir.call("split", {x});
  auto r = f.ir.call("relu", {f.ir.get_item(split, 0)});
  auto a = f.ir.call("abs", {f.ir.get_item(split, 1)});
  auto cat = f.ir.call("concat", {f.ir.tuple({r, a})});
  f.ir.output(cat);
  f.build();
  // x=0 split=1 p0=2 relu=3 p1=4 abs=5 tuple=6 concat=7
  ASSERT_EQ(f.at(cat), 7u);
  // combine (seeds split, relu, abs, concat) finds:
  //   tuple_proj: {1,2}, {1,4}, {1,2,4} (split + either projection or both)
  //   tuple_arg:  {3,5,6,7} (concat + its tuple + the producers of both fields)
  //   then by_kind(injective,injective): {1,2,3}, {1,4,5}, {1,2,3,4}, {1,2,4,5}, {1..5}, {1..7}.
  // only_valid {1 exit}: all but {3,5,6,7} and {1..7} have two exits; they are dropped. {1..7}
  // is 5 deep (split, a projection, relu, the tuple, concat) and {3,5,6,7} 3 deep (relu, the
  // tuple, concat), as TVM counts them.
  const auto sub = [](const std::string& rule, const std::string& s) {
    return "tvm:primitive." + rule + ":" + s + "[Primitive=1:" + s + "]";
  };
  EXPECT_EQ(f.describe(native_fusion_rule<ExprGraph>(5), "tvm"),
            f.lines({sub("op_kind", "split{1}"), sub("fuse", "split+relu+abs+concat{1..7}"), sub("op_kind", "relu{3}"),
                     sub("fuse", "relu+abs+concat{3,5..7}"), sub("op_kind", "abs{5}"),
                     sub("op_kind", "concat{7}")}));
  EXPECT_EQ(f.insides(native_fusion_rule<ExprGraph>(3), "tvm"),
            f.lines({"{1}", "{3}", "{3,5..7}", "{5}", "{7}"}));
  EXPECT_EQ(f.insides(native_fusion_rule<ExprGraph>(2), "tvm"), f.lines({"{1}", "{3}", "{5}", "{7}"}));
  EXPECT_EQ(f.insides(native_fusion_rule<ExprGraph>(0), "tvm"),
            f.lines({"{1}", "{1..7}", "{3}", "{3,5..7}", "{5}", "{7}"}));
}

TEST(NativeFusion, LibraryCompositesInsideNativeKernels) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto dense = f.ir.call("dense", {x, f.ir.constant("W")});
  auto bias = f.ir.call("bias_add", {dense, f.ir.constant("b")});
  f.ir.output(f.ir.call("relu", {bias}));
  f.build();
  // x=0 W=1 dense=2 b=3 bias_add=4 relu=5
  PatternTable<ExprGraph> table{{"cutlass.dense_bias", parse("bias_add(dense(*, const), const)")}};
  const std::string lib = "[Composite=cutlass.dense_bias:dense+bias_add{2,4}]";
  EXPECT_EQ(f.describe(library_in_native_rule<ExprGraph>(table, 3), "tvm"),
            f.lines({
                "tvm:primitive.op_kind:dense{2}[Primitive=1:dense{2}]",
                "tvm:primitive.fuse:dense+bias_add{2,4}[Primitive=1:dense+bias_add{2,4}]",
                "tvm:primitive.composite.cutlass.dense_bias:dense+bias_add{2,4}[Primitive=1:dense+bias_add{2,4}" +
                    lib + "]",
                "tvm:primitive.fuse:dense+bias_add+relu{2,4,5}[Primitive=1:dense+bias_add+relu{2,4,5}]",
                // The library call with a relu epilogue, in one native kernel.
                "tvm:primitive.fuse:dense+bias_add+relu{2,4,5}[Primitive=1:dense+bias_add+relu{2,4,5}" + lib + "]",
                "tvm:primitive.op_kind:bias_add{4}[Primitive=1:bias_add{4}]",
                "tvm:primitive.fuse:bias_add+relu{4,5}[Primitive=1:bias_add+relu{4,5}]",
                "tvm:primitive.op_kind:relu{5}[Primitive=1:relu{5}]",
            }));
}

// ---------------------------------------------------------------------------------------------
// BYOC

// x=0 W=1 dense=2 b=3 bias_add=4 relu=5 softmax=6 tanh=7; results softmax and tanh.
struct ByocGraph : RulesFixture {
  ByocGraph() {
    auto x = ir.var("x");
    auto dense = ir.call("dense", {x, ir.constant("W")});
    auto bias = ir.call("bias_add", {dense, ir.constant("b")});
    ir.output(ir.call("softmax", {ir.call("relu", {bias})}));
    ir.output(ir.call("tanh", {bias}));
    build();
  }
};

/// What native_fusion_rule (depth 8) does on an unrolled recurrent graph of `steps` steps.
CombineStats native_fusion_on_recurrent(void (*unroll)(ExprGraph&, std::size_t, std::size_t), std::size_t steps,
                                        std::size_t* candidates) {
  RulesFixture f;
  unroll(f.ir, steps, 24);
  f.build();
  CombineLimits limits;
  limits.max_depth = 8;
  CombineStats stats;
  limits.report = [&](const CombineStats& s) { stats = s; };
  *candidates = native_fusion_rule<ExprGraph>(limits).all_candidates(*f.graph, "native").size();
  return stats;
}

TEST(NativeFusion, JoinsTriedGrowWithTheStepsOfAnUnrolledRecurrentCell) {
  // An unrolled GRU's input projection fans out to every step and each step's slice to three
  // gates: joins of the projection with any subset of those are within the depth bound, and
  // grew the pool (and the pairs tried with it) exponentially in the steps until a kernel's one
  // exit was required to post-dominate them (ValidSupersetTest). The work now grows with the
  // steps, candidates and joins alike.
  for (auto unroll : {&models::gru_like, &models::lstm_like}) {
    std::size_t short_candidates = 0;
    std::size_t long_candidates = 0;
    const CombineStats short_run = native_fusion_on_recurrent(unroll, 8, &short_candidates);
    const CombineStats long_run = native_fusion_on_recurrent(unroll, 24, &long_candidates);
    EXPECT_FALSE(short_run.truncated);
    EXPECT_FALSE(long_run.truncated);
    EXPECT_LE(long_candidates, 4 * short_candidates);
    EXPECT_LE(long_run.joins_tried, 4 * short_run.joins_tried);  // three times the steps
    EXPECT_LE(long_run.joins_built, 4 * short_run.joins_built);
  }
}

TEST(ByocSpecs, OpPredicate) {
  ByocGraph f;
  auto supported = ops_named({"dense", "bias_add", "relu", "tanh"});
  auto rule = op_predicate_byoc_rule<ExprGraph>("trt", supported, 3);
  // combine(all) builds {2,4}, {4,5}, {4,7}, {2,4,5}, {2,4,7}, {4,5,7}, {2,4,5,7}; with one exit
  // only {2,4} survives (bias_add feeds both relu and tanh).
  const auto k = [](const std::string& rule_name, const std::string& s) {
    return "trt:primitive." + rule_name + ":" + s + "[Compiler=trt,Primitive=1:" + s + "]";
  };
  EXPECT_EQ(f.describe(rule, "trt"), f.lines({k("trt", "dense{2}"), k("byoc", "dense+bias_add{2,4}"),
                                             k("trt", "bias_add{4}"), k("trt", "relu{5}"), k("trt", "tanh{7}")}));
  EXPECT_EQ(rule.describe(),
            "primitive(union(only_valid(combine(op_predicate(trt), [all], max_depth 3), {max_exits 1, taps forbidden, "
            "max_depth 3}), only_valid(max_coalesce(op_predicate(trt), {max_exits 1, taps forbidden, max_depth 0}), "
            "{max_exits 1, taps forbidden, max_depth 0})))");
  // The maximal regions (a greedy partitioner's) are among the candidates; with one exit, {2,4}.
  EXPECT_EQ(f.describe(op_predicate_maximal_rule<ExprGraph>("trt", supported, kernel_config(3)), "trt"),
            f.lines({k("max_coalesce", "dense+bias_add{2,4}"), k("trt", "relu{5}"), k("trt", "tanh{7}")}));
  // Unlimited exits, still no taps: {4,5} and {2,4,5} tap bias_add (it feeds tanh outside and relu
  // inside); {4,5,7} and {2,4,5,7} have bias_add as an internal node only.
  auto multi = op_predicate_byoc_rule<ExprGraph>("trt", supported, SubGraphConfig{0, false, 3});
  EXPECT_EQ(f.insides(multi, "trt"), f.lines({"{2}", "{2,4}", "{2,4,5,7}", "{4}", "{4,5,7}", "{5}", "{7}"}));
  // Depth 2 drops the three-deep {2,4,5,7} from the combinations, but not from the maximal regions.
  auto shallow = op_predicate_byoc_rule<ExprGraph>("trt", supported, SubGraphConfig{0, false, 2});
  EXPECT_EQ(f.insides(shallow, "trt"), f.lines({"{2}", "{2,4}", "{2,4,5,7}", "{4}", "{4,5,7}", "{5}", "{7}"}));
  EXPECT_EQ(f.insides(op_predicate_maximal_rule<ExprGraph>("trt", supported, SubGraphConfig{0, false, 2}), "trt"),
            f.lines({"{2,4,5,7}"}));
}

TEST(ByocSpecs, AskTheOperatorPredicateOncePerNode) {
  // Both branches (the combinations and the maximal regions) start from the same seeds: the rule
  // finds them once, so the predicate runs as often as under op_predicate alone.
  ByocGraph f;
  std::size_t calls = 0;
  NodePredicate<ExprGraph> counted = [&calls, supported = ops_named({"dense", "bias_add", "relu", "tanh"})](
                                         const DataflowGraph<ExprGraph>& g, std::size_t i) {
    ++calls;
    return supported(g, i);
  };
  (void)op_predicate<ExprGraph>("trt", counted).all_candidates(*f.graph, "trt");
  const std::size_t alone = calls;
  ASSERT_GT(alone, 0u);
  calls = 0;
  auto rule = op_predicate_byoc_rule<ExprGraph>("trt", counted, 3);
  EXPECT_EQ(f.insides(rule, "trt"), f.lines({"{2}", "{2,4}", "{4}", "{5}", "{7}"}));
  EXPECT_EQ(calls, alone);
}

TEST(ByocSpecs, PatternTable) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto dense = f.ir.call("dense", {x, f.ir.constant("W")});
  auto bias = f.ir.call("bias_add", {dense, f.ir.constant("b")});
  f.ir.output(f.ir.call("relu", {bias}));
  f.build();
  // x=0 W=1 dense=2 b=3 bias_add=4 relu=5
  PatternTable<ExprGraph> table{{"cutlass.dense", parse("dense(*, const)")},
                                {"cutlass.dense_bias", parse("bias_add(dense(*, const), const)")},
                                {"cutlass.relu", parse("relu(*)")}};
  auto rule = pattern_table_byoc_rule<ExprGraph>(table, 3);
  // Composites {2}, {2,4}, {5}; combine(all) joins the touching {2,4} and {5} (dense alone does
  // not touch relu). Every group is one exit deep enough.
  const std::string pre = "cutlass:primitive.";
  const std::string prim = "[Compiler=cutlass,Primitive=1:";
  EXPECT_EQ(f.describe(rule, "cutlass"),
            f.lines({
                pre + "composite.cutlass.dense:dense{2}" + prim + "dense{2}[Composite=cutlass.dense:dense{2}]]",
                pre + "composite.cutlass.dense_bias:dense+bias_add{2,4}" + prim +
                    "dense+bias_add{2,4}[Composite=cutlass.dense_bias:dense+bias_add{2,4}]]",
                pre + "byoc:dense+bias_add+relu{2,4,5}" + prim +
                    "dense+bias_add+relu{2,4,5}[Composite=cutlass.dense_bias:dense+bias_add{2,4}]"
                    "[Composite=cutlass.relu:relu{5}]]",
                pre + "composite.cutlass.relu:relu{5}" + prim + "relu{5}[Composite=cutlass.relu:relu{5}]]",
            }));
  const std::string composites =
      "composite[cutlass.dense](pattern(cutlass.dense, dense(*, const))), "
      "composite[cutlass.dense_bias](pattern(cutlass.dense_bias, bias_add(dense(*, const), const))), "
      "composite[cutlass.relu](pattern(cutlass.relu, relu(*)))";
  EXPECT_EQ(rule.describe(), "primitive(union(only_valid(combine(union(" + composites +
                                 "), [all], max_depth 3), {max_exits 1, taps forbidden, max_depth 3}), "
                                 "only_valid(max_coalesce([" + composites +
                                 "], {max_exits 1, taps forbidden, max_depth 0}), {max_exits 1, taps forbidden, "
                                 "max_depth 0})))");
  // Depth 2: the relu cannot join. The maximal regions take the matches in table order: the dense
  // first, so dense_bias overlaps it, and the dense and the relu do not touch.
  EXPECT_EQ(f.insides(pattern_table_byoc_rule<ExprGraph>(table, 2), "cutlass"), f.lines({"{2}", "{2,4}", "{5}"}));
  EXPECT_EQ(f.insides(pattern_table_maximal_rule<ExprGraph>(table), "cutlass"), f.lines({"{2}", "{5}"}));
  // With the larger pattern first, as pattern tables order them, the greedy region is the whole
  // chain, whatever the depth bound.
  PatternTable<ExprGraph> largest_first{table[1], table[0], table[2]};
  EXPECT_EQ(f.describe(pattern_table_maximal_rule<ExprGraph>(largest_first), "cutlass"),
            f.lines({pre + "max_coalesce:dense+bias_add+relu{2,4,5}" + prim +
                     "dense+bias_add+relu{2,4,5}[Composite=cutlass.dense_bias:dense+bias_add{2,4}]"
                     "[Composite=cutlass.relu:relu{5}]]"}));
  EXPECT_EQ(f.insides(pattern_table_byoc_rule<ExprGraph>(largest_first, 2), "cutlass"),
            f.lines({"{2}", "{2,4}", "{2,4,5}", "{5}"}));
}

/// `candidates` with costs from an arbitrary additive cost model drawn from `seed`: for each
/// target a scale and a power (below 1: larger kernels are cheaper per operator), and for each
/// candidate a pseudo-random factor of its inside set: scale * factor * kernels^power.
std::vector<Candidate> costed(const DataflowGraph<ExprGraph>& graph, std::vector<Candidate> candidates,
                              std::uint64_t seed) {
  auto uniform = [](std::uint64_t bits, double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(bits % 1024) / 1023.0;
  };
  for (Candidate& c : candidates) {
    std::mt19937_64 per_target(seed ^ std::hash<std::string>{}(c.target));
    const double scale = uniform(per_target(), 0.5, 3.0);
    const double power = uniform(per_target(), 0.2, 1.2);
    std::mt19937_64 per_candidate(seed ^ c.sub_graph.inside().hash() ^ std::hash<std::string>{}(c.target));
    const double factor = uniform(per_candidate(), 0.7, 1.3);
    c.cost = Cost::value(scale * factor * std::pow(static_cast<double>(c.sub_graph.compute_size(graph)), power));
  }
  return candidates;
}

TEST(ByocSpecs, NeverWorseThanTheGreedyPartitionerOverTheSameSupport) {
  // The RFC's promise: Collage with one BYOC target costs no more than that backend's own greedy
  // partitioner (its largest regions, native code for the rest), whatever the cost model. The
  // greedy baseline: greedy_search over op_predicate_maximal_rule's regions and native fusion.
  // The search: exact_search over op_predicate_byoc_rule's candidates and native fusion. Likewise
  // for pattern tables.
  std::mt19937_64 rng(2028);
  const char* const kOps[] = {"relu", "tanh", "reshape", "transpose", "sum", "add", "multiply", "dense", "concat", "split"};
  int compared = 0;
  int greedy_better_than_depth_bounded = 0;
  for (int trial = 0; trial < 600; ++trial) {
    RulesFixture f;
    f.ir = testing_ir::random_ops_graph(rng, 8 + rng() % 10);
    f.build();
    const auto& graph = *f.graph;
    std::set<std::string> names;
    for (const char* op : kOps) {
      if (rng() % 5 < 3) names.insert(op);
    }
    const SubGraphConfig config{rng() % 3 == 0 ? std::size_t{0} : 1, false, 1 + rng() % 3};
    SCOPED_TRACE("trial " + std::to_string(trial));
    const PartitionRule<ExprGraph> native = native_fusion_rule<ExprGraph>(2);
    auto search = [&](const PartitionRule<ExprGraph>& byoc, bool greedy) -> Result<Partitioning> {
      std::vector<Candidate> all = byoc.all_candidates(graph, "byoc");
      for (Candidate& c : native.all_candidates(graph, "native")) all.push_back(std::move(c));
      auto problem = SearchProblem<ExprGraph>::build(graph, costed(graph, std::move(all), rng()));
      if (!problem.ok()) return problem.error();
      return greedy ? greedy_search(*problem, {"byoc", "native"}) : exact_search(*problem);
    };
    const std::uint64_t seed = rng();
    auto run = [&](const PartitionRule<ExprGraph>& byoc, bool greedy) {
      rng.seed(seed);  // the same cost model for every search of this trial
      return search(byoc, greedy);
    };
    const Result<Partitioning> baseline = run(op_predicate_maximal_rule<ExprGraph>("byoc", ops_named(names), config), true);
    ASSERT_TRUE(baseline.ok()) << baseline.error().message;
    const Result<Partitioning> collage = run(op_predicate_byoc_rule<ExprGraph>("byoc", ops_named(names), config), false);
    ASSERT_TRUE(collage.ok()) << collage.error().message;
    EXPECT_LE(collage->total.raw(), baseline->total.raw() + 1e-9);
    ++compared;
    // Without the maximal regions (candidates of the depth-bounded combinations only) the greedy
    // partitioner wins now and then: what the maximal regions are for.
    CombineLimits limits;
    limits.max_depth = config.max_depth;
    const auto bounded = primitive(only_valid(combine(op_predicate<ExprGraph>("byoc", ops_named(names)),
                                                      {Combiner<ExprGraph>::all()}, limits, "byoc"),
                                              config));
    const Result<Partitioning> without = run(bounded, false);
    ASSERT_TRUE(without.ok()) << without.error().message;
    greedy_better_than_depth_bounded += without->total.raw() > baseline->total.raw() + 1e-9 ? 1 : 0;

    // The same with a pattern table: two-operator patterns first, then the supported operators.
    PatternTable<ExprGraph> table{{"lib.dense_relu", parse("relu(dense)")}, {"lib.add_tanh", parse("tanh(add)")}};
    for (const std::string& name : names) table.emplace_back("lib." + name, parse(name));
    const Result<Partitioning> table_baseline = run(pattern_table_maximal_rule<ExprGraph>(table), true);
    ASSERT_TRUE(table_baseline.ok()) << table_baseline.error().message;
    const Result<Partitioning> table_collage = run(pattern_table_byoc_rule<ExprGraph>(table, config.max_depth), false);
    ASSERT_TRUE(table_collage.ok()) << table_collage.error().message;
    EXPECT_LE(table_collage->total.raw(), table_baseline->total.raw() + 1e-9);
  }
  EXPECT_EQ(compared, 600);
  EXPECT_GT(greedy_better_than_depth_bounded, 20);
  RecordProperty("greedy_better_than_depth_bounded", std::to_string(greedy_better_than_depth_bounded));
}

TEST(ExactPatterns, EachValidMatchIsOnePartition) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto d1 = f.ir.call("dense", {x, f.ir.constant("W1")});
  auto relu = f.ir.call("relu", {f.ir.call("bias_add", {d1, f.ir.constant("b1")})});
  auto d2 = f.ir.call("dense", {relu, f.ir.constant("W2")});
  f.ir.output(f.ir.call("bias_add", {d2, f.ir.constant("b2")}));
  f.ir.output(f.ir.call("tanh", {d2}));
  f.build();
  // x=0 W1=1 dense=2 b1=3 bias_add=4 relu=5 W2=6 dense=7 b2=8 bias_add=9 tanh=10.
  ASSERT_EQ(f.at(d2), 7u);
  // The second dense + bias_add matches but is dropped: the dense also feeds tanh (two exits).
  PatternTable<ExprGraph> table{{"dnnl.dense_bias", parse("bias_add(dense(*, const), const)")},
                                {"dnnl.relu", parse("relu(*)")}};
  auto rule = exact_patterns_rule<ExprGraph>(table);
  EXPECT_EQ(f.describe(rule, "dnnl"),
            f.lines({
                "dnnl:primitive.composite.dnnl.dense_bias:dense+bias_add{2,4}[Compiler=dnnl,Primitive=1:"
                "dense+bias_add{2,4}[Composite=dnnl.dense_bias:dense+bias_add{2,4}]]",
                "dnnl:primitive.composite.dnnl.relu:relu{5}[Compiler=dnnl,Primitive=1:relu{5}"
                "[Composite=dnnl.relu:relu{5}]]",
            }));
  EXPECT_EQ(rule.describe(),
            "primitive(only_valid(union(composite[dnnl.dense_bias](pattern(dnnl.dense_bias, bias_add(dense(*, "
            "const), const))), composite[dnnl.relu](pattern(dnnl.relu, relu(*)))), {max_exits 1, taps forbidden, "
            "max_depth 0}))");
}

TEST(ExactPatterns, NonConvexMatchDropped) {
  RulesFixture f;
  auto x = f.ir.var("x");
  auto e = f.ir.call("exp", {x});
  auto t = f.ir.call("tanh", {e});
  f.ir.output(f.ir.call("add", {e, t}));
  f.build();
  // x=0 exp=1 tanh=2 add=3: add(exp(*), *) puts {1,3} inside, but 1 -> 2 -> 3 leaves and comes back.
  EXPECT_EQ(f.insides(pattern<ExprGraph>("p", parse("add(exp(*), *)")), "t"), f.lines({"{1,3}"}));
  EXPECT_TRUE(f.describe(exact_patterns_rule<ExprGraph>({{"p", parse("add(exp(*), *)")}}), "t").empty());
}

// ---------------------------------------------------------------------------------------------
// Determinism and the models

void expect_canonical(const std::vector<Candidate>& cs) {
  for (std::size_t k = 1; k < cs.size(); ++k) {
    EXPECT_TRUE(cs[k - 1] < cs[k]) << cs[k - 1].to_string() << " !< " << cs[k].to_string();
    EXPECT_FALSE(cs[k - 1] == cs[k]) << cs[k].to_string();
  }
}

std::vector<PartitionRule<ExprGraph>> all_ready_made_rules() {
  PatternTable<ExprGraph> table{{"lib.dense_bias", parse("bias_add(dense(*, const), const)")},
                                {"lib.gelu_tail", parse("multiply(*, add(tanh(*), *))")},
                                {"lib.softmax", parse("softmax(*)")}};
  return {native_fusion_rule<ExprGraph>(3),
          op_predicate_byoc_rule<ExprGraph>("byoc", ops_named({"dense", "bias_add", "add", "multiply", "layer_norm"}), 3),
          pattern_table_byoc_rule<ExprGraph>(table, 3), library_in_native_rule<ExprGraph>(table, 3),
          exact_patterns_rule<ExprGraph>(table)};
}

TEST(Determinism, SameListsTwiceAndAcrossBuilds) {
  RulesFixture a;
  models::bert_like(a.ir, 2, 64);
  a.build();
  RulesFixture b;
  models::bert_like(b.ir, 2, 64);
  b.build();
  for (const auto& rule : all_ready_made_rules()) {
    SCOPED_TRACE(rule.describe());
    const auto first = rule.all_candidates(*a.graph, "t");
    ASSERT_FALSE(first.empty());
    expect_canonical(first);
    EXPECT_EQ(a.describe(rule, "t"), a.describe(rule, "t"));
    EXPECT_EQ(a.describe(rule, "t"), b.describe(rule, "t"));
    for (const Candidate& c : first) EXPECT_TRUE(c.sub_graph.is_valid(*a.graph, SubGraphConfig{1, false, 0}));
  }
}

TEST(Models, NodeCounts) {
  auto size_of = [](auto generate) {
    RulesFixture f;
    generate(f.ir);
    return f.build().size();
  };
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::chain(ir, 100); }), 103u);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::gpt2_chain(ir); }), 11u);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::bert_like(ir, 1, 768); }), 1 + models::kBertLayerNodes);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::bert_like(ir, 12, 768); }), 697u);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::residual_blocks(ir, 3); }), 34u);
  // 4 branches of 6 ops: 6 ops + 2 constants (i = 1, 5) + 1 scalar (i = 3) each, plus 3 adds.
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::wide_branches(ir, 4, 6); }), 1u + 4 * 9 + 3);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::mnist(ir); }), 20u);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::lstm_like(ir, 3, 24); }), 8u + 3 * 15 + 1);
  EXPECT_EQ(size_of([](ExprGraph& ir) { models::gru_like(ir, 3, 24); }), 8u + 3 * 19 + 1);
}

TEST(Models, BertLayerOpsAndKernels) {
  RulesFixture f;
  models::bert_like(f.ir, 1, 768);
  const auto& g = f.build();
  std::size_t ops = 0;
  for (std::size_t i = 0; i < g.size(); ++i) ops += g.needs_kernel(i) ? 1 : 0;
  EXPECT_EQ(ops, 36u);
  // Native fusion covers every op except the opaque ones (layer_norm x2, softmax) with a seed.
  auto singles = op_kind<ExprGraph>(OpKind::anchor).all_candidates(g, "tvm");
  EXPECT_EQ(singles.size(), 33u);
}

TEST(Models, MnistUnderNativeFusion) {
  RulesFixture f;
  models::mnist(f.ir);
  f.build();
  // x=0 pad=1 w=2 conv=3 b=4 add=5 relu=6 pool=7 pad=8 w=9 conv=10 b=11 add=12 relu=13 pool=14
  // reshape=15 w=16 dense=17 b=18 add=19. pad -> conv2d does not fuse (the anchor is downstream);
  // conv2d + add + relu does, and so does max_pool2d (an anchor) only with nothing: its consumer
  // is a pad (injective), and relu -> max_pool2d has the anchor downstream.
  EXPECT_EQ(f.insides(native_fusion_rule<ExprGraph>(3), "tvm"),
            f.lines({"{1}", "{3}", "{3,5}", "{3,5,6}", "{5}", "{5,6}", "{6}", "{7}", "{8}", "{10}", "{10,12}",
                     "{10,12,13}", "{12}", "{12,13}", "{13}", "{14}", "{15}", "{17}", "{17,19}", "{19}"}));
}

}  // namespace
}  // namespace collage
