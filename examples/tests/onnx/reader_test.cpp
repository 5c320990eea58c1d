#include "onnx/reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "models/model_zoo.hpp"
#include "onnx/model.hpp"
#include "onnx/wire.hpp"
#include "onnx/writer.hpp"
#include "tensor/compare.hpp"
#include "tensor/op_attrs.hpp"
#include "tensor/reference.hpp"

namespace tc {
namespace {

using Ints = std::vector<std::int64_t>;
using Floats = std::vector<float>;

OnnxTensor ints(Ints values) {
  OnnxTensor t;
  t.type = ElemType::int64;
  t.shape = {static_cast<std::int64_t>(values.size())};
  t.ints = std::move(values);
  return t;
}

OnnxTensor int_scalar(std::int64_t v) {
  OnnxTensor t = ints({v});
  t.shape = {};
  return t;
}

OnnxTensor floats(Floats values, Shape shape) {
  OnnxTensor t;
  t.shape = std::move(shape);
  t.reals = std::move(values);
  return t;
}

OnnxNode node(std::string op, std::vector<std::string> in, std::vector<std::string> out,
              std::vector<std::pair<std::string, OnnxAttr>> attrs = {}) {
  return OnnxNode{std::move(op), std::move(in), std::move(out), std::move(attrs), "", ""};
}

/// A model with float input x of `shape` and float output y.
OnnxModel model_with(Shape shape, std::vector<OnnxNode> nodes, int opset = 17) {
  OnnxModel m;
  m.opset = opset;
  m.inputs.push_back(float_value_info("x", shape));
  m.nodes = std::move(nodes);
  m.outputs.push_back(float_value_info("y", {}));
  m.outputs.back().has_shape = false;
  return m;
}

collage::Result<Graph> read(const OnnxModel& m, const ReadOptions& options = {}) {
  collage::Result<std::string> bytes = serialize(m);
  EXPECT_TRUE(bytes.ok());
  return read_onnx_bytes(bytes.ok() ? *bytes : std::string(), options);
}

std::string error_of(const OnnxModel& m, const ReadOptions& options = {}) {
  collage::Result<Graph> g = read(m, options);
  EXPECT_FALSE(g.ok());
  return g.ok() ? std::string() : g.error().message;
}

/// The operators of `g` in order (inputs and constants left out).
std::vector<Op> ops_of(const Graph& g) {
  std::vector<Op> out;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::input && n.op != Op::constant) out.push_back(n.op);
  }
  return out;
}

Tensor iota(Shape shape) {
  Tensor t(std::move(shape));
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i) - 3.0f;
  return t;
}

Tensor run_one(const Graph& g, const Tensor& x) {
  auto out = evaluate(g, {x});
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return out.ok() && !out->empty() ? (*out)[0] : Tensor{};
}

TEST(OnnxReader, ReadsConvWithInitializersAndCanonicalAttributes) {
  OnnxModel m = model_with({1, 2, 5, 5}, {node("Conv", {"x", "w", "b"}, {"c"}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}),
                                          node("Relu", {"c"}, {"y"})});
  m.initializers.emplace_back("w", floats(Floats(2 * 2 * 3 * 3, 0.5f), {2, 2, 3, 3}));
  m.initializers.emplace_back("b", floats({1, -100}, {2}));
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->node(g->inputs()[0]).name, "x");
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::conv, Op::relu}));
  const Node& conv = g->node(g->find("c"));
  EXPECT_EQ(conv.shape, (Shape{1, 2, 3, 3}));
  EXPECT_EQ(conv.attrs.to_string(), "dilations=[1,1],group=1,pads=[1,1,1,1],strides=[2,2]");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->node(g->outputs()[0]).name, "y");
  const Tensor y = run_one(*g, Tensor({1, 2, 5, 5}, 1.0f));
  EXPECT_FLOAT_EQ(y.data[4], 1 + 0.5f * 18);  // the centre window is all inside: 2 channels x 9 taps
  EXPECT_FLOAT_EQ(y.data[9], 0.0f);           // channel 1's bias -100 is cut by the relu
}

TEST(OnnxReader, FoldsPyTorchShapeArithmetic) {
  // x.view(x.size(0), -1) as PyTorch exports it: Shape, Gather, Unsqueeze, Concat, Reshape.
  OnnxModel m = model_with({2, 3, 4}, {
      node("Shape", {"x"}, {"s"}),
      node("Constant", {}, {"zero"}, {{"value", int_scalar(0)}}),
      node("Gather", {"s", "zero"}, {"n"}, {{"axis", std::int64_t{0}}}),
      node("Unsqueeze", {"n", "axes0"}, {"n1"}),
      node("Constant", {}, {"minus_one"}, {{"value_ints", Ints{-1}}}),
      node("Concat", {"n1", "minus_one"}, {"shape"}, {{"axis", std::int64_t{0}}}),
      node("Reshape", {"x", "shape"}, {"y"}),
  });
  m.initializers.emplace_back("axes0", ints({0}));
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::reshape}));
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{2, 12}));
  EXPECT_EQ(g->size(), 2u);  // the input and the reshape: every folded value is gone
}

TEST(OnnxReader, FoldsIntegerOperatorsAndFloatConstants) {
  // y = x + Where(Equal(Range(0,4,1), 2), 10, 1) cast to float, scaled by Sqrt(4) folded.
  OnnxModel m = model_with({4}, {
      node("Range", {"start", "limit", "delta"}, {"r"}),
      node("Equal", {"r", "two"}, {"e"}),
      node("Where", {"e", "ten", "one"}, {"w"}),
      node("Cast", {"w"}, {"wf"}, {{"to", std::int64_t{1}}}),
      node("Sqrt", {"four"}, {"root"}),
      node("Mul", {"wf", "root"}, {"scaled"}),
      node("Add", {"x", "scaled"}, {"y"}),
  });
  m.initializers = {{"start", int_scalar(0)}, {"limit", int_scalar(4)}, {"delta", int_scalar(1)}, {"two", int_scalar(2)},
                    {"ten", int_scalar(10)},  {"one", int_scalar(1)},   {"four", floats({4}, {})}};
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::add}));
  const Tensor y = run_one(*g, Tensor({4}, Floats{0, 0, 0, 0}));
  EXPECT_EQ(y.data, (Floats{2, 2, 20, 2}));
}

TEST(OnnxReader, LowersSplitIntoSlices) {
  OnnxModel m = model_with({2, 6}, {node("Split", {"x", "sizes"}, {"a", "b", "c"}, {{"axis", std::int64_t{1}}}),
                                    node("Concat", {"c", "a"}, {"y"}, {{"axis", std::int64_t{1}}})});
  m.initializers.emplace_back("sizes", ints({1, 2, 3}));
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::slice, Op::slice, Op::concat}));  // b is dead
  const Tensor y = run_one(*g, iota({2, 6}));
  EXPECT_EQ(y.shape, (Shape{2, 4}));
  EXPECT_EQ(y.data, (Floats{0, 1, 2, -3, 6, 7, 8, 3}));
  // Opset 11: the sizes are an attribute; without them, equal parts.
  OnnxModel old = model_with({2, 6}, {node("Split", {"x"}, {"a", "y"}, {{"axis", std::int64_t{-1}}})}, 11);
  old.outputs.insert(old.outputs.begin(), float_value_info("a", {2, 3}));
  g = read(old);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[1]).shape, (Shape{2, 3}));
  EXPECT_NE(error_of(model_with({2, 5}, {node("Split", {"x"}, {"a", "y"}, {{"axis", std::int64_t{1}}})}, 11))
                .find("does not split into 2 equal parts"),
            std::string::npos);
}

TEST(OnnxReader, LowersLegacySoftmaxThroughTwoDimensions) {
  // Opset 11 Softmax(axis=1) on [2,2,3] normalises over the last 6 elements of each batch.
  collage::Result<Graph> g = read(model_with({2, 2, 3}, {node("Softmax", {"x"}, {"y"})}, 11));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::reshape, Op::softmax, Op::reshape}));
  const Tensor y = run_one(*g, Tensor({2, 2, 3}, 1.0f));
  ASSERT_EQ(y.shape, (Shape{2, 2, 3}));
  for (float v : y.data) EXPECT_FLOAT_EQ(v, 1.0f / 6.0f);
  // Over the last axis it is the IR's softmax; from opset 13 the axis is one axis.
  g = read(model_with({2, 3}, {node("Softmax", {"x"}, {"y"})}, 12));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::softmax}));
  g = read(model_with({2, 2, 3}, {node("Softmax", {"x"}, {"y"}, {{"axis", std::int64_t{1}}})}, 13));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::softmax}));
  EXPECT_EQ(run_one(*g, Tensor({2, 2, 3}, 1.0f)).data[0], 0.5f);
}

TEST(OnnxReader, ConstantOperandsBecomeAttributes) {
  OnnxModel m = model_with({1, 3}, {
      node("Clip", {"x", "lo", ""}, {"c"}),
      node("Pad", {"c", "pads", "value"}, {"p"}),
      node("Unsqueeze", {"p", "axes"}, {"u"}),
      node("ReduceSum", {"u", "axes"}, {"r"}, {{"keepdims", std::int64_t{0}}}),
      node("Slice", {"r", "starts", "ends", "", "steps"}, {"s"}),
      node("Dropout", {"s"}, {"d"}),
      node("Identity", {"d"}, {"y"}),
  });
  m.initializers = {{"lo", floats({0}, {})}, {"pads", ints({0, 1, 0, 2})}, {"value", floats({7}, {})},
                    {"axes", ints({0})},     {"starts", ints({0, -1})},   {"ends", ints({1, std::numeric_limits<std::int64_t>::min()})},
                    {"steps", ints({1, -2})}};
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::clip, Op::pad, Op::unsqueeze, Op::reduce_sum, Op::slice}));
  EXPECT_EQ(unary_attrs(g->node(g->find("c"))).min, 0.0);
  EXPECT_EQ(pad_attrs(g->node(g->find("p"))).pads, (Ints{0, 1, 0, 2}));
  // x = [-1, 2, -3] -> clip [0, 2, 0] -> pad [7, 0, 2, 0, 7, 7] -> reversed every other from the end.
  const Tensor y = run_one(*g, Tensor({1, 3}, Floats{-1, 2, -3}));
  EXPECT_EQ(y.shape, (Shape{1, 3}));
  EXPECT_EQ(y.data, (Floats{7, 0, 0}));
}

TEST(OnnxReader, SqueezeAndReduceAxesByOpset) {
  // Opset 11 axes are attributes; opset 13 inputs.
  collage::Result<Graph> g = read(model_with({1, 3, 1}, {node("Squeeze", {"x"}, {"s"}, {{"axes", Ints{0}}}),
                                                         node("ReduceMean", {"s"}, {"y"}, {{"axes", Ints{-1}}})}, 11));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{3, 1}));
  g = read(model_with({1, 3, 1}, {node("Squeeze", {"x"}, {"y"})}, 13));  // no axes: every 1 goes
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{3}));
  // ReduceSum-13 with empty axes and noop_with_empty_axes is the identity.
  g = read(model_with({2, 2}, {node("ReduceSum", {"x"}, {"y"}, {{"noop_with_empty_axes", std::int64_t{1}}})}, 13));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(ops_of(*g).empty());
}

TEST(OnnxReader, VariadicOperatorsBecomeBinaryChains) {
  OnnxModel m = model_with({2}, {node("Mean", {"x", "a", "b"}, {"m"}), node("Max", {"m", "x", "b"}, {"y"})});
  m.initializers = {{"a", floats({3, 3}, {2})}, {"b", floats({0}, {})}};
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::add, Op::add, Op::div, Op::max, Op::max}));
  const Tensor y = run_one(*g, Tensor({2}, Floats{-6, 6}));
  EXPECT_EQ(y.data, (Floats{0, 6}));  // means -1 and 3
}

TEST(OnnxReader, LayerNormStatisticsOutputs) {
  OnnxModel m = model_with({2, 2}, {node("LayerNormalization", {"x", "scale"}, {"y", "mean", "inv"}, {{"epsilon", 0.0f}})});
  m.initializers.emplace_back("scale", floats({1, 1}, {2}));
  m.outputs.push_back(float_value_info("mean", {2, 1}));
  m.outputs.push_back(float_value_info("inv", {2, 1}));
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto out = evaluate(*g, {Tensor({2, 2}, Floats{1, 3, 0, 4})});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ((*out)[0].data, (Floats{-1, 1, -1, 1}));
  EXPECT_EQ((*out)[1].data, (Floats{2, 2}));
  EXPECT_EQ((*out)[2].data, (Floats{1, 0.5f}));
}

TEST(OnnxReader, DynamicDimensionsNeedASize) {
  OnnxModel m = model_with({1, 3}, {node("Relu", {"x"}, {"y"})});
  m.inputs[0].dims[0] = std::string("batch");
  EXPECT_NE(error_of(m).find("input 'x': dynamic dimension 'batch' has no size (ReadOptions::dim_params or input_shapes give it; collage-run --dim batch=SIZE)"), std::string::npos) << error_of(m);
  ReadOptions by_param;
  by_param.dim_params["batch"] = 4;
  collage::Result<Graph> g = read(m, by_param);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->node(g->inputs()[0]).shape, (Shape{4, 3}));
  ReadOptions by_input;
  by_input.input_shapes["x"] = {2, 3};
  g = read(m, by_input);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{2, 3}));
  by_input.input_shapes["xx"] = {2, 3};  // a misspelt name is not ignored
  EXPECT_EQ(error_of(m, by_input), "a shape is given for 'xx', which is not a run-time input of the model ('x')");
}

TEST(OnnxReader, ShapesInOrderFixSymbolicSizesAndMustFitTheModel) {
  OnnxModel m = model_with({1, 3}, {node("Add", {"x", "z"}, {"y"})});
  m.inputs[0].dims[0] = std::string("batch");
  m.inputs.push_back(float_value_info("z", {1, 3}));
  m.inputs[1].dims[0] = std::string("batch");
  ReadOptions given;
  given.input_shapes_in_order = {{5, 3}, {5, 3}};
  collage::Result<Graph> g = read(m, given);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{5, 3}));

  given.input_shapes_in_order = {{5, 3}, {6, 3}};
  EXPECT_NE(error_of(m, given).find("input 'z': dimension 'batch' is 6 in its given shape but 5 in an earlier input's"),
            std::string::npos) << error_of(m, given);
  given.input_shapes_in_order = {{5, 4}};
  EXPECT_NE(error_of(m, given).find("input 'x': the given shape [5,4] differs from the model's size 3 on axis 1"), std::string::npos)
      << error_of(m, given);
  given.input_shapes_in_order = {{5, 3, 1}};
  EXPECT_NE(error_of(m, given).find("has another rank than the model's"), std::string::npos);
  given.input_shapes_in_order = {{7, 3}};  // z takes x's batch
  g = read(m, given);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->inputs()[1]).shape, (Shape{7, 3}));
}

TEST(OnnxReader, NodesOutOfOrderAreSortedAndACycleIsNamed) {
  const std::vector<OnnxNode> in_order = {node("Relu", {"x"}, {"a"}), node("Neg", {"a"}, {"b"}), node("Add", {"a", "b"}, {"c"}),
                                          node("Abs", {"x"}, {"d"}), node("Mul", {"c", "d"}, {"y"})};
  const std::vector<OnnxNode> reversed(in_order.rbegin(), in_order.rend());
  collage::Result<Graph> sorted = read(model_with({2, 3}, reversed));
  ASSERT_TRUE(sorted.ok()) << sorted.error().message;
  collage::Result<Graph> expected = read(model_with({2, 3}, in_order));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ops_of(*sorted), (std::vector<Op>{Op::abs, Op::relu, Op::neg, Op::add, Op::mul}));  // the given order where it can
  EXPECT_EQ(run_one(*sorted, iota({2, 3})).data, run_one(*expected, iota({2, 3})).data);

  // Abs, first and waiting on the cycle, is not on it.
  const std::string cycle = error_of(model_with({2}, {node("Abs", {"c"}, {"y"}), node("Relu", {"x"}, {"a"}),
                                                      node("Add", {"a", "c"}, {"b"}), node("Neg", {"b"}, {"c"})}));
  EXPECT_TRUE(cycle == "node 'b' (Add) is on a cycle: what it reads depends on what it produces" ||
              cycle == "node 'c' (Neg) is on a cycle: what it reads depends on what it produces")
      << cycle;
  EXPECT_EQ(error_of(model_with({2}, {node("Add", {"x", "y"}, {"y"})})), "node 'y' (Add) is on a cycle: what it reads depends on what it produces");
}

TEST(OnnxReader, BoundInputsBecomeConstants) {
  OnnxModel m = model_with({2, 3}, {node("Reshape", {"x", "shape"}, {"y"})});
  m.inputs.push_back(OnnxValueInfo{"shape", ElemType::int64, {std::int64_t{2}}, true, true});
  EXPECT_EQ(error_of(m), "node 'y' (Reshape): input 1 ('shape') computed at run time (it must be known at load time) is not supported");
  ReadOptions options;
  options.input_values["shape"] = ints({3, -1});
  collage::Result<Graph> g = read(m, options);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{3, 2}));
}

TEST(OnnxReader, ErrorsNameTheNodeTheOperatorAndTheProblem) {
  EXPECT_EQ(error_of(model_with({2}, {node("Det", {"x"}, {"y"})})), "node 'y' (Det): operator Det is not supported");
  OnnxModel named = model_with({2}, {node("Relu", {"missing"}, {"y"})});
  named.nodes[0].name = "act";
  EXPECT_EQ(error_of(named), "node 'act' (Relu): input 'missing' is not defined before it is used");
  OnnxModel runtime_shape = model_with({2, 3}, {node("Shape", {"x"}, {"s"}), node("Reshape", {"x", "x"}, {"y"})});
  EXPECT_NE(error_of(runtime_shape).find("node 'y' (Reshape): input 1 ('x') computed at run time"), std::string::npos);
  EXPECT_NE(error_of(model_with({2, 3}, {node("Conv", {"x", "x"}, {"y"})})).find("node 'y' (Conv): input "),
            std::string::npos);
  EXPECT_EQ(error_of(model_with({2}, {node("Relu", {"x"}, {"y"})}, 28)),
            "model: opset 28 (the reader reads opsets up to 27) is not supported");
  // A definition older than opset 11's is refused unless the reader adapts it; one still in force
  // at 11 is read.
  EXPECT_EQ(error_of(model_with({1, 1, 3, 3}, {node("ConvTranspose", {"x", "x"}, {"y"})}, 9)),
            "node 'y' (ConvTranspose): ConvTranspose-1 of opset 9 (a definition older than opset 11's that the reader "
            "does not adapt) is not supported");
  EXPECT_TRUE(read(model_with({2, 3}, {node("Softmax", {"x"}, {"y"})}, 9)).ok());
  EXPECT_TRUE(read(model_with({1, 2, 3, 3}, {node("GlobalAveragePool", {"x"}, {"y"})}, 9)).ok());
  OnnxModel output_int = model_with({2}, {node("Shape", {"x"}, {"y"})});
  EXPECT_EQ(error_of(output_int), "output 'y': element type int64 is not supported (the IR computes float32)");
  OnnxModel training = model_with({2}, {node("Dropout", {"x", "", "t"}, {"y"})});
  training.initializers.emplace_back("t", OnnxTensor{ElemType::boolean, {}, {}, {1}});
  EXPECT_EQ(error_of(training), "node 'y' (Dropout): training mode is not supported");
  OnnxModel mask = model_with({2}, {node("Dropout", {"x"}, {"d", "y"})});
  EXPECT_EQ(error_of(mask), "node 'd' (Dropout): output 1 ('y') is not supported");
}

TEST(OnnxReader, MalformedTensorsAndFilesAreParseErrors) {
  collage::Result<Graph> junk = read_onnx_bytes("not a model");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().code, collage::ErrorCode::parse);
  // A valid model followed by a second `graph` field (protobuf merges it) that adds the initializer
  // c: dims [2], float32, 12 bytes of raw_data.
  collage::Result<std::string> bytes = serialize(model_with({2}, {node("Add", {"x", "c"}, {"y"})}));
  ASSERT_TRUE(bytes.ok());
  std::string tensor = std::string("\x08\x02\x10\x01\x42\x01" "c" "\x4a\x0c") + std::string(12, '\0');
  std::string graph = "\x2a" + std::string(1, static_cast<char>(tensor.size())) + tensor;
  std::string merged = *bytes + "\x3a" + std::string(1, static_cast<char>(graph.size())) + graph;
  collage::Result<Graph> bad = read_onnx_bytes(merged);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "initializer 'c': raw_data holds 12 bytes for 2 float32 elements");
  EXPECT_EQ(bad.error().code, collage::ErrorCode::parse);
  collage::Result<Graph> missing = read_onnx("/nonexistent/model.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, collage::ErrorCode::io);
}

/// Truncating or flipping bits of a real model anywhere gives a graph or an error, never a crash.
TEST(OnnxReader, TruncatedAndCorruptedModelsGiveErrors) {
  Graph g;
  const int x = g.add_input("x", {1, 3, 8, 8});
  const int w = g.add_constant("w", iota({4, 3, 3, 3}));
  Attributes pads;
  pads.set("pads", Ints{1, 1, 1, 1});
  const int conv = *g.add_op(Op::conv, {x, w}, pads, "conv");
  Attributes pool;
  pool.set("kernel_shape", Ints{2, 2});
  pool.set("strides", Ints{2, 2});
  const int p = *g.add_op(Op::max_pool, {*g.add_op(Op::relu, {conv})}, pool, "pool");
  Attributes shape;
  shape.set("shape", Ints{1, -1});
  g.add_output(*g.add_op(Op::softmax, {*g.add_op(Op::reshape, {p}, shape)}));
  collage::Result<std::string> bytes = write_onnx_bytes(g);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  ASSERT_TRUE(read_onnx_bytes(*bytes).ok());
  int errors = 0;
  for (std::size_t cut = 0; cut < bytes->size(); cut += 7) {
    collage::Result<Graph> r = read_onnx_bytes(std::string_view(*bytes).substr(0, cut));
    if (!r.ok()) {
      ++errors;
      EXPECT_TRUE(r.error().code == collage::ErrorCode::parse || r.error().code == collage::ErrorCode::invalid_argument)
          << r.error().message;
      EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
    }
  }
  for (std::size_t at = 0; at < bytes->size(); at += 3) {
    std::string corrupt = *bytes;
    corrupt[at] = static_cast<char>(corrupt[at] ^ (1 << (at % 8)));
    collage::Result<Graph> r = read_onnx_bytes(corrupt);
    if (r.ok()) continue;
    ++errors;
    EXPECT_TRUE(r.error().code == collage::ErrorCode::parse || r.error().code == collage::ErrorCode::invalid_argument)
        << r.error().message;
  }
  EXPECT_GT(errors, 100);
}

/// The values of `g` on input `x`, as a list.
Floats values_of(const Graph& g, const Tensor& x) { return run_one(g, x).data; }

TEST(OnnxReaderOpsets, ReadsTheOlderFormsOfPadClipSliceAndUnsqueeze) {
  // Opset 9: Pad-2 and Clip-6 take attributes, Slice-1 attributes without steps, Unsqueeze-1 axes.
  OnnxModel m = model_with({1, 4}, {
      node("Pad", {"x"}, {"p"}, {{"pads", Ints{0, 1, 0, 1}}, {"value", 5.0f}}),
      node("Clip", {"p"}, {"c"}, {{"min", -2.0f}, {"max", 1.0f}}),
      node("Slice", {"c"}, {"s"}, {{"starts", Ints{1}}, {"ends", Ints{5}}, {"axes", Ints{1}}}),
      node("Unsqueeze", {"s"}, {"y"}, {{"axes", Ints{0}}}),
  }, 9);
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{1, 1, 4}));
  EXPECT_EQ(values_of(*g, iota({1, 4})), (Floats{-2, -2, -1, 0}));  // iota: -3 -2 -1 0
  OnnxModel per_element = model_with({1, 2, 2}, {node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {{"spatial", std::int64_t{0}}})}, 7);
  for (const char* name : {"s", "b", "m", "v"}) per_element.initializers.emplace_back(name, floats({1, 1}, {2}));
  EXPECT_EQ(error_of(per_element), "node 'y' (BatchNormalization): statistics per element (spatial = 0) is not supported");
}

TEST(OnnxReaderOpsets, UpsampleAndResize10MapCoordinatesAsymmetrically) {
  OnnxModel upsample = model_with({1, 1, 1, 2}, {node("Upsample", {"x"}, {"y"}, {{"scales", Floats{1, 1, 2, 2}}})}, 7);
  collage::Result<Graph> g = read(upsample);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(values_of(*g, iota({1, 1, 1, 2})), (Floats{-3, -3, -2, -2, -3, -3, -2, -2}));
  OnnxModel resize = model_with({1, 1, 1, 2}, {node("Resize", {"x", "scales"}, {"y"}, {{"mode", std::string("linear")}})}, 10);
  resize.initializers.emplace_back("scales", floats({1, 1, 1, 2}, {4}));
  g = read(resize);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(values_of(*g, iota({1, 1, 1, 2})), (Floats{-3, -2.5f, -2, -2}));  // x / 2, clamped at the edge
  OnnxModel huge = model_with({1, 1, 1, 2}, {node("Resize", {"x", "", "scales"}, {"y"})}, 13);
  huge.initializers.emplace_back("scales", floats({1, 1, 1, 1e9f}, {4}));
  EXPECT_EQ(error_of(huge), "node 'y' (Resize): the resized dimension 2000000000 is too large");
  OnnxModel deprecated = model_with({1, 1, 1, 2}, {node("Upsample", {"x", "scales"}, {"y"})}, 10);
  deprecated.initializers.emplace_back("scales", floats({1, 1, 1, 2}, {4}));
  EXPECT_EQ(error_of(deprecated), "node 'y' (Upsample): operator Upsample at opset 10 is not supported");
}

TEST(OnnxReaderOpsets, ReadsTheOpset18FormsOfReduceSplitAndPad) {
  OnnxModel m = model_with({2, 5}, {
      node("ReduceMean", {"x", "axis1"}, {"mean"}),
      node("Split", {"x"}, {"first", "second"}, {{"axis", std::int64_t{1}}, {"num_outputs", std::int64_t{2}}}),
      node("Pad", {"second", "pads", "", "axis1"}, {"padded"}),
      node("Add", {"padded", "mean"}, {"y"}),
  }, 18);
  m.initializers.emplace_back("axis1", ints({1}));
  m.initializers.emplace_back("pads", ints({1, 0}));
  m.outputs.push_back(float_value_info("first", {}));
  m.outputs.back().has_shape = false;
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  // Split-18 by count: parts of ceil(5 / 2) = 3, the last one smaller.
  EXPECT_EQ(g->node(g->outputs()[1]).shape, (Shape{2, 3}));
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{2, 3}));
  const std::vector<Tensor> out = *evaluate(*g, {iota({2, 5})});
  // Row 0 of x: -3 -2 -1 0 1 (mean -1); its second part 0 1 padded by one 0 in front.
  EXPECT_EQ(std::vector<float>(out[0].data.begin(), out[0].data.begin() + 3), (Floats{-1, -1, 0}));
}

TEST(OnnxReaderOpsets, WrapPaddingOfRunTimeData) {
  // Pad-19 wrap, np.pad(mode="wrap"): a begin pad longer than the axis wraps around again.
  OnnxModel m = model_with({1, 3}, {node("Pad", {"x", "pads"}, {"y"}, {{"mode", std::string("wrap")}})}, 19);
  m.initializers.emplace_back("pads", ints({0, 4, 0, 1}));
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(values_of(*g, iota({1, 3})), (Floats{-1, -3, -2, -1, -3, -2, -1, -3}));  // x: -3 -2 -1
}

TEST(OnnxReaderOpsets, ReadsGelu20AndNamesWhatItCannotRead) {
  for (const std::string approximate : {"none", "tanh"}) {
    collage::Result<Graph> g = read(model_with({5}, {node("Gelu", {"x"}, {"y"}, {{"approximate", approximate}})}, 20));
    ASSERT_TRUE(g.ok()) << g.error().message;
    const Floats y = values_of(*g, iota({5}));
    for (int i = 0; i < 5; ++i) {
      const double x = i - 3.0;
      const double expected = approximate == "none" ? 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))
                                                    : 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::acos(-1.0)) * (x + 0.044715 * x * x * x)));
      EXPECT_NEAR(y[static_cast<std::size_t>(i)], expected, 1e-6) << approximate << " at " << x;
    }
  }
  EXPECT_EQ(error_of(model_with({1, 1, 4, 4}, {node("AveragePool", {"x"}, {"y"}, {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}})}, 19)),
            "node 'y' (AveragePool): dilations [2,2] is not supported");
  EXPECT_NE(error_of(model_with({2}, {node("Frobnicate", {"x"}, {"y"})}, 18)).find("operator Frobnicate at opset 18"), std::string::npos);
}

TEST(OnnxReaderOpsets, ReadsOpsets22To27AndTheirRmsNormalizationAndSwish) {
  // Elu-22 (element types only) reads as before at opset 27, ONNX 1.22's.
  collage::Result<Graph> g = read(model_with({2}, {node("Elu", {"x"}, {"y"})}, 27));
  ASSERT_TRUE(g.ok()) << g.error().message;
  // Swish-24: x * sigmoid(alpha * x).
  g = read(model_with({3}, {node("Swish", {"x"}, {"y"}, {{"alpha", 0.5f}})}, 24));
  ASSERT_TRUE(g.ok()) << g.error().message;
  Floats y = run_one(*g, Tensor({3}, {2.0f, 0.0f, -2.0f})).data;
  EXPECT_NEAR(y[0], 2 / (1 + std::exp(-1.0)), 1e-6);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_NEAR(y[2], -2 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_NE(error_of(model_with({3}, {node("Swish", {"x"}, {"y"})}, 23)).find("operator Swish at opset 23"), std::string::npos);
  // RMSNormalization-23 over the last axis of [[3, 4], [0, 0]], scale [1, 2], epsilon 0.5.
  OnnxModel rms = model_with({2, 2}, {node("RMSNormalization", {"x", "scale"}, {"y"}, {{"epsilon", 0.5f}})}, 23);
  rms.initializers.emplace_back("scale", floats({1, 2}, {2}));
  g = read(rms);
  ASSERT_TRUE(g.ok()) << g.error().message;
  y = run_one(*g, Tensor({2, 2}, {3.0f, 4.0f, 0.0f, 0.0f})).data;
  EXPECT_NEAR(y[0], 3 / std::sqrt(13.0), 1e-6);
  EXPECT_NEAR(y[1], 8 / std::sqrt(13.0), 1e-6);
  EXPECT_EQ(y[2], 0.0f);
  rms.initializers.back().second = floats({1, 2, 3}, {3});
  EXPECT_EQ(error_of(rms), "node 'y' (RMSNormalization): scale [3] does not broadcast to X [2,2]");
  rms.initializers.back().second = floats({1, 2}, {2});
  rms.nodes[0].attrs = {{"axis", std::int64_t{2}}};
  EXPECT_EQ(error_of(rms), "node 'y' (RMSNormalization): axis 2 out of range for [2,2]");
}

TEST(OnnxReaderOpsets, AttentionOfOneKeyIsItsValueAndBadFormsAreNamed) {
  // With one key every query attends to it alone: Y is V, whatever the scores; causal too.
  OnnxModel one = model_with({1, 1, 1, 2}, {node("Attention", {"x", "x", "v"}, {"y"}, {{"is_causal", std::int64_t{1}}})}, 23);
  one.initializers.emplace_back("v", floats({5, -7}, {1, 1, 1, 2}));
  collage::Result<Graph> g = read(one);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Floats y = run_one(*g, Tensor({1, 1, 1, 2}, {0.5f, 2.0f})).data;
  EXPECT_FLOAT_EQ(y[0], 5.0f);
  EXPECT_FLOAT_EQ(y[1], -7.0f);

  OnnxModel half = model_with({1, 1, 2, 2}, {node("Attention", {"x", "x", "x", "", "x"}, {"y"})}, 23);
  EXPECT_EQ(error_of(half), "node 'y' (Attention): past_key and past_value must be given together");
  OnnxModel past = model_with({1, 1, 2, 2}, {node("Attention", {"x", "x", "x", "", "pk", "pk"}, {"y"})}, 23);
  past.initializers.emplace_back("pk", floats(Floats(6, 1.0f), {1, 1, 2, 3}));
  EXPECT_EQ(error_of(past), "node 'y' (Attention): past_key [1,1,2,3] and past_value [1,1,2,3] do not fit K [1,1,2,2] and V "
                            "[1,1,2,2] (batch, key heads, one past length, head sizes)");
  OnnxModel wide = model_with({1, 1, 2, 2}, {node("Attention", {"x", "x", "x", "m"}, {"y"})}, 23);
  wide.initializers.emplace_back("m", floats(Floats(6, 0.0f), {2, 3}));
  EXPECT_EQ(error_of(wide), "node 'y' (Attention): attn_mask [2,3] does not end in at most 2 keys");
  OnnxModel heads = model_with({1, 3, 2, 2}, {node("Attention", {"x", "k", "k"}, {"y"})}, 23);
  heads.initializers.emplace_back("k", floats(Floats(8, 1.0f), {1, 2, 2, 2}));
  EXPECT_NE(error_of(heads).find("do not fit together"), std::string::npos);
  heads.initializers.back().second = floats({}, {1, 0, 2, 2});  // no key heads (a fuzzer's find)
  EXPECT_NE(error_of(heads).find("do not fit together"), std::string::npos);
}

TEST(OnnxReaderOpsets, AttentionWithACacheHandsOnThePresentKeysAndValues) {
  // One head of size 2, one past position and one new one; Q = K = 0 scores both keys alike, so
  // Y is the mean of the past and the new value, and causal (key j for query i <= i + 1) too.
  for (const std::int64_t causal : {0, 1}) {
    OnnxModel m = model_with({1, 1, 1, 2}, {node("Attention", {"x", "x", "v", "", "pk", "pv"}, {"y", "present_k", "present_v"},
                                                 {{"is_causal", causal}})},
                             23);
    m.initializers.emplace_back("v", floats({5, -7}, {1, 1, 1, 2}));
    m.initializers.emplace_back("pk", floats({9, 9}, {1, 1, 1, 2}));
    m.initializers.emplace_back("pv", floats({1, 3}, {1, 1, 1, 2}));
    for (const char* present : {"present_k", "present_v"}) {
      m.outputs.push_back(float_value_info(present, {}));
      m.outputs.back().has_shape = false;
    }
    collage::Result<Graph> g = read(m);
    ASSERT_TRUE(g.ok()) << g.error().message;
    auto out = evaluate(*g, {Tensor({1, 1, 1, 2}, {0.0f, 0.0f})});
    ASSERT_TRUE(out.ok()) << out.error().message;
    ASSERT_EQ(out->size(), 3u);
    EXPECT_EQ((*out)[0].data, (Floats{3, -2})) << "causal " << causal;
    EXPECT_EQ((*out)[1].shape, (Shape{1, 1, 2, 2}));
    EXPECT_EQ((*out)[1].data, (Floats{9, 9, 0, 0}));
    EXPECT_EQ((*out)[2].data, (Floats{1, 3, 5, -7}));
  }
}

/// Einsum by its definition: every assignment of values to the labels of `terms` (one string of
/// letters an operand, no "...") adds the product of the operands' elements there to the output's
/// element at `out`'s labels.
Floats einsum_by_definition(const std::vector<std::string>& terms, const std::string& out, const std::vector<Tensor>& xs) {
  std::map<char, std::int64_t> size;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    for (std::size_t d = 0; d < terms[k].size(); ++d) size[terms[k][d]] = xs[k].shape[d];
  }
  std::int64_t out_size = 1, assignments = 1;
  for (char c : out) out_size *= size[c];
  for (const auto& [c, n] : size) assignments *= n;
  Floats y(static_cast<std::size_t>(out_size), 0.0f);
  std::map<char, std::int64_t> value;
  auto flat = [&](const std::string& labels, const Shape& shape) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < labels.size(); ++d) at = at * shape[d] + value[labels[d]];
    return static_cast<std::size_t>(at);
  };
  Shape out_shape;
  for (char c : out) out_shape.push_back(size[c]);
  for (std::int64_t a = 0; a < assignments; ++a) {
    std::int64_t rest = a;
    for (const auto& [c, n] : size) {
      value[c] = rest % n;
      rest /= n;
    }
    double product = 1;
    for (std::size_t k = 0; k < terms.size(); ++k) product *= xs[k].data[flat(terms[k], xs[k].shape)];
    y[flat(out, out_shape)] += static_cast<float>(product);
  }
  return y;
}

/// An opset-12 model of one Einsum node over float inputs x0, x1 ... of `shapes`, output y.
OnnxModel einsum_model(const std::string& equation, const std::vector<Shape>& shapes) {
  OnnxModel m;
  m.opset = 12;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    names.push_back("x" + std::to_string(k));
    m.inputs.push_back(float_value_info(names.back(), shapes[k]));
  }
  m.nodes = {node("Einsum", names, {"y"}, {{"equation", equation}})};
  m.outputs.push_back(float_value_info("y", {}));
  m.outputs.back().has_shape = false;
  return m;
}

TEST(OnnxReaderOpsets, EinsumMatchesItsDefinition) {
  struct Case {
    std::string equation;
    std::vector<Shape> shapes;
    std::vector<std::string> terms;  // the equation spelled out for einsum_by_definition
    std::string out;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}, {"ij", "jk"}, "ik"},
      {"bij, bjk -> bik", {{2, 2, 3}, {2, 3, 2}}, {"bij", "bjk"}, "bik"},
      {"bhqd,bhkd->bhqk", {{1, 2, 3, 4}, {1, 2, 5, 4}}, {"bhqd", "bhkd"}, "bhqk"},
      {"i,i", {{5}, {5}}, {"i", "i"}, ""},
      {"ij,jk", {{2, 3}, {3, 4}}, {"ij", "jk"}, "ik"},
      {"ba,ca", {{2, 3}, {4, 3}}, {"ba", "ca"}, "bc"},
      {"ij,kl->ljki", {{2, 3}, {2, 2}}, {"ij", "kl"}, "ljki"},
      {"ij,k->i", {{3, 2}, {4}}, {"ij", "k"}, "i"},
      {"ijk->ki", {{2, 3, 4}}, {"ijk"}, "ki"},
      {"ij->", {{3, 4}}, {"ij"}, ""},
      {"ij", {{3, 4}}, {"ij"}, "ij"},
      {"Ab,bC->CA", {{2, 3}, {3, 4}}, {"Ab", "bC"}, "CA"},
      {"...ij,...jk->...ik", {{2, 3, 2, 3}, {3, 3, 2}}, {"xyij", "yjk"}, "xyik"},
      {"...ij->...", {{2, 3, 4}}, {"xij"}, "x"},
      {"b...,b...", {{2, 3}, {2, 3}}, {"bx", "bx"}, "x"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    std::vector<Tensor> xs;
    for (std::size_t k = 0; k < c.shapes.size(); ++k) {
      Tensor x(c.shapes[k]);
      for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>((i * 7 + k * 3) % 11) - 5.0f;
      xs.push_back(std::move(x));
    }
    collage::Result<Graph> g = read(einsum_model(c.equation, c.shapes));
    ASSERT_TRUE(g.ok()) << g.error().message;
    auto y = evaluate(*g, xs);
    ASSERT_TRUE(y.ok()) << y.error().message;
    EXPECT_EQ((*y)[0].data, einsum_by_definition(c.terms, c.out, xs));
  }
  auto einsum_error = [](const std::string& equation, const std::vector<Shape>& shapes) {
    return error_of(einsum_model(equation, shapes));
  };
  EXPECT_EQ(einsum_error("ii->i", {{3, 3}}),
            "node 'y' (Einsum): equation 'ii->i': a subscript repeated in one operand (a diagonal) is not supported");
  EXPECT_EQ(einsum_error("i,i,i", {{2}, {2}, {2}}), "node 'y' (Einsum): Einsum of 3 operands (one or two are) is not supported");
  EXPECT_EQ(einsum_error("ij,jk", {{2, 3}, {4, 5}}), "node 'y' (Einsum): equation 'ij,jk': a dimension of 3 meets one of 4");
  EXPECT_EQ(einsum_error("ijk", {{2, 3}}), "node 'y' (Einsum): equation 'ijk': 'ijk' does not fit an operand of rank 2");
  EXPECT_EQ(einsum_error("ij->iz", {{2, 3}}),
            "node 'y' (Einsum): equation 'ij->iz': an output subscript no operand has, or repeated");
  EXPECT_EQ(einsum_error("i1", {{2, 3}}), "node 'y' (Einsum): equation 'i1': '1' is not a subscript");
}

TEST(OnnxReaderOpsets, RotaryEmbeddingRotatesHalvesOrPairsAndNamesBadCaches) {
  // One token, one head of 4 channels, rotated by 90 degrees (cos 0, sin 1) in its first two
  // pairs: halves (x0, x2) and (x1, x3), or interleaved (x0, x1) and (x2, x3): (a, b) -> (-b, a).
  for (const std::int64_t interleaved : {0, 1}) {
    OnnxModel m = model_with({1, 1, 1, 4}, {node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"}, {{"interleaved", interleaved}})}, 23);
    m.initializers.emplace_back("cos", floats({0, 0}, {1, 1, 2}));
    m.initializers.emplace_back("sin", floats({1, 1}, {1, 1, 2}));
    collage::Result<Graph> g = read(m);
    ASSERT_TRUE(g.ok()) << g.error().message;
    const Floats y = run_one(*g, Tensor({1, 1, 1, 4}, {1.0f, 2.0f, 3.0f, 4.0f})).data;
    const Floats expected = interleaved != 0 ? Floats{-2, 1, -4, 3} : Floats{-3, -4, 1, 2};
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << "interleaved " << interleaved << " at " << i;
  }
  OnnxModel bad = model_with({1, 2, 1, 4}, {node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"})}, 23);
  bad.initializers.emplace_back("cos", floats({0, 0, 0}, {1, 1, 3}));
  bad.initializers.emplace_back("sin", floats({0, 0, 0}, {1, 1, 3}));
  EXPECT_EQ(error_of(bad), "node 'y' (RotaryEmbedding): input 1 must be [1,1,2] without position_ids, not [1,1,3]");
  OnnxModel packed = model_with({1, 1, 6}, {node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"}, {{"num_heads", std::int64_t{4}}})}, 23);
  packed.initializers = bad.initializers;
  EXPECT_EQ(error_of(packed), "node 'y' (RotaryEmbedding): a 3-D X [1,1,6] needs num_heads dividing its last dimension, not 4");
}

TEST(OnnxReaderOpsets, LowersSoftplusMishAndLogSumExpWithoutOverflowAndLpNormalization) {
  // Log(1 + Exp(x)) taken literally is inf at x = 100 in float32; the lowering is not.
  collage::Result<Graph> g = read(model_with({3}, {node("Softplus", {"x"}, {"y"})}));
  ASSERT_TRUE(g.ok()) << g.error().message;
  Floats y = run_one(*g, Tensor({3}, {100.0f, 0.0f, -100.0f})).data;
  EXPECT_FLOAT_EQ(y[0], 100.0f);
  EXPECT_NEAR(y[1], std::log(2.0), 1e-6);
  EXPECT_NEAR(y[2], 0.0, 1e-30);
  g = read(model_with({3}, {node("Mish", {"x"}, {"y"})}, 18));
  ASSERT_TRUE(g.ok()) << g.error().message;
  y = run_one(*g, Tensor({3}, {100.0f, 1.0f, -100.0f})).data;
  EXPECT_FLOAT_EQ(y[0], 100.0f);
  EXPECT_NEAR(y[1], std::tanh(std::log1p(std::exp(1.0))), 1e-6);
  EXPECT_NEAR(y[2], 0.0, 1e-30);

  OnnxModel lse = model_with({2, 2}, {node("ReduceLogSumExp", {"x"}, {"y"}, {{"axes", Ints{-1}}, {"keepdims", std::int64_t{0}}})});
  g = read(lse);
  ASSERT_TRUE(g.ok()) << g.error().message;
  y = run_one(*g, Tensor({2, 2}, {1000.0f, 1000.0f, -1000.0f, 0.0f})).data;
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_NEAR(y[1], 0.0, 1e-6);

  for (const std::int64_t p : {1, 2}) {
    g = read(model_with({2, 2}, {node("LpNormalization", {"x"}, {"y"}, {{"p", p}, {"axis", std::int64_t{0}}})}));
    ASSERT_TRUE(g.ok()) << g.error().message;
    y = run_one(*g, Tensor({2, 2}, {3.0f, -1.0f, -4.0f, 1.0f})).data;
    const Floats expected = p == 1 ? Floats{3.0f / 7, -0.5f, -4.0f / 7, 0.5f} : Floats{0.6f, -1 / std::sqrt(2.0f), -0.8f, 1 / std::sqrt(2.0f)};
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << "p " << p << " at " << i;
  }
  EXPECT_EQ(error_of(model_with({2}, {node("LpNormalization", {"x"}, {"y"}, {{"p", std::int64_t{3}}})})),
            "node 'y' (LpNormalization): p must be 1 or 2, not 3");
  EXPECT_EQ(error_of(model_with({1, 3, 2, 2}, {node("DepthToSpace", {"x"}, {"y"}, {{"blocksize", std::int64_t{2}}})})),
            "node 'y' (DepthToSpace): channels 3 are not a multiple of blocksize^2 = 4");
  OnnxModel tile = model_with({2}, {node("Tile", {"x", "repeats"}, {"y"})});
  tile.initializers.emplace_back("repeats", ints({0}));
  EXPECT_EQ(error_of(tile), "node 'y' (Tile): repeats [0]: each must be 1 or more (and the result not too large)");
}

TEST(OnnxReaderOpsets, ReduceProdKeepsTheSignAndZeroes) {
  OnnxModel m = model_with({3, 4}, {node("ReduceProd", {"x"}, {"y"}, {{"axes", Ints{1}}, {"keepdims", std::int64_t{0}}})});
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Floats y = run_one(*g, Tensor({3, 4}, {2, -3, 0.5f, 4, -1, -2, -3, 0.25f, 5, 0, -7, 1})).data;
  ASSERT_EQ(y.size(), 3u);
  EXPECT_NEAR(y[0], -12.0f, 1e-5);
  EXPECT_NEAR(y[1], -1.5f, 1e-6);
  EXPECT_EQ(std::fabs(y[2]), 0.0f);
}

TEST(OnnxReaderOpsets, HardmaxMarksTheFirstMaximumAlongItsAxis) {
  // [2, 3]: ties in row 0 (the first of them wins); along axis 0, column-wise.
  const Tensor x({2, 3}, {5, 1, 5, -2, 7, -2});
  collage::Result<Graph> g = read(model_with({2, 3}, {node("Hardmax", {"x"}, {"y"})}, 13));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{1, 0, 0, 0, 1, 0}));
  g = read(model_with({2, 3}, {node("Hardmax", {"x"}, {"y"}, {{"axis", std::int64_t{0}}})}, 13));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{1, 0, 1, 0, 1, 0}));
  // Before opset 13, over the input coerced to 2-D at axis 0: one maximum in all six.
  g = read(model_with({2, 3}, {node("Hardmax", {"x"}, {"y"}, {{"axis", std::int64_t{0}}})}, 11));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{0, 0, 0, 0, 1, 0}));
}

TEST(OnnxReaderOpsets, ThresholdedReluAndShrinkPickTheirBranchAtTheThresholdsAndForInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x({7}, Floats{-inf, -2.0f, -1.0f, 0.5f, 1.0f, 3.0f, inf});
  collage::Result<Graph> g = read(model_with({7}, {node("ThresholdedRelu", {"x"}, {"y"})}));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{0, 0, 0, 0, 0, 3, inf}));  // alpha 1: x > 1 only
  g = read(model_with({7}, {node("ThresholdedRelu", {"x"}, {"y"}, {{"alpha", -1.5f}})}));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{0, 0, -1, 0.5f, 1, 3, inf}));
  g = read(model_with({7}, {node("Shrink", {"x"}, {"y"}, {{"lambd", 1.0f}, {"bias", 0.5f}})}));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{-inf, -1.5f, 0, 0, 0, 2.5f, inf}));
  // A negative lambd: x < 1 takes x + bias, the rest x - bias.
  g = read(model_with({7}, {node("Shrink", {"x"}, {"y"}, {{"lambd", -1.0f}, {"bias", 0.5f}})}));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, x).data, (Floats{-inf, -1.5f, -0.5f, 1, 0.5f, 2.5f, inf}));
}

/// ConvTranspose in two spatial dimensions by its definition: each input element scatters its
/// kernel, scaled, into the output at stride steps.
Floats conv_transpose_by_definition(const Tensor& x, const Floats& w, const Shape& w_shape, std::int64_t group,
                                    const Ints& strides, const Ints& pads, const Ints& output_padding, const Ints& dilations) {
  const std::int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const std::int64_t mg = w_shape[1], cg = c / group, kh = w_shape[2], kw = w_shape[3];
  const std::int64_t oh = strides[0] * (h - 1) + output_padding[0] + (kh - 1) * dilations[0] + 1 - pads[0] - pads[2];
  const std::int64_t ow = strides[1] * (wd - 1) + output_padding[1] + (kw - 1) * dilations[1] + 1 - pads[1] - pads[3];
  Floats y(static_cast<std::size_t>(n * mg * group * oh * ow), 0.0f);
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t ci = 0; ci < c; ++ci)
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < wd; ++j)
          for (std::int64_t o = 0; o < mg; ++o)
            for (std::int64_t a = 0; a < kh; ++a)
              for (std::int64_t e = 0; e < kw; ++e) {
                const std::int64_t r = i * strides[0] + a * dilations[0] - pads[0], q = j * strides[1] + e * dilations[1] - pads[1];
                if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
                const std::int64_t out_channel = (ci / cg) * mg + o;
                y[static_cast<std::size_t>(((b * mg * group + out_channel) * oh + r) * ow + q)] +=
                    x.data[static_cast<std::size_t>(((b * c + ci) * h + i) * wd + j)] * w[static_cast<std::size_t>(((ci * mg + o) * kh + a) * kw + e)];
              }
  return y;
}

TEST(OnnxReaderOpsets, ConvTransposeMatchesItsDefinitionWithStridesPadsGroupsAndDilations) {
  struct Case {
    Shape w_shape;
    std::int64_t group;
    Ints strides, pads, output_padding, dilations;
  };
  const std::vector<Case> cases = {
      {{4, 3, 2, 2}, 1, {2, 2}, {0, 0, 0, 0}, {0, 0}, {1, 1}},  // kernel = strides: a 1x1 Conv rearranged
      {{4, 2, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {{4, 2, 4, 4}, 2, {2, 2}, {1, 0, 2, 1}, {0, 1}, {1, 1}},
      {{4, 1, 3, 2}, 4, {1, 3}, {0, 0, 0, 0}, {0, 2}, {2, 1}},
  };
  const Tensor x = iota({1, 4, 3, 5});
  for (const Case& k : cases) {
    Floats w(static_cast<std::size_t>(numel(k.w_shape)));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7) % 11) - 5.0f;
    OnnxModel m = model_with(x.shape, {node("ConvTranspose", {"x", "w"}, {"y"},
                                            {{"group", k.group}, {"strides", k.strides}, {"pads", k.pads},
                                             {"output_padding", k.output_padding}, {"dilations", k.dilations}})});
    m.initializers.emplace_back("w", floats(w, k.w_shape));
    collage::Result<Graph> g = read(m);
    ASSERT_TRUE(g.ok()) << g.error().message;
    const Floats expected = conv_transpose_by_definition(x, w, k.w_shape, k.group, k.strides, k.pads, k.output_padding, k.dilations);
    const Floats y = values_of(*g, x);
    ASSERT_EQ(y.size(), expected.size()) << to_string(k.w_shape);
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 1e-3) << to_string(k.w_shape) << " at " << i;
  }
  const std::vector<Op> one_source = ops_of(*read([&] {
    OnnxModel m = model_with(x.shape, {node("ConvTranspose", {"x", "w"}, {"y"}, {{"strides", Ints{2, 2}}})});
    m.initializers.emplace_back("w", floats(Floats(4 * 3 * 2 * 2, 1.0f), {4, 3, 2, 2}));
    return m;
  }()));
  EXPECT_EQ(one_source, (std::vector<Op>{Op::conv, Op::reshape, Op::transpose, Op::reshape}));
}

/// GRU and LSTM by their definitions in ONNX's operator documentation: X [seq, batch, I], weights
/// W [dirs, G * H, I], R [dirs, G * H, H], B [dirs, 2 * G * H], states [dirs, batch, H]; returns
/// Y [seq, dirs, batch, H], Y_h and (LSTM) Y_c.
std::vector<Floats> recurrent_by_definition(bool lstm, bool linear_before_reset, const Tensor& x, const Floats& w,
                                            const Floats& r, const Floats& b, const Floats& h0, const Floats& c0,
                                            std::int64_t dirs, std::int64_t hidden) {
  const std::int64_t seq = x.shape[0], batch = x.shape[1], width = x.shape[2], gates = lstm ? 4 : 3, gh = gates * hidden;
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  Floats y(static_cast<std::size_t>(seq * dirs * batch * hidden)), yh(static_cast<std::size_t>(dirs * batch * hidden)), yc = yh;
  for (std::int64_t d = 0; d < dirs; ++d) {
    for (std::int64_t n = 0; n < batch; ++n) {
      std::vector<double> h(static_cast<std::size_t>(hidden)), c(h.size());
      for (std::int64_t j = 0; j < hidden; ++j) {
        h[static_cast<std::size_t>(j)] = h0[static_cast<std::size_t>((d * batch + n) * hidden + j)];
        c[static_cast<std::size_t>(j)] = c0[static_cast<std::size_t>((d * batch + n) * hidden + j)];
      }
      for (std::int64_t k = 0; k < seq; ++k) {
        const std::int64_t t = d == 1 ? seq - 1 - k : k;
        // xw[g * H + j] = X_t W^T + Wb, hr[...] = H R^T + Rb, for every gate row.
        std::vector<double> xw(static_cast<std::size_t>(gh)), hr(xw.size());
        for (std::int64_t row = 0; row < gh; ++row) {
          double a = b[static_cast<std::size_t>(d * 2 * gh + row)], e = b[static_cast<std::size_t>(d * 2 * gh + gh + row)];
          for (std::int64_t i = 0; i < width; ++i) a += x.data[static_cast<std::size_t>((t * batch + n) * width + i)] * w[static_cast<std::size_t>((d * gh + row) * width + i)];
          for (std::int64_t i = 0; i < hidden; ++i) e += h[static_cast<std::size_t>(i)] * r[static_cast<std::size_t>((d * gh + row) * hidden + i)];
          xw[static_cast<std::size_t>(row)] = a;
          hr[static_cast<std::size_t>(row)] = e;
        }
        std::vector<double> next(h.size());
        for (std::int64_t j = 0; j < hidden; ++j) {
          const auto at = [&](const std::vector<double>& v, std::int64_t g) { return v[static_cast<std::size_t>(g * hidden + j)]; };
          if (lstm) {
            const double in = sigmoid(at(xw, 0) + at(hr, 0)), out = sigmoid(at(xw, 1) + at(hr, 1));
            const double forget = sigmoid(at(xw, 2) + at(hr, 2)), cell = std::tanh(at(xw, 3) + at(hr, 3));
            c[static_cast<std::size_t>(j)] = forget * c[static_cast<std::size_t>(j)] + in * cell;
            next[static_cast<std::size_t>(j)] = out * std::tanh(c[static_cast<std::size_t>(j)]);
          } else {
            const double z = sigmoid(at(xw, 0) + at(hr, 0));
            double reset = 0;
            if (linear_before_reset) {
              reset = sigmoid(at(xw, 1) + at(hr, 1)) * at(hr, 2);
            } else {  // (r (.) H) R_h^T + Rb_h
              reset = b[static_cast<std::size_t>(d * 2 * gh + gh + 2 * hidden + j)];
              for (std::int64_t i = 0; i < hidden; ++i) {
                const double ri = sigmoid(xw[static_cast<std::size_t>(hidden + i)] + hr[static_cast<std::size_t>(hidden + i)]);
                reset += ri * h[static_cast<std::size_t>(i)] * r[static_cast<std::size_t>((d * gh + 2 * hidden + j) * hidden + i)];
              }
            }
            const double candidate = std::tanh(at(xw, 2) + reset);
            next[static_cast<std::size_t>(j)] = (1 - z) * candidate + z * h[static_cast<std::size_t>(j)];
          }
        }
        h = next;
        for (std::int64_t j = 0; j < hidden; ++j) y[static_cast<std::size_t>(((t * dirs + d) * batch + n) * hidden + j)] = static_cast<float>(h[static_cast<std::size_t>(j)]);
      }
      for (std::int64_t j = 0; j < hidden; ++j) {
        yh[static_cast<std::size_t>((d * batch + n) * hidden + j)] = static_cast<float>(h[static_cast<std::size_t>(j)]);
        yc[static_cast<std::size_t>((d * batch + n) * hidden + j)] = static_cast<float>(c[static_cast<std::size_t>(j)]);
      }
    }
  }
  return {y, yh, yc};
}

TEST(OnnxReaderOpsets, BidirectionalGruAndLstmWithInitialStatesMatchTheirDefinitions) {
  const std::int64_t seq = 3, batch = 2, width = 3, hidden = 2, dirs = 2;
  Tensor x = iota({seq, batch, width});
  for (float& v : x.data) v *= 0.25f;
  for (const auto& [lstm, linear_before_reset] : std::vector<std::pair<bool, bool>>{{false, false}, {false, true}, {true, false}}) {
    const std::int64_t gh = (lstm ? 4 : 3) * hidden;
    const auto filled = [](std::size_t n, int salt) {
      Floats v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(salt)) % 13) - 6) * 0.1f;
      return v;
    };
    const Floats w = filled(static_cast<std::size_t>(dirs * gh * width), 1), r = filled(static_cast<std::size_t>(dirs * gh * hidden), 2);
    const Floats b = filled(static_cast<std::size_t>(dirs * 2 * gh), 3), h0 = filled(static_cast<std::size_t>(dirs * batch * hidden), 4);
    const Floats c0 = filled(static_cast<std::size_t>(dirs * batch * hidden), 5);
    OnnxModel m = model_with(x.shape, {});
    std::vector<std::string> inputs = {"x", "w", "r", "b", "", "h0"};
    std::vector<std::string> outputs = {"y", "y_h"};
    if (lstm) {
      inputs.push_back("c0");
      outputs.push_back("y_c");
    }
    m.nodes.push_back(node(lstm ? "LSTM" : "GRU", inputs, outputs,
                           {{"hidden_size", hidden}, {"direction", std::string("bidirectional")},
                            {"linear_before_reset", std::int64_t{linear_before_reset}}}));
    if (lstm) m.nodes.back().attrs.pop_back();  // LSTM has no linear_before_reset
    m.initializers.emplace_back("w", floats(w, {dirs, gh, width}));
    m.initializers.emplace_back("r", floats(r, {dirs, gh, hidden}));
    m.initializers.emplace_back("b", floats(b, {dirs, 2 * gh}));
    m.initializers.emplace_back("h0", floats(h0, {dirs, batch, hidden}));
    m.initializers.emplace_back("c0", floats(c0, {dirs, batch, hidden}));
    m.outputs.clear();
    for (const std::string& o : outputs) {
      m.outputs.push_back(float_value_info(o, {}));
      m.outputs.back().has_shape = false;
    }
    collage::Result<Graph> g = read(m);
    ASSERT_TRUE(g.ok()) << g.error().message;
    auto got = evaluate(*g, {x});
    ASSERT_TRUE(got.ok()) << got.error().message;
    const std::vector<Floats> expected = recurrent_by_definition(lstm, linear_before_reset, x, w, r, b, h0, c0, dirs, hidden);
    ASSERT_EQ(got->size(), outputs.size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      ASSERT_EQ((*got)[k].data.size(), expected[k].size()) << outputs[k];
      for (std::size_t i = 0; i < expected[k].size(); ++i) {
        EXPECT_NEAR((*got)[k].data[i], expected[k][i], 1e-5) << (lstm ? "LSTM " : "GRU ") << outputs[k] << " at " << i;
      }
    }
  }
}

/// A model with int64 input `ids` of `ids_shape` and float output y.
OnnxModel model_with_ids(Shape ids_shape, std::vector<OnnxNode> nodes) {
  OnnxModel m = model_with({}, std::move(nodes));
  m.inputs[0] = float_value_info("ids", ids_shape);
  m.inputs[0].type = ElemType::int64;
  return m;
}

TEST(OnnxReader, IntegerInputsIndexGathersAtRunTime) {
  // Embeddings as exporters write them: a table gathered at token ids, the ids reshaped first.
  OnnxModel m = model_with_ids({2, 3}, {node("Reshape", {"ids", "flat"}, {"r"}),
                                        node("Gather", {"table", "r"}, {"y"}),
                                        node("Gather", {"small", "ids"}, {"z"}, {{"axis", std::int64_t{1}}})});
  m.initializers.emplace_back("flat", ints({6}));
  Floats table(10 * 4);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
  m.initializers.emplace_back("table", floats(table, {10, 4}));
  m.initializers.emplace_back("small", floats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, {2, 7}));
  m.outputs.push_back(float_value_info("z", {}));
  m.outputs.back().has_shape = false;
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::reshape, Op::gather, Op::gather}));
  const Node& ids = g->node(g->inputs()[0]);
  EXPECT_EQ(input_domain(ids).elem_type, static_cast<std::int64_t>(ElemType::int64));
  EXPECT_EQ(input_domain(ids).index_bound, 7);  // the smaller of the two axes it indexes
  const Tensor ids_value({2, 3}, Floats{0, 6, -1, 2, -7, 5});
  EXPECT_TRUE(check_input_values(*g, {ids_value}).ok());
  auto out = evaluate(*g, {ids_value});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ((*out)[0].shape, (Shape{6, 4}));
  EXPECT_EQ((*out)[0].data[4], 24.0f);   // row 6
  EXPECT_EQ((*out)[0].data[8], 36.0f);   // row -1 is row 9
  EXPECT_EQ((*out)[1].shape, (Shape{2, 2, 3}));
  EXPECT_EQ((*out)[1].data[4], 1.0f);    // row 0, index -7
  EXPECT_EQ((*out)[1].data[11], 13.0f);  // row 1, index 5
  EXPECT_EQ(check_input_values(*g, {Tensor({2, 3}, Floats{0, 1, 2, 3, 4, 7})}).message(),
            "input 'ids': element 5 is 7, not an index in [-7, 7) (the axis a Gather reads)");
}

TEST(OnnxReader, IntegerInputsReachOnlyGatherCastReshapesAndExpand) {
  // An attention mask made additive: the cast to float copies the numbers.
  OnnxModel mask = model_with_ids({1, 4}, {node("Unsqueeze", {"ids", "axes"}, {"e"}),
                                           node("Expand", {"e", "rows"}, {"u"}),
                                           node("Cast", {"u"}, {"f"}, {{"to", std::int64_t{1}}}),
                                           node("Sub", {"one", "f"}, {"y"})});
  mask.initializers.emplace_back("axes", ints({1}));
  mask.initializers.emplace_back("rows", ints({1, 2, 4}));
  mask.initializers.emplace_back("one", floats({1}, {}));
  collage::Result<Graph> g = read(mask);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(input_domain(g->node(g->inputs()[0])).index_bound, 0);
  EXPECT_EQ(run_one(*g, Tensor({1, 4}, Floats{1, 1, 0, 1})).data, (Floats{0, 0, 1, 0, 0, 0, 1, 0}));
  EXPECT_TRUE(check_input_values(*g, {Tensor({1, 4}, Floats{1, 0, -3, 16777216})}).ok());
  EXPECT_EQ(check_input_values(*g, {Tensor({1, 4}, Floats{1, 0.5f, 0, 0})}).message(),
            "input 'ids': element 1 is 0.5, not an integer of magnitude at most 2^24");

  OnnxModel add = model_with_ids({4}, {node("Add", {"ids", "ids"}, {"y"})});
  EXPECT_EQ(error_of(add), "node 'y' (Add): input 0 ('ids') is a run-time int64 tensor: the IR computes float32, "
                           "and run-time integers may only reach Gather, Cast, reshapes and Expand");
  OnnxModel out = model_with_ids({4}, {node("Identity", {"ids"}, {"y"})});
  EXPECT_EQ(error_of(out), "output 'y': element type int64 is not supported (the IR computes float32)");
  // Back to integers: only the numbers of an integer input (a float computed at run time may not
  // be one).
  OnnxModel round = model_with_ids({4}, {node("Cast", {"ids"}, {"f"}, {{"to", std::int64_t{1}}}),
                                         node("Cast", {"f"}, {"i"}, {{"to", std::int64_t{6}}}),
                                         node("Gather", {"table", "i"}, {"y"})});
  round.initializers.emplace_back("table", floats({5, 6, 7}, {3}));
  g = read(round);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, Tensor({4}, Floats{2, 0, -1, 1})).data, (Floats{7, 5, 7, 6}));
  round.nodes[1] = node("CastLike", {"f", "ids"}, {"i"});  // like the integer input
  g = read(round);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(run_one(*g, Tensor({4}, Floats{1, 1, 0, -3})).data, (Floats{6, 6, 5, 5}));
  OnnxModel computed = model_with({4}, {node("Cast", {"x"}, {"i"}, {{"to", std::int64_t{7}}}),
                                        node("Gather", {"table", "i"}, {"y"})});
  computed.initializers.emplace_back("table", floats({5, 6, 7}, {3}));
  EXPECT_EQ(error_of(computed), "node 'i' (Cast): a cast of a run-time float32 tensor to int64 is not supported");
}

TEST(OnnxReaderOpsets, GatherElementsAndGatherNDAtLoadTimeIndices) {
  // x = iota: x[r][c] = 4r + c - 3 over [3, 4].
  OnnxModel elements = model_with({3, 4}, {node("GatherElements", {"x", "picks"}, {"y"}, {{"axis", std::int64_t{1}}})});
  OnnxTensor picks = ints({3, -4, 1, 2, 2, 0});
  picks.shape = {3, 2};
  elements.initializers.emplace_back("picks", picks);
  collage::Result<Graph> g = read(elements);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Tensor y = run_one(*g, iota({3, 4}));
  EXPECT_EQ(y.shape, (Shape{3, 2}));
  EXPECT_EQ(y.data, (Floats{0, -3, 2, 3, 7, 5}));  // y[r][c] = x[r][picks[r][c]]
  elements.initializers.back().second.ints[0] = 4;
  EXPECT_EQ(error_of(elements), "node 'y' (GatherElements): index 4 out of range for dimension 4");

  // GatherND with one batch dimension: y[b][t] = x[b][picks[b][t][0]] (rows of [3, 2, 2]).
  OnnxModel nd = model_with({3, 2, 2}, {node("GatherND", {"x", "tuples"}, {"y"}, {{"batch_dims", std::int64_t{1}}})});
  OnnxTensor tuples = ints({1, 0, 0, -1, 1, 1});
  tuples.shape = {3, 2, 1};
  nd.initializers.emplace_back("tuples", tuples);
  g = read(nd);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Tensor z = run_one(*g, iota({3, 2, 2}));
  EXPECT_EQ(z.shape, (Shape{3, 2, 2}));
  EXPECT_EQ(z.data, (Floats{-1, 0, -3, -2, 1, 2, 3, 4, 7, 8, 7, 8}));
  OnnxModel runtime = model_with({3, 4}, {node("GatherElements", {"x", "ids"}, {"y"})});
  runtime.inputs.push_back(float_value_info("ids", {3, 4}));
  runtime.inputs.back().type = ElemType::int64;
  EXPECT_EQ(error_of(runtime),
            "node 'y' (GatherElements): input 1 ('ids') computed at run time (it must be known at load time) is not supported");
}

TEST(OnnxReaderOpsets, LowersExpandGatherAndWhereOfRunTimeData) {
  OnnxModel expand = model_with({3, 1}, {node("Expand", {"x", "shape"}, {"y"})});
  expand.initializers.emplace_back("shape", ints({2, 3, 4}));
  collage::Result<Graph> g = read(expand);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Floats expanded = values_of(*g, iota({3, 1}));
  ASSERT_EQ(expanded.size(), 24u);
  EXPECT_EQ(expanded[5], -2.0f);  // [0][1][1] reads x[1]

  OnnxModel gather = model_with({2, 4}, {node("Gather", {"x", "picks"}, {"y"}, {{"axis", std::int64_t{1}}})});
  gather.initializers.emplace_back("picks", ints({3, 0, 1, -3, 2}));
  g = read(gather);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(values_of(*g, iota({2, 4})), (Floats{0, -3, -2, -2, -1, 4, 1, 2, 2, 3}));
  gather.initializers.back().second = int_scalar(-1);
  g = read(gather);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{2}));
  EXPECT_EQ(values_of(*g, iota({2, 4})), (Floats{0, 4}));
  Ints scattered;
  for (std::int64_t i = 0; i < 200; ++i) scattered.push_back((i * 7) % 4);
  gather.initializers.back().second = ints(scattered);
  g = read(gather);  // too scattered for slices: the IR's gather at constant indices
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(ops_of(*g), (std::vector<Op>{Op::gather}));
  const Floats picked = values_of(*g, iota({2, 4}));
  ASSERT_EQ(picked.size(), 400u);
  EXPECT_EQ(picked[1], -3.0f + 7 % 4);
  EXPECT_EQ(picked[200 + 2], 1.0f + 14 % 4);

  OnnxModel where = model_with({2}, {node("Where", {"cond", "x", "ten"}, {"y"})});
  where.initializers.emplace_back("cond", OnnxTensor{ElemType::boolean, {2, 1}, {}, {0, 0}});
  where.initializers.emplace_back("ten", floats({10}, {}));
  g = read(where);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(values_of(*g, iota({2})), (Floats{10, 10, 10, 10}));
  // A condition that differs between elements: infinities pass through exactly.
  where.initializers[0].second.ints = {0, 1};
  where.initializers[1].second.reals = {-std::numeric_limits<float>::infinity()};
  g = read(where);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(values_of(*g, Tensor({2}, Floats{inf, -1})), (Floats{-inf, -inf, inf, -1}));
}

TEST(OnnxReaderOpsets, FoldsConstantsUpToTheMemoryAvailable) {
  // A fully connected weight made by ConstantOfShape, as zoo files have it: [4096, 4097] is above
  // the 2^24 elements a fixed limit used to allow.
  OnnxModel m = model_with({1, 4097}, {
      node("ConstantOfShape", {"shape"}, {"w"}, {{"value", floats({0.5f}, {1})}}),
      node("Gemm", {"x", "w"}, {"y"}, {{"transB", std::int64_t{1}}}),
  }, 9);
  m.initializers.emplace_back("shape", ints({4096, 4097}));
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->node(g->outputs()[0]).inputs[1]).shape, (Shape{4096, 4097}));
  ReadOptions limited;
  limited.max_folded_elements = 1 << 20;
  EXPECT_EQ(error_of(m, limited),
            "node 'w' (ConstantOfShape): the folded result [4096,4097] is too large (limit 1048576 elements)");
}

TEST(OnnxReaderOpsets, WeightsAreCutOutOfTheBytesProtobufParses) {
  OnnxModel m = model_with({1, 3}, {node("Gemm", {"x", "w", "b"}, {"y"})});
  m.initializers.emplace_back("w", floats({1, 2, 3, 4, 5, 6}, {3, 2}));
  m.initializers.emplace_back("b", floats({0.5f, -0.5f}, {2}));
  const std::string bytes = *serialize(m);
  const std::optional<detail::StrippedModel> stripped = detail::strip_initializer_data(bytes);
  ASSERT_TRUE(stripped.has_value());
  ASSERT_EQ(stripped->raw_data.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const Floats& values = m.initializers[k].second.reals;
    ASSERT_TRUE(stripped->raw_data[k].has_value());
    ASSERT_EQ(stripped->raw_data[k]->size(), values.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(stripped->raw_data[k]->data(), values.data(), values.size() * sizeof(float)), 0);
  }
  EXPECT_LT(stripped->bytes.size() + 8 * sizeof(float), bytes.size());
  // The weights are read from the bytes given: y = x w + b.
  collage::Result<Graph> g = read_onnx_bytes(bytes);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(values_of(*g, Tensor({1, 3}, Floats{1, 1, 1})), (Floats{9.5f, 11.5f}));
  EXPECT_FALSE(detail::strip_initializer_data(bytes.substr(0, bytes.size() - 3)).has_value());
  const std::string no_weights = *serialize(model_with({2}, {node("Relu", {"x"}, {"y"})}));
  EXPECT_EQ(detail::strip_initializer_data(no_weights)->bytes, no_weights);
}

/// custom.SquareLeaky(v) = LeakyRelu(v)^2 with LeakyRelu's alpha the caller's attribute "slope":
/// the shape of the functions PyTorch's exporter writes for its own modules.
OnnxFunction square_leaky() {
  OnnxFunction f;
  f.domain = "custom";
  f.name = "SquareLeaky";
  f.inputs = {"v"};
  f.outputs = {"r"};
  f.attributes = {"slope"};
  f.nodes = {node("LeakyRelu", {"v"}, {"t"}), node("Mul", {"t", "t"}, {"r"})};
  f.attr_refs.push_back({0, "alpha", "slope"});
  return f;
}

OnnxNode call(std::string function, std::vector<std::string> in, std::vector<std::string> out,
              std::vector<std::pair<std::string, OnnxAttr>> attrs = {}) {
  OnnxNode n = node(std::move(function), std::move(in), std::move(out), std::move(attrs));
  n.domain = "custom";
  return n;
}

/// Whether `with_functions` reads to a graph of the operators of `inline_model` that computes
/// the same on an input of `shape`.
void expect_same_as_inline(const OnnxModel& with_functions, const OnnxModel& inline_model, const Shape& shape) {
  collage::Result<Graph> g = read(with_functions);
  ASSERT_TRUE(g.ok()) << g.error().message;
  collage::Result<Graph> expected = read(inline_model);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  EXPECT_EQ(ops_of(*g), ops_of(*expected));
  EXPECT_EQ(run_one(*g, iota(shape)).data, run_one(*expected, iota(shape)).data);
}

TEST(OnnxReaderFunctions, EachCallRunsTheBodyWithItsOwnValuesAndAttributes) {
  // "a/t" is the name the first call's "t" would take first.
  OnnxModel m = model_with({2, 3}, {node("Neg", {"x"}, {"a/t"}), call("SquareLeaky", {"a/t"}, {"a"}, {{"slope", 0.5f}}),
                                    node("Sub", {"a", "a/t"}, {"d"}), call("SquareLeaky", {"d"}, {"b"}, {{"slope", 0.25f}}),
                                    node("Neg", {"b"}, {"y"})});
  m.functions.push_back(square_leaky());
  const OnnxModel plain = model_with({2, 3}, {node("Neg", {"x"}, {"n"}), node("LeakyRelu", {"n"}, {"t1"}, {{"alpha", 0.5f}}),
                                              node("Mul", {"t1", "t1"}, {"a"}), node("Sub", {"a", "n"}, {"d"}),
                                              node("LeakyRelu", {"d"}, {"t2"}, {{"alpha", 0.25f}}), node("Mul", {"t2", "t2"}, {"b"}),
                                              node("Neg", {"b"}, {"y"})});
  expect_same_as_inline(m, plain, {2, 3});
}

TEST(OnnxReaderFunctions, AnAttributeTheCallLeavesOutTakesTheOperatorsDefault) {
  OnnxModel m = model_with({4}, {call("SquareLeaky", {"x"}, {"y"})});
  m.functions.push_back(square_leaky());
  expect_same_as_inline(m, model_with({4}, {node("LeakyRelu", {"x"}, {"t"}), node("Mul", {"t", "t"}, {"y"})}), {4});
}

TEST(OnnxReaderFunctions, CallsInsideABodyAreExpandedToo) {
  OnnxFunction twice;
  twice.domain = "custom";
  twice.name = "Twice";
  twice.inputs = {"p"};
  twice.outputs = {"q"};
  twice.nodes = {call("SquareLeaky", {"p"}, {"m"}, {{"slope", 0.5f}}), call("SquareLeaky", {"m"}, {"q"}, {{"slope", 0.5f}})};
  OnnxModel m = model_with({3}, {call("Twice", {"x"}, {"y"})});
  m.functions = {square_leaky(), twice};
  const OnnxModel plain = model_with({3}, {node("LeakyRelu", {"x"}, {"t1"}, {{"alpha", 0.5f}}), node("Mul", {"t1", "t1"}, {"m"}),
                                           node("LeakyRelu", {"m"}, {"t2"}, {{"alpha", 0.5f}}), node("Mul", {"t2", "t2"}, {"y"})});
  expect_same_as_inline(m, plain, {3});
}

/// `m` with its nodes in runs of `run` moved into model-local functions ("standin.Run<k>"), each
/// called where its nodes were: the form of a model whose exporter wrote its modules as functions.
OnnxModel with_runs_as_functions(OnnxModel m, std::size_t run) {
  std::vector<OnnxNode> nodes = std::move(m.nodes);
  m.nodes.clear();
  std::set<std::string> graph_outputs;
  for (const OnnxValueInfo& v : m.outputs) graph_outputs.insert(v.name);
  auto read_after = [&](const std::string& value, std::size_t from) {
    for (std::size_t k = from; k < nodes.size(); ++k) {
      if (std::find(nodes[k].inputs.begin(), nodes[k].inputs.end(), value) != nodes[k].inputs.end()) return true;
    }
    return graph_outputs.count(value) != 0;
  };
  for (std::size_t first = 0; first < nodes.size(); first += run) {
    const std::size_t last = std::min(first + run, nodes.size());
    OnnxFunction f;
    f.domain = "standin";
    f.name = "Run" + std::to_string(first / run);
    f.opset = m.opset;
    std::set<std::string> produced;
    for (std::size_t k = first; k < last; ++k) {
      for (const std::string& in : nodes[k].inputs) {
        if (!in.empty() && produced.count(in) == 0 && std::find(f.inputs.begin(), f.inputs.end(), in) == f.inputs.end()) {
          f.inputs.push_back(in);
        }
      }
      for (const std::string& out : nodes[k].outputs) {
        produced.insert(out);
        if (read_after(out, last)) f.outputs.push_back(out);
      }
      f.nodes.push_back(nodes[k]);
    }
    m.nodes.push_back(call(f.name, f.inputs, f.outputs));
    m.nodes.back().domain = f.domain;
    m.functions.push_back(std::move(f));
  }
  return m;
}

TEST(OnnxReaderFunctions, ModelsWrittenAsFunctionsReadAsTheModelsThemselves) {
  for (const OnnxModel& m : {make_bert(2, 64, 2, 256, 16, 1, 18), make_resnet(18, 8, 32, 10, 1, 18)}) {
    collage::Result<Graph> expected = read(m);
    ASSERT_TRUE(expected.ok()) << expected.error().message;
    collage::Result<Graph> g = read(with_runs_as_functions(m, 7));
    ASSERT_TRUE(g.ok()) << m.graph_name << ": " << g.error().message;
    EXPECT_EQ(ops_of(*g), ops_of(*expected)) << m.graph_name;
    std::vector<Tensor> inputs;
    for (int in : expected->inputs()) inputs.push_back(iota(expected->node(in).shape));
    auto want = evaluate(*expected, inputs);
    auto got = evaluate(*g, inputs);
    ASSERT_TRUE(want.ok() && got.ok()) << m.graph_name;
    ASSERT_EQ(got->size(), want->size());
    for (std::size_t k = 0; k < want->size(); ++k) EXPECT_EQ((*got)[k].data, (*want)[k].data) << m.graph_name;
  }
}

TEST(OnnxReaderFunctions, BadFunctionsAreOneLineNamingTheFunction) {
  OnnxFunction self = square_leaky();
  self.nodes[1] = call("SquareLeaky", {"t"}, {"r"});
  OnnxModel recursive = model_with({2}, {call("SquareLeaky", {"x"}, {"y"})});
  recursive.functions.push_back(self);
  EXPECT_NE(error_of(recursive).find("function 'custom.SquareLeaky' called by node"), std::string::npos) << error_of(recursive);
  EXPECT_NE(error_of(recursive).find("calls itself"), std::string::npos);

  OnnxFunction outside = square_leaky();
  outside.nodes[1] = node("Mul", {"t", "x"}, {"r"});  // x is the graph's, not the function's
  OnnxModel reads_outside = model_with({2}, {call("SquareLeaky", {"x"}, {"y"})});
  reads_outside.functions.push_back(outside);
  EXPECT_NE(error_of(reads_outside).find("value 'x' is read but not defined in its body"), std::string::npos);

  OnnxFunction no_output = square_leaky();
  no_output.nodes[1].outputs = {"s"};
  OnnxModel unproduced = model_with({2}, {call("SquareLeaky", {"x"}, {"y"})});
  unproduced.functions.push_back(no_output);
  EXPECT_NE(error_of(unproduced).find("its output 'r' is not produced by its body"), std::string::npos);

  OnnxModel twice_defined = model_with({2}, {call("SquareLeaky", {"x"}, {"y"})});
  twice_defined.functions = {square_leaky(), square_leaky()};
  EXPECT_NE(error_of(twice_defined).find("is defined twice"), std::string::npos);

  OnnxModel doubling = model_with({2}, {call("F30", {"x"}, {"y"})});  // F_k calls F_k-1 twice: 2^30 nodes
  doubling.functions.push_back(square_leaky());
  doubling.functions.back().name = "F0";
  for (int k = 1; k <= 30; ++k) {
    OnnxFunction f = square_leaky();
    f.name = "F" + std::to_string(k);
    f.attr_refs.clear();
    f.nodes = {call("F" + std::to_string(k - 1), {"v"}, {"t"}), call("F" + std::to_string(k - 1), {"t"}, {"r"})};
    doubling.functions.push_back(f);
  }
  EXPECT_NE(error_of(doubling).find("the model's functions expand to more than 4194304 nodes"), std::string::npos) << error_of(doubling);
  for (int k = 31; k <= 70; ++k) {  // F70 calls F69 ... calls F0: 71 deep
    OnnxFunction f = doubling.functions[0];
    f.name = "F" + std::to_string(k);
    f.nodes = {call("F" + std::to_string(k - 1), {"v"}, {"r"})};
    doubling.functions.push_back(f);
  }
  doubling.nodes = {call("F10", {"x"}, {"a"}), call("F70", {"a"}, {"y"})};  // F10's expansion is known before F70 reaches it
  EXPECT_NE(error_of(doubling).find("calls nest deeper than 64"), std::string::npos) << error_of(doubling);

  OnnxModel unknown = model_with({2}, {call("NoSuchFunction", {"x"}, {"y"})});
  unknown.functions.push_back(square_leaky());
  EXPECT_NE(error_of(unknown).find("domain 'custom' is not supported"), std::string::npos) << error_of(unknown);
}

TEST(OnnxReaderFunctions, ABodyWrittenForAnotherDefinitionOfAnOperatorIsRefused) {
  OnnxFunction squeeze;  // Squeeze-11 takes its axes as an attribute, Squeeze-13 as an input
  squeeze.domain = "custom";
  squeeze.name = "Flat";
  squeeze.inputs = {"v"};
  squeeze.outputs = {"r"};
  squeeze.nodes = {node("Squeeze", {"v"}, {"r"}, {{"axes", Ints{0}}})};
  squeeze.opset = 11;
  OnnxModel m = model_with({1, 3}, {call("Flat", {"x"}, {"y"})});
  m.functions.push_back(squeeze);
  EXPECT_NE(error_of(m).find("Squeeze is Squeeze-11 at the function's opset 11 but Squeeze-13 at the model's 17"), std::string::npos)
      << error_of(m);
  m.opset = 11;
  collage::Result<Graph> g = read(m);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(g->outputs()[0]).shape, (Shape{3}));
}

TEST(OnnxReaderFunctions, ParsingAModelNamesTheFunctionsItLeavesOut) {
  OnnxModel m = model_with({2}, {call("SquareLeaky", {"x"}, {"y"})});
  m.functions.push_back(square_leaky());
  collage::Result<std::string> bytes = serialize(m);
  ASSERT_TRUE(bytes.ok());
  collage::Result<OnnxModel> parsed = parse_model(*bytes);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->left_out, (std::vector<std::string>{"local function 'custom.SquareLeaky'"}));
}

/// The model of ReadsConvWithInitializersAndCanonicalAttributes, its weights in `external_data`
/// when set.
OnnxModel conv_relu(const std::string& external_data) {
  OnnxModel m = model_with({1, 2, 5, 5}, {node("Conv", {"x", "w", "b"}, {"c"}, {{"pads", Ints{1, 1, 1, 1}}}), node("Relu", {"c"}, {"y"})});
  m.initializers.emplace_back("w", floats(Floats(2 * 2 * 3 * 3, 0.5f), {2, 2, 3, 3}));
  m.initializers.emplace_back("b", floats({1, -100}, {2}));
  m.external_data = external_data;
  return m;
}

TEST(OnnxReaderExternalData, WeightsAreReadFromTheFileBesideTheModel) {
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(save(conv_relu("tc_reader_test.weights"), dir + "/tc_reader_test_external.onnx").ok());
  collage::Result<Graph> g = read_onnx(dir + "/tc_reader_test_external.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  collage::Result<Graph> inline_weights = read(conv_relu(""));
  ASSERT_TRUE(inline_weights.ok());
  const Tensor x = iota({1, 2, 5, 5});
  EXPECT_EQ(run_one(*g, x).data, run_one(*inline_weights, x).data);
  EXPECT_FLOAT_EQ(run_one(*g, Tensor({1, 2, 5, 5}, 1.0f)).data[12], 1 + 0.5f * 18);
}

TEST(OnnxReaderExternalData, MissingShortOrEscapingFilesAreOneLine) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/tc_reader_test_bad_external.onnx";
  auto error_reading = [&](const OnnxModel& m) {
    EXPECT_TRUE(save(m, path).ok());
    collage::Result<Graph> g = read_onnx(path);
    EXPECT_FALSE(g.ok());
    return g.ok() ? std::string() : g.error().message;
  };
  EXPECT_TRUE(save(conv_relu("tc_reader_test_missing.weights"), path).ok());
  std::remove((dir + "/tc_reader_test_missing.weights").c_str());
  collage::Result<Graph> g = read_onnx(path);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("initializer 'w': external data file"), std::string::npos) << g.error().message;
  EXPECT_NE(g.error().message.find("cannot be read"), std::string::npos);

  EXPECT_TRUE(save(conv_relu("tc_reader_test_short.weights"), path).ok());
  {
    std::ofstream cut(dir + "/tc_reader_test_short.weights", std::ios::binary | std::ios::trunc);
    cut << "0123456789";
  }
  g = read_onnx(path);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("bytes 0 to 144 lie outside"), std::string::npos) << g.error().message;

  std::filesystem::create_directories(dir + "/tc_reader_test_sub");
  EXPECT_NE(error_reading(conv_relu("tc_reader_test_sub/../tc_reader_test_up.weights")).find("leaves the model's folder"),
            std::string::npos);

  std::string external_bytes;
  collage::Result<std::string> bytes = serialize(conv_relu("tc_reader_test.weights"), &external_bytes);
  ASSERT_TRUE(bytes.ok());
  collage::Result<Graph> from_bytes = read_onnx_bytes(*bytes);
  ASSERT_FALSE(from_bytes.ok());
  EXPECT_NE(from_bytes.error().message.find("needs the model's folder"), std::string::npos) << from_bytes.error().message;
  EXPECT_FALSE(serialize(conv_relu("tc_reader_test.weights")).ok());
}

}  // namespace
}  // namespace tc
