#include "json_graph.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

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

constexpr const char* kTupleGraph = R"({
  "format": "collage-graph/1", "name": "t",
  "nodes": [
    {"id": "q", "op": "my_op", "inputs": ["g"], "kind": "injective"},
    {"id": "g", "op": "get_item", "inputs": ["t"], "attrs": {"index": 1}},
    {"id": "t", "op": "tuple", "inputs": ["c0", 7]},
    {"id": 7, "op": "nn.relu", "inputs": ["x"]},
    {"id": "c0", "op": "conv2d", "inputs": ["x", "w0"], "attrs": {"padding": [0, 0, 0, 0]}},
    {"id": "w0", "op": "const", "shape": [8, 1, 5, 5]},
    {"id": "s0", "op": "const", "shape": []},
    {"id": "m", "op": "multiply", "inputs": ["q", "s0"]},
    {"id": "x", "op": "input", "shape": [1, 1, 28, 28], "dtype": "float32"},
    {"id": "dead", "op": "relu", "inputs": ["x"]}
  ],
  "outputs": ["m"]
})";

TEST(JsonGraph, ReadsNodesInAnyOrderWithStringAndIntegerIds) {
  JsonGraph g = read_ok(kTupleGraph);
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

TEST(JsonGraph, TraitsDescribeKindsConstantsTuplesAndProjections) {
  JsonGraph ir = read_ok(kTupleGraph);
  Result<DataflowGraph<JsonGraph>> built = build_graph(ir);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const DataflowGraph<JsonGraph>& g = *built;
  EXPECT_EQ(g.size(), 9u);  // "dead" is not reached from the outputs
  EXPECT_EQ(g.index_of(ir.find("dead")), npos);
  auto at = [&](const char* id) { return g.index_of(ir.find(id)); };
  EXPECT_EQ(g.label(at("c0")), "c0");
  EXPECT_EQ(g.op_name(at("c0")), "conv2d");
  EXPECT_EQ(g.kind(at("c0")), OpKind::anchor);
  EXPECT_EQ(g.kind(at("7")), OpKind::elemwise);  // "nn.relu" by its last component
  EXPECT_EQ(g.kind(at("q")), OpKind::injective);
  EXPECT_EQ(g.kind(at("m")), OpKind::broadcast);
  EXPECT_TRUE(g.is_constant(at("w0")));
  EXPECT_FALSE(g.is_inlinable(at("w0")));
  EXPECT_TRUE(g.is_inlinable(at("s0")));
  EXPECT_FALSE(g.is_constant(at("s0")));
  EXPECT_TRUE(g.is_tuple(at("t")));
  EXPECT_TRUE(g.is_projection(at("g")));
  EXPECT_EQ(g.projection_index(at("g")), 1u);
  for (const char* id : {"x", "w0", "s0", "t", "g"}) EXPECT_FALSE(g.needs_kernel(at(id))) << id;
  for (const char* id : {"c0", "7", "q", "m"}) EXPECT_TRUE(g.needs_kernel(at(id))) << id;
}

TEST(JsonGraph, UnknownOpsAreOpaqueAndKindOverridesTheTable) {
  JsonGraph ir = read_ok(R"({"format": "collage-graph/1", "nodes": [
      {"id": "x", "op": "input"}, {"id": "a", "op": "frob", "inputs": ["x"]},
      {"id": "b", "op": "conv2d", "kind": "elemwise", "inputs": ["a"]},
      {"id": "c", "op": "pack", "kind": "tuple", "inputs": ["b", "a"]}], "outputs": ["c"]})");
  EXPECT_EQ(ir.nodes[1].kind, OpKind::opaque);
  EXPECT_EQ(ir.nodes[2].kind, OpKind::elemwise);
  EXPECT_EQ(ir.nodes[3].role, NodeRole::tuple);
  EXPECT_FALSE(ir.nodes[3].needs_kernel());
}

TEST(JsonGraph, SignatureCoversOpAttrsShapeAndDtype) {
  JsonGraph ir = read_ok(R"({"format": "collage-graph/1", "nodes": [
      {"id": "a", "op": "dense", "attrs": {"units": 8}, "shape": [1, 8], "dtype": "float32"},
      {"id": "b", "op": "dense", "attrs": {"units": 8}, "shape": [1, 8], "dtype": "float32"},
      {"id": "c", "op": "dense", "attrs": {"units": 9}, "shape": [1, 8], "dtype": "float32"},
      {"id": "d", "op": "dense", "attrs": {"units": 8}, "shape": [1, 9], "dtype": "float32"},
      {"id": "e", "op": "dense", "attrs": {"units": 8}, "shape": [1, 8], "dtype": "float16"}],
      "outputs": ["a", "b", "c", "d", "e"]})");
  using T = dataflow_traits<JsonGraph>;
  EXPECT_EQ(T::signature(ir, 0), T::signature(ir, 1));
  EXPECT_NE(T::signature(ir, 0), T::signature(ir, 2));
  EXPECT_NE(T::signature(ir, 0), T::signature(ir, 3));
  EXPECT_NE(T::signature(ir, 0), T::signature(ir, 4));
}

struct ErrorCase {
  const char* name;
  const char* text;
  const char* expected;  // the whole message
};

/// Names the case in gtest output.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class JsonGraphErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(JsonGraphErrors, NameTheFileThePlaceAndTheProblem) {
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
    {"Cycle",
     R"({"format": "collage-graph/1", "nodes": [{"id": "a", "op": "relu", "inputs": ["b"]}, {"id": "b", "op": "relu", "inputs": ["a"]}, {"id": "o", "op": "relu", "inputs": ["b"]}], "outputs": ["o"]})",
     "g.json: the dataflow graph has a cycle through node 'b'"},
    {"CycleOutsideTheOutputs",
     R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"id": "a", "op": "relu", "inputs": ["b"]}, {"id": "b", "op": "relu", "inputs": ["a"]}], "outputs": ["x"]})",
     "g.json: the dataflow graph has a cycle through node 'a'"},
    {"SelfLoop", R"({"format": "collage-graph/1", "nodes": [{"id": "a", "op": "relu", "inputs": ["a"]}], "outputs": ["a"]})",
     "g.json: the dataflow graph has a cycle through node 'a'"},
    {"NewlineInIdStaysOnOneLine",
     "{\"format\": \"collage-graph/1\", \"nodes\": [{\"id\": \"a\\nb\", \"op\": \"input\"}, {\"id\": \"a\\nb\", "
     "\"op\": \"input\"}], \"outputs\": []}",
     "g.json: /nodes/1/id: duplicate id 'a\\nb' (first used by /nodes/0)"},
};

INSTANTIATE_TEST_SUITE_P(All, JsonGraphErrors, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

TEST(JsonGraph, DeepNestingIsAnErrorNotACrash) {
  const std::size_t depth = 200000;
  std::string deep = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_EQ(read_error(deep), "g.json: /: expected an object, found an array");
  std::string metadata = R"({"format": "collage-graph/1", "metadata": )" + deep + R"(, "nodes": [], "outputs": []})";
  EXPECT_EQ(read_error(metadata), "(no error)");
  std::string attrs = R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input", "attrs": {"a": )" + deep +
                      "}}], \"outputs\": []}";
  EXPECT_EQ(read_error(attrs), "g.json: /nodes/0/attrs: (node 'x') nested more than 32 levels deep");
}

TEST(JsonGraph, Reads138000Nodes) {
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
