#include "spec_reader.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "collage/partition/extraction.hpp"
#include "graph_reader.hpp"
#include "json_graph.hpp"

namespace collage::cli {
namespace {

using Spec = ToolSpec<JsonGraph>;

/// A spec text with one target "t" whose rule is `rule` and whose cost entry is `cost`.
std::string one_target(const std::string& rule, const std::string& cost = R"({"ops": {"*": 1}})",
                       const std::string& extra = "") {
  return R"({"format": "collage-spec/1", "targets": [{"name": "t", "rule": )" + rule +
         R"(}], "cost": {"model": "synthetic", "targets": {"t": )" + cost + "}}" + extra + "}";
}

std::string read_error(const std::string& text) {
  Result<Spec> s = read_spec<JsonGraph>(std::string_view(text), "s.json");
  return s.ok() ? "(no error)" : s.error().message;
}

TEST(SpecReader, ReadsEveryRuleAndCombiner) {
  const std::string rule = R"js({"rule": "union", "subs": [
      {"rule": "native", "max_depth": 3},
      {"rule": "primitive", "compiler": false, "sub": {"rule": "op_kind", "max_kind": "anchor"}},
      {"rule": "composite", "name": "lib.dense_bias", "sub": {"rule": "pattern", "name": "db", "pattern": "add(dense(*, const), *)"}},
      {"rule": "only_valid", "config": {"max_exits": 1, "allow_taps": true, "max_depth": 4},
       "sub": {"rule": "combine", "max_depth": 4, "max_candidates": 1000, "max_tuple_joins": 16,
               "max_joins_per_exit": 64, "name": "grow",
               "combiners": [{"by_kind": ["anchor", "broadcast"]}, "all", "tuple_arg", "tuple_proj", "constant"],
               "sub": {"rule": "op_predicate", "name": "lib", "ops": ["add", "relu"], "constants": true}}},
      {"rule": "max_coalesce", "config": {"max_depth": 5}, "sub": {"rule": "op_kind", "max_kind": "injective"}},
      {"rule": "anchor_fusion", "epilogue_max_kind": "elemwise", "max_epilogue": 2, "prologue_max_kind": "injective",
       "horizontal": false},
      {"rule": "combine_split_bounded", "max_splits": 1, "combiners": ["all"], "sub": {"rule": "op_kind", "max_kind": "opaque"}},
      {"rule": "host"}]})js";
  Result<Spec> s = read_spec<JsonGraph>(std::string_view(one_target(rule)), "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->targets.size(), 1u);
  const std::string d = s->targets[0].rule.describe();
  for (const char* part : {"union(", "primitive[native](", "op_kind(anchor)", "composite[lib.dense_bias]",
                           "pattern(db, add(dense(*, const), *))", "only_valid(", "combine(", "by_kind(anchor,broadcast)",
                           "tuple_arg", "tuple_proj", "constant", "op_predicate(lib, with constants)", "max_coalesce",
                           "anchor_fusion", "host()"}) {
    EXPECT_NE(d.find(part), std::string::npos) << part << " not in " << d;
  }
  EXPECT_EQ(s->algorithm, SearchAlgorithm::exact);
  EXPECT_EQ(s->beam_width, 64u);
}

TEST(SpecReader, ReadsSearchSettingsPenaltiesAndCosts) {
  Result<Spec> s = read_spec<JsonGraph>(
      std::string_view(one_target(R"({"rule": "native"})", R"({"launch": 2, "fusion": 0.5, "ops": {"*": 3, "relu": 1}})",
                                  R"(, "search": {"algorithm": "beam", "beam_width": 8, "max_states": 100, "max_memory_mib": 64})")),
      "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->algorithm, SearchAlgorithm::beam);
  EXPECT_EQ(s->options().beam.width, 8u);
  EXPECT_EQ(s->options().exact.max_states, 100u);
  EXPECT_EQ(s->options().exact.max_memory_mib, 64u);
  const SyntheticCost& c = s->costs.at("t");
  EXPECT_EQ(c.launch, 2.0);
  EXPECT_EQ(c.fusion, 0.5);
  EXPECT_EQ(c.op_cost("relu"), 1.0);
  EXPECT_EQ(c.op_cost("conv2d"), 3.0);
}

/// x -> a:relu -> b:add(a, w:const) -> c:softmax, and s:const[] into b.
constexpr const char* kChain = R"({"format": "collage-graph/1", "nodes": [
    {"id": "x", "op": "input"}, {"id": "a", "op": "relu", "inputs": ["x"]},
    {"id": "w", "op": "const", "shape": [4]}, {"id": "b", "op": "add", "inputs": ["a", "w"]},
    {"id": "c", "op": "softmax", "inputs": ["b"]}], "outputs": ["c"]})";

TEST(SyntheticCost, LaunchPlusDiscountedSumOverComputeNodes) {
  Result<JsonGraph> ir = read_graph(kChain, "g.json");
  ASSERT_TRUE(ir.ok()) << ir.error().message;
  Result<DataflowGraph<JsonGraph>> built = build_graph(*ir);
  ASSERT_TRUE(built.ok());
  const DataflowGraph<JsonGraph>& g = *built;
  std::map<std::string, SyntheticCost> models;
  models["t"] = SyntheticCost{0.5, 0.5, {{"relu", 1.0}, {"add", 2.0}}, std::nullopt};
  models["u"] = SyntheticCost{0.0, 1.0, {}, 4.0};
  SyntheticOracle<JsonGraph> oracle(models);
  auto cost = [&](const std::string& target, std::initializer_list<const char*> ids) {
    IndexSet inside(g.size());
    for (const char* id : ids) inside.add(g.index_of(ir->find(id)));
    Candidate c{SubGraph(g, inside), target, "r"};
    Result<Cost> r = oracle.estimate(g, c);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Cost::unknown();
  };
  EXPECT_EQ(cost("t", {"a"}), Cost::value(1.5));
  EXPECT_EQ(cost("t", {"a", "b"}), Cost::value(0.5 + 0.5 * 3.0));
  EXPECT_EQ(cost("t", {"a", "b", "w"}), Cost::value(0.5 + 0.5 * 3.0));  // constants are not compute nodes
  EXPECT_EQ(cost("t", {"w"}), Cost::zero());
  EXPECT_TRUE(cost("t", {"c"}).is_invalid());  // softmax has no cost on t and t has no "*"
  EXPECT_EQ(cost("u", {"a", "b", "c"}), Cost::value(12.0));
}

struct ErrorCase {
  const char* name;
  std::string text;
  const char* expected;
};

/// Names the case in gtest output.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class SpecReaderErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(SpecReaderErrors, NameTheFileThePlaceAndTheProblem) {
  EXPECT_EQ(read_error(GetParam().text), GetParam().expected);
}

std::string deep_rule(std::size_t depth) {
  std::string r;
  for (std::size_t k = 0; k < depth; ++k) r += R"({"rule": "primitive", "sub": )";
  r += R"({"rule": "host"})";
  return r + std::string(depth, '}');
}

const ErrorCase kSpecErrors[] = {
    {"Malformed", "{\"format\": \"collage-spec/1\" \"targets\"}",
     "s.json: line 1, column 37: malformed JSON: syntax error while parsing object - unexpected string literal; "
     "expected '}'"},
    {"WrongFormat", R"({"format": "collage-graph/1"})",
     "s.json: /format: wrong format tag \"collage-graph/1\"; expected \"collage-spec/1\""},
    {"NoTargets", R"({"format": "collage-spec/1", "targets": [], "cost": {}})",
     "s.json: /targets: expected a non-empty array of targets"},
    {"UnknownRule", one_target(R"({"rule": "fuse_everything"})"),
     "s.json: /targets/0/rule/rule: unknown rule 'fuse_everything' (expected one of: op_kind, op_predicate, pattern, "
     "host, composite, primitive, union, combine, combine_split_bounded, only_valid, max_coalesce, anchor_fusion, "
     "native)"},
    {"RuleNotAnObject", one_target(R"("native")"),
     "s.json: /targets/0/rule: expected a rule (an object with a \"rule\" key), found a string"},
    {"UnknownCombiner",
     one_target(R"({"rule": "combine", "combiners": ["all", "sideways"], "sub": {"rule": "op_kind", "max_kind": "anchor"}})"),
     "s.json: /targets/0/rule/combiners/1: unknown combiner 'sideways' (expected one of: {\"by_kind\": [KIND, KIND]}, "
     "\"all\", \"tuple_arg\", \"tuple_proj\", \"constant\")"},
    {"BadByKind",
     one_target(R"({"rule": "combine", "combiners": [{"by_kind": ["anchor", "huge"]}], "sub": {"rule": "host"}})"),
     "s.json: /targets/0/rule/combiners/0/by_kind/1: bad kind 'huge' (expected one of elemwise, broadcast, injective, "
     "reduce, anchor, tuple, opaque)"},
    {"BadPattern", one_target(R"({"rule": "primitive", "sub": {"rule": "pattern", "pattern": "relu(add(*"}})"),
     "s.json: /targets/0/rule/sub/pattern: bad pattern: pattern 'relu(add(*' at column 10: expected ',' or ')'"},
    {"NegativeOpCost", one_target(R"({"rule": "native"})", R"({"ops": {"*": 1, "conv2d": -2.5}})"),
     "s.json: /cost/targets/t/ops/conv2d: negative cost -2.5 (costs must be >= 0)"},
    {"NegativeLaunch", one_target(R"({"rule": "native"})", R"({"launch": -1, "ops": {"*": 1}})"),
     "s.json: /cost/targets/t/launch: negative cost -1 (costs must be >= 0)"},
    {"NegativeFusion", one_target(R"({"rule": "native"})", R"({"fusion": -0.5, "ops": {"*": 1}})"),
     "s.json: /cost/targets/t/fusion: negative fusion factor -0.5 (it must be >= 0)"},
    {"NegativePenalty",
     R"({"format": "collage-spec/1", "targets": [{"name": "t", "penalty": -1, "rule": {"rule": "native"}}], "cost": {"model": "synthetic", "targets": {"t": {"ops": {"*": 1}}}}})",
     "s.json: /targets/0/penalty: negative cost -1 (costs must be >= 0)"},
    {"UnknownKey", one_target(R"({"rule": "native", "max_dept": 3})"),
     "s.json: /targets/0/rule/max_dept: unknown key 'max_dept' (expected one of: rule, max_depth)"},
    {"MissingSub", one_target(R"({"rule": "primitive"})"), "s.json: /targets/0/rule/sub: missing"},
    {"BadConfig", one_target(R"({"rule": "only_valid", "config": {"max_exits": -1}, "sub": {"rule": "host"}})"),
     "s.json: /targets/0/rule/config/max_exits: expected a non-negative integer, found an integer -1"},
    {"NoCostForTarget",
     R"({"format": "collage-spec/1", "targets": [{"name": "t", "rule": {"rule": "native"}}], "cost": {"model": "synthetic", "targets": {}}})",
     "s.json: /cost/targets: no cost for target 't'"},
    {"CostForUnknownTarget", one_target(R"({"rule": "native"})", R"({"ops": {"*": 1}}, "u": {"ops": {}})"),
     "s.json: /cost/targets/u: no target is named 'u'"},
    {"UnknownCostModel",
     R"({"format": "collage-spec/1", "targets": [{"name": "t", "rule": {"rule": "native"}}], "cost": {"model": "measured", "targets": {}}})",
     "s.json: /cost/model: unknown cost model 'measured' (expected \"synthetic\")"},
    {"DuplicateTarget",
     R"({"format": "collage-spec/1", "targets": [{"name": "t", "rule": {"rule": "native"}}, {"name": "t", "rule": {"rule": "host"}}]})",
     "s.json: /targets/1/name: duplicate target name 't'"},
    {"UnknownAlgorithm", one_target(R"({"rule": "native"})", R"({"ops": {"*": 1}})", R"(, "search": {"algorithm": "astar"})"),
     "s.json: /search/algorithm: unknown search algorithm 'astar' (expected exact, beam or greedy)"},
    {"ZeroBeam", one_target(R"({"rule": "native"})", R"({"ops": {"*": 1}})", R"(, "search": {"beam_width": 0})"),
     "s.json: /search/beam_width: the beam width must be at least 1"},
    {"TooDeep", one_target(deep_rule(100)),
     "s.json: /targets/0/rule/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/"
     "sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/"
     "sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub/sub: rules nest more than 64 levels deep"},
};

INSTANTIATE_TEST_SUITE_P(All, SpecReaderErrors, ::testing::ValuesIn(kSpecErrors),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace collage::cli
