#include "graph_reader.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "graph_gen.hpp"

namespace collage::cli {
namespace {

JsonGraph read_ok(const std::string& text) {
  Result<JsonGraph> g = read_graph(text, "g.json");
  EXPECT_TRUE(g.ok()) << g.error().message;
  return g.ok() ? std::move(g).value() : JsonGraph{};
}

std::string read_error(const std::string& text) {
  Result<JsonGraph> g = read_graph(text, "g.json");
  if (g.ok()) {
    Result<DataflowGraph<JsonGraph>> built = build_graph(*g);
    if (built.ok()) return "(no error)";
    return built.error().message;
  }
  return g.error().message;
}

TEST(ReadGraph, ReadsNodesInAnyOrderWithStringAndIntegerIds) {
  JsonGraph g = read_ok(collage_cli_test::kTupleGraph);
  ASSERT_EQ(g.nodes.size(), 10u);
  EXPECT_EQ(g.name, "t");
  EXPECT_EQ(g.find("7"), 3u);
  EXPECT_TRUE(g.nodes[3].integer_id);
  EXPECT_EQ(g.id_json(3), Json(7));
  EXPECT_EQ(g.id_json(0), Json("q"));
  EXPECT_EQ(g.nodes[2].inputs, (std::vector<std::size_t>{4, 3}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0], 7u);
}

TEST(ReadGraph, UnknownOpsAreOpaqueAndKindOverridesTheTable) {
  JsonGraph ir = read_ok(R"({"format": "collage-graph/1", "nodes": [
      {"id": "x", "op": "input"}, {"id": "a", "op": "frob", "inputs": ["x"]},
      {"id": "b", "op": "conv2d", "kind": "elemwise", "inputs": ["a"]},
      {"id": "c", "op": "pack", "kind": "tuple", "inputs": ["b", "a"]}], "outputs": ["c"]})");
  EXPECT_EQ(ir.nodes[1].kind, OpKind::opaque);
  EXPECT_EQ(ir.nodes[2].kind, OpKind::elemwise);
  EXPECT_EQ(ir.nodes[3].role, NodeRole::tuple);
  EXPECT_FALSE(ir.nodes[3].needs_kernel());
}

struct ErrorCase {
  const char* name;
  const char* text;
  const char* expected;  // the whole message
};

/// Names the case in gtest output.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ReadGraphErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ReadGraphErrors, NameTheFileThePlaceAndTheProblem) {
  EXPECT_EQ(read_error(GetParam().text), GetParam().expected);
}

const ErrorCase kErrorCases[] = {
    {"Malformed", "{\"format\": \"collage-graph/1\",\n \"nodes\": [}",
     "g.json: line 2, column 12: malformed JSON: syntax error while parsing value - unexpected '}'; expected '[', "
     "'{', or a literal"},
    {"Empty", "", "g.json: line 1, column 1: malformed JSON: syntax error while parsing value - unexpected end of input; "
                  "expected '[', '{', or a literal"},
    {"NotAnObject", "[1]", "g.json: /: expected an object, found an array"},
    {"WrongFormat", R"({"format": "collage-spec/1", "nodes": [], "outputs": []})",
     "g.json: /format: wrong format tag \"collage-spec/1\"; expected \"collage-graph/1\""},
    {"MissingFormat", R"({"nodes": [], "outputs": []})", "g.json: /format: missing; expected \"collage-graph/1\""},
    {"MissingNodes", R"({"format": "collage-graph/1", "outputs": []})", "g.json: /nodes: missing"},
    {"MissingOutputs", R"({"format": "collage-graph/1", "nodes": []})", "g.json: /outputs: missing"},
    {"UnknownTopKey", R"({"format": "collage-graph/1", "nodez": []})",
     "g.json: /nodez: unknown key 'nodez' (expected one of: format, name, nodes, outputs, metadata)"},
    {"MissingId", R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"op": "relu"}], "outputs": []})",
     "g.json: /nodes/1/id: missing"},
    {"EmptyId", R"({"format": "collage-graph/1", "nodes": [{"id": "", "op": "input"}], "outputs": []})",
     "g.json: /nodes/0/id: an id must not be empty"},
    {"FloatId", R"({"format": "collage-graph/1", "nodes": [{"id": 1.5, "op": "input"}], "outputs": []})",
     "g.json: /nodes/0/id: expected an id (a string or an integer), found a number 1.5"},
    {"DuplicateId",
     R"({"format": "collage-graph/1", "nodes": [{"id": "a", "op": "input"}, {"id": "b", "op": "input"}, {"id": "a", "op": "relu"}], "outputs": []})",
     "g.json: /nodes/2/id: duplicate id 'a' (first used by /nodes/0)"},
    {"IntegerAndStringIdCollide",
     R"({"format": "collage-graph/1", "nodes": [{"id": "3", "op": "input"}, {"id": 3, "op": "input"}], "outputs": []})",
     "g.json: /nodes/1/id: duplicate id '3' (first used by /nodes/0)"},
    {"UnknownInput",
     R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"id": "r", "op": "relu", "inputs": ["x", "zz"]}], "outputs": ["r"]})",
     "g.json: /nodes/1/inputs/1: (node 'r') no node has id 'zz'"},
    {"UnknownOutput", R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}], "outputs": ["y"]})",
     "g.json: /outputs/0: no node has id 'y'"},
    {"BadKind",
     R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"id": "r", "op": "relu", "kind": "fancy", "inputs": ["x"]}], "outputs": ["r"]})",
     "g.json: /nodes/1/kind: (node 'r') bad kind 'fancy' (expected one of elemwise, broadcast, injective, reduce, "
     "anchor, tuple, opaque)"},
    {"MissingOp", R"({"format": "collage-graph/1", "nodes": [{"id": "x"}], "outputs": []})",
     "g.json: /nodes/0/op: (node 'x') missing"},
    {"UnknownNodeKey", R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input", "input": []}], "outputs": []})",
     "g.json: /nodes/0/input: (node 'x') unknown key 'input' (expected one of: id, op, inputs, kind, attrs, shape, "
     "dtype)"},
    {"InputsNotArray", R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "relu", "inputs": "y"}], "outputs": []})",
     "g.json: /nodes/0/inputs: (node 'x') expected an array of ids, found a string \"y\""},
    {"ConstWithInputs",
     R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"id": "c", "op": "const", "inputs": ["x"]}], "outputs": []})",
     "g.json: /nodes/1/inputs: (node 'c') a const node takes no inputs"},
    {"GetItemWithoutIndex",
     R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"id": "g", "op": "get_item", "inputs": ["x"]}], "outputs": []})",
     "g.json: /nodes/1/attrs/index: (node 'g') a get_item node needs attrs.index"},
    {"BadShape", R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input", "shape": [1, 2.5]}], "outputs": []})",
     "g.json: /nodes/0/shape/1: (node 'x') expected a dimension (an integer or a name), found a number 2.5"},
    {"NewlineInIdStaysOnOneLine",
     "{\"format\": \"collage-graph/1\", \"nodes\": [{\"id\": \"a\\nb\", \"op\": \"input\"}, {\"id\": \"a\\nb\", "
     "\"op\": \"input\"}], \"outputs\": []}",
     "g.json: /nodes/1/id: duplicate id 'a\\nb' (first used by /nodes/0)"},
};

INSTANTIATE_TEST_SUITE_P(All, ReadGraphErrors, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

TEST(ReadGraph, DeepNestingIsAnErrorNotACrash) {
  const std::size_t depth = 200000;
  std::string deep = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_EQ(read_error(deep), "g.json: /: expected an object, found an array");
  std::string metadata = R"({"format": "collage-graph/1", "metadata": )" + deep + R"(, "nodes": [], "outputs": []})";
  EXPECT_EQ(read_error(metadata), "(no error)");
  std::string attrs = R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input", "attrs": {"a": )" + deep +
                      "}}], \"outputs\": []}";
  EXPECT_EQ(read_error(attrs), "g.json: /nodes/0/attrs: (node 'x') nested more than 32 levels deep");
}

TEST(ReadGraph, Reads138000Nodes) {
  // How fast: bench/json_graph_bench.cpp (tools/collage/bench).
  const std::string text = collage_cli_test::layered_graph_json(138000);
  Result<JsonGraph> g = read_graph(text, "big.json");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->nodes.size(), 138000u);
  Result<DataflowGraph<JsonGraph>> built = build_graph(*g);
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_EQ(built->size(), 138000u);
}

}  // namespace
}  // namespace collage::cli
