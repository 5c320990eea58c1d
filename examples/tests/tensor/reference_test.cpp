#include "tensor/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tensor/shape_inference.hpp"

namespace tc {
namespace {

using Ints = std::vector<std::int64_t>;
using Floats = std::vector<float>;

/// `op` with `attrs` applied to `args`; fails the test on an error.
Tensor run(Op op, const std::vector<Tensor>& args, Attributes attrs = {}, Shape target = {}) {
  Node node;
  node.op = op;
  node.name = "n";
  node.attrs = std::move(attrs);
  node.shape = std::move(target);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : args) ptrs.push_back(&t);
  collage::Result<Tensor> r = evaluate_node(node, ptrs);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : Tensor{};
}

std::string error_of(Op op, const std::vector<Tensor>& args, Attributes attrs = {}) {
  Node node;
  node.op = op;
  node.name = "n";
  node.attrs = std::move(attrs);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : args) ptrs.push_back(&t);
  collage::Result<Tensor> r = evaluate_node(node, ptrs);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

/// 0, 1, 2, ... in `shape`.
Tensor iota(Shape shape, float start = 0.0f) {
  Tensor t(std::move(shape));
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = start + static_cast<float>(i);
  return t;
}

void expect_tensor(const Tensor& actual, const Shape& shape, const Floats& values, float tol = 1e-6f) {
  ASSERT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.data.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(actual.data[i])) << "at " << i;
    } else {
      EXPECT_NEAR(actual.data[i], values[i], tol) << "at " << i;
    }
  }
}

TEST(Reference, UnaryElementwise) {
  const Tensor x({4}, Floats{-2.0f, -0.5f, 0.0f, 1.5f});
  expect_tensor(run(Op::relu, {x}), {4}, {0, 0, 0, 1.5f});
  expect_tensor(run(Op::neg, {x}), {4}, {2, 0.5f, 0, -1.5f});
  expect_tensor(run(Op::abs, {x}), {4}, {2, 0.5f, 0, 1.5f});
  expect_tensor(run(Op::identity, {x}), {4}, x.data);
  expect_tensor(run(Op::sigmoid, {x}), {4}, {0.11920292f, 0.37754067f, 0.5f, 0.81757448f});
  expect_tensor(run(Op::tanh, {x}), {4}, {-0.96402758f, -0.46211716f, 0.0f, 0.90514825f});
  expect_tensor(run(Op::erf, {x}), {4}, {-0.99532227f, -0.52049988f, 0.0f, 0.96610515f});
  expect_tensor(run(Op::exp, {x}), {4}, {0.13533528f, 0.60653066f, 1.0f, 4.48168907f});
  expect_tensor(run(Op::sin, {x}), {4}, {-0.90929743f, -0.47942554f, 0.0f, 0.99749499f});
  expect_tensor(run(Op::cosh, {x}), {4}, {3.76219569f, 1.12762597f, 1.0f, 2.35240962f});
  expect_tensor(run(Op::atan, {x}), {4}, {-1.10714872f, -0.46364761f, 0.0f, 0.98279372f});
  expect_tensor(run(Op::floor, {x}), {4}, {-2, -1, 0, 1});
  expect_tensor(run(Op::ceil, {x}), {4}, {-2, 0, 0, 2});
  expect_tensor(run(Op::sign, {x}), {4}, {-1, -1, 0, 1});
  const Tensor halves({6}, Floats{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f});
  expect_tensor(run(Op::round, {halves}), {6}, {-2, -2, 0, 0, 2, 2});  // to even
  const Tensor p({3}, Floats{0.25f, 1.0f, 4.0f});
  expect_tensor(run(Op::sqrt, {p}), {3}, {0.5f, 1, 2});
  expect_tensor(run(Op::log, {p}), {3}, {-1.38629436f, 0, 1.38629436f});
  expect_tensor(run(Op::reciprocal, {p}), {3}, {4, 1, 0.25f});
  Attributes clip;
  clip.set("min", -1.0);
  clip.set("max", 1.0);
  expect_tensor(run(Op::clip, {x}, clip), {4}, {-1, -0.5f, 0, 1});
  expect_tensor(run(Op::clip, {x}), {4}, x.data);  // no bounds: unchanged
  expect_tensor(run(Op::leaky_relu, {x}), {4}, {-0.02f, -0.005f, 0, 1.5f});
  Attributes leaky;
  leaky.set("alpha", 0.5);
  expect_tensor(run(Op::leaky_relu, {x}, leaky), {4}, {-1, -0.25f, 0, 1.5f});
  // HardSigmoid defaults alpha 0.2, beta 0.5: max(0, min(1, 0.2x + 0.5)).
  expect_tensor(run(Op::hard_sigmoid, {Tensor({3}, Floats{-5, 1, 5})}), {3}, {0, 0.7f, 1});
}

TEST(Reference, GatherPicksRowsAndCountsNegativeIndicesFromTheEnd) {
  Attributes axis1;
  axis1.set("axis", std::int64_t{1});
  const Tensor data({2, 3}, Floats{1, 2, 3, 4, 5, 6});
  const Tensor picked = run(Op::gather, {data, Tensor({2, 2}, Floats{2, -3, -1, 1})}, axis1);
  EXPECT_EQ(picked.shape, (Shape{2, 2, 2}));
  EXPECT_EQ(picked.data, (Floats{3, 1, 3, 2, 6, 4, 6, 5}));
  const Tensor row = run(Op::gather, {data, Tensor({}, Floats{-1})});
  EXPECT_EQ(row.shape, (Shape{3}));
  EXPECT_EQ(row.data, (Floats{4, 5, 6}));
  EXPECT_EQ(error_of(Op::gather, {data, Tensor({2}, Floats{0, 3})}, axis1),
            "node 'n' (Gather): index 3.000000 (element 1) is out of range for an axis of 3");
  EXPECT_NE(error_of(Op::gather, {data, Tensor({1}, Floats{std::nanf("")})}).find("is out of range"), std::string::npos);
}

TEST(Reference, BinaryOpsBroadcast) {
  const Tensor a = iota({2, 3});          // [[0,1,2],[3,4,5]]
  const Tensor row({3}, Floats{10, 20, 30});
  expect_tensor(run(Op::add, {a, row}), {2, 3}, {10, 21, 32, 13, 24, 35});
  const Tensor col({2, 1}, Floats{1, 2});
  const Tensor r13({1, 3}, Floats{1, 2, 3});
  expect_tensor(run(Op::mul, {col, r13}), {2, 3}, {1, 2, 3, 2, 4, 6});
  expect_tensor(run(Op::sub, {row, col}), {2, 3}, {9, 19, 29, 8, 18, 28});
  expect_tensor(run(Op::div, {a, Tensor({}, Floats{2})}), {2, 3}, {0, 0.5f, 1, 1.5f, 2, 2.5f});
  expect_tensor(run(Op::pow, {Tensor({3}, Floats{-2, 2, 4}), Tensor({3}, Floats{3, 0.5f, -1})}), {3},
                {-8, 1.41421356f, 0.25f});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor u({3}, Floats{1, nan, 5});
  const Tensor v({3}, Floats{2, 0, nan});
  expect_tensor(run(Op::max, {u, v}), {3}, {2, nan, nan});
  expect_tensor(run(Op::min, {u, v}), {3}, {1, nan, nan});
}

TEST(Reference, Conv2dWithPadsStridesAndBias) {
  const Tensor x = iota({1, 1, 3, 3});  // [[0,1,2],[3,4,5],[6,7,8]]
  const Tensor w({1, 1, 2, 2}, 1.0f);
  // Valid 2x2 sums.
  expect_tensor(run(Op::conv, {x, w}), {1, 1, 2, 2}, {8, 12, 20, 24});
  Attributes a;
  a.set("pads", Ints{1, 1, 1, 1});
  a.set("strides", Ints{2, 2});
  // Padded 5x5, windows at rows/cols -1 and 1: (-1,-1)->0, (-1,1)->1+2, (1,-1)->3+6, (1,1)->4+5+7+8.
  expect_tensor(run(Op::conv, {x, w, Tensor({1}, Floats{100})}, a), {1, 1, 2, 2}, {100, 103, 109, 124});
}

TEST(Reference, ConvDilationsAndAsymmetricPads) {
  const Tensor x = iota({1, 1, 4, 4});
  Tensor w({1, 1, 2, 2}, Floats{1, 10, 100, 1000});
  Attributes a;
  a.set("dilations", Ints{2, 2});
  // Taps at (r,c), (r,c+2), (r+2,c), (r+2,c+2).
  // (0,0): 0 + 10*2 + 100*8 + 1000*10 = 10820; (0,1): 1 + 30 + 900 + 11000 = 11931
  // (1,0): 4 + 60 + 1200 + 14000 = 15264; (1,1): 5 + 70 + 1300 + 15000 = 16375
  expect_tensor(run(Op::conv, {x, w}, a), {1, 1, 2, 2}, {10820, 11931, 15264, 16375});
  Attributes p;
  p.set("pads", Ints{0, 1, 0, 0});  // one column of zeros on the left only
  const Tensor ones({1, 1, 1, 2}, 1.0f);
  expect_tensor(run(Op::conv, {iota({1, 1, 1, 3}), ones}, p), {1, 1, 1, 3}, {0, 1, 3});
}

TEST(Reference, ConvGroupsAndDepthwise) {
  // Two channels, group 2: each output channel sees its own input channel.
  Tensor x({1, 2, 2, 2}, Floats{1, 2, 3, 4, 10, 20, 30, 40});
  Tensor w({2, 1, 1, 1}, Floats{2, -1});
  Attributes a;
  a.set("group", 2);
  expect_tensor(run(Op::conv, {x, w}, a), {1, 2, 2, 2}, {2, 4, 6, 8, -10, -20, -30, -40});
  // Group 1 over the same input sums the channels.
  Tensor w1({1, 2, 1, 1}, Floats{1, 1});
  expect_tensor(run(Op::conv, {x, w1}), {1, 1, 2, 2}, {11, 22, 33, 44});
  // Group 2 with two outputs per group: outputs 0,1 read channel 0, outputs 2,3 channel 1.
  Tensor w4({4, 1, 1, 1}, Floats{1, 2, 3, 4});
  expect_tensor(run(Op::conv, {x, w4}, a), {1, 4, 2, 2},
                {1, 2, 3, 4, 2, 4, 6, 8, 30, 60, 90, 120, 40, 80, 120, 160});
}

TEST(Reference, Conv1dAnd3d) {
  Tensor w1({1, 1, 3}, Floats{1, 0, -1});
  expect_tensor(run(Op::conv, {Tensor({1, 1, 5}, Floats{1, 2, 4, 8, 16}), w1}), {1, 1, 3}, {-3, -6, -12});
  const Tensor x = iota({1, 1, 2, 2, 3});
  expect_tensor(run(Op::conv, {x, Tensor({1, 1, 2, 2, 2}, 1.0f)}), {1, 1, 1, 1, 2},
                {0 + 1 + 3 + 4 + 6 + 7 + 9 + 10, 1 + 2 + 4 + 5 + 7 + 8 + 10 + 11});
  EXPECT_NE(error_of(Op::conv, {iota({1, 1, 1, 1, 1, 1}), Tensor({1, 1, 1, 1, 1, 1}, 1.0f)}).find("1 to 3 spatial"),
            std::string::npos);
}

TEST(Reference, GemmTransposesAlphaBetaAndBroadcastC) {
  const Tensor a = iota({2, 3}, 1);  // [[1,2,3],[4,5,6]]
  const Tensor b = iota({3, 2}, 1);  // [[1,2],[3,4],[5,6]]
  // A*B = [[22,28],[49,64]]
  expect_tensor(run(Op::gemm, {a, b}), {2, 2}, {22, 28, 49, 64});
  Attributes t;
  t.set("transA", 1);
  t.set("transB", 1);
  // A^T [3,2] x B^T [2,3] = [[1,4],[2,5],[3,6]] x [[1,3,5],[2,4,6]]
  expect_tensor(run(Op::gemm, {a, b}, t), {3, 3}, {9, 19, 29, 12, 26, 40, 15, 33, 51});
  Attributes s;
  s.set("alpha", 0.5);
  s.set("beta", 2.0);
  expect_tensor(run(Op::gemm, {a, b, Tensor({2}, Floats{1, -1})}, s), {2, 2}, {13, 12, 26.5f, 30});
  expect_tensor(run(Op::gemm, {a, b, Tensor({2, 1}, Floats{1, -1})}, s), {2, 2}, {13, 16, 22.5f, 30});
  expect_tensor(run(Op::gemm, {a, b, Tensor({}, Floats{1})}), {2, 2}, {23, 29, 50, 65});
}

TEST(Reference, MatMulBatchedBroadcastAndVectors) {
  const Tensor a = iota({2, 3}, 1);
  const Tensor b = iota({3, 2}, 1);
  expect_tensor(run(Op::matmul, {a, b}), {2, 2}, {22, 28, 49, 64});
  const Tensor v({3}, Floats{1, 0, -1});
  expect_tensor(run(Op::matmul, {v, b}), {2}, {-4, -4});
  expect_tensor(run(Op::matmul, {a, v}), {2}, {-2, -2});
  expect_tensor(run(Op::matmul, {v, v}), {}, {2});
  // [2,1,2,3] x [3,3,2]: batch broadcast to [2,3]; batch (i,j) = A[i] x B[j].
  Tensor a4({2, 1, 2, 3}, Floats{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0});  // A0 picks rows 0,1; A1 rows 2,0
  const Tensor b3 = iota({3, 3, 2});
  Tensor y = run(Op::matmul, {a4, b3});
  ASSERT_EQ(y.shape, (Shape{2, 3, 2, 2}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      const int rows[2][2] = {{0, 1}, {2, 0}};
      for (int m = 0; m < 2; ++m) {
        for (int n = 0; n < 2; ++n) {
          EXPECT_EQ(y.data[static_cast<std::size_t>(((i * 3 + j) * 2 + m) * 2 + n)],
                    b3.data[static_cast<std::size_t>((j * 3 + rows[i][m]) * 2 + n)]);
        }
      }
    }
  }
}

TEST(Reference, MaxPoolCeilModeDilationsAndPads) {
  const Tensor x = iota({1, 1, 4, 4});
  Attributes a;
  a.set("kernel_shape", Ints{2, 2});
  a.set("strides", Ints{2, 2});
  expect_tensor(run(Op::max_pool, {x}, a), {1, 1, 2, 2}, {5, 7, 13, 15});
  Attributes c = a;
  c.set("ceil_mode", 1);
  expect_tensor(run(Op::max_pool, {iota({1, 1, 5, 5})}, c), {1, 1, 3, 3}, {6, 8, 9, 16, 18, 19, 21, 23, 24});
  Attributes d;
  d.set("kernel_shape", Ints{2, 2});
  d.set("dilations", Ints{2, 2});
  expect_tensor(run(Op::max_pool, {x}, d), {1, 1, 2, 2}, {10, 11, 14, 15});
  // Padding never wins, even over negative values.
  Attributes p;
  p.set("kernel_shape", Ints{2});
  p.set("pads", Ints{1, 1});
  expect_tensor(run(Op::max_pool, {Tensor({1, 1, 2}, Floats{-3, -5})}, p), {1, 1, 3}, {-3, -3, -5});
}

TEST(Reference, AveragePoolCountIncludePadAndCeilMode) {
  const Tensor x = iota({1, 1, 3, 3}, 1);  // [[1,2,3],[4,5,6],[7,8,9]]
  Attributes a;
  a.set("kernel_shape", Ints{2, 2});
  a.set("pads", Ints{1, 1, 1, 1});
  a.set("strides", Ints{2, 2});
  // Windows at -1 and 1: (-1,-1) {1}; (-1,1) {2,3}; (1,-1) {4,7}; (1,1) {5,6,8,9}.
  expect_tensor(run(Op::average_pool, {x}, a), {1, 1, 2, 2}, {1, 2.5f, 5.5f, 7});
  Attributes inc = a;
  inc.set("count_include_pad", 1);
  expect_tensor(run(Op::average_pool, {x}, inc), {1, 1, 2, 2}, {0.25f, 1.25f, 2.75f, 7});
  // Ceil mode without pads: the last window is cut by the input's end; both counts are the taps
  // inside the (unpadded) input.
  Attributes c;
  c.set("kernel_shape", Ints{2, 2});
  c.set("strides", Ints{2, 2});
  c.set("ceil_mode", 1);
  expect_tensor(run(Op::average_pool, {x}, c), {1, 1, 2, 2}, {3, 4.5f, 7.5f, 9});
  c.set("count_include_pad", 1);
  expect_tensor(run(Op::average_pool, {x}, c), {1, 1, 2, 2}, {3, 4.5f, 7.5f, 9});
}

TEST(Reference, GlobalPools) {
  const Tensor x = iota({1, 2, 2, 2});
  expect_tensor(run(Op::global_average_pool, {x}), {1, 2, 1, 1}, {1.5f, 5.5f});
  expect_tensor(run(Op::global_max_pool, {x}), {1, 2, 1, 1}, {3, 7});
}

TEST(Reference, BatchNormalization) {
  const Tensor x({1, 2, 2}, Floats{1, 3, 10, 20});
  const Tensor scale({2}, Floats{2, 1});
  const Tensor bias({2}, Floats{1, 0});
  const Tensor mean({2}, Floats{2, 10});
  const Tensor var({2}, Floats{4, 100});
  Attributes a;
  a.set("epsilon", 0.0);
  // (x - mean) / sqrt(var) * scale + bias.
  expect_tensor(run(Op::batch_norm, {x, scale, bias, mean, var}, a), {1, 2, 2}, {0, 2, 0, 1});
}

TEST(Reference, LayerNormalization) {
  const Tensor x({2, 2}, Floats{1, 3, 5, 5});
  Attributes a;
  a.set("epsilon", 0.0);
  const Tensor scale({2}, Floats{2, 1});
  expect_tensor(run(Op::layer_norm, {x, scale, Tensor({2}, Floats{0, 10})}, a), {2, 2},
                {-2, 11, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()});
  Attributes b;  // default epsilon 1e-5, over both axes
  b.set("axis", 0);
  const float inv = static_cast<float>(1.0 / std::sqrt(1.25 + 1e-5));  // mean 3.5, variance 1.25
  expect_tensor(run(Op::layer_norm, {iota({2, 2}, 2), Tensor({}, Floats{1})}, b), {2, 2},
                {-1.5f * inv, -0.5f * inv, 0.5f * inv, 1.5f * inv}, 1e-5f);
}

TEST(Reference, SoftmaxOverOneAxis) {
  const float ln3 = std::log(3.0f);
  const Tensor x({2, 2}, Floats{0, ln3, 1000, 1000});
  expect_tensor(run(Op::softmax, {x}), {2, 2}, {0.25f, 0.75f, 0.5f, 0.5f});
  Attributes a;
  a.set("axis", 0);
  expect_tensor(run(Op::softmax, {Tensor({2, 2}, Floats{0, 0, ln3, 0})}, a), {2, 2}, {0.25f, 0.5f, 0.75f, 0.5f});
}

TEST(Reference, Reductions) {
  const Tensor x = iota({2, 3});
  Attributes a;
  a.set("axes", Ints{1});
  a.set("keepdims", 0);
  expect_tensor(run(Op::reduce_sum, {x}, a), {2}, {3, 12});
  expect_tensor(run(Op::reduce_max, {x}, a), {2}, {2, 5});
  expect_tensor(run(Op::reduce_mean, {x}), {1, 1}, {2.5f});
  Attributes b;
  b.set("axes", Ints{-2});
  expect_tensor(run(Op::reduce_mean, {x}, b), {1, 3}, {1.5f, 2.5f, 3.5f});
}

TEST(Reference, ReshapesKeepTheData) {
  const Tensor x = iota({2, 3});
  Attributes r;
  r.set("shape", Ints{3, -1});
  expect_tensor(run(Op::reshape, {x}, r), {3, 2}, x.data);
  expect_tensor(run(Op::reshape, {x}, {}, {6}), {6}, x.data);  // canonical: the target is the node's shape
  Attributes f;
  f.set("axis", 0);
  expect_tensor(run(Op::flatten, {x}, f), {1, 6}, x.data);
  Attributes u;
  u.set("axes", Ints{0, 3});
  expect_tensor(run(Op::unsqueeze, {x}, u), {1, 2, 3, 1}, x.data);
  expect_tensor(run(Op::squeeze, {iota({1, 2, 1, 3})}), {2, 3}, x.data);
}

TEST(Reference, TransposeAndConcat) {
  const Tensor x = iota({2, 3});
  expect_tensor(run(Op::transpose, {x}), {3, 2}, {0, 3, 1, 4, 2, 5});
  Attributes p;
  p.set("perm", Ints{1, 2, 0});
  // y[j][k][i] = x[i][j][k] for x of [2,1,3].
  expect_tensor(run(Op::transpose, {iota({2, 1, 3})}, p), {1, 3, 2}, {0, 3, 1, 4, 2, 5});
  Attributes c;
  c.set("axis", 1);
  expect_tensor(run(Op::concat, {x, Tensor({2, 1}, Floats{-1, -2})}, c), {2, 4}, {0, 1, 2, -1, 3, 4, 5, -2});
  c.set("axis", -2);
  expect_tensor(run(Op::concat, {x, Tensor({1, 3}, Floats{7, 8, 9}), x}, c), {5, 3},
                {0, 1, 2, 3, 4, 5, 7, 8, 9, 0, 1, 2, 3, 4, 5});
}

TEST(Reference, SliceWithNegativeSteps) {
  const Tensor x = iota({2, 5});
  Attributes a;
  a.set("starts", Ints{-1});
  a.set("ends", Ints{std::numeric_limits<std::int64_t>::min()});
  a.set("axes", Ints{1});
  a.set("steps", Ints{-2});
  expect_tensor(run(Op::slice, {x}, a), {2, 3}, {4, 2, 0, 9, 7, 5});
  Attributes b;
  b.set("starts", Ints{1, 1});
  b.set("ends", Ints{100, 4});
  expect_tensor(run(Op::slice, {x}, b), {1, 3}, {6, 7, 8});
  Attributes e;  // empty: start past the end
  e.set("starts", Ints{3});
  e.set("ends", Ints{1});
  e.set("axes", Ints{1});
  expect_tensor(run(Op::slice, {x}, e), {2, 0}, {});
}

TEST(Reference, PadModesAndNegativePads) {
  const Tensor x({1, 3}, Floats{1, 2, 3});
  Attributes c;
  c.set("pads", Ints{0, 2, 0, 1});
  c.set("value", 9.0);
  expect_tensor(run(Op::pad, {x}, c), {1, 6}, {9, 9, 1, 2, 3, 9});
  Attributes r = c;
  r.set("mode", kPadReflect);
  expect_tensor(run(Op::pad, {x}, r), {1, 6}, {3, 2, 1, 2, 3, 2});
  Attributes e = c;
  e.set("mode", kPadEdge);
  expect_tensor(run(Op::pad, {x}, e), {1, 6}, {1, 1, 1, 2, 3, 3});
  Attributes n;
  n.set("pads", Ints{0, -1, 1, 1});  // crop the first column, add a row below and a column right
  expect_tensor(run(Op::pad, {x}, n), {2, 3}, {2, 3, 0, 0, 0, 0});
  // Negative pads crop first; edge then repeats the border of what is left.
  Attributes m;
  m.set("pads", Ints{0, 2, 0, -1});
  m.set("mode", kPadEdge);
  expect_tensor(run(Op::pad, {x}, m), {1, 4}, {1, 1, 1, 2});
  Attributes rm = m;
  rm.set("mode", kPadReflect);
  rm.set("pads", Ints{0, 1, 0, -1});
  expect_tensor(run(Op::pad, {iota({1, 4})}, rm), {1, 4}, {1, 0, 1, 2});
}

TEST(Reference, EvaluateRunsAGraphAndChecksInputs) {
  Graph g;
  const int x = g.add_input("x", {2, 2});
  const int w = g.add_constant("w", Tensor({2, 2}, Floats{1, 2, 3, 4}));
  const int mm = *g.add_op(Op::matmul, {x, w});
  const int r = *g.add_op(Op::relu, {*g.add_op(Op::sub, {mm, g.add_constant("c", Tensor({}, Floats{5}))})});
  g.add_output(r);
  g.add_output(mm);
  auto out = evaluate(g, {Tensor({2, 2}, Floats{1, 0, 0, 1})});
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->size(), 2u);
  expect_tensor((*out)[0], {2, 2}, {0, 0, 0, 0});
  expect_tensor((*out)[1], {2, 2}, {1, 2, 3, 4});
  auto all = evaluate_all(g, {Tensor({2, 2}, Floats{1, 1, 1, 1})});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), g.size());
  expect_tensor((*all)[static_cast<std::size_t>(mm)], {2, 2}, {4, 6, 4, 6});
  expect_tensor((*all)[static_cast<std::size_t>(r)], {2, 2}, {0, 1, 0, 1});

  auto bad_shape = evaluate(g, {Tensor({2, 3})});
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_NE(bad_shape.error().message.find("input 'x' must be a tensor of shape [2,2]"), std::string::npos);
  auto bad_count = evaluate(g, {});
  ASSERT_FALSE(bad_count.ok());
  EXPECT_EQ(bad_count.error().code, collage::ErrorCode::invalid_argument);
  Tensor malformed({2, 2});
  malformed.data.pop_back();
  EXPECT_FALSE(evaluate(g, {malformed}).ok());
}

TEST(Reference, ErrorsNameTheNode) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  g.add_output(*g.add_op(Op::add, {x, g.add_constant("c", Tensor({2}))}, {}, "bad_add"));
  auto out = evaluate(g, {Tensor({2, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("node 'bad_add' (Add)"), std::string::npos) << out.error().message;
  EXPECT_NE(error_of(Op::matmul, {iota({2, 3}), iota({2, 3})}).find("inner dimensions"), std::string::npos);
  EXPECT_NE(error_of(Op::input, {}).find("add_input"), std::string::npos);
}

}  // namespace
}  // namespace tc
