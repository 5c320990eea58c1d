#include "collage/report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collage/collage.hpp"  // with every other header, so that no name in detail:: is ambiguous
#include "collage/cost/mock_oracle.hpp"
#include "collage/rules/base_rules.hpp"
#include "collage/rules/combinators.hpp"
#include "common/build_graph.hpp"
#include "common/comma_locale.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;
using Spec = PartitionSpec<ExprGraph>;

using testing_ir::build;

/// x -> dense -> relu, with a library that runs dense as primitive(composite(...)) at 0.5 plus a
/// penalty of 0.25, and "tvm" that runs each op at 1.
struct Small {
  ExprGraph ir;
  Graph g;
  Result<PartitionResult> result;

  Small() : ir(make_ir()), g(build(ir)), result(partition(g, specs(), *oracle())) {}

  static ExprGraph make_ir() {
    ExprGraph ir;
    ir.output(ir.call("relu", {ir.call("dense", {ir.var("x")})}));
    return ir;
  }
  static std::vector<Spec> specs() {
    return {Spec{"tvm", op_predicate<ExprGraph>("tvm", [](const Graph& g, std::size_t i) { return g.needs_kernel(i); })},
            Spec{"lib", primitive(composite("lib.dense", op_predicate<ExprGraph>("dense", [](const Graph& g, std::size_t i) {
                           return g.op_name(i) == "dense";
                         }))), 0.25}};
  }
  static std::unique_ptr<CostOracle<ExprGraph>> oracle() {
    return make_oracle<ExprGraph>("fixed", [](const Graph&, const Candidate& c, const ExtractedFunction&) {
      return Cost::value(c.target == "lib" ? 0.5 : 1.0);
    });
  }
};

TEST(Report, JsonIsThePartitionSchemaWithGroupsAtEveryDepth) {
  Small s;
  ASSERT_TRUE(s.result.ok()) << s.result.error().message;
  EXPECT_EQ(*to_json(s.g, *s.result),
            "{\n"
            "  \"format\": \"collage-partition/1\",\n"
            "  \"graph\": {\"nodes\": 3, \"fingerprint\": \"" +
                s.g.fingerprint().hash_text() +
                "\"},\n"
            "  \"total_cost\": 1.75,\n"
            "  \"effective_total_cost\": 1.75,\n"
            "  \"partitions\": [\n"
            "    {\"target\": \"lib\", \"rule\": \"primitive.composite.dense\", \"cost\": 0.75, \"inside\": [\"dense\"], "
            "\"nested\": [{\"attrs\": {\"Compiler\": \"lib\", \"Primitive\": \"1\"}, \"inside\": [\"dense\"], \"nested\": "
            "[{\"attrs\": {\"Composite\": \"lib.dense\"}, \"inside\": [\"dense\"]}]}], \"alternatives\": [{\"target\": "
            "\"lib\", \"rule\": \"primitive.composite.dense\", \"cost\": 0.75, \"inside\": [\"dense\"]}, {\"target\": "
            "\"tvm\", \"rule\": \"tvm\", \"cost\": 1, \"inside\": [\"dense\"]}]},\n"
            "    {\"target\": \"tvm\", \"rule\": \"tvm\", \"cost\": 1, \"inside\": [\"relu\"], \"nested\": [], "
            "\"alternatives\": [{\"target\": \"tvm\", \"rule\": \"tvm\", \"cost\": 1, \"inside\": [\"relu\"]}]}\n"
            "  ],\n"
            "  \"host\": [\"x\"],\n"
            "  \"search\": {\"algorithm\": \"exact\", \"candidates\": 3, \"usable_candidates\": 3, \"states_expanded\": "
            "2, \"states_generated\": 3, \"oracle_calls\": 3, \"cache_hits\": 0, \"cache_misses\": 3, \"oracle_errors\": "
            "0}\n"
            "}\n");
}

TEST(Report, OptionsChooseNodeNamesAlternativesAndTimings) {
  Small s;
  ASSERT_TRUE(s.result.ok()) << s.result.error().message;
  ReportOptions options;
  options.alternatives = false;
  options.timings = true;
  options.node_json = [](std::size_t i) { return std::to_string(i); };
  const std::string json = *to_json(s.g, *s.result, options);
  EXPECT_EQ(json.find("alternatives"), std::string::npos) << json;
  EXPECT_NE(json.find("\"inside\": [1]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"host\": [0]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"seconds\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"phases\": {\"candidates\": "), std::string::npos) << json;
}

TEST(Report, DotHasAClusterPerPartAndHostNodesOutside) {
  Small s;
  ASSERT_TRUE(s.result.ok()) << s.result.error().message;
  ReportOptions options;
  options.name = "small";
  const std::string dot = *to_dot(s.g, *s.result, options);
  EXPECT_EQ(dot.rfind("digraph \"small\" {\n", 0), 0u) << dot;
  EXPECT_NE(dot.find("label=\"small: total cost 1.75\";"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"1. lib (primitive.composite.dense)\\ncost 0.75\";"), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph cluster_1 {"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("subgraph cluster_2"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  n0 [label=\"x\", shape=ellipse];\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  n0 -> n1;\n  n1 -> n2;\n}\n"), std::string::npos) << dot;
}

/// A two-layer BERT-like encoder over native fusion and a dense / bias_add library (penalty 0.1).
struct Model {
  ExprGraph ir = [] {
    ExprGraph m;
    testing_ir::models::bert_like(m, 2, 64);
    return m;
  }();
  Graph g = build(ir);
  MockOracle<ExprGraph> oracle{{{"tvm", 1.0}, {"lib", 0.8}}};
  std::vector<Spec> specs = {native_fusion_spec<ExprGraph>("tvm", 3),
                             Spec{"lib", op_predicate_byoc_rule<ExprGraph>("lib", [](const Graph& gg, std::size_t i) {
                                    return gg.op_name(i) == "dense" || gg.op_name(i) == "bias_add";
                                  }, 2), 0.1}};

  Result<PartitionResult> run() { return partition(g, specs, oracle); }
};

TEST(Report, DeterministicOnAModel) {
  Model m;
  auto first = m.run();
  auto second = m.run();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*to_json(m.g, *first), *to_json(m.g, *second));
  EXPECT_EQ(*to_dot(m.g, *first), *to_dot(m.g, *second));
  ReportOptions untimed;
  untimed.seconds = 0;
  EXPECT_EQ(*to_text(m.g, *first, untimed), *to_text(m.g, *second, untimed));
}

TEST(Report, SameBytesUnderACommaLocale) {
  Model m;
  const Graph& g = m.g;
  auto r = m.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string json = *to_json(g, *r);
  const std::string dot = *to_dot(g, *r);
  const std::string candidates = *candidates_to_json(g, r->candidates, r->penalties);
  const double total = r->partitioning.total.raw();
  ASSERT_NE(total, std::floor(total));  // costs with a decimal point
  testing_ir::CommaLocale comma;
  if (!comma.active()) GTEST_SKIP() << testing_ir::CommaLocale::missing();
  EXPECT_EQ(*to_json(g, *r), json);
  EXPECT_EQ(*to_dot(g, *r), dot);
  EXPECT_EQ(*candidates_to_json(g, r->candidates, r->penalties), candidates);
}

TEST(Report, TextHasAPartPerLineHostTotalAndTheExplanation) {
  Small s;
  ASSERT_TRUE(s.result.ok()) << s.result.error().message;
  ReportOptions options;
  options.name = "small";
  options.seconds = 0.25;
  const std::string rule(25 - 4, ' ');
  EXPECT_EQ(*to_text(s.g, *s.result, options),
            "small: 3 nodes (2 need a kernel), 2 targets, 3 candidates\n"
            "#   target  cost  rule" + rule + "  nodes\n"
            "1   lib     0.75  primitive.composite.dense  dense [lib.dense: dense]\n"
            "2   tvm     1     tvm" + std::string(22, ' ') + "  relu\n"
            "host: x\n"
            "total cost 1.75 (exact search: 2 states expanded, 3 oracle calls, 0.250 s)\n"
            "\n"
            "why collage chose each partition (the candidates that could cover its first kernel node):\n"
            "  1. lib [dense] 0.75\n"
            "       - tvm [dense]: slower: 1 vs 0.75\n"
            "  2. tvm [relu] 1\n");
  options.alternatives = false;
  options.cost_text = [](const Cost& c) { return c.to_string() + " ms"; };
  const std::string text = *to_text(s.g, *s.result, options);
  EXPECT_EQ(text.find("why collage"), std::string::npos) << text;
  EXPECT_NE(text.find("1   lib     0.75 ms  primitive"), std::string::npos) << text;
  EXPECT_NE(text.find("total cost 1.75 ms (exact"), std::string::npos) << text;
  EXPECT_EQ(*explain_text(s.g, *s.result, options),
            "why collage chose each partition (the candidates that could cover its first kernel node):\n"
            "  1. lib [dense] 0.75 ms\n"
            "       - tvm [dense]: slower: 1 ms vs 0.75 ms\n"
            "  2. tvm [relu] 1 ms\n");
}

TEST(Report, TextRefusesAResultOfAnotherGraph) {
  Small s;
  Model m;
  ASSERT_TRUE(s.result.ok()) << s.result.error().message;
  auto text = to_text(m.g, *s.result);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::wrong_graph);
  EXPECT_EQ(explain_text(m.g, *s.result).error().code, ErrorCode::wrong_graph);
}

TEST(Report, CandidatesListCostsAsTheSearchSeesThem) {
  Small s;
  ASSERT_TRUE(s.result.ok()) << s.result.error().message;
  EXPECT_EQ(*candidates_to_json(s.g, s.result->candidates, s.result->penalties),
            "{\n"
            "  \"format\": \"collage-candidates/1\",\n"
            "  \"candidates\": [\n"
            "    {\"target\": \"tvm\", \"rule\": \"tvm\", \"cost\": 1, \"inside\": [\"dense\"], \"nested\": []},\n"
            "    {\"target\": \"lib\", \"rule\": \"primitive.composite.dense\", \"cost\": 0.75, \"inside\": [\"dense\"], "
            "\"nested\": [{\"attrs\": {\"Compiler\": \"lib\", \"Primitive\": \"1\"}, \"inside\": [\"dense\"], \"nested\": "
            "[{\"attrs\": {\"Composite\": \"lib.dense\"}, \"inside\": [\"dense\"]}]}]},\n"
            "    {\"target\": \"tvm\", \"rule\": \"tvm\", \"cost\": 1, \"inside\": [\"relu\"], \"nested\": []}\n"
            "  ]\n"
            "}\n");
}

}  // namespace
}  // namespace collage
