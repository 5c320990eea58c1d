#include "tensor/shape_inference.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "tensor/op_attrs.hpp"

namespace tc {
namespace {

/// Adds `op` over `inputs` and infers the graph; returns the status.
collage::Status add_and_infer(Graph& g, Op op, std::vector<int> inputs, Attributes attrs = {}, int* out = nullptr) {
  auto n = g.add_op(op, std::move(inputs), std::move(attrs));
  if (!n.ok()) return n.error();
  if (out != nullptr) *out = *n;
  return infer_shapes(g);
}

Shape shape_of(Op op, std::vector<Shape> in, Attributes attrs = {}) {
  Graph g;
  std::vector<int> ids;
  for (std::size_t k = 0; k < in.size(); ++k) ids.push_back(g.add_input("x" + std::to_string(k), in[k]));
  int n = -1;
  collage::Status s = add_and_infer(g, op, ids, std::move(attrs), &n);
  EXPECT_TRUE(s.ok()) << s.message();
  return n >= 0 ? g.node(n).shape : Shape{};
}

std::string error_of(Op op, std::vector<Shape> in, Attributes attrs = {}) {
  Graph g;
  std::vector<int> ids;
  for (std::size_t k = 0; k < in.size(); ++k) ids.push_back(g.add_input("x" + std::to_string(k), in[k]));
  collage::Status s = add_and_infer(g, op, ids, std::move(attrs));
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(ShapeInference, BroadcastingBinaryOps) {
  EXPECT_EQ(shape_of(Op::add, {{2, 3, 4}, {4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of(Op::mul, {{2, 1, 4}, {3, 1}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of(Op::div, {{}, {5}}), (Shape{5}));
  EXPECT_NE(error_of(Op::sub, {{2, 3}, {4}}).find("do not broadcast"), std::string::npos);
}

TEST(ShapeInference, ConvWithStridesPadsDilationsAndGroups) {
  Attributes a;
  a.set("strides", Ints{2, 2});
  a.set("pads", Ints{3, 3, 3, 3});
  EXPECT_EQ(shape_of(Op::conv, {{1, 3, 224, 224}, {64, 3, 7, 7}, {64}}, a), (Shape{1, 64, 112, 112}));
  Attributes dw;
  dw.set("group", 32);
  dw.set("pads", Ints{1, 1, 1, 1});
  EXPECT_EQ(shape_of(Op::conv, {{1, 32, 15, 15}, {32, 1, 3, 3}}, dw), (Shape{1, 32, 15, 15}));
  Attributes dil;
  dil.set("dilations", Ints{2, 2});
  EXPECT_EQ(shape_of(Op::conv, {{1, 1, 7, 7}, {1, 1, 3, 3}}, dil), (Shape{1, 1, 3, 3}));
  Attributes same;
  same.set("auto_pad", kSameUpper);
  same.set("strides", Ints{2, 2});
  Graph g;
  int x = g.add_input("x", {1, 1, 5, 5});
  int w = g.add_input("w", {1, 1, 2, 2});
  int n = -1;
  ASSERT_TRUE(add_and_infer(g, Op::conv, {x, w}, same, &n).ok());
  EXPECT_EQ(g.node(n).shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(conv_attrs(g.node(n)).pads, (Ints{0, 0, 1, 1}));
  EXPECT_FALSE(g.node(n).attrs.has("auto_pad"));
  EXPECT_NE(error_of(Op::conv, {{1, 3, 8, 8}, {4, 4, 3, 3}}).find("input channels 3"), std::string::npos);
}

TEST(ShapeInference, InferenceIsIdempotent) {
  Graph g;
  int x = g.add_input("x", {2, 3, 8, 8});
  Attributes pool;
  pool.set("kernel_shape", Ints{3, 3});
  pool.set("strides", Ints{2, 2});
  pool.set("ceil_mode", 1);
  int p = *g.add_op(Op::max_pool, {x}, pool);
  Attributes sl;
  sl.set("starts", Ints{0, 1});
  sl.set("ends", Ints{std::numeric_limits<std::int64_t>::max(), -1});
  sl.set("axes", Ints{1, 3});
  int s = *g.add_op(Op::slice, {p}, sl);
  Attributes rs;
  rs.set("shape", Ints{0, -1});
  int r = *g.add_op(Op::reshape, {s}, rs);
  int t = *g.add_op(Op::transpose, {r});
  ASSERT_TRUE(infer_shapes(g).ok());
  const Graph once = g;
  ASSERT_TRUE(infer_shapes(g).ok());
  for (int n : {p, s, r, t}) {
    EXPECT_EQ(g.node(n).shape, once.node(n).shape) << g.node(n).name;
    EXPECT_EQ(g.node(n).attrs, once.node(n).attrs) << g.node(n).name;
  }
  EXPECT_EQ(g.node(p).shape, (Shape{2, 3, 4, 4}));
  EXPECT_EQ(g.node(s).shape, (Shape{2, 3, 4, 2}));
  EXPECT_EQ(g.node(r).shape, (Shape{2, 24}));
  EXPECT_EQ(g.node(t).shape, (Shape{24, 2}));
}

TEST(ShapeInference, MatMulBroadcastsBatchesAndDropsVectorDims) {
  EXPECT_EQ(shape_of(Op::matmul, {{2, 1, 3, 4}, {5, 4, 6}}), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(shape_of(Op::matmul, {{4}, {4, 6}}), (Shape{6}));
  EXPECT_EQ(shape_of(Op::matmul, {{3, 4}, {4}}), (Shape{3}));
  EXPECT_NE(error_of(Op::matmul, {{3, 4}, {5, 6}}).find("inner dimensions"), std::string::npos);
}

TEST(ShapeInference, ReductionsAndNormalisations) {
  Attributes r;
  r.set("axes", Ints{-1, 1});
  r.set("keepdims", 0);
  EXPECT_EQ(shape_of(Op::reduce_mean, {{2, 3, 4}}, r), (Shape{2}));
  EXPECT_EQ(shape_of(Op::reduce_sum, {{2, 3, 4}}), (Shape{1, 1, 1}));
  EXPECT_EQ(shape_of(Op::layer_norm, {{2, 5, 8}, {8}, {8}}), (Shape{2, 5, 8}));
  EXPECT_EQ(shape_of(Op::batch_norm, {{2, 4, 3, 3}, {4}, {4}, {4}, {4}}), (Shape{2, 4, 3, 3}));
  EXPECT_NE(error_of(Op::batch_norm, {{2, 4, 3, 3}, {3}, {4}, {4}, {4}}).find("must be [4]"), std::string::npos);
}

TEST(ShapeInference, DataMovement) {
  Attributes f;
  f.set("axis", 2);
  EXPECT_EQ(shape_of(Op::flatten, {{2, 3, 4, 5}}, f), (Shape{6, 20}));
  Attributes u;
  u.set("axes", Ints{0, 3});
  EXPECT_EQ(shape_of(Op::unsqueeze, {{2, 3}}, u), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(shape_of(Op::squeeze, {{1, 2, 1, 3}}), (Shape{2, 3}));
  Attributes c;
  c.set("axis", -1);
  EXPECT_EQ(shape_of(Op::concat, {{2, 3}, {2, 5}}, c), (Shape{2, 8}));
  Attributes p;
  p.set("pads", Ints{0, 1, 0, 2});
  EXPECT_EQ(shape_of(Op::pad, {{2, 3}}, p), (Shape{2, 6}));
  Attributes neg;
  neg.set("starts", Ints{-1});
  neg.set("ends", Ints{std::numeric_limits<std::int64_t>::min()});
  neg.set("steps", Ints{-1});
  EXPECT_EQ(shape_of(Op::slice, {{5}}, neg), (Shape{5}));
}

TEST(ShapeInference, ErrorsNameTheNodeAndOp) {
  Graph g;
  int x = g.add_input("x", {2, 3});
  ASSERT_TRUE(g.add_op(Op::reshape, {x}, {}, "bad_reshape").ok());
  collage::Status s = infer_shapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), collage::ErrorCode::invalid_argument);
  EXPECT_EQ(s.message().rfind("node 'bad_reshape' (Reshape): ", 0), 0u) << s.message();
}

TEST(ShapeInference, SliceEdgeCasesGiveInRangeShapes) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  Attributes rev;  // a negative step over an empty dimension is empty
  rev.set("starts", Ints{-1});
  rev.set("ends", Ints{kMin});
  rev.set("axes", Ints{0});
  rev.set("steps", Ints{-1});
  EXPECT_EQ(shape_of(Op::slice, {{0, 3}}, rev), (Shape{0, 3}));
  Attributes huge;  // the most negative step takes the start alone
  huge.set("starts", Ints{-1});
  huge.set("ends", Ints{kMin});
  huge.set("steps", Ints{kMin});
  EXPECT_EQ(shape_of(Op::slice, {{5}}, huge), (Shape{1}));
  // A canonical slice (no ends) whose shape reads past the input is rejected.
  Graph g;
  int x = g.add_input("x", {3});
  Attributes canonical;
  canonical.set("starts", Ints{2});
  canonical.set("steps", Ints{1});
  int n = *g.add_op(Op::slice, {x}, canonical, "s");
  g.mutable_node(n).shape = {2};
  collage::Status s = infer_shapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("leave the input [3]"), std::string::npos) << s.message();
  g.mutable_node(n).shape = {1};
  EXPECT_TRUE(infer_shapes(g).ok());
}

TEST(ShapeInference, PadCropsBeforePadding) {
  Attributes over;
  over.set("pads", Ints{-5, 4});
  EXPECT_NE(error_of(Op::pad, {{3}}, over).find("pads remove more than dimension 0"), std::string::npos);
  Attributes reflect;  // cropping 2 of 3 leaves 1 element, too few to reflect 2
  reflect.set("pads", Ints{2, -2});
  reflect.set("mode", kPadReflect);
  EXPECT_NE(error_of(Op::pad, {{3}}, reflect).find("reflect padding"), std::string::npos);
  reflect.set("pads", Ints{1, -1});
  EXPECT_EQ(shape_of(Op::pad, {{3}}, reflect), (Shape{3}));
}

TEST(ShapeInference, ReshapeTargetTooLargeIsAnError) {
  Attributes a;  // the copied dims and the explicit ones multiply past int64
  a.set("shape", Ints{0, 0, 1 << 21, 1 << 21});
  EXPECT_NE(error_of(Op::reshape, {{1 << 20, 1 << 20}}, a).find("is too large"), std::string::npos);
}

TEST(Graph, AddOpChecksArityAndInputs) {
  Graph g;
  int x = g.add_input("x", {2});
  EXPECT_FALSE(g.add_op(Op::add, {x}).ok());
  EXPECT_FALSE(g.add_op(Op::relu, {x + 5}).ok());
  EXPECT_TRUE(g.add_op(Op::relu, {x}).ok());
}

}  // namespace
}  // namespace tc
