#include "onnx/writer.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "onnx/reader.hpp"
#include "tensor/compare.hpp"
#include "tensor/op_attrs.hpp"
#include "tensor/reference.hpp"
#include "tensor/shape_inference.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc {
namespace {

using testing::random_tensor;
using Ints = std::vector<std::int64_t>;

/// One graph with every operator of the IR and their unusual attribute values.
Graph every_operator(std::mt19937_64& rng) {
  Graph g;
  const auto op = [&](Op o, std::vector<int> in, Attributes a = {}) { return *g.add_op(o, std::move(in), std::move(a)); };
  const auto attrs = [](std::initializer_list<std::pair<const char*, AttrValue>> list) {
    Attributes a;
    for (const auto& [k, v] : list) std::visit([&, k = k](const auto& x) { a.set(k, x); }, v);
    return a;
  };
  const int x = g.add_input("x", {1, 4, 6, 6});
  const int w = g.add_constant("w", random_tensor({4, 2, 3, 3}, rng));
  const int b = g.add_constant("b", random_tensor({4}, rng));
  int h = op(Op::conv, {x, w, b}, attrs({{"group", std::int64_t{2}}, {"pads", Ints{1, 0, 1, 2}}, {"strides", Ints{1, 2}}}));
  h = op(Op::clip, {h}, attrs({{"min", 0.0}}));
  h = op(Op::leaky_relu, {h}, attrs({{"alpha", 0.25}}));  // float attributes must be float32 values
  h = op(Op::max_pool, {h}, attrs({{"kernel_shape", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}, {"strides", Ints{2, 2}}}));
  h = op(Op::average_pool, {h}, attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 0}}, {"count_include_pad", std::int64_t{1}}}));
  const int bn = op(Op::batch_norm, {h, g.add_constant("s", random_tensor({4}, rng)), b, b,
                                    g.add_constant("v", Tensor({4}, 0.5f))}, attrs({{"epsilon", 0.0009765625}}));
  const int gp = op(Op::global_average_pool, {bn});
  const int gm = op(Op::global_max_pool, {bn});
  int f = op(Op::flatten, {op(Op::add, {gp, gm})});
  f = op(Op::gemm, {f, g.add_constant("wg", random_tensor({6, 4}, rng)), g.add_constant("c", random_tensor({6}, rng))},
         attrs({{"transB", std::int64_t{1}}, {"alpha", 0.5}}));
  int r = op(Op::reshape, {f}, attrs({{"shape", Ints{1, 2, 3}}}));
  r = op(Op::transpose, {r}, attrs({{"perm", Ints{0, 2, 1}}}));
  r = op(Op::matmul, {r, g.add_constant("m", random_tensor({2, 5}, rng))});
  r = op(Op::layer_norm, {r, g.add_constant("ls", random_tensor({5}, rng)), g.add_constant("lb", random_tensor({5}, rng))});
  r = op(Op::softmax, {r}, attrs({{"axis", std::int64_t{1}}}));
  const int sl = op(Op::slice, {r}, attrs({{"starts", Ints{-1, 4}}, {"ends", Ints{std::numeric_limits<std::int64_t>::min(), 0}},
                                           {"axes", Ints{1, 2}}, {"steps", Ints{-2, -3}}}));
  int p = op(Op::pad, {sl}, attrs({{"pads", Ints{0, 1, 0, 0, 1, -1}}, {"mode", std::int64_t{kPadReflect}}}));
  p = op(Op::unsqueeze, {p}, attrs({{"axes", Ints{0}}}));
  p = op(Op::squeeze, {p}, attrs({{"axes", Ints{0}}}));
  const int rs = op(Op::reduce_sum, {p}, attrs({{"axes", Ints{2}}, {"keepdims", std::int64_t{0}}}));
  const int rm = op(Op::reduce_mean, {p}, attrs({{"axes", Ints{2}}, {"keepdims", std::int64_t{0}}}));
  const int rx = op(Op::reduce_max, {p}, attrs({{"axes", Ints{2}}, {"keepdims", std::int64_t{0}}}));
  int e = op(Op::concat, {rs, rm, rx}, attrs({{"axis", std::int64_t{1}}}));
  for (Op unary : {Op::sin, Op::atan, Op::asinh, Op::cos, Op::tan, Op::sinh, Op::cosh, Op::floor, Op::ceil, Op::round,
                   Op::sign, Op::sigmoid, Op::tanh, Op::exp, Op::abs, Op::sqrt, Op::log, Op::erf, Op::neg,
                   Op::identity, Op::relu, Op::hard_sigmoid, Op::reciprocal}) {
    e = op(unary, {e});
  }
  const int two = g.add_constant("two", Tensor({}, 2.0f));
  e = op(Op::pow, {op(Op::max, {op(Op::min, {op(Op::div, {op(Op::sub, {op(Op::mul, {e, two}), two}), two}), two}), e}), two});
  g.add_output(e);
  g.add_output(x);   // an input as an output
  g.add_output(e);   // repeated
  g.add_output(two); // a constant
  // An int32 input indexing a table: written as the model's integer input, cast for the gather.
  const int ids = g.add_input("ids", {3});
  set_input_domain(g.mutable_node(ids), InputDomain{static_cast<std::int64_t>(ElemType::int32), 6});
  g.add_output(op(Op::gather, {g.add_constant("table", random_tensor({6, 2}, rng)), ids}, attrs({{"axis", std::int64_t{0}}})));
  return g;
}

TEST(OnnxWriter, RoundTripKeepsTheGraphAndItsValues) {
  std::mt19937_64 rng(7);
  Graph g = every_operator(rng);
  collage::Status inferred = infer_shapes(g);
  ASSERT_TRUE(inferred.ok()) << inferred.message();
  collage::Result<std::string> bytes = write_onnx_bytes(g);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  collage::Result<Graph> back = read_onnx_bytes(*bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  // Same operators, names, canonical attributes and shapes, in the same order (the reader drops
  // identities).
  std::vector<const Node*> ours, theirs;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::input && n.op != Op::constant && n.op != Op::identity) ours.push_back(&n);
  }
  for (const Node& n : back->nodes()) {
    if (n.op != Op::input && n.op != Op::constant) theirs.push_back(&n);
  }
  ASSERT_EQ(ours.size(), theirs.size());
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i]->op, theirs[i]->op) << ours[i]->name;
    EXPECT_EQ(ours[i]->name, theirs[i]->name);
    EXPECT_EQ(ours[i]->attrs, theirs[i]->attrs) << ours[i]->name << ": " << ours[i]->attrs.to_string() << " vs "
                                                << theirs[i]->attrs.to_string();
    EXPECT_EQ(ours[i]->shape, theirs[i]->shape) << ours[i]->name;
  }
  ASSERT_EQ(back->outputs().size(), 5u);
  ASSERT_EQ(back->inputs().size(), 2u);
  EXPECT_EQ(back->node(back->inputs()[1]).attrs, g.node(g.inputs()[1]).attrs);
  const std::vector<Tensor> inputs = {random_tensor({1, 4, 6, 6}, rng), Tensor({3}, std::vector<float>{-1, 5, 0})};
  auto expected = evaluate(g, inputs);
  auto actual = evaluate(*back, inputs);
  ASSERT_TRUE(expected.ok() && actual.ok());
  for (std::size_t k = 0; k < expected->size(); ++k) {
    std::string worst;
    EXPECT_TRUE(all_close((*actual)[k], (*expected)[k], 0, 0, &worst)) << "output " << k << ": " << worst;
  }
}

TEST(OnnxWriter, IndicesExpandedFromAnIntegerInputReadBackAsIndices) {
  // Token ids expanded over two rows (an Expand reads as a product with ones), then gathered.
  OnnxModel m;
  m.inputs.push_back(float_value_info("ids", {1, 3}));
  m.inputs.back().type = ElemType::int64;
  OnnxTensor rows;
  rows.type = ElemType::int64;
  rows.shape = {2};
  rows.ints = {2, 3};
  m.initializers.emplace_back("rows", rows);
  m.initializers.emplace_back("table", from_float32(Tensor({4, 1}, std::vector<float>{10, 11, 12, 13})));
  m.nodes.push_back(OnnxNode{"Expand", {"ids", "rows"}, {"e"}, {}, "e", ""});
  m.nodes.push_back(OnnxNode{"Gather", {"table", "e"}, {"y"}, {}, "y", ""});
  m.outputs.push_back(float_value_info("y", {2, 3, 1}));
  collage::Result<std::string> bytes = serialize(m);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  collage::Result<Graph> g = read_onnx_bytes(*bytes);
  ASSERT_TRUE(g.ok()) << g.error().message;
  collage::Result<std::string> written = write_onnx_bytes(*g);
  ASSERT_TRUE(written.ok()) << written.error().message;
  collage::Result<Graph> back = read_onnx_bytes(*written);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->node(back->inputs()[0]).attrs, g->node(g->inputs()[0]).attrs);
  auto out = evaluate(*back, {Tensor({1, 3}, std::vector<float>{3, -4, 1})});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ((*out)[0].data, (std::vector<float>{13, 10, 11, 13, 10, 11}));
}

TEST(OnnxWriter, WritesAFileAndRefusesABadGraph) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  g.add_output(*g.add_op(Op::relu, {x}, {}, "r"));
  const std::string path = ::testing::TempDir() + "/tc_writer_test.onnx";
  ASSERT_TRUE(write_onnx(g, path).ok());
  collage::Result<Graph> back = read_onnx(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->node(back->outputs()[0]).name, "r");
  std::remove(path.c_str());
  Graph bad;
  const int y = bad.add_input("y", {2, 3});
  bad.add_output(*bad.add_op(Op::add, {y, bad.add_constant("c", Tensor({4}))}));
  collage::Result<std::string> refused = write_onnx_bytes(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("do not broadcast"), std::string::npos);
}

}  // namespace
}  // namespace tc
