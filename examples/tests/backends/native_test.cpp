// The native backend runs every operator of the IR alone, checked against the reference
// interpreter on random shapes (odd sizes, padding, strides, groups, broadcasting).

#include "backends/native/native_backend.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "native_testing.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc {
namespace {

using native_testing::graph_matches_reference;
using native_testing::matches_reference;
using testing::GraphBuilder;
using testing::pick;
using Ints = std::vector<std::int64_t>;

/// A parameter or a constant of shape `s`, at random.
int operand(GraphBuilder& b, const Shape& s) { return pick(b.rng(), 0, 1) != 0 ? b.input(s) : b.weight(s); }

/// `op` over `inputs`, marked an output of the graph.
void output_op(GraphBuilder& b, Op op, std::vector<int> inputs, Attributes attrs = {}) {
  b.output(b.op(op, std::move(inputs), std::move(attrs)));
}

/// A random shape of `rank` with dims in [lo, hi].
Shape random_shape(std::mt19937_64& rng, std::size_t rank, std::int64_t lo = 1, std::int64_t hi = 7) {
  Shape s;
  for (std::size_t d = 0; d < rank; ++d) s.push_back(pick(rng, lo, hi));
  return s;
}

/// `s` with some dimensions set to 1 and some leading ones dropped (a numpy-broadcastable operand).
Shape broadcastable(const Shape& s, std::mt19937_64& rng) {
  Shape out;
  const auto drop = static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(s.size())));
  for (std::size_t d = drop; d < s.size(); ++d) out.push_back(pick(rng, 0, 2) == 0 ? 1 : s[d]);
  return out;
}

TEST(NativeBackend, NameSpecAndDevice) {
  NativeBackend backend;
  EXPECT_EQ(backend.name(), "native");
  EXPECT_EQ(backend.device(), DeviceKind::cpu);
  EXPECT_EQ(backend.spec().target, "native");
}

TEST(NativeBackend, UnaryOpsOnRandomShapes) {
  const std::vector<Op> ops = {Op::identity, Op::relu, Op::sigmoid, Op::tanh, Op::exp, Op::neg, Op::abs,
                               Op::clip, Op::leaky_relu, Op::hard_sigmoid, Op::erf, Op::sin, Op::cos,
                               Op::tan, Op::atan, Op::sinh, Op::cosh, Op::asinh, Op::floor, Op::ceil, Op::round,
                               Op::sign};
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    for (Op op : ops) {
      GraphBuilder t(seed);
      const Shape s = random_shape(t.rng(), static_cast<std::size_t>(pick(t.rng(), 0, 4)), 1, 40);
      Attributes a;
      if (op == Op::clip) {
        a.set("min", -0.3);
        a.set("max", 0.6);
      }
      output_op(t, op, {t.input(s)}, a);
      EXPECT_TRUE(graph_matches_reference(t.graph(), seed, -4.0f, 4.0f)) << op_name(op) << " " << to_string(s);
    }
  }
  // Operators with a narrower domain, on inputs inside it.
  struct Domain {
    std::vector<Op> ops;
    float lo, hi;
  };
  for (const Domain& d : {Domain{{Op::log, Op::sqrt, Op::reciprocal}, 0.1f, 3.0f},
                          Domain{{Op::asin, Op::acos, Op::atanh}, -0.95f, 0.95f}, Domain{{Op::acosh}, 1.0f, 4.0f}}) {
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      for (Op op : d.ops) {
        GraphBuilder t(seed);
        output_op(t, op, {t.input(random_shape(t.rng(), 3, 1, 30))});
        EXPECT_TRUE(graph_matches_reference(t.graph(), seed, d.lo, d.hi)) << op_name(op);
      }
    }
  }
}

TEST(NativeBackend, BinaryOpsWithBroadcasting) {
  const std::vector<Op> ops = {Op::add, Op::sub, Op::mul, Op::div, Op::max, Op::min, Op::pow};
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    for (Op op : ops) {
      GraphBuilder t(seed);
      const Shape s = random_shape(t.rng(), static_cast<std::size_t>(pick(t.rng(), 1, 5)));
      Shape a = s;
      Shape b = broadcastable(s, t.rng());
      if (pick(t.rng(), 0, 1) != 0) std::swap(a, b);
      if (pick(t.rng(), 0, 3) == 0) a = broadcastable(a, t.rng());  // both broadcast
      auto out = broadcast_shapes(a, b);
      ASSERT_TRUE(out.has_value());
      const int x = operand(t, a);
      const int y = pick(t.rng(), 0, 4) == 0 ? t.constant(Tensor(Shape{}, 0.75f)) : operand(t, b);
      output_op(t, op, {x, y});
      const bool positive = op == Op::pow || op == Op::div;
      EXPECT_TRUE(graph_matches_reference(t.graph(), seed, positive ? 0.2f : -2.0f, 2.0f))
          << op_name(op) << " " << to_string(a) << " " << to_string(b);
    }
  }
}

TEST(NativeBackend, ScalarExponentsOfPow) {
  for (float e : {2.0f, 0.5f, 1.0f, -1.0f, 3.0f, -0.5f}) {
    GraphBuilder t(1);
    const int x = t.input({3, 17});
    output_op(t, Op::pow, {x, t.constant(Tensor(Shape{1}, e))});
    EXPECT_TRUE(graph_matches_reference(t.graph(), 3, 0.1f, 3.0f)) << e;
    GraphBuilder r(2);
    output_op(r, Op::pow, {r.constant(Tensor(Shape{}, e + 4.0f)), r.input({5, 3})});
    EXPECT_TRUE(graph_matches_reference(r.graph(), 3, -1.0f, 1.0f)) << e;
  }
}

TEST(NativeBackend, ReshapeLikeOps) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    GraphBuilder t(seed);
    const Shape s = random_shape(t.rng(), 4, 1, 6);
    const int x = t.input(s);
    Attributes flat;
    flat.set("axis", pick(t.rng(), 0, 4));
    output_op(t, Op::flatten, {x}, flat);
    Attributes re;
    re.set("shape", Ints{s[0] * s[1], -1, s[3]});
    output_op(t, Op::reshape, {x}, re);
    Attributes un;
    un.set("axes", Ints{0, 3});
    output_op(t, Op::unsqueeze, {x}, un);
    output_op(t, Op::squeeze, {x});
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(s);
  }
}

TEST(NativeBackend, TransposeAndSlice) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 1, 5));
    const Shape s = random_shape(t.rng(), rank, 1, 9);
    const int x = t.input(s);
    Ints perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), t.rng());
    Attributes tp;
    tp.set("perm", perm);
    output_op(t, Op::transpose, {x}, tp);
    Ints starts, ends, steps;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t step = pick(t.rng(), 0, 2) == 0 ? -pick(t.rng(), 1, 3) : pick(t.rng(), 1, 3);
      steps.push_back(step);
      starts.push_back(step > 0 ? pick(t.rng(), 0, s[d] - 1) : pick(t.rng(), -1, s[d] - 1));
      ends.push_back(step > 0 ? pick(t.rng(), 1, s[d] + 2) : -s[d] - 5);
    }
    Attributes sl;
    sl.set("starts", starts);
    sl.set("ends", ends);
    sl.set("steps", steps);
    output_op(t, Op::slice, {x}, sl);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(s);
  }
}

TEST(NativeBackend, PadInEveryMode) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 1, 4));
    const Shape s = random_shape(t.rng(), rank, 2, 7);
    const int mode = static_cast<int>(pick(t.rng(), 0, 2));
    Ints pads;
    for (std::size_t k = 0; k < 2 * rank; ++k) {
      const std::int64_t dim = s[k % rank];
      pads.push_back(mode == kPadConstant ? pick(t.rng(), -1, 3) : pick(t.rng(), 0, std::min<std::int64_t>(2, dim - 1)));
    }
    Attributes a;
    a.set("pads", pads);
    a.set("mode", mode);
    a.set("value", 0.5);
    output_op(t, Op::pad, {t.input(s)}, a);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(s) << " mode " << mode;
  }
}

TEST(NativeBackend, ConcatAlongEveryAxis) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 1, 4));
    const Shape s = random_shape(t.rng(), rank, 1, 6);
    const auto axis = static_cast<std::size_t>(pick(t.rng(), 0, static_cast<std::int64_t>(rank) - 1));
    std::vector<int> pieces;
    const auto count = pick(t.rng(), 1, 4);
    for (std::int64_t k = 0; k < count; ++k) {
      Shape p = s;
      p[axis] = pick(t.rng(), 0, 4);
      pieces.push_back(operand(t, p));
    }
    Attributes a;
    a.set("axis", static_cast<std::int64_t>(axis));
    output_op(t, Op::concat, pieces, a);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(s) << " axis " << axis;
  }
}

TEST(NativeBackend, ConvolutionsWithStridesPadsDilationsAndGroups) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    GraphBuilder t(seed);
    const auto spatial = static_cast<std::size_t>(seed % 7 == 0 ? 1 : seed % 11 == 0 ? 3 : 2);
    const std::int64_t group = pick(t.rng(), 0, 2) == 0 ? pick(t.rng(), 1, 4) : 1;
    const bool depthwise = pick(t.rng(), 0, 3) == 0;
    const std::int64_t cg = depthwise ? 1 : pick(t.rng(), 1, 9);
    const std::int64_t mg = depthwise ? pick(t.rng(), 1, 2) : pick(t.rng(), 1, 13);
    const std::int64_t groups = depthwise ? pick(t.rng(), 1, 8) : group;
    Shape x{pick(t.rng(), 1, 2), cg * groups};
    Shape w{mg * groups, cg};
    Ints strides, pads(2 * spatial), dilations;
    for (std::size_t d = 0; d < spatial; ++d) {
      const std::int64_t k = pick(t.rng(), 1, spatial == 3 ? 3 : 5);
      const std::int64_t dil = pick(t.rng(), 1, 2);
      const std::int64_t extent = dil * (k - 1) + 1;
      w.push_back(k);
      dilations.push_back(dil);
      strides.push_back(pick(t.rng(), 1, 3));
      pads[d] = pick(t.rng(), 0, k - 1);
      pads[d + spatial] = pick(t.rng(), 0, k - 1);
      x.push_back(std::max<std::int64_t>(extent - pads[d] - pads[d + spatial], 1) + pick(t.rng(), 0, spatial == 3 ? 4 : 12));
    }
    Attributes a;
    a.set("group", groups);
    a.set("strides", strides);
    a.set("pads", pads);
    a.set("dilations", dilations);
    std::vector<int> in{t.input(x), t.weight(w)};
    if (pick(t.rng(), 0, 1) != 0) in.push_back(operand(t, {w[0]}));
    output_op(t, Op::conv, in, a);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(x) << " w " << to_string(w) << " group " << groups;
  }
}

TEST(NativeBackend, ConvolutionsLargeEnoughToBlock) {
  // Channel and pixel counts past the GEMM's cache blocks (k > 256, n > 512, m > 96).
  GraphBuilder t(5);
  Attributes a;
  a.set("pads", Ints{1, 1, 1, 1});
  output_op(t, Op::conv, {t.input({1, 40, 25, 23}), t.weight({100, 40, 3, 3}), t.weight({100})}, a);
  EXPECT_TRUE(graph_matches_reference(t.graph(), 5, -1.0f, 1.0f, 1e-4, 1e-3));
  GraphBuilder p(6);
  output_op(p, Op::conv, {p.input({2, 300, 9, 7}), p.weight({97, 300, 1, 1})});
  EXPECT_TRUE(graph_matches_reference(p.graph(), 6, -1.0f, 1.0f, 1e-4, 1e-3));
}

TEST(NativeBackend, OneByOneConvolutionsWithPadding) {
  // Stride 1 and no padding before: still not pointwise when padding after makes the output larger.
  for (const Ints& pads : {Ints{0, 0, 1, 2}, Ints{1, 0, 0, 0}, Ints{0, 0, 0, 0}}) {
    GraphBuilder b(7);
    Attributes a;
    a.set("pads", pads);
    output_op(b, Op::conv, {b.input({1, 6, 5, 4}), b.weight({3, 6, 1, 1})}, a);
    EXPECT_TRUE(graph_matches_reference(b.graph(), 7)) << to_string(pads);
  }
}

TEST(NativeBackend, GemmWithTranspositionsAlphaBetaAndBroadcastC) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    GraphBuilder t(seed);
    const std::int64_t m = pick(t.rng(), 1, 30), n = pick(t.rng(), 1, 30), k = pick(t.rng(), 0, 40);
    const bool ta = pick(t.rng(), 0, 1) != 0, tb = pick(t.rng(), 0, 1) != 0;
    Attributes a;
    a.set("trans_a", ta ? 1 : 0);
    a.set("trans_b", tb ? 1 : 0);
    if (pick(t.rng(), 0, 1) != 0) a.set("alpha", 0.5);
    if (pick(t.rng(), 0, 1) != 0) a.set("beta", pick(t.rng(), 0, 1) != 0 ? 0.0 : 2.0);
    std::vector<int> in{operand(t, ta ? Shape{k, m} : Shape{m, k}), operand(t, tb ? Shape{n, k} : Shape{k, n})};
    const std::vector<Shape> cs{{n}, {m, 1}, {1, n}, {m, n}, {1}, {}};
    const auto c = pick(t.rng(), 0, 6);
    if (c < 6) in.push_back(operand(t, cs[static_cast<std::size_t>(c)]));
    output_op(t, Op::gemm, in, a);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << m << "x" << n << "x" << k;
  }
}

TEST(NativeBackend, MatMulBatchedAndBroadcasting) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    GraphBuilder t(seed);
    const std::int64_t m = pick(t.rng(), 1, 20), n = pick(t.rng(), 1, 20), k = pick(t.rng(), 1, 30);
    Shape a{m, k};
    Shape b{k, n};
    const auto batch = random_shape(t.rng(), static_cast<std::size_t>(pick(t.rng(), 0, 2)), 1, 3);
    // Each side's batch dims are the batch's or 1; one side may lack some leading ones.
    const auto drop = static_cast<std::size_t>(pick(t.rng(), 0, static_cast<std::int64_t>(batch.size())));
    const bool drop_a = pick(t.rng(), 0, 1) != 0;
    for (std::size_t d = batch.size(); d-- > 0;) {
      if (!(drop_a && d < drop)) a.insert(a.begin(), pick(t.rng(), 0, 2) == 0 ? 1 : batch[d]);
      if (!(!drop_a && d < drop)) b.insert(b.begin(), pick(t.rng(), 0, 2) == 0 ? 1 : batch[d]);
    }
    if (pick(t.rng(), 0, 5) == 0) a = {k};
    if (pick(t.rng(), 0, 5) == 0) b = {k};
    output_op(t, Op::matmul, {operand(t, a), operand(t, b)});
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(a) << " x " << to_string(b);
  }
}

TEST(NativeBackend, PoolingWithPadsCeilModeAndCountIncludePad) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    GraphBuilder t(seed);
    const auto spatial = static_cast<std::size_t>(pick(t.rng(), 1, 3));
    const bool max = pick(t.rng(), 0, 1) != 0;
    Shape x{pick(t.rng(), 1, 2), pick(t.rng(), 1, 3)};
    Ints kernel, strides, pads(2 * spatial), dilations;
    for (std::size_t d = 0; d < spatial; ++d) {
      const std::int64_t k = pick(t.rng(), 1, 4);
      const std::int64_t dil = max ? pick(t.rng(), 1, 2) : 1;
      kernel.push_back(k);
      dilations.push_back(dil);
      strides.push_back(pick(t.rng(), 1, 3));
      const std::int64_t extent = dil * (k - 1) + 1;
      pads[d] = pick(t.rng(), 0, extent - 1);
      pads[d + spatial] = pick(t.rng(), 0, extent - 1);
      x.push_back(extent + pick(t.rng(), 0, 8));
    }
    Attributes a;
    a.set("kernel_shape", kernel);
    a.set("strides", strides);
    a.set("pads", pads);
    if (max) a.set("dilations", dilations);
    a.set("ceil_mode", pick(t.rng(), 0, 1));
    if (!max) a.set("count_include_pad", pick(t.rng(), 0, 1));
    output_op(t, max ? Op::max_pool : Op::average_pool, {t.input(x)}, a);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(x) << " " << a.to_string();
  }
}

TEST(NativeBackend, GlobalPoolsReductionsSoftmax) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 3, 5));
    const Shape s = random_shape(t.rng(), rank, 1, 9);
    const int x = t.input(s);
    output_op(t, Op::global_average_pool, {x});
    output_op(t, Op::global_max_pool, {x});
    for (Op op : {Op::reduce_sum, Op::reduce_mean, Op::reduce_max}) {
      Ints axes;
      for (std::size_t d = 0; d < rank; ++d) {
        if (pick(t.rng(), 0, 1) != 0) axes.push_back(static_cast<std::int64_t>(d) - (pick(t.rng(), 0, 1) != 0 ? static_cast<std::int64_t>(rank) : 0));
      }
      Attributes a;
      if (!axes.empty()) a.set("axes", axes);
      a.set("keepdims", pick(t.rng(), 0, 1));
      output_op(t, op, {x}, a);
    }
    Attributes sm;
    sm.set("axis", pick(t.rng(), -static_cast<std::int64_t>(rank), static_cast<std::int64_t>(rank) - 1));
    output_op(t, Op::softmax, {x}, sm);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed, -3.0f, 3.0f)) << to_string(s);
  }
}

TEST(NativeBackend, BatchNormWithConstantOrRuntimeParameters) {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 2, 5));
    const Shape s = random_shape(t.rng(), rank, 1, 7);
    const bool constants = seed % 2 == 0;
    std::vector<int> in{t.input(s)};
    for (int k = 0; k < 4; ++k) {
      const Shape c{s[1]};
      if (k == 3) {
        in.push_back(constants ? t.weight(c, 0.5f, 2.0f) : t.input(c));
      } else {
        in.push_back(constants ? t.weight(c) : t.input(c));
      }
    }
    Attributes a;
    a.set("epsilon", 1e-3);
    output_op(t, Op::batch_norm, in, a);
    // Runtime variances must be positive: inputs uniform in [0.5, 2).
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed, 0.5f, 2.0f)) << to_string(s);
  }
}

TEST(NativeBackend, LayerNormOverTrailingAxes) {
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 1, 4));
    const Shape s = random_shape(t.rng(), rank, 1, 40);
    const auto axis = pick(t.rng(), 0, static_cast<std::int64_t>(rank) - 1);
    Shape normalized(s.begin() + axis, s.end());
    Shape scale = normalized;
    if (pick(t.rng(), 0, 1) != 0 && !scale.empty()) scale.erase(scale.begin());
    std::vector<int> in{t.input(s), operand(t, scale)};
    if (pick(t.rng(), 0, 1) != 0) in.push_back(operand(t, normalized));
    Attributes a;
    a.set("axis", axis);
    output_op(t, Op::layer_norm, in, a);
    EXPECT_TRUE(graph_matches_reference(t.graph(), seed)) << to_string(s) << " axis " << axis;
  }
}

TEST(NativeBackend, GatherAlongEveryAxisAtRunTimeIndices) {
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    GraphBuilder t(seed);
    const auto rank = static_cast<std::size_t>(pick(t.rng(), 1, 4));
    const Shape s = random_shape(t.rng(), rank, 1, 9);
    const auto axis = static_cast<std::size_t>(pick(t.rng(), 0, static_cast<std::int64_t>(rank) - 1));
    const Shape index_shape = random_shape(t.rng(), static_cast<std::size_t>(pick(t.rng(), 0, 2)), 1, 5);
    const int indices = t.input(index_shape);
    Attributes a;
    a.set("axis", static_cast<std::int64_t>(axis));
    // The gathered rows feed an epilogue; the table is a parameter or a constant.
    const int data = operand(t, s);
    t.output(t.op(Op::relu, {t.op(Op::gather, {data, indices}, a)}));
    Graph g = t.graph();
    ASSERT_TRUE(infer_shapes(g).ok());
    const Function function = whole_model_function(g);
    std::vector<Tensor> inputs = testing::random_inputs(function.graph, seed);
    for (std::size_t k = 0; k < function.graph.inputs().size(); ++k) {
      if (function.graph.node(function.graph.inputs()[k]).name != g.node(indices).name) continue;
      for (float& v : inputs[k].data) v = static_cast<float>(pick(t.rng(), -s[axis], s[axis] - 1));
    }
    EXPECT_TRUE(matches_reference(function, inputs)) << to_string(s) << " axis " << axis << " indices " << to_string(index_shape);
  }
}

TEST(NativeBackend, GatherRowsOfIndicesOutOfRangeAreNaN) {
  GraphBuilder t(1);
  const int data = t.input({3, 2});
  const int indices = t.input({4});
  t.output(t.op(Op::gather, {data, indices}));
  Graph g = t.graph();
  ASSERT_TRUE(infer_shapes(g).ok());
  auto out = native_testing::run_native(whole_model_function(g), {Tensor({3, 2}, {1, 2, 3, 4, 5, 6}),
                                                                  Tensor({4}, {2, 3, -4, std::nanf("")})});
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::vector<float>& y = (*out)[0].data;
  EXPECT_EQ(y[0], 5.0f);
  EXPECT_EQ(y[1], 6.0f);
  for (std::size_t i = 2; i < y.size(); ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
}

TEST(NativeBackend, EmptyTensorsAndScalars) {
  GraphBuilder t(1);
  output_op(t, Op::relu, {t.input({0, 3})});
  output_op(t, Op::add, {t.input({}), t.input({})});
  output_op(t, Op::matmul, {t.input({2, 0}), t.input({0, 3})});
  EXPECT_TRUE(graph_matches_reference(t.graph(), 1));
}

TEST(NativeBackend, OutputsThatAreParametersOrRepeated) {
  GraphBuilder b;
  const int x = b.input({2, 3});
  const int r = b.op(Op::relu, {x});
  EXPECT_TRUE(graph_matches_reference(b.done({r, x, r}), 2));
}

TEST(NativeBackend, OnThreadsEachKernelSharesItsWorkAndComputesTheSameBits) {
  // Each graph is large enough for three parts, and each way a stage is shared: convolutions by
  // output columns, by channels (few columns), depthwise by channels; pooling by planes; GEMMs by
  // columns, by rows, by batches and with few rows; elementwise loops and epilogues by points;
  // reductions along the innermost axis by results (with and without an epilogue); softmax (along
  // the innermost axis or not) and layer norm by rows.
  auto conv = [](const Shape& x, const Shape& w, std::int64_t group, bool bias_relu) {
    GraphBuilder b(1);
    Attributes a;
    a.set("pads", Ints{1, 1, 1, 1});
    a.set("group", group);
    std::vector<int> in{b.input(x), b.weight(w)};
    if (bias_relu) in.push_back(b.weight({w[0]}));
    int y = b.op(Op::conv, in, a);
    if (bias_relu) y = b.op(Op::relu, {b.op(Op::add, {y, b.input({w[0], 1, 1})})});
    b.output(y);
    return b.graph();
  };
  auto matmul = [](const Shape& a, const Shape& c) {
    GraphBuilder b(2);
    b.output(b.op(Op::matmul, {b.input(a), b.weight(c)}));
    return b.graph();
  };
  std::vector<Graph> graphs{conv({1, 32, 28, 28}, {48, 32, 3, 3}, 1, true), conv({1, 128, 7, 7}, {96, 128, 3, 3}, 1, false),
                            conv({1, 64, 56, 56}, {64, 1, 3, 3}, 64, false), matmul({128, 256}, {256, 384}),
                            matmul({512, 256}, {256, 64}), matmul({6, 64, 64}, {6, 64, 64}), matmul({2, 1024}, {1024, 1024})};
  {
    GraphBuilder b(3);
    Attributes a;
    a.set("kernel_shape", Ints{3, 3});
    a.set("strides", Ints{2, 2});
    a.set("pads", Ints{1, 1, 1, 1});
    b.output(b.op(Op::max_pool, {b.input({1, 64, 56, 56})}, a));
    graphs.push_back(b.graph());
  }
  {
    GraphBuilder b(4);
    const int x = b.input({512, 300});
    b.output(b.op(Op::tanh, {b.op(Op::add, {x, b.input({300})})}));
    Attributes last;
    last.set("axes", Ints{1});
    last.set("keepdims", 1);
    const int mean = b.op(Op::reduce_mean, {x}, last);
    b.output(mean);
    b.output(b.op(Op::sub, {x, mean}));
    b.output(b.op(Op::global_average_pool, {b.input({1, 512, 28, 28})}));
    graphs.push_back(b.graph());
  }
  {
    GraphBuilder b(5);
    Attributes rows;
    rows.set("axis", std::int64_t{1});
    b.output(b.op(Op::softmax, {b.input({512, 128})}, rows));
    b.output(b.op(Op::softmax, {b.input({8, 64, 128})}, rows));
    b.output(b.op(Op::layer_norm, {b.input({512, 256}), b.weight({256}), b.weight({256})}, rows));
    graphs.push_back(b.graph());
  }
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    Graph& g = graphs[i];
    ASSERT_TRUE(infer_shapes(g).ok()) << i;
    const Function function = whole_model_function(g);
    std::mt19937_64 rng(i);
    const std::vector<Tensor> inputs = testing::random_inputs(function.graph, rng, -1.0f, 1.0f);
    auto one = native_testing::run_native(function, inputs, 1);
    const std::size_t before = parallel_runs();
    auto three = native_testing::run_native(function, inputs, 3);
    ASSERT_TRUE(one.ok() && three.ok()) << i;
    if (cpu_threads_available()) {
      EXPECT_GT(parallel_runs(), before) << "graph " << i << " ran on one thread";
    }
    for (std::size_t k = 0; k < one->size(); ++k) EXPECT_EQ((*one)[k].data, (*three)[k].data) << "graph " << i << " output " << k;
    EXPECT_TRUE(native_testing::matches_reference(function, inputs, 1e-4, 1e-3)) << i;
  }
  EXPECT_EQ(NativeBackend(loops::kFusionMaxDepth, 3).configuration(), cpu_threads_available() ? "threads=3" : "");
  EXPECT_EQ(NativeBackend().configuration(), "");
}

TEST(NativeBackend, RefusesOtherDevicesAndTooManySpatialDims) {
  GraphBuilder b;
  const int x = b.input({1, 1, 3, 3, 3, 3});
  const Graph g = b.done(b.op(Op::conv, {x, b.constant(Tensor({1, 1, 1, 1, 1, 1}, 1.0f))}));
  CpuDevice cpu;
  auto kernel = NativeBackend().compile(whole_model_function(g), cpu);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message.find("4 spatial dimensions"), std::string::npos) << kernel.error().message;
}

TEST(NativeBackend, WholeModelsWithSeveralAnchorsRunInStages) {
  // Not a rule candidate: two convolutions and a gemm, lowered to several stages with buffers.
  GraphBuilder b(9);
  const int x = b.input({1, 3, 8, 8});
  Attributes same;
  same.set("pads", Ints{1, 1, 1, 1});
  const int c1 = b.op(Op::conv, {x, b.weight({4, 3, 3, 3})}, same);
  const int r1 = b.op(Op::relu, {c1});
  const int c2 = b.op(Op::conv, {r1, b.weight({4, 4, 3, 3})}, same);
  const int sum = b.op(Op::add, {c2, r1});
  const int pool = b.op(Op::global_average_pool, {sum});
  const int flat = b.op(Op::flatten, {pool});
  const int fc = b.op(Op::gemm, {flat, b.weight({4, 5})});
  EXPECT_TRUE(graph_matches_reference(b.done({fc, r1}), 4));
}

}  // namespace
}  // namespace tc
