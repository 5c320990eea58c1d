#include "collage/trace.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "collage/collage.hpp"  // with every other header, so that no name in detail:: is ambiguous
#include "collage/cost/mock_oracle.hpp"
#include "collage/rules/base_rules.hpp"
#include "collage/rules/combinators.hpp"
#include "collage/rules/combine.hpp"
#include "common/adjacency_ir.hpp"
#include "common/build_graph.hpp"
#include "common/comma_locale.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"
#include "common/random_dag.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;
using testing_ir::ExprGraph;

using testing_ir::build;

/// Expects `b` to be `a`: the same parts in the same order (target, rule, cost, inside nodes and
/// nested groups at every depth), host nodes and totals.
void expect_same(const Partitioning& a, const Partitioning& b) {
  ASSERT_EQ(a.parts.size(), b.parts.size());
  for (std::size_t k = 0; k < a.parts.size(); ++k) {
    const Candidate& x = a.parts[k];
    const Candidate& y = b.parts[k];
    EXPECT_EQ(x.target, y.target) << k;
    EXPECT_EQ(x.rule_name, y.rule_name) << k;
    EXPECT_EQ(x.cost, y.cost) << k;
    // SubGraph's == compares the groups recursively; the text shows every level when it fails.
    EXPECT_EQ(x.sub_graph.to_string(), y.sub_graph.to_string()) << k;
    EXPECT_TRUE(x.sub_graph == y.sub_graph) << k;
  }
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.effective_total, b.effective_total);
}

/// The deepest nesting of groups in `s` (0: none).
std::size_t group_depth(const SubGraph& s) {
  std::size_t depth = 0;
  for (const NestedSubGraph& n : s.nested()) depth = std::max(depth, 1 + group_depth(n.sub_graph));
  return depth;
}

using AdjGraph = DataflowGraph<AdjacencyGraph>;
using AdjSpec = PartitionSpec<AdjacencyGraph>;

/// Targets whose candidates carry groups one, two and three levels deep: primitive(op_kind),
/// primitive(composite(combine)), composite(primitive(composite(combine))).
std::vector<AdjSpec> nested_specs() {
  using C = Combiner<AdjacencyGraph>;
  auto singles = [] { return op_kind<AdjacencyGraph>(OpKind::opaque); };
  auto runs = [&](std::size_t depth) { return combine(singles(), {C::all()}, {depth}); };
  return {AdjSpec{"flat", primitive(singles())},
          AdjSpec{"lib", primitive(composite("lib.fused", runs(2))), 0.1},
          AdjSpec{"deep", composite("outer", primitive(composite("inner", runs(3))))}};
}

/// Costs that need every bit to round-trip (thirds), different per target and node set, with a
/// discount for fusing so that parts of several nodes win often.
std::unique_ptr<CostOracle<AdjacencyGraph>> thirds_oracle() {
  return make_oracle<AdjacencyGraph>("thirds", [](const AdjGraph&, const Candidate& c, const ExtractedFunction& fn) {
    double sum = 0;
    for (std::size_t i : fn.body) sum += static_cast<double>(1 + (i * 37) % 11) / 3.0;
    const double scale = c.target == "flat" ? 1.0 : c.target == "lib" ? 0.7 : 0.8;
    return Cost::value(scale * sum * std::pow(0.6, static_cast<double>(fn.body.size() - 1)));
  });
}

TEST(TraceProperty, ReplayGivesBackTheSamePartitioningWithGroupsAtEveryDepth) {
  std::mt19937_64 rng(16);
  std::size_t deepest = 0;
  std::size_t fused = 0;
  for (int round = 0; round < 24; ++round) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(3, 24)(rng);
    const AdjacencyGraph ir = testing_ir::random_dag(rng, n, 3, 6);
    const AdjGraph g = build(ir);
    auto oracle = thirds_oracle();
    PartitionerOptions options;
    options.algorithm = static_cast<SearchAlgorithm>(round % 3);
    options.beam.width = 4;
    auto r = partition(g, nested_specs(), *oracle, options);
    ASSERT_TRUE(r.ok()) << round << ": " << r.error().message;
    for (const Candidate& part : r->partitioning.parts) {
      deepest = std::max(deepest, group_depth(part.sub_graph));
      fused += part.sub_graph.size() > 1 ? 1 : 0;
    }
    const std::string trace = save_trace(*r);
    auto replayed = replay(g, trace);
    ASSERT_TRUE(replayed.ok()) << round << ": " << replayed.error().message;
    SCOPED_TRACE("round " + std::to_string(round) + ", " + std::string(to_string(options.algorithm)));
    expect_same(r->partitioning, *replayed);
  }
  EXPECT_EQ(deepest, 3u);  // the property was checked on groups three levels deep
  EXPECT_GT(fused, 0u);    // and on parts of several nodes
}

TEST(Trace, DeterministicAndReplayableOnAModel) {
  ExprGraph ir;
  testing_ir::models::bert_like(ir, 2, 64);
  auto g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}, {"lib", 0.8}});
  auto dense_or_bias = [](const DataflowGraph<ExprGraph>& gg, std::size_t i) {
    return gg.op_name(i) == "dense" || gg.op_name(i) == "bias_add";
  };
  std::vector<PartitionSpec<ExprGraph>> specs = {
      native_fusion_spec<ExprGraph>("tvm", 3),
      PartitionSpec<ExprGraph>{"lib", op_predicate_byoc_rule<ExprGraph>("lib", dense_or_bias, 2), 0.1}};
  auto first = partition(g, specs, oracle);
  auto second = partition(g, specs, oracle);
  ASSERT_TRUE(first.ok() && second.ok());
  const std::string trace = save_trace(*first);
  EXPECT_EQ(trace, save_trace(*second));
  EXPECT_EQ(trace.rfind("collage-trace/4\ngraph\t" + std::to_string(g.size()) + "\t" + g.fingerprint().hash_text() +
                            "\nsearch\texact\t64\t1000000\t1024\t1\npriority\ttvm\tlib\n"
                            "penalty\tlib\t0.1\n",
                        0),
            0u)
      << trace.substr(0, 200);
  auto replayed = replay(g, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  expect_same(first->partitioning, *replayed);
}

TEST(Trace, RecordsTheSearchSettingsSoAFallBackReplaysAsAFallBack) {
  ExprGraph ir;
  testing_ir::models::bert_like(ir, 1, 64);
  auto g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  PartitionerOptions options;
  options.exact.max_states = 3;
  options.beam.width = 2;
  auto r = partition(g, {native_fusion_spec<ExprGraph>("tvm", 3)}, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->partitioning.stats.algorithm, "beam (exact gave up)");
  auto replayed = replay(g, save_trace(*r));
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(replayed->stats.algorithm, "beam (exact gave up)");
  expect_same(r->partitioning, *replayed);
}

TEST(Trace, TextFieldsWithSeparatorsRoundTrip) {
  AdjacencyGraph ir;
  const int x = ir.add();
  ir.roots = {ir.add({ir.add({x})})};
  auto g = build(ir);
  const std::string odd = "a=b;c@d%e\tf\ng:h";
  std::vector<AdjSpec> specs = {
      AdjSpec{"t\t1;=@%", primitive(composite(odd, combine(op_kind<AdjacencyGraph>(OpKind::opaque),
                                                            {Combiner<AdjacencyGraph>::all()}, {3}))), 0.5}};
  auto oracle = thirds_oracle();
  auto r = partition(g, specs, *oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string trace = save_trace(*r);
  EXPECT_EQ(trace.find(odd), std::string::npos);
  auto replayed = replay(g, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  expect_same(r->partitioning, *replayed);
  EXPECT_EQ(replayed->parts[0].sub_graph.nested()[0].sub_graph.nested()[0].attr("Composite"), odd);
}

TEST(Trace, ReadsTheFirstVersion) {
  AdjacencyGraph ir;
  const int x = ir.add();
  ir.roots = {ir.add({ir.add({x})})};
  auto g = build(ir);
  auto replayed = replay(g,
                         "collage-trace/1\nsearch\tbeam\t8\npriority\tt\tu\npenalty\tu\t0.5\n"
                         "candidate\tt\tr\t1\t0\tPrimitive=1@0\n"
                         "candidate\tt\tr\t2\t1,2\tPrimitive=1@1,2\n"
                         "candidate\tu\tr\t1\t1,2\n");
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  ASSERT_EQ(replayed->parts.size(), 2u);
  EXPECT_EQ(replayed->parts[0].sub_graph.to_string(), "{0}[Primitive=1:{0}]");
  EXPECT_EQ(replayed->parts[1].sub_graph.to_string(), "{1,2}");
  EXPECT_EQ(replayed->total, Cost::value(2.5));
  EXPECT_EQ(replayed->stats.algorithm, "beam");
}

TEST(Trace, SameBytesUnderACommaLocale) {
  AdjacencyGraph ir = [] {
    std::mt19937_64 rng(8);
    return testing_ir::random_dag(rng, 12, 3, 4);
  }();
  auto g = build(ir);
  auto oracle = thirds_oracle();
  auto r = partition(g, nested_specs(), *oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string trace = save_trace(*r);
  ASSERT_NE(trace.find("0.1"), std::string::npos);  // a penalty with a decimal point
  testing_ir::CommaLocale comma;
  if (!comma.active()) GTEST_SKIP() << testing_ir::CommaLocale::missing();
  EXPECT_EQ(save_trace(*r), trace);
  auto replayed = replay(g, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  expect_same(r->partitioning, *replayed);
}

/// Malformed traces over a chain of four nodes (indexes 0..3; in the adjacency IR every node needs
/// a kernel): each fails naming its line and the field.
struct BadTrace {
  const char* name;
  std::string text;
  std::string message;
};

std::string chain_trace(const std::string& search, const std::string& rest) {
  return "collage-trace/2\n" + search + "\npriority\tt\ncandidate\tt\tr\t1\t0\ncandidate\tt\tr\t1\t1\n"
         "candidate\tt\tr\t1\t2\ncandidate\tt\tr\t1\t3\n" + rest;
}

const std::string kSearch = "search\tbeam\t4\t100\t10\t1";

TEST(Trace, RejectsBadValuesNamingTheLineAndField) {
  AdjacencyGraph ir;
  int h = ir.add();
  for (int k = 0; k < 3; ++k) h = ir.add({h});
  ir.roots = {h};
  auto g = build(ir);
  ASSERT_TRUE(replay(g, chain_trace(kSearch, "")).ok());
  const BadTrace cases[] = {
      {"BeamWidthZero", chain_trace("search\tbeam\t0\t100\t10\t1", ""),
       "trace: line 2: beam width '0': it must be an integer >= 1"},
      {"BeamWidthNegative", chain_trace("search\tbeam\t-1\t100\t10\t1", ""),
       "trace: line 2: beam width '-1': it must be an integer >= 1"},
      {"BeamWidthNan", chain_trace("search\tbeam\tnan\t100\t10\t1", ""),
       "trace: line 2: beam width 'nan': it must be an integer >= 1"},
      {"BeamWidthHuge", chain_trace("search\tbeam\t1e300\t100\t10\t1", ""),
       "trace: line 2: beam width '1e300': it must be an integer >= 1"},
      {"MaxStatesFraction", chain_trace("search\texact\t4\t1.5\t10\t1", ""),
       "trace: line 2: max states '1.5': it must be an integer >= 0"},
      {"FallBack", chain_trace("search\texact\t4\t100\t10\tyes", ""),
       "trace: line 2: fall back to beam 'yes': it must be 0 or 1"},
      {"Algorithm", chain_trace("search\tquantum\t4\t100\t10\t1", ""),
       "trace: line 2: unknown search algorithm 'quantum'"},
      {"NegativePenalty", chain_trace(kSearch, "penalty\tt\t-1\n"),
       "trace: line 8: penalty of target 't' is '-1': it must be a finite number >= 0"},
      {"NanPenalty", chain_trace(kSearch, "penalty\tt\tnan\n"),
       "trace: line 8: penalty of target 't' is 'nan': it must be a finite number >= 0"},
      {"NegativeCost", chain_trace(kSearch, "candidate\tt\tr\t-2\t1\n"),
       "trace: line 8: cost '-2': it must be a finite number >= 0, 'unknown' or 'invalid'"},
      {"NanCost", chain_trace(kSearch, "candidate\tt\tr\tnan\t1\n"),
       "trace: line 8: cost 'nan': it must be a finite number >= 0, 'unknown' or 'invalid'"},
      {"IndexNegative", chain_trace(kSearch, "candidate\tt\tr\t1\t-1\n"),
       "trace: line 8: bad node indexes '-1' (does the trace belong to this graph of 4 nodes?)"},
      {"IndexHuge", chain_trace(kSearch, "candidate\tt\tr\t1\t1e300\n"),
       "trace: line 8: bad node indexes '1e300' (does the trace belong to this graph of 4 nodes?)"},
      {"IndexBeyondGraph", chain_trace(kSearch, "candidate\tt\tr\t1\t1,4\n"),
       "trace: line 8: bad node indexes '1,4' (does the trace belong to this graph of 4 nodes?)"},
      {"IndexNan", chain_trace(kSearch, "candidate\tt\tr\t1\tnan\n"),
       "trace: line 8: bad node indexes 'nan' (does the trace belong to this graph of 4 nodes?)"},
      {"NoIndexes", chain_trace(kSearch, "candidate\tt\tr\t1\t\n"),
       "trace: line 8: bad node indexes '' (does the trace belong to this graph of 4 nodes?)"},
      {"GroupOutsideCandidate", chain_trace(kSearch, "candidate\tt\tr\t1\t1,2\t0:Composite=c@2,3\n"),
       "trace: line 8: group 1 '0:Composite=c@2,3': not inside its candidate"},
      {"GroupOutsideItsGroup",
       chain_trace(kSearch, "candidate\tt\tr\t1\t1,2,3\t0:Primitive=1@1,2\t1:Composite=c@2,3\n"),
       "trace: line 8: group 2 '1:Composite=c@2,3': not inside the group it is nested in"},
      {"GroupsOverlap", chain_trace(kSearch, "candidate\tt\tr\t1\t1,2,3\t0:A=1@1,2\t0:B=1@2,3\n"),
       "trace: line 8: group 2 '0:B=1@2,3': overlaps another group in its candidate"},
      {"GroupNotConvex", chain_trace(kSearch, "candidate\tt\tr\t1\t1,2,3\t0:Composite=c@1,3\n"),
       "trace: line 8: group 1 '0:Composite=c@1,3': not convex"},
      {"GroupDepthJumps", chain_trace(kSearch, "candidate\tt\tr\t1\t1,2\t1:Composite=c@1,2\n"),
       "trace: line 8: group 1 '1:Composite=c@1,2': depth 1 without an enclosing group of depth 0 before it"},
      {"GroupWithoutDepth", chain_trace(kSearch, "candidate\tt\tr\t1\t1,2\tComposite=c@1,2\n"),
       "trace: line 8: group 1 'Composite=c@1,2': expected '<depth>:<attributes>@<indexes>'"},
      {"BadEscape", chain_trace(kSearch, "candidate\tt%G1\tr\t1\t1\n"),
       "trace: line 8: bad escape in the target or rule name"},
      {"UnknownRecord", chain_trace(kSearch, "candidates\tt\n"), "trace: line 8: unrecognised record 'candidates'"},
      {"Header", "collage-trace/9\n", "trace: line 1: expected 'collage-trace/4'"},
      {"GraphRecord", "collage-trace/4\ngraph\t4\n", "trace: line 2: expected 'graph <nodes> <fingerprint: 16 hex digits>'"},
      {"NarrowedRecord", "collage-trace/4\nnarrowed\tlate\n", "trace: line 2: expected 'narrowed <layer>'"},
  };
  for (const BadTrace& c : cases) {
    auto r = replay(g, c.text);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::parse) << c.name;
    EXPECT_EQ(r.error().message, c.message) << c.name;
  }
}

TEST(Trace, AGreedySearchWithABeamWidthOfZeroReplays) {
  // partition() accepts a beam width of 0 where the beam never runs; its trace replays.
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  auto g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}});
  PartitionerOptions options;
  options.algorithm = SearchAlgorithm::greedy;
  options.beam.width = 0;
  auto r = partition(g, {native_fusion_spec<ExprGraph>("t", 2)}, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto replayed = replay(g, save_trace(*r));
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  expect_same(r->partitioning, *replayed);
  options.algorithm = SearchAlgorithm::exact;
  options.fall_back_to_beam = false;
  r = partition(g, {native_fusion_spec<ExprGraph>("t", 2)}, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(replay(g, save_trace(*r)).ok());
}

TEST(Trace, ASearchCutByItsTimeBudgetReplaysTheSameWithoutIt) {
  // The searcher that answered and the layer a beam narrowed at are in the trace: a replay, which
  // runs without time budgets, gives the same partitioning.
  ExprGraph ir;
  testing_ir::models::bert_like(ir, 12, 64);  // more than the 256 expansions between two looks at the clock
  auto g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}, {"lib", 0.8}});
  std::vector<PartitionSpec<ExprGraph>> specs = {
      native_fusion_spec<ExprGraph>("tvm", 3),
      PartitionSpec<ExprGraph>{"lib", op_predicate_byoc_rule<ExprGraph>("lib", [](const DataflowGraph<ExprGraph>& gg, std::size_t i) {
                                 return gg.op_name(i) == "dense";
                               }, 2)}};
  PartitionerOptions options;
  options.exact.max_seconds = 1e-9;  // spent at the first look at the clock
  options.beam.max_seconds = 1e-9;
  auto r = partition(g, specs, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->exact_gave_up);
  EXPECT_EQ(r->partitioning.stats.algorithm, "beam (exact gave up)");
  EXPECT_EQ(r->partitioning.stats.narrowed_at, 0u);
  const std::string trace = save_trace(*r);
  EXPECT_NE(trace.find("\nsearch\texact\t64\t1000000\t1024\t1\nexact-gave-up\n"), std::string::npos)
      << trace.substr(0, 200);
  EXPECT_NE(trace.find("\nnarrowed\t0\n"), std::string::npos) << trace.substr(0, 200);
  auto replayed = replay(g, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  expect_same(r->partitioning, *replayed);
}

TEST(Trace, UncoveredNodeIsReportedAsByPartition) {
  AdjacencyGraph ir;
  ir.roots = {ir.add({ir.add()})};
  auto g = build(ir);
  auto r = replay(g, "collage-trace/2\n" + kSearch + "\ncandidate\tt\tr\tinvalid\t0\ncandidate\tt\tr\t1\t1\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::uncovered);
  EXPECT_EQ(r.error().message, "trace: no candidate covers node '%0': 1 candidate from t, Invalid");
}

TEST(TraceCandidateRecord, EveryCandidateRoundTripsWithItsGroups) {
  std::mt19937_64 rng(28);
  std::size_t deepest = 0;
  for (int round = 0; round < 8; ++round) {
    const AdjacencyGraph ir = testing_ir::random_dag(rng, 12, 3, 6);
    const AdjGraph g = build(ir);
    for (const AdjSpec& spec : nested_specs()) {
      for (Candidate& c : spec.all_candidates(g)) {
        deepest = std::max(deepest, group_depth(c.sub_graph));
        c.rule_name = "rule\twith; separators=@%";
        const std::string record = trace_candidate_record(c);
        EXPECT_EQ(record.find('\n'), std::string::npos);
        auto back = read_trace_candidate(g, record);
        ASSERT_TRUE(back.ok()) << record << ": " << back.error().message;
        EXPECT_TRUE(*back == c) << record;
        EXPECT_EQ(back->rule_name, c.rule_name);
        EXPECT_EQ(back->sub_graph.to_string(), c.sub_graph.to_string());
        EXPECT_TRUE(back->cost.is_unknown());
      }
    }
  }
  EXPECT_EQ(deepest, 3u);
}

TEST(TraceCandidateRecord, ABadRecordIsOneLineNamingTheField) {
  AdjacencyGraph ir;
  ir.roots = {ir.add({ir.add()})};
  auto g = build(ir);
  auto wrong = read_trace_candidate(g, "penalty\tt\t1");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message,
            "candidate record: expected 'candidate <target> <rule> <cost> <indexes> [<group>...]'");
  auto outside = read_trace_candidate(g, "candidate\tt\tr\tunknown\t0,7");
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code, ErrorCode::parse);
  EXPECT_NE(outside.error().message.find("bad node indexes '0,7'"), std::string::npos) << outside.error().message;
}

}  // namespace
}  // namespace collage
