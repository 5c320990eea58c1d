#include "json_graph.hpp"

#include <gtest/gtest.h>

#include "collage/graph/dataflow_graph.hpp"
#include "graph_gen.hpp"
#include "graph_reader.hpp"

namespace collage::cli {
namespace {

TEST(JsonGraph, TraitsDescribeKindsConstantsTuplesAndProjections) {
  Result<JsonGraph> read = read_graph(collage_cli_test::kTupleGraph, "g.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  const JsonGraph& ir = *read;
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

TEST(JsonGraph, SignatureCoversOpAttrsShapeAndDtype) {
  Result<JsonGraph> read = read_graph(R"({"format": "collage-graph/1", "nodes": [
      {"id": "a", "op": "dense", "attrs": {"units": 8}, "shape": [1, 8], "dtype": "float32"},
      {"id": "b", "op": "dense", "attrs": {"units": 8}, "shape": [1, 8], "dtype": "float32"},
      {"id": "c", "op": "dense", "attrs": {"units": 9}, "shape": [1, 8], "dtype": "float32"},
      {"id": "d", "op": "dense", "attrs": {"units": 8}, "shape": [1, 9], "dtype": "float32"},
      {"id": "e", "op": "dense", "attrs": {"units": 8}, "shape": [1, 8], "dtype": "float16"}],
      "outputs": ["a", "b", "c", "d", "e"]})", "g.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  const JsonGraph& ir = *read;
  using T = dataflow_traits<JsonGraph>;
  EXPECT_EQ(T::signature(ir, 0), T::signature(ir, 1));
  EXPECT_NE(T::signature(ir, 0), T::signature(ir, 2));
  EXPECT_NE(T::signature(ir, 0), T::signature(ir, 3));
  EXPECT_NE(T::signature(ir, 0), T::signature(ir, 4));
}

TEST(JsonGraph, BuildGraphNamesANodeOnACycleAlsoOutsideTheOutputs) {
  struct Case {
    const char* name;
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"Cycle",
       R"({"format": "collage-graph/1", "nodes": [{"id": "a", "op": "relu", "inputs": ["b"]}, {"id": "b", "op": "relu", "inputs": ["a"]}, {"id": "o", "op": "relu", "inputs": ["b"]}], "outputs": ["o"]})",
       "g.json: the dataflow graph has a cycle through node 'b'"},
      {"CycleOutsideTheOutputs",
       R"({"format": "collage-graph/1", "nodes": [{"id": "x", "op": "input"}, {"id": "a", "op": "relu", "inputs": ["b"]}, {"id": "b", "op": "relu", "inputs": ["a"]}], "outputs": ["x"]})",
       "g.json: the dataflow graph has a cycle through node 'a'"},
      {"SelfLoop", R"({"format": "collage-graph/1", "nodes": [{"id": "a", "op": "relu", "inputs": ["a"]}], "outputs": ["a"]})",
       "g.json: the dataflow graph has a cycle through node 'a'"},
  };
  for (const Case& c : cases) {
    Result<JsonGraph> read = read_graph(c.text, "g.json");
    ASSERT_TRUE(read.ok()) << c.name << ": " << read.error().message;
    Result<DataflowGraph<JsonGraph>> built = build_graph(*read);
    ASSERT_FALSE(built.ok()) << c.name;
    EXPECT_EQ(built.error().message, c.expected) << c.name;
  }
}

}  // namespace
}  // namespace collage::cli
