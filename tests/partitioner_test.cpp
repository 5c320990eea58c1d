#include "collage/partitioner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "collage/cost/caching_oracle.hpp"
#include "collage/cost/mock_oracle.hpp"
#include "collage/rules/pattern_rule.hpp"
#include "common/build_graph.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;
using Spec = PartitionSpec<ExprGraph>;

using testing_ir::build;

/// A target that runs every operator one at a time.
Spec per_op(const std::string& target) {
  return Spec{target, op_predicate<ExprGraph>(target, [](const Graph& g, std::size_t i) { return g.needs_kernel(i); })};
}

/// Parts as "target:{inside}" strings, in the partitioning's order.
std::vector<std::string> parts(const PartitionResult& r) {
  std::vector<std::string> out;
  for (const Candidate& c : r.partitioning.parts) out.push_back(c.target + ":" + c.sub_graph.inside().to_string());
  return out;
}

TEST(PartitionerRfc, SingleOpGoesToTheCheaperTarget) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"a", 2.0}, {"b", 1.0}});
  auto r = partition(g, {per_op("a"), per_op("b")}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(parts(*r), std::vector<std::string>{"b:{1}"});
  EXPECT_EQ(r->partitioning.total, Cost::value(1.0));
  EXPECT_EQ(r->partitioning.host, std::vector<std::size_t>{0});
}

TEST(PartitionerRfc, DiamondSplitAcrossTwoTargets) {
  ExprGraph ir;
  auto x = ir.var("x");
  auto conv = ir.call("conv2d", {x, ir.constant("w")});
  auto relu = ir.call("relu", {conv});
  auto abs = ir.call("abs", {conv});
  ir.output(ir.call("add", {relu, abs}));
  Graph g = build(ir);
  // x=0 w=1 conv=2 relu=3 abs=4 add=5. The library is cheap for conv2d only.
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  oracle.set_op_cost("lib", "conv2d", 0.5);
  Spec lib{"lib", op_predicate<ExprGraph>("lib", [](const Graph& gg, std::size_t i) { return gg.op_name(i) == "conv2d"; })};
  auto r = partition(g, {native_fusion_spec<ExprGraph>("tvm", 3), lib}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // conv on the library (0.5); relu, abs and add fuse into one native kernel: 1 + 0.9 + 0.81.
  EXPECT_EQ(parts(*r), (std::vector<std::string>{"lib:{2}", "tvm:{3..5}"}));
  EXPECT_NEAR(r->partitioning.total.raw(), 0.5 + 1 + 0.9 + 0.81, 1e-9);
}

TEST(PartitionerRfc, MaxDepthLimitsFusionOfThreeRelus) {
  ExprGraph ir;
  const Expr* h = ir.var("x");
  for (int i = 0; i < 3; ++i) h = ir.call("relu", {h});
  ir.output(h);
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  std::vector<std::size_t> sizes;
  std::vector<double> totals;
  for (std::size_t depth : {1, 2, 3}) {
    auto r = partition(g, {native_fusion_spec<ExprGraph>("tvm", depth)}, oracle);
    ASSERT_TRUE(r.ok()) << r.error().message;
    sizes.push_back(r->partitioning.parts.size());
    totals.push_back(r->partitioning.total.raw());
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 2, 1}));
  EXPECT_NEAR(totals[0], 3.0, 1e-9);
  EXPECT_NEAR(totals[1], 1.9 + 1.0, 1e-9);
  EXPECT_NEAR(totals[2], 1 + 0.9 + 0.81, 1e-9);
}

TEST(PartitionerRfc, FiveOpGroupBeatsPerOpChoices) {
  ExprGraph ir;
  const Expr* h = ir.var("x");
  for (const char* op : {"relu", "abs", "exp", "tanh", "sqrt"}) h = ir.call(op, {h});
  ir.output(h);
  Graph g = build(ir);
  // Per op, "small" (0.5) beats "big" (1.0); but big runs the whole chain as one group for
  // 1 + 0.9 + 0.81 + 0.729 + 0.6561 = 4.0951 ... which loses to 5 * 0.5 = 2.5 unless big's
  // group decays faster. With decay 0.3 the group costs 1.4284 and wins.
  auto pattern_rule = pattern<ExprGraph>("five", "sqrt(tanh(exp(abs(relu(*)))))");
  ASSERT_TRUE(pattern_rule.ok());
  MockOracle<ExprGraph> small({{"small", 0.5}, {"big", 1.0}});
  small.set_decay(0.3);
  auto r = partition(g, {per_op("small"), Spec{"big", *pattern_rule}}, small);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(parts(*r), std::vector<std::string>{"big:{1..5}"});
  EXPECT_NEAR(r->partitioning.total.raw(), 1 + 0.3 + 0.09 + 0.027 + 0.0081, 1e-9);
}

TEST(PartitionerRfc, DoubleResidual) {
  ExprGraph ir;
  auto x = ir.var("x");
  auto c1 = ir.call("conv2d", {x, ir.constant("w1")});
  auto a1 = ir.call("add", {c1, x});
  auto r1 = ir.call("relu", {a1});
  auto c2 = ir.call("conv2d", {r1, ir.constant("w2")});
  auto a2 = ir.call("add", {c2, r1});
  auto r2 = ir.call("relu", {a2});
  ir.output(r2);
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  auto r = partition(g, {native_fusion_spec<ExprGraph>("tvm", 3)}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Each conv fuses with its residual add and relu; r1 feeds both c2 and a2, which is fine
  // because r1 is the first group's only exit.
  EXPECT_EQ(r->partitioning.parts.size(), 2u);
  EXPECT_NEAR(r->partitioning.total.raw(), 2 * (1 + 0.9 + 0.81), 1e-9);
}

TEST(PartitionerRfc, TupleOutput) {
  ExprGraph ir;
  auto x = ir.var("x");
  auto a = ir.call("relu", {x});
  auto b = ir.call("abs", {x});
  ir.output(ir.tuple({a, b}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  auto r = partition(g, {native_fusion_spec<ExprGraph>("tvm", 3)}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // relu and abs do not touch (no edge between them), so two kernels; the tuple stays on the host.
  EXPECT_EQ(r->partitioning.parts.size(), 2u);
  EXPECT_EQ(r->partitioning.host, (std::vector<std::size_t>{0, 3}));
}

TEST(Partitioner, UncoveredNodeNamesNodeAndTargets) {
  ExprGraph ir;
  ir.output(ir.call("softmax", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"lib", 1.0}});
  Spec relu_only{"lib", op_predicate<ExprGraph>("lib", [](const Graph& gg, std::size_t i) { return gg.op_name(i) == "relu"; })};
  auto r = partition(g, {relu_only}, oracle);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::uncovered);
  EXPECT_EQ(r.error().message, "no rule proposed a candidate for node 'softmax' (targets tried: lib)");
}

TEST(Partitioner, NodeWhoseCandidatesAreAllInvalidSaysSoWithTheFirstReason) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  // Every candidate holding relu fails in the oracle; abs has a working one.
  auto oracle = make_oracle<ExprGraph>("flaky", [](const Graph& gg, const Candidate& c, const ExtractedFunction&) -> Result<Cost> {
    if (gg.op_name(c.sub_graph.first_inside()) == "relu") return Error{ErrorCode::oracle, "cannot compile relu"};
    return Cost::value(1.0);
  });
  auto r = partition(g, {per_op("native"), per_op("lib")}, *oracle);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::uncovered);
  // The first reason is the oracle's error on the first candidate (in candidate order) holding relu.
  const std::string& message = r.error().message;
  const std::string head = "no candidate covers node 'relu': 2 candidates from lib, native, all Invalid: ";
  EXPECT_EQ(message.rfind(head, 0), 0u) << message;
  EXPECT_NE(message.find("lib:lib:relu{1}", head.size()), std::string::npos) << message;
  EXPECT_EQ(message.substr(message.size() - 19), "cannot compile relu") << message;

  // An oracle that answers Invalid (the target cannot run it) gives no reason to quote.
  auto refuses = make_oracle<ExprGraph>("refuses", [](const Graph& gg, const Candidate& c, const ExtractedFunction&) {
    return gg.op_name(c.sub_graph.first_inside()) == "relu" ? Cost::invalid() : Cost::value(1.0);
  });
  auto refused = partition(g, {per_op("native")}, *refuses);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::uncovered);
  EXPECT_EQ(refused.error().message, "no candidate covers node 'relu': 1 candidate from native, Invalid");
}

TEST(Partitioner, AlternativesCarryThePenalisedCostsTheSearchCompared) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  Graph g = build(ir);
  // a: 1.0 + penalty 0.5 = 1.5; b: 1.2. The search picks b; the explanation must agree.
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 1.2}});
  Spec a = per_op("a");
  a.penalty = 0.5;
  auto r = partition(g, {a, per_op("b")}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(parts(*r), std::vector<std::string>{"b:{1}"});
  ASSERT_EQ(r->alternatives.size(), 1u);
  const std::vector<Alternative>& alts = r->alternatives[0];
  ASSERT_EQ(alts.size(), 2u);
  EXPECT_EQ(std::string(r->candidates[alts[0].candidate].target), "b");
  EXPECT_EQ(alts[0].cost, Cost::value(1.2));
  EXPECT_EQ(alts[0].cost, r->partitioning.parts[0].cost);  // the chosen part, at its own cost
  EXPECT_EQ(std::string(r->candidates[alts[1].candidate].target), "a");
  EXPECT_EQ(alts[1].cost, Cost::value(1.5));
}

TEST(Partitioner, AlternativesAreTheCandidatesOfThePartsFirstKernelNode) {
  ExprGraph ir;
  auto conv = ir.call("conv2d", {ir.var("x"), ir.constant("w")});
  ir.output(ir.call("relu", {conv}));
  Graph g = build(ir);
  // lib takes conv2d with its weight: its part begins with the weight, which needs no kernel.
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}, {"lib", 0.25}});
  Spec lib{"lib", op_predicate<ExprGraph>("lib", [](const Graph& gg, std::size_t i) { return gg.op_name(i) == "conv2d"; },
                                          /*pull_constants=*/true)};
  auto r = partition(g, {per_op("tvm"), lib}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->partitioning.parts.size(), 2u);
  const Candidate& first = r->partitioning.parts[0];
  ASSERT_EQ(std::string(first.target), "lib");
  ASSERT_FALSE(g.needs_kernel(first.sub_graph.first_inside()));
  // Both candidates that hold conv2d, the kernel node the part covers first: lib's and tvm's.
  std::vector<std::string> seen;
  for (const Alternative& alt : r->alternatives[0]) {
    seen.push_back(r->candidates[alt.candidate].to_string(g) + " " + alt.cost.to_string());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"lib:lib:conv2d{1,2} 0.25", "tvm:tvm:conv2d{2} 1"}));
}

TEST(Partitioner, BeamWidthZeroIsAnInvalidArgumentNamingTheField) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}});
  PartitionerOptions options;
  options.beam.width = 0;
  for (SearchAlgorithm a : {SearchAlgorithm::beam, SearchAlgorithm::exact}) {  // exact may fall back to beam
    options.algorithm = a;
    auto r = partition(g, {per_op("t")}, oracle, options);
    ASSERT_FALSE(r.ok()) << to_string(a);
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(r.error().message, "PartitionerOptions::beam.width is 0: the beam must keep at least 1 state");
  }
  options.algorithm = SearchAlgorithm::exact;
  options.fall_back_to_beam = false;  // the beam never runs: its width does not matter
  EXPECT_TRUE(partition(g, {per_op("t")}, oracle, options).ok());

  // The searcher itself checks too, also where no node needs a kernel (the beam's first layer is
  // its last, which a width of 0 would leave empty).
  for (bool with_kernel : {true, false}) {
    ExprGraph only;
    only.output(with_kernel ? only.call("relu", {only.var("x")}) : only.var("x"));
    Graph og = build(only);
    std::vector<Candidate> candidates = per_op("t").all_candidates(og);
    for (Candidate& c : candidates) c.cost = Cost::value(1.0);
    auto problem = SearchProblem<ExprGraph>::build(og, candidates);
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    auto searched = beam_search(*problem, BeamSearchOptions{0});
    ASSERT_FALSE(searched.ok());
    EXPECT_EQ(searched.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(searched.error().message, "BeamSearchOptions::width is 0: the beam must keep at least 1 state");
  }
}

TEST(Partitioner, NegativeOrNanPenaltyIsAnInvalidArgumentNamingTheTarget) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}, {"u", 2.0}});
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    Spec u = per_op("u");
    u.penalty = bad;
    auto r = partition(g, {per_op("t"), u}, oracle);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(r.error().message,
              "PartitionSpec::penalty of target 'u' is " + format_double(bad) + ": it must be a finite number >= 0");

    SearchCosts costs;
    costs.penalty["u"] = bad;
    std::vector<Candidate> candidates = per_op("u").all_candidates(g);
    for (Candidate& c : candidates) c.cost = Cost::value(1.0);
    auto problem = SearchProblem<ExprGraph>::build(g, candidates, costs);
    ASSERT_FALSE(problem.ok());
    EXPECT_EQ(problem.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(problem.error().message,
              "SearchCosts::penalty of target 'u' is " + format_double(bad) + ": it must be a finite number >= 0");
  }
}

TEST(Partitioner, OracleFailuresMakeCandidatesInvalidNotFatal) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  auto oracle = make_oracle<ExprGraph>("flaky", [](const Graph& gg, const Candidate& c, const ExtractedFunction&) -> Result<Cost> {
    if (c.target == "broken") return Error{ErrorCode::oracle, "backend cannot compile " + gg.label(c.sub_graph.first_inside())};
    return Cost::value(1.0);
  });
  auto r = partition(g, {per_op("broken"), per_op("good")}, *oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(parts(*r), (std::vector<std::string>{"good:{1}", "good:{2}"}));
  EXPECT_EQ(r->oracle_errors.size(), 2u);
  EXPECT_NE(r->oracle_errors[0].find("backend cannot compile relu"), std::string::npos) << r->oracle_errors[0];
  // The message names the caller's oracle, not the caching and budget partition() put around it.
  EXPECT_EQ(r->oracle_errors[0].rfind("cost oracle 'flaky' failed on candidate ", 0), 0u) << r->oracle_errors[0];
}

TEST(Partitioner, AnUncoveredNodeIsNamedByIndexWhenItsLabelIsShared) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  // x=0, relu=1, relu=2: the rule proposes the first relu only.
  Spec first_only{"lib", op_predicate<ExprGraph>("lib", [](const Graph&, std::size_t i) { return i == 1; })};
  MockOracle<ExprGraph> oracle({{"lib", 1.0}});
  auto r = partition(g, {first_only}, oracle);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "no rule proposed a candidate for node 'relu' at index 2 (targets tried: lib)");
}

TEST(Partitioner, OracleStatsAreThisCallsAloneWhenTheCallerReusesAWrapper) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  MockOracle<ExprGraph> mock({{"a", 1.0}});
  CachingOracle<ExprGraph> shared(mock);
  PartitionerOptions options;
  options.cache = false;
  auto first = partition(g, {per_op("a")}, shared, options);
  auto second = partition(g, {per_op("a")}, shared, options);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->oracle.cache_misses, 2u);
  EXPECT_EQ(first->oracle.backend_calls, 2u);
  EXPECT_EQ(second->oracle.cache_hits, 2u);
  EXPECT_EQ(second->oracle.cache_misses, 0u);
  EXPECT_EQ(second->oracle.backend_calls, 0u);
  EXPECT_EQ(shared.stats().cache_hits, 2u);  // the wrapper itself still counts over its lifetime
}

TEST(Partitioner, CacheEstimatesIdenticalLayersOnce) {
  ExprGraph ir;
  testing_ir::models::bert_like(ir, 4, 64);
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  auto r = partition(g, {native_fusion_spec<ExprGraph>("tvm", 3)}, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->oracle.cache_hits, 0u);
  EXPECT_LT(r->oracle.backend_calls * 2, r->candidates.size());  // most layers answered from the cache
}

TEST(Partitioner, AlgorithmsAgreeOnValidityAndExactIsBest) {
  ExprGraph ir;
  testing_ir::models::bert_like(ir, 2, 64);
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}, {"lib", 0.8}});
  std::vector<Spec> specs = {native_fusion_spec<ExprGraph>("tvm", 3),
                             Spec{"lib", op_predicate_byoc_rule<ExprGraph>("lib", [](const Graph& gg, std::size_t i) {
                                    return gg.kind(i) == OpKind::anchor;
                                  }, 1)}};
  std::map<std::string, double> totals;
  for (SearchAlgorithm a : {SearchAlgorithm::exact, SearchAlgorithm::beam, SearchAlgorithm::greedy}) {
    PartitionerOptions options;
    options.algorithm = a;
    auto r = partition(g, specs, oracle, options);
    ASSERT_TRUE(r.ok()) << to_string(a) << ": " << r.error().message;
    totals[std::string(to_string(a))] = r->partitioning.total.raw();
    EXPECT_EQ(r->partitioning.stats.algorithm, to_string(a));
  }
  EXPECT_LE(totals["exact"], totals["beam"] + 1e-9);
  EXPECT_LE(totals["exact"], totals["greedy"] + 1e-9);
}

/// x -> relu -> relu, each relu on "a" (cost 1) or "b" (cost 2, penalty 0.5): the per-part sum
/// chooses a, a.
struct RefineFixture {
  ExprGraph ir;
  Graph g;
  std::vector<Spec> specs;
  RefineFixture() : g(make()) {
    Spec b = per_op("b");
    b.penalty = 0.5;
    specs = {per_op("a"), b};
  }
  Graph make() {
    ir.output(ir.call("relu", {ir.call("relu", {ir.var("x")})}));
    return build(ir);
  }
};

TEST(Partitioner, RefineFindsWhatOnlyTheWholeGraphCostShows) {
  RefineFixture f;
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 2.0}});
  auto r = partition(f.g, f.specs, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(parts(*r), (std::vector<std::string>{"a:{1}", "a:{2}"}));
  // End to end, both relus on b cost 0.5 (say, b keeps the tensor resident), a mix costs the most.
  std::size_t calls = 0;
  auto fitness = make_end_to_end_oracle<ExprGraph>("whole", [&](const Graph&, const Partitioning& p) {
    ++calls;
    std::size_t on_b = 0;
    for (const Candidate& c : p.parts) on_b += c.target == "b";
    if (on_b == p.parts.size()) return Cost::value(0.5);
    return Cost::value(on_b == 0 ? 2.0 : 3.0);
  });
  EvolutionStats stats;
  auto refined = refine(f.g, *r, *fitness, EvolutionOptions{}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  std::vector<std::string> got;
  for (const Candidate& c : refined->parts) got.push_back(c.target + ":" + c.sub_graph.inside().to_string());
  EXPECT_EQ(got, (std::vector<std::string>{"b:{1}", "b:{2}"}));
  EXPECT_TRUE(stats.improved);
  EXPECT_EQ(stats.start_fitness, Cost::value(2.0));
  EXPECT_EQ(stats.best_fitness, Cost::value(0.5));
  EXPECT_EQ(stats.evaluations, calls);
  // The parts keep the costs the search used: b's penalty included.
  EXPECT_NEAR(refined->total.raw(), 2 * (2.0 + 0.5), 1e-9);
}

TEST(Partitioner, RefineKeepsTheStartWhenTheWholeGraphCostAgreesWithTheSum) {
  RefineFixture f;
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 2.0}});
  auto r = partition(f.g, f.specs, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto additive = make_end_to_end_oracle<ExprGraph>("sum", [](const Graph&, const Partitioning& p) { return p.total; });
  EvolutionStats stats;
  auto refined = refine(f.g, *r, *additive, EvolutionOptions{}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  EXPECT_FALSE(stats.improved);
  EXPECT_GT(stats.evaluations, 1u);
  EXPECT_EQ(refined->total, r->partitioning.total);
  EXPECT_EQ(refined->parts.size(), r->partitioning.parts.size());
}

TEST(Partitioner, RefineRejectsAResultOfAnotherGraph) {
  RefineFixture f;
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 2.0}});
  auto r = partition(f.g, f.specs, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExprGraph other_ir;
  other_ir.output(other_ir.call("relu", {other_ir.var("x")}));
  Graph other = build(other_ir);
  auto fitness = make_end_to_end_oracle<ExprGraph>("sum", [](const Graph&, const Partitioning& p) { return p.total; });
  EXPECT_FALSE(refine(other, *r, *fitness).ok());
}

TEST(Partitioner, RewriteVisitsPartsConsumersFirst) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}});
  auto r = partition(g, {per_op("t")}, oracle);
  ASSERT_TRUE(r.ok());
  std::vector<std::string> seen;
  Status s = rewrite_partitions(g, r->partitioning, [&](const Candidate& c, const ExtractedFunction& fn) {
    seen.push_back(c.sub_graph.label(g) + "(" + std::to_string(fn.params.size()) + ")");
  });
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(seen, (std::vector<std::string>{"abs(1)", "relu(1)"}));
}

TEST(Partitioner, BudgetLeavesCandidatesUnknown) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}});
  PartitionerOptions options;
  options.budget.max_calls = 1;
  std::vector<std::string> phases;
  options.progress = [&](std::string_view phase, std::size_t, std::size_t) {
    if (phases.empty() || phases.back() != phase) phases.emplace_back(phase);
  };
  auto r = partition(g, {per_op("t")}, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->oracle.budget_refusals, 1u);
  EXPECT_TRUE(r->partitioning.total.is_unknown());
  EXPECT_EQ(phases, (std::vector<std::string>{"candidates", "estimate", "search"}));
}

TEST(Partitioner, ExactFallsBackToBeamOnlyWhenItGivesUp) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.call("neg", {ir.var("x")})})}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 2.0}});
  PartitionerOptions options;
  options.exact.max_states = 1;
  auto fallback = partition(g, {per_op("a"), per_op("b")}, oracle, options);
  ASSERT_TRUE(fallback.ok()) << fallback.error().message;
  EXPECT_EQ(fallback->partitioning.stats.algorithm, "beam (exact gave up)");
  EXPECT_EQ(fallback->partitioning.total, Cost::value(3.0));
  EXPECT_TRUE(fallback->exact_gave_up);
  ASSERT_EQ(fallback->warnings.size(), 1u);
  EXPECT_EQ(fallback->warnings[0].rfind("exact search gave up after ", 0), 0u) << fallback->warnings[0];
  EXPECT_NE(fallback->warnings[0].find("; beam search (width 64) answered instead"), std::string::npos);

  options.fall_back_to_beam = false;
  auto strict = partition(g, {per_op("a"), per_op("b")}, oracle, options);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.error().code, ErrorCode::search_gave_up);
}

TEST(Partitioner, EverySearcherHasATimeBudget) {
  // Budgets spent at the first look at the clock: exact gives way to beam, which keeps one state
  // per step from there and still answers; greedy fails, naming its budget.
  ExprGraph ir;
  const Expr* h = ir.var("x");
  for (int i = 0; i < 400; ++i) h = ir.call(i % 2 ? "relu" : "abs", {h});
  ir.output(h);
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 1.1}});
  PartitionerOptions options;
  options.exact.max_seconds = 1e-9;
  options.beam.max_seconds = 1e-9;
  auto r = partition(g, {native_fusion_spec<ExprGraph>("a", 3), per_op("b")}, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->exact_gave_up);
  EXPECT_EQ(r->partitioning.stats.narrowed_at, 0u);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_NE(r->warnings[0].find("s (max_seconds)"), std::string::npos) << r->warnings[0];
  EXPECT_EQ(r->warnings[1], "beam search ran out of its time budget (max_seconds 1e-09) with 0 of 400 kernel nodes "
                            "covered: it kept one state per step from there");
  options.algorithm = SearchAlgorithm::greedy;
  options.greedy.max_seconds = 1e-9;
  auto greedy = partition(g, {native_fusion_spec<ExprGraph>("a", 3), per_op("b")}, oracle, options);
  ASSERT_FALSE(greedy.ok());
  EXPECT_EQ(greedy.error().code, ErrorCode::search_gave_up);
  EXPECT_EQ(greedy.error().message.rfind("greedy search gave up after 0 of ", 0), 0u) << greedy.error().message;
}

TEST(Partitioner, EmptyOrRepeatedTargetNamesAreInvalidArguments) {
  ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}, {"", 1.0}});
  Spec cheap = per_op("t");
  Spec dear = per_op("t");
  dear.penalty = 5;  // two specs of one target would share one penalty, the last
  auto twice = partition(g, {cheap, per_op("u"), dear}, oracle);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(twice.error().message,
            "specs 1 and 3 both name target 't': give each target one spec (join rules with union_of)");
  auto empty = partition(g, {per_op("")}, oracle);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(empty.error().message, "PartitionSpec::target of spec 1 is empty: every target needs a name");
  EXPECT_FALSE(collect_candidates(g, {cheap, dear}).ok());
}

TEST(Partitioner, CollectAndEstimateAreThePartitionersOwnSteps) {
  RefineFixture f;
  MockOracle<ExprGraph> oracle({{"a", 1.0}, {"b", 2.0}});
  auto whole = partition(f.g, f.specs, oracle);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  auto set = collect_candidates(f.g, f.specs);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->priority, whole->priority);
  EXPECT_TRUE(set->warnings.empty());
  for (const Candidate& c : set->candidates) EXPECT_TRUE(c.cost.is_unknown()) << c.to_string();
  MockOracle<ExprGraph> again({{"a", 1.0}, {"b", 2.0}});
  const CostEstimates estimates = estimate_costs(f.g, set->candidates, again);
  EXPECT_TRUE(estimates.oracle_errors.empty());
  ASSERT_EQ(set->candidates.size(), whole->candidates.size());
  for (std::size_t k = 0; k < set->candidates.size(); ++k) {
    EXPECT_EQ(set->candidates[k], whole->candidates[k]);
    EXPECT_EQ(set->candidates[k].cost, whole->candidates[k].cost);
  }
  // A second call asks nothing: every cost is known now.
  EXPECT_EQ(estimate_costs(f.g, set->candidates, again).oracle.calls, 0u);
}

TEST(Partitioner, ARuleStoppedByTheCandidateBudgetIsAWarningOfTheResult) {
  ExprGraph ir;
  const Expr* h = ir.var("x");
  for (int i = 0; i < 12; ++i) h = ir.call("relu", {h});
  ir.output(h);
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}});
  Spec runs{"t", combine(op_kind<ExprGraph>(OpKind::opaque), {Combiner<ExprGraph>::all()}, {}, "runs")};
  PartitionerOptions options;
  options.candidates.max_candidates_per_rule = 20;
  auto cut = partition(g, {runs}, oracle, options);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  ASSERT_EQ(cut->warnings.size(), 1u);
  EXPECT_EQ(cut->warnings[0].rfind("target 't', rule 'runs' (combine): stopped at max_candidates_per_rule (20)", 0),
            0u)
      << cut->warnings[0];
  options.candidates = CandidateBudget{};
  auto whole = partition(g, {runs}, oracle, options);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_TRUE(whole->warnings.empty());
  EXPECT_EQ(whole->candidates.size(), 12u * 13u / 2u);  // every contiguous run
  EXPECT_LT(cut->candidates.size(), whole->candidates.size());
}

TEST(Partitioner, UncoveredNodeIsAnUncoveredError) {
  ExprGraph ir;
  ir.output(ir.call("abs", {ir.call("relu", {ir.var("x")})}));
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"lib", 1.0}});
  Spec lib{"lib", op_predicate<ExprGraph>("lib", [](const Graph& gg, std::size_t i) { return gg.op_name(i) == "relu"; })};
  auto r = partition(g, {lib}, oracle);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::uncovered);
}

}  // namespace
}  // namespace collage
