// Built only with the onednn backend (oneDNN 2.x found at configure time).
#if TC_HAVE_ONEDNN

#include "backends/onednn/onednn_backend.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <numeric>

#include <collage/rules/pattern_parser.hpp>

#include "backends/onednn/onednn_kernel.hpp"
#include "backends/onednn/onednn_plan.hpp"
#include "backends/onednn/onednn_table.hpp"
#include "library_backends.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc {
namespace {

using testing::conv_attributes;
using testing::gemm_attributes;
using testing::GraphBuilder;
using testing::pick;
using testing::pool_attributes;

const char* const kActivations[] = {"", "_relu", "_clip", "_sigmoid", "_tanh", "_gelu", "_swish"};

int activate(GraphBuilder& b, int y, const std::string& act) {
  if (act == "_relu") return b.op(Op::relu, {y});
  if (act == "_clip") {
    Attributes a;
    a.set("min", 0.0);
    a.set("max", 6.0);
    return b.op(Op::clip, {y}, a);
  }
  if (act == "_sigmoid") return b.op(Op::sigmoid, {y});
  if (act == "_tanh") return b.op(Op::tanh, {y});
  if (act == "_gelu") return b.gelu(y);
  if (act == "_swish") return b.op(Op::mul, {y, b.op(Op::sigmoid, {y})});
  return y;
}

/// The single operator or composite `label` over the whole model matches the reference.
::testing::AssertionResult whole_model_matches(const Graph& model, const std::string& label, std::uint64_t seed,
                                               double rtol = 1e-4, double atol = 1e-4) {
  const std::unique_ptr<Backend> backend = make_onednn_backend();
  return testing::whole_candidate_matches(*backend, model, label, seed, rtol, atol);
}

/// "onednn.conv" alone is a single operator, not a composite.
std::string composite_or_single(const std::string& label, const std::string& anchor) {
  return label == anchor ? "" : label;
}

TEST(OnednnBackend, PatternTableParses) {
  for (const LibraryPattern& entry : onednn::table()) {
    auto parsed = collage::parse_pattern<Graph>(entry.pattern.to_string());
    EXPECT_TRUE(parsed.ok()) << entry.label << ": " << parsed.error().message;
  }
  // conv: 2 x 2 x 7 - 1, dense: 2 x 2 x 2 x 7 - 1, GELU, SiLU, batch norm + relu, 3 layer norms.
  EXPECT_EQ(onednn::table().size(), 27u + 55u + 6u);
}

TEST(OnednnBackend, ThreadLimitSetsOpenMpAndRestoresIt) {
  using Get = int (*)();
  using Set = void (*)(int);
  const auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  const auto set = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  ASSERT_NE(get, nullptr) << "libdnnl loads an OpenMP runtime";
  ASSERT_NE(set, nullptr);
  const int before = get();
  set(3);
  {
    const onednn::ThreadLimit one(1);
    EXPECT_EQ(get(), 1);
  }
  EXPECT_EQ(get(), 3);
  {
    const onednn::ThreadLimit two(2);
    EXPECT_EQ(get(), 2);
  }
  EXPECT_EQ(get(), 3);
  set(before);
}

// Convolutions over 1-3 spatial dims with groups (depthwise included), odd sizes, asymmetric
// padding, strides and dilations, then a bias, a residual sum and an activation as post-ops.
TEST(OnednnBackend, ConvCompositesMatchTheReference) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t spatial = static_cast<std::size_t>(pick(rng, 1, trial % 5 == 0 ? 3 : 2));
    const testing::RandomConv c = testing::random_conv(rng, spatial, 4);
    GraphBuilder b(static_cast<std::uint64_t>(trial));
    int y = c.add_to(b, rng);
    const Shape out = b.shape(y);
    std::string label = "onednn.conv";
    if (pick(rng, 0, 1) == 1) {
      Shape bias(spatial + 1, 1);
      bias[0] = out[1];
      if (pick(rng, 0, 1) == 1) bias.insert(bias.begin(), 1);
      y = b.op(Op::add, {y, b.weight(bias)});
      label += "_bias";
    }
    if (pick(rng, 0, 1) == 1) {
      const int r = b.input(out, "residual");
      y = pick(rng, 0, 1) == 1 ? b.op(Op::add, {y, r}) : b.op(Op::add, {r, y});
      label += "_sum";
    }
    const std::string act = kActivations[pick(rng, 0, 6)];
    b.output(activate(b, y, act));
    EXPECT_TRUE(whole_model_matches(b.done(), composite_or_single(label + act, "onednn.conv"),
                                    static_cast<std::uint64_t>(trial)))
        << "trial " << trial << ": x " << to_string(c.x) << " w " << to_string(c.w) << " group " << c.group << " "
        << label + act;
  }
}

// MatMul (batched, broadcasting, 1-D operands) and Gemm (transposes, alpha, beta, C), then a
// bias, a scale, a sum (a mask broadcast like attention's) and an activation as post-ops.
TEST(OnednnBackend, DenseCompositesMatchTheReference) {
  std::mt19937_64 rng(37);
  for (int trial = 0; trial < 48; ++trial) {
    const std::int64_t m = pick(rng, 1, 9), k = pick(rng, 1, 13), n = pick(rng, 1, 11);
    GraphBuilder b(static_cast<std::uint64_t>(300 + trial));
    int y = 0;
    bool post_binary = true;
    bool gemm_bias = false;
    std::string shapes;
    if (trial % 3 == 0) {
      const bool ta = pick(rng, 0, 1) == 1, tb = pick(rng, 0, 1) == 1;
      const int a = b.input(ta ? Shape{k, m} : Shape{m, k}, "a");
      const int w = pick(rng, 0, 1) == 1 ? b.weight(tb ? Shape{n, k} : Shape{k, n}) : b.input(tb ? Shape{n, k} : Shape{k, n}, "w");
      std::vector<int> inputs{a, w};
      const std::int64_t form = pick(rng, 0, 3);
      if (form > 0) inputs.push_back(b.weight(form == 1 ? Shape{n} : form == 2 ? Shape{m, n} : Shape{m, 1}));
      gemm_bias = form > 0;
      const Attributes attrs = gemm_attributes(ta, tb, trial % 2 == 0 ? 1.0f : 0.5f, trial % 4 == 0 ? 1.0f : -2.0f);
      y = b.op(Op::gemm, inputs, attrs);
      shapes = "gemm ta " + std::to_string(ta) + " tb " + std::to_string(tb) + " C form " + std::to_string(form);
    } else {
      Shape a_shape, b_shape;
      for (std::int64_t d = pick(rng, 0, 2); d > 0; --d) {
        const std::int64_t size = pick(rng, 2, 3), which = pick(rng, 0, 2);
        a_shape.push_back(which == 2 ? 1 : size);
        b_shape.push_back(which == 1 ? 1 : size);
      }
      a_shape.push_back(m), a_shape.push_back(k);
      b_shape.push_back(k), b_shape.push_back(n);
      if (pick(rng, 0, 5) == 0) a_shape = {k}, post_binary = false;
      const int a = b.input(a_shape, "a");
      const int w = pick(rng, 0, 1) == 1 ? b.weight(b_shape) : b.input(b_shape, "b");
      y = b.op(Op::matmul, {a, w});
      shapes = to_string(a_shape) + " x " + to_string(b_shape);
    }
    const Shape out = b.shape(y);
    std::string label = "onednn.dense";
    if (post_binary && !gemm_bias && pick(rng, 0, 1) == 1) {
      const int bias = b.weight(pick(rng, 0, 1) == 1 ? Shape{n} : Shape{1, n});
      y = pick(rng, 0, 1) == 1 ? b.op(Op::add, {y, bias}) : b.op(Op::add, {bias, y});
      label += "_bias";
    }
    if (pick(rng, 0, 2) == 0) {
      y = pick(rng, 0, 1) == 1 ? b.op(Op::div, {y, b.scalar(2.5f)}) : b.op(Op::mul, {b.scalar(0.375f), y});
      label += "_scale";
    }
    if (post_binary && pick(rng, 0, 1) == 1) {
      Shape mask = out;
      for (std::size_t d = 0; d + 1 < mask.size(); ++d) {
        if (pick(rng, 0, 1) == 1) mask[d] = 1;
      }
      y = b.op(Op::add, {y, b.input(mask, "mask")});
      label += "_sum";
    }
    const std::string act = kActivations[pick(rng, 0, 6)];
    b.output(activate(b, y, act));
    EXPECT_TRUE(whole_model_matches(b.done(), composite_or_single(label + act, "onednn.dense"),
                                    static_cast<std::uint64_t>(trial)))
        << "trial " << trial << ": " << shapes << " " << label + act;
  }
}

// A Linear layer on a batch of rows ([B, S, K] by one [K, N] matrix) is one 2-D product of
// [B * S, K] by [K, N], so that oneDNN packs its weights; operands broadcast over some batch dims
// only keep the batched product.
TEST(OnednnBackend, LinearLayersOnBatchesRunAsOneMatrixProduct) {
  struct Case {
    Shape x, w, residual;
    bool folds;
  };
  const Case cases[] = {
      {{2, 5, 7}, {7, 6}, {2, 5, 6}, true},
      {{1, 5, 7}, {7, 6}, {5, 6}, true},
      {{3, 2, 5, 7}, {1, 7, 6}, {1, 1, 1, 6}, true},
      {{2, 5, 7}, {7, 6}, {1, 5, 6}, false},
      {{2, 5, 7}, {2, 7, 6}, {2, 5, 6}, false},
      {{1, 5, 7}, {3, 7, 6}, {3, 5, 6}, false},
  };
  for (const Case& c : cases) {
    GraphBuilder b(11);
    const int mm = b.op(Op::matmul, {b.input(c.x, "x"), b.weight(c.w)});
    const int biased = b.op(Op::add, {mm, b.weight({c.w.back()})});
    const int sum = b.op(Op::add, {biased, b.input(c.residual, "residual")});
    const int act = b.gelu(sum);
    b.output(act);
    const Graph model = b.done();
    const std::string label = "onednn.dense_bias_sum_gelu";
    const std::string shapes = to_string(c.x) + " x " + to_string(c.w) + " + " + to_string(c.residual);
    std::vector<int> nodes;
    for (int n = mm; n <= act; ++n) {
      if (model.node(n).op != Op::constant && model.node(n).op != Op::input) nodes.push_back(n);
    }
    auto plan = onednn::plan(model, LibraryCall{label, nodes});
    ASSERT_TRUE(plan.ok()) << shapes << ": " << plan.error().message;
    const std::size_t rows = static_cast<std::size_t>(product(model.node(act).shape, 0, model.node(act).shape.size() - 1));
    if (c.folds) {
      EXPECT_EQ(plan->dst, (onednn::Dims{static_cast<std::int64_t>(rows), c.w.back()})) << shapes;
      EXPECT_EQ(plan->weights.dims.size(), 2u) << shapes;
    } else {
      EXPECT_EQ(plan->dst, model.node(act).shape) << shapes;
    }
    EXPECT_TRUE(whole_model_matches(model, label, 5)) << shapes;
  }
}

// Regressions of oneDNN 2.6 defects the backend works around.
TEST(OnednnBackend, WorksAroundOneDnnDefects) {
  {
    // brgconv crashes running a sum post-op when a window reads only padding (here the second
    // output row: pads of 2 over a 2-row kernel); such a residual stays a binary post-op.
    GraphBuilder b(1);
    const int x = b.input({2, 1, 6, 1}, "x");
    const int conv = b.op(Op::conv, {x, b.weight({1, 1, 2, 3})}, conv_attributes({2, 1, 2, 1}, {3, 2}, {1, 1}));
    b.output(b.gelu(b.op(Op::add, {conv, b.input(b.shape(conv), "residual")})));
    EXPECT_TRUE(whole_model_matches(b.done(), "onednn.conv_sum_gelu", 1));
  }
  {
    // A second eltwise_linear post-op gets the first one's parameters: Gemm's alpha with a
    // run-time B is oneDNN's output scale instead, so a scale after it is the only linear one.
    GraphBuilder b(2);
    const Attributes attrs = gemm_attributes(true, false, 0.5f);
    const int gemm = b.op(Op::gemm, {b.input({4, 3}, "a"), b.input({4, 5}, "b"), b.weight({3, 1})}, attrs);
    b.output(b.op(Op::div, {gemm, b.scalar(2.5f)}));
    EXPECT_TRUE(whole_model_matches(b.done(), "onednn.dense_scale", 2));
  }
}

TEST(OnednnBackend, PoolingMatchesTheReference) {
  const std::unique_ptr<Backend> made = make_onednn_backend();
  const Backend& backend = *made;
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 48; ++trial) {
    const std::size_t spatial = static_cast<std::size_t>(pick(rng, 1, 3));
    const int kind = static_cast<int>(pick(rng, 0, 3));  // max, average, global average, global max
    const Op op = kind == 0 ? Op::max_pool : kind == 1 ? Op::average_pool : kind == 2 ? Op::global_average_pool : Op::global_max_pool;
    Shape x_shape{pick(rng, 1, 2), pick(rng, 1, 5)};
    std::vector<std::int64_t> kernel, strides, dilations, pads(2 * spatial);
    for (std::size_t d = 0; d < spatial; ++d) {
      kernel.push_back(pick(rng, 1, 3));
      strides.push_back(pick(rng, 1, 3));
      dilations.push_back(op == Op::max_pool ? pick(rng, 1, 2) : 1);
      const std::int64_t extent = dilations.back() * (kernel.back() - 1) + 1;
      pads[d] = pick(rng, 0, extent - 1);
      pads[d + spatial] = pick(rng, 0, extent - 1);
      const std::int64_t lo = std::max<std::int64_t>(1, extent - pads[d] - pads[d + spatial]);
      x_shape.push_back(pick(rng, lo, lo + (spatial == 3 ? 3 : 7)));
    }
    Attributes attrs = pool_attributes(kernel, strides, pads, pick(rng, 0, 1) == 1);
    if (op == Op::max_pool) attrs.set("dilations", dilations);
    if (op == Op::average_pool) attrs.set("count_include_pad", pick(rng, 0, 1));
    GraphBuilder b(static_cast<std::uint64_t>(trial));
    b.output(b.op(op, {b.input(x_shape, "x")}, kind >= 2 ? Attributes{} : attrs));
    const Graph model = b.done();
    const auto functions = testing::candidate_functions(backend, model);
    const std::string what = "trial " + std::to_string(trial) + ": " + std::string(op_name(op)) + " " +
                             to_string(x_shape) + " " + attrs.to_string();
    if (functions.empty()) {
      // The cases declined: average pooling counting padding whose last window (ceil_mode) hangs
      // over the end padding, where oneDNN would count the overhang too; max pooling with a
      // window wholly in the padding, where oneDNN gives the lowest float and ONNX -inf.
      auto plan = onednn::plan(model, LibraryCall{"", {model.outputs()[0]}});
      ASSERT_FALSE(plan.ok()) << what;
      const std::string& why = plan.error().message;
      EXPECT_TRUE(why.find("hangs over") != std::string::npos || why.find("wholly in the padding") != std::string::npos)
          << what << ": " << why;
      continue;
    }
    ASSERT_EQ(functions.size(), 1u) << what;
    EXPECT_TRUE(testing::runs_like_reference(backend, functions[0], static_cast<std::uint64_t>(trial))) << what;
  }
}

TEST(OnednnBackend, NormalisationsMatchTheReference) {
  std::mt19937_64 rng(43);
  for (int trial = 0; trial < 24; ++trial) {
    const std::size_t rank = static_cast<std::size_t>(pick(rng, 2, 4));
    Shape x_shape;
    for (std::size_t d = 0; d < rank; ++d) x_shape.push_back(pick(rng, 1, 7));
    const std::int64_t axis = pick(rng, 1, static_cast<std::int64_t>(rank) - 1);
    const Shape normalized(x_shape.begin() + axis, x_shape.end());
    {
      // LayerNormalization itself, scale and bias of the normalised shape or broadcast to it.
      GraphBuilder b(static_cast<std::uint64_t>(trial));
      Shape scale_shape = normalized;
      if (pick(rng, 0, 1) == 1) scale_shape = {normalized.back()};
      std::vector<int> inputs{b.input(x_shape, "x"), b.weight(scale_shape)};
      if (pick(rng, 0, 1) == 1) inputs.push_back(b.weight(normalized));
      Attributes a;
      a.set("axis", axis - (pick(rng, 0, 1) == 1 ? static_cast<std::int64_t>(rank) : 0));
      a.set("epsilon", 1e-3);
      b.output(b.op(Op::layer_norm, inputs, a));
      EXPECT_TRUE(whole_model_matches(b.done(), "", static_cast<std::uint64_t>(trial)))
          << "trial " << trial << " LayerNormalization " << to_string(x_shape) << " axis " << axis;
    }
    {
      // The decomposed form exporters emit: bare, with a scale, with a scale and a bias.
      GraphBuilder b(static_cast<std::uint64_t>(trial));
      const int form = static_cast<int>(pick(rng, 0, 2));
      const int scale = form >= 1 ? b.weight(normalized) : -1;
      const int bias = form == 2 ? b.weight({normalized.back()}) : -1;
      b.output(b.layer_norm(b.input(x_shape, "x"), normalized.size(), scale, bias));
      const char* labels[] = {"onednn.layer_norm_bare", "onednn.layer_norm_scale", "onednn.layer_norm"};
      EXPECT_TRUE(whole_model_matches(b.done(), labels[form], static_cast<std::uint64_t>(trial)))
          << "trial " << trial << " " << labels[form] << " " << to_string(x_shape) << " axis " << axis;
    }
    {
      // BatchNormalization (inference), alone or with a Relu.
      GraphBuilder b(static_cast<std::uint64_t>(trial));
      const std::int64_t c = x_shape[1];
      int y = b.op(Op::batch_norm, {b.input(x_shape, "x"), b.weight({c}), b.weight({c}), b.weight({c}),
                                    b.weight({c}, 0.25f, 2.0f)});
      const bool relu = pick(rng, 0, 1) == 1;
      if (relu) y = b.op(Op::relu, {y});
      b.output(y);
      EXPECT_TRUE(whole_model_matches(b.done(), relu ? "onednn.batch_norm_relu" : "", static_cast<std::uint64_t>(trial)))
          << "trial " << trial << " BatchNormalization " << to_string(x_shape);
    }
  }
}

TEST(OnednnBackend, SoftmaxReductionsAndTransposesMatchTheReference) {
  const std::unique_ptr<Backend> made = make_onednn_backend();
  const Backend& backend = *made;
  std::mt19937_64 rng(47);
  for (int trial = 0; trial < 32; ++trial) {
    const std::size_t rank = static_cast<std::size_t>(pick(rng, 1, 4));
    Shape x_shape;
    for (std::size_t d = 0; d < rank; ++d) x_shape.push_back(pick(rng, 1, 6));
    {
      GraphBuilder b(static_cast<std::uint64_t>(trial));
      Attributes a;
      a.set("axis", pick(rng, 0, static_cast<std::int64_t>(rank) - 1));
      b.output(b.op(Op::softmax, {b.input(x_shape, "x")}, a));
      EXPECT_TRUE(whole_model_matches(b.done(), "", static_cast<std::uint64_t>(trial)))
          << "trial " << trial << " Softmax " << to_string(x_shape) << " " << a.to_string();
    }
    {
      GraphBuilder b(static_cast<std::uint64_t>(trial));
      std::vector<std::int64_t> axes;
      for (std::size_t d = 0; d < rank; ++d) {
        if (pick(rng, 0, 1) == 1) axes.push_back(static_cast<std::int64_t>(d));
      }
      if (axes.empty()) axes.push_back(pick(rng, 0, static_cast<std::int64_t>(rank) - 1));
      const Op ops[] = {Op::reduce_mean, Op::reduce_sum, Op::reduce_max};
      const Op op = ops[pick(rng, 0, 2)];
      Attributes a;
      a.set("axes", axes);
      a.set("keepdims", pick(rng, 0, 1));
      b.output(b.op(op, {b.input(x_shape, "x")}, a));
      const Graph model = b.done();
      const bool copy = std::all_of(axes.begin(), axes.end(), [&](std::int64_t d) { return x_shape[static_cast<std::size_t>(d)] == 1; });
      const auto functions = testing::candidate_functions(backend, model);
      // Reducing only dims of size 1 is a copy, which oneDNN's reduction refuses: not proposed.
      ASSERT_EQ(functions.size(), copy ? 0u : 1u) << to_string(x_shape) << " " << a.to_string();
      if (!copy) {
        EXPECT_TRUE(testing::runs_like_reference(backend, functions[0], static_cast<std::uint64_t>(trial)))
            << "trial " << trial << " " << op_name(op) << " " << to_string(x_shape) << " " << a.to_string();
      }
    }
    {
      GraphBuilder b(static_cast<std::uint64_t>(trial));
      std::vector<std::int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      Attributes a;
      a.set("perm", perm);
      b.output(b.op(Op::transpose, {b.input(x_shape, "x")}, a));
      EXPECT_TRUE(whole_model_matches(b.done(), "", static_cast<std::uint64_t>(trial)))
          << "trial " << trial << " Transpose " << to_string(x_shape) << " " << a.to_string();
    }
  }
}

TEST(OnednnBackend, EltwiseAndBinaryOperatorsMatchTheReference) {
  std::mt19937_64 rng(53);
  const Op unary[] = {Op::relu, Op::sigmoid, Op::tanh, Op::exp, Op::log, Op::sqrt,
                      Op::abs,  Op::neg,     Op::reciprocal, Op::clip, Op::leaky_relu};
  for (Op op : unary) {
    GraphBuilder b(1);
    Attributes a;
    if (op == Op::clip) a.set("min", -0.5), a.set("max", 0.25);
    if (op == Op::leaky_relu) a.set("alpha", 0.2);
    b.output(b.op(op, {b.input({2, 3, 5}, "x")}, a));
    EXPECT_TRUE(whole_model_matches(b.done(), "", 1)) << op_name(op);
  }
  for (float e : {2.0f, 3.0f, 0.5f, -1.0f}) {
    GraphBuilder b(2);
    b.output(b.op(Op::pow, {b.input({4, 7}, "x"), b.scalar(e)}));
    EXPECT_TRUE(whole_model_matches(b.done(), "", 2)) << "Pow " << e;
  }
  const Op binary[] = {Op::add, Op::sub, Op::mul, Op::div, Op::max, Op::min};
  for (int trial = 0; trial < 36; ++trial) {
    const Op op = binary[trial % 6];
    const std::size_t rank = static_cast<std::size_t>(pick(rng, 1, 4));
    Shape a_shape, b_shape;
    for (std::size_t d = 0; d < rank; ++d) a_shape.push_back(pick(rng, 1, 5));
    for (std::size_t d = static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(rank))); d < rank; ++d) {
      b_shape.push_back(pick(rng, 0, 1) == 1 ? 1 : a_shape[d]);
    }
    GraphBuilder b(static_cast<std::uint64_t>(trial));
    const int x = b.input(a_shape, "a");
    const int y = pick(rng, 0, 1) == 1 ? b.input(b_shape, "b") : b.weight(b_shape);
    // Commutative operators may take the broadcast operand first.
    const bool swap = op != Op::sub && op != Op::div && pick(rng, 0, 1) == 1;
    b.output(swap ? b.op(op, {y, x}) : b.op(op, {x, y}));
    EXPECT_TRUE(whole_model_matches(b.done(), "", static_cast<std::uint64_t>(trial)))
        << "trial " << trial << " " << op_name(op) << " " << to_string(a_shape) << ", " << to_string(b_shape);
  }
}

TEST(OnednnBackend, GeluAndSiluAloneMatchTheReference) {
  {
    GraphBuilder b(1);
    b.output(b.gelu(b.input({3, 5, 7}, "x")));
    EXPECT_TRUE(whole_model_matches(b.done(), "onednn.gelu", 1));
  }
  {
    // The other order exporters write: (x * 0.5) * (1 + erf(x * 1/sqrt 2)).
    GraphBuilder b(2);
    const int x = b.input({4, 9}, "x");
    const int e = b.op(Op::erf, {b.op(Op::mul, {x, b.scalar(0.70710678f)})});
    b.output(b.op(Op::mul, {b.op(Op::mul, {x, b.scalar(0.5f)}), b.op(Op::add, {b.scalar(1.0f), e})}));
    EXPECT_TRUE(whole_model_matches(b.done(), "onednn.gelu", 2));
  }
  {
    GraphBuilder b(3);
    const int x = b.input({2, 8, 3}, "x");
    b.output(b.op(Op::mul, {b.op(Op::sigmoid, {x}), x}));
    EXPECT_TRUE(whole_model_matches(b.done(), "onednn.swish", 3));
  }
}

// The backend's own swish steps (a convolution's trailing swish post-op, a swish alone) on values
// large enough to be split between two threads, plain and blocked.
TEST(OnednnBackend, OwnSwishStepsMatchTheReferenceOnTwoThreads) {
  GraphBuilder b(5);
  const int x = b.input({1, 16, 48, 48}, "x");
  const int y = b.op(Op::conv, {x, b.weight({32, 16, 3, 3}), b.weight({32})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  const int z = activate(b, y, "_swish");
  b.output(activate(b, b.op(Op::add, {activate(b, z, "_relu"), z}), "_swish"));
  const Graph model = b.done();
  for (Layout layout : {Layout::plain, native_blocked_layout()}) {
    const std::size_t before = parallel_runs();
    const testing::CandidateReport report = testing::check_every_candidate(*make_onednn_backend(2, layout), model, 6);
    EXPECT_TRUE(report.failures.empty()) << to_string(layout) << ": " << ::testing::PrintToString(report.failures);
    EXPECT_GT(testing::count_label(report, "onednn.conv_swish"), 0u) << to_string(layout);
    EXPECT_GT(testing::count_label(report, "onednn.swish"), 0u) << to_string(layout);
    if (cpu_threads_available()) {
      EXPECT_GT(parallel_runs(), before) << to_string(layout);
    }
  }
}

// What oneDNN cannot run (or the backend declines) is never proposed; compiling it anyway is an
// error value naming it.
TEST(OnednnBackend, DeclinesWhatItCannotRun) {
  const std::unique_ptr<Backend> made = make_onednn_backend();
  const Backend& backend = *made;
  CpuDevice cpu;
  auto declined = [&](const Graph& model, const std::string& message) {
    EXPECT_TRUE(testing::candidate_functions(backend, model).empty()) << message;
    auto kernel = backend.compile(whole_model_function(model), cpu);
    ASSERT_FALSE(kernel.ok()) << message;
    EXPECT_NE(kernel.error().message.find(message), std::string::npos) << kernel.error().message;
  };
  {
    GraphBuilder b(1);
    b.output(b.op(Op::erf, {b.input({3, 4}, "x")}));
    declined(b.done(), "(Erf) has no oneDNN primitive here");
  }
  {
    // oneDNN's binary broadcasts its second operand only.
    GraphBuilder b(2);
    b.output(b.op(Op::sub, {b.input({1, 4}, "a"), b.input({3, 4}, "b")}));
    declined(b.done(), "broadcasts its first operand [1,4]");
  }
  {
    GraphBuilder b(3);
    b.output(b.op(Op::conv, {b.input({1, 2, 5, 5}, "x"), b.input({3, 2, 3, 3}, "w")}));
    declined(b.done(), "onednn: Conv with weights that are not a constant");
  }
  {
    // Two eltwise post-ops of one algorithm with different parameters: oneDNN 2.6's kernels would
    // apply the first one's parameters to both.
    GraphBuilder b(5);
    Attributes lo, hi;
    lo.set("min", 0.0), lo.set("max", 6.0);
    hi.set("min", -1.0), hi.set("max", 1.0);
    const int mm = b.op(Op::matmul, {b.input({3, 4}, "x"), b.weight({4, 5})});
    const int c1 = b.op(Op::clip, {mm}, lo);
    const int c2 = b.op(Op::clip, {c1}, hi);
    b.output(c2);
    const Graph model = b.done();
    auto plan = onednn::plan(model, LibraryCall{"onednn.dense_clip_clip", {mm, c1, c2}});
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.error().message.find("two eltwise post-ops of one algorithm"), std::string::npos)
        << plan.error().message;
  }
  {
    // Max pooling with a window wholly in the padding: oneDNN gives it the lowest float, ONNX -inf.
    GraphBuilder b(6);
    Attributes attrs = pool_attributes({2, 1}, {3, 2}, {1, 0, 1, 0});
    attrs.set("dilations", std::vector<std::int64_t>{2, 2});
    b.output(b.op(Op::max_pool, {b.input({1, 1, 1, 3}, "x")}, attrs));
    declined(b.done(), "wholly in the padding");
  }
  {
    // Average pooling counting padding, whose ceil_mode window hangs over the end padding.
    GraphBuilder b(4);
    b.output(b.op(Op::average_pool, {b.input({1, 1, 6, 6}, "x")}, pool_attributes({3, 3}, {2, 2}, {1, 1, 1, 1}, true, true)));
    declined(b.done(), "hangs over");
  }
}

// Every candidate on real-ish graphs compiles and matches the reference.
TEST(OnednnBackend, EveryCandidateOfRealGraphsMatchesTheReference) {
  const std::unique_ptr<Backend> made = make_onednn_backend();
  const Backend& backend = *made;
  const testing::CandidateReport cnn = testing::check_every_candidate(backend, testing::conv_bn_relu_block(7), 1);
  EXPECT_TRUE(cnn.failures.empty()) << ::testing::PrintToString(cnn.failures);
  EXPECT_EQ(cnn.matched, cnn.candidates);
  for (const char* label : {"onednn.batch_norm_relu", "onednn.conv_relu", "onednn.conv_bias", "onednn.conv_bias_sum",
                            "onednn.conv_bias_sum_relu", "onednn.conv_clip"}) {
    EXPECT_EQ(testing::count_label(cnn, label), 1u) << label;
  }
  EXPECT_GT(testing::count_label(cnn, "joined"), 0u);
  // Every operator but Flatten alone.
  EXPECT_EQ(testing::count_label(cnn, "op:Flatten"), 0u);
  EXPECT_EQ(testing::count_label(cnn, "op:Conv"), 4u);

  const testing::CandidateReport bert = testing::check_every_candidate(backend, testing::transformer_layer(9), 2);
  EXPECT_TRUE(bert.failures.empty()) << ::testing::PrintToString(bert.failures);
  EXPECT_EQ(bert.matched, bert.candidates);
  const std::pair<const char*, std::size_t> expected[] = {
      {"onednn.dense_bias", 6},      {"onednn.dense_bias_sum", 2}, {"onednn.dense_bias_gelu", 1},
      {"onednn.dense_scale", 1},     {"onednn.dense_scale_sum", 1}, {"onednn.gelu", 1},
      {"onednn.layer_norm", 2},      {"onednn.layer_norm_scale", 2}, {"onednn.layer_norm_bare", 2},
      {"op:Softmax", 1},             {"op:Transpose", 4},           {"op:Reshape", 0}};
  for (const auto& [label, count] : expected) EXPECT_EQ(testing::count_label(bert, label), count) << label;
}

/// A random chain of convolutions as MobileNets, ResNets, SqueezeNets and GoogLeNets have them (1x1,
/// depthwise, strided, dense 3x3, two branches joined by a Concat), each maybe followed by an
/// activation, with residual sums of an earlier value of the same shape, values returned from the
/// middle of the chain, and poolings between convolutions. The activation: Relu, Clip or swish.
Graph random_conv_chain(std::mt19937_64& rng, std::uint64_t seed) {
  GraphBuilder b(seed);
  std::int64_t channels = pick(rng, 3, 24);
  std::int64_t size = pick(rng, 6, 13);
  int y = b.input({1, channels, size, size}, "x");
  std::vector<int> same_shape = {y};
  std::vector<int> outputs;
  const int convs = static_cast<int>(pick(rng, 3, 6));
  for (int k = 0; k < convs; ++k) {
    const int kind = static_cast<int>(pick(rng, 0, 4));
    std::int64_t out = channels;
    std::int64_t group = 1;
    std::int64_t kernel = 1;
    std::int64_t stride = 1;
    if (kind == 0 || kind == 3) out = pick(rng, 4, 32);
    if (kind == 1) group = channels, kernel = 3, stride = size > 6 ? pick(rng, 1, 2) : 1;
    if (kind == 2) kernel = 3;
    const std::int64_t pad = kernel / 2;
    auto conv = [&](int in, std::int64_t to) {
      return b.op(Op::conv, {in, b.weight({to, channels / group, kernel, kernel}), b.weight({to})},
                  conv_attributes({pad, pad, pad, pad}, {stride, stride}, {1, 1}, group));
    };
    if (kind == 3) {
      const std::int64_t first = pick(rng, 1, out - 1);
      Attributes channels_axis;
      channels_axis.set("axis", std::int64_t{1});
      y = b.op(Op::concat, {b.op(Op::relu, {conv(y, first)}), conv(y, out - first)}, channels_axis);
    } else {
      y = conv(y, out);
    }
    if (out != channels || stride != 1) same_shape.clear();
    channels = out;
    size = (size + stride - 1) / stride;
    if (!same_shape.empty() && pick(rng, 0, 2) == 0) {
      const std::int64_t earlier = pick(rng, 0, static_cast<std::int64_t>(same_shape.size()) - 1);
      y = b.op(Op::add, {y, same_shape[static_cast<std::size_t>(earlier)]});
    }
    const char* const chain_activations[] = {"", "_relu", "_clip", "_swish"};
    y = activate(b, y, chain_activations[pick(rng, 0, 3)]);
    same_shape.push_back(y);
    if (k + 1 < convs && pick(rng, 0, 4) == 0) outputs.push_back(y);
    if (k + 1 < convs && pick(rng, 0, 3) == 0) {
      if (size > 4 && pick(rng, 0, 1) == 0) {
        y = b.op(Op::max_pool, {y}, pool_attributes({2, 2}, {2, 2}, {0, 0, 0, 0}));
        size /= 2;
      } else {
        y = b.op(Op::average_pool, {y}, pool_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}));
      }
      same_shape = {y};
    }
  }
  outputs.push_back(y);
  return b.done(outputs);
}

// Partitions of several convolutions pass values between them in the layouts oneDNN chose
// (converted only where a plain tensor is read or returned): every candidate of random chains
// matches the reference.
TEST(OnednnBackend, ConvolutionChainsInOneKernelMatchTheReference) {
  const std::unique_ptr<Backend> made = make_onednn_backend();
  std::mt19937_64 rng(77);
  std::size_t joined = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const Graph model = random_conv_chain(rng, static_cast<std::uint64_t>(trial));
    const testing::CandidateReport report = testing::check_every_candidate(*made, model, static_cast<std::uint64_t>(trial));
    EXPECT_TRUE(report.failures.empty()) << "trial " << trial << ": " << ::testing::PrintToString(report.failures);
    joined += testing::count_label(report, "joined");
  }
  EXPECT_GT(joined, 12u);
}

// Every onednn backend runs its swish steps itself, where oneDNN ran them before. The blocked
// variants' convolutions keep their values in the blocked layout where oneDNN's choice differs,
// their concats are written in place and values with fewer channels than a block stay plain. So
// their measurements are another configuration's: a database does not serve them costs measured
// before, nor the blocked ones the plain backend's.
TEST(OnednnBackend, OwnStepsAndBlockedKernelsArePartOfTheConfiguration) {
  EXPECT_EQ(make_onednn_backend()->configuration(), "own swish");
  EXPECT_EQ(make_onednn_backend(1, native_blocked_layout())->configuration(),
            "own swish, fewer channels than a block plain, blocked convolutions, concats in place");
  EXPECT_EQ(make_onednn_backend(2, native_blocked_layout())->configuration(),
            "threads=2, own swish, fewer channels than a block plain, blocked convolutions, concats in place");
  EXPECT_EQ(make_onednn_winograd_backend(1, native_blocked_layout())->configuration(),
            "own swish, fewer channels than a block plain");
}

// The blocked variants take and return rank-4 values of a block of channels or more in a blocked
// layout (padded where the block does not divide the channels), and smaller ones plain: every
// candidate of real graphs and random chains matches the reference, each run given its inputs in
// that layout and its outputs read back from it.
TEST(OnednnBackend, InBlockedLayoutsEveryCandidateMatchesTheReference) {
  for (Layout layout : {Layout::nChw8c, Layout::nChw16c}) {
    const std::unique_ptr<Backend> blocked = make_onednn_backend(1, layout);
    EXPECT_EQ(blocked->name(), "onednn_blocked");
    EXPECT_EQ(blocked->layout(), layout);
    std::mt19937_64 rng(78);
    for (int trial = 0; trial < 8; ++trial) {
      const Graph model = random_conv_chain(rng, static_cast<std::uint64_t>(trial));
      const testing::CandidateReport report =
          testing::check_every_candidate(*blocked, model, static_cast<std::uint64_t>(trial));
      EXPECT_TRUE(report.failures.empty()) << to_string(layout) << " trial " << trial << ": "
                                           << ::testing::PrintToString(report.failures);
    }
    const auto block = static_cast<std::int64_t>(channel_block(layout));
    for (const Graph& model : {testing::conv_bn_relu_block(7, block), testing::transformer_layer(9, 7, 2 * block, block)}) {
      const testing::CandidateReport report = testing::check_every_candidate(*blocked, model, 3);
      EXPECT_TRUE(report.failures.empty()) << to_string(layout) << ": " << ::testing::PrintToString(report.failures);
      EXPECT_GT(report.candidates, 0u);
    }
    // With fewer channels than a block everywhere, it proposes nothing either.
    EXPECT_TRUE(testing::candidate_functions(*blocked, testing::conv_bn_relu_block(7, block - 1)).empty());
    // On values of other ranks only, it proposes nothing: its kernels would be onednn's.
    GraphBuilder b(3);
    const int x = b.input({4, 16}, "x");
    const Graph mlp = b.done(b.op(Op::relu, {b.op(Op::gemm, {x, b.weight({16, 8}), b.weight({8})}, gemm_attributes(false, false))}));
    EXPECT_TRUE(testing::candidate_functions(*blocked, mlp).empty());
    EXPECT_FALSE(testing::candidate_functions(*make_onednn_backend(), mlp).empty());
    const std::unique_ptr<Backend> winograd = make_onednn_winograd_backend(1, layout);
    EXPECT_EQ(winograd->name(), "onednn_winograd_blocked");
    const testing::CandidateReport report =
        testing::check_every_candidate(*winograd, testing::conv_bn_relu_block(7, block), 4);
    EXPECT_TRUE(report.failures.empty()) << ::testing::PrintToString(report.failures);
    EXPECT_GT(report.candidates, 0u);
  }
}

/// Random Fire- and Inception-like modules: branches off one value (convolutions with or without a
/// Relu, a max pooling, the value itself, a branch taken twice) joined by a Concat along the
/// channels, their channel counts mostly whole blocks of 8 or 16 and sometimes not, some branches
/// returned as well, a Concat nested in another, a module's Concat returned or read by the next.
Graph random_concat_modules(std::mt19937_64& rng, std::uint64_t seed) {
  GraphBuilder b(seed);
  std::int64_t channels = 8 * pick(rng, 1, 4);
  const std::int64_t size = pick(rng, 5, 9);
  int y = b.input({1, channels, size, size}, "x");
  Attributes channels_axis;
  channels_axis.set("axis", std::int64_t{1});
  std::vector<int> outputs;
  const std::int64_t modules = pick(rng, 2, 3);
  for (std::int64_t m = 0; m < modules; ++m) {
    std::vector<int> branches;
    std::vector<std::int64_t> widths;
    const std::int64_t count = pick(rng, 2, 4);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t kind = pick(rng, 0, 5);
      int branch = y;
      std::int64_t width = channels;
      if (kind == 1) {
        branch = b.op(Op::max_pool, {y}, pool_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}));
      } else if (kind == 2 && !branches.empty()) {
        const auto again = static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(branches.size()) - 1));
        branch = branches[again];
        width = widths[again];
      } else if (kind >= 3) {
        width = pick(rng, 0, 3) == 0 ? pick(rng, 3, 20) : 8 * pick(rng, 1, 4);
        const std::int64_t kernel = kind == 3 ? 1 : 3;
        const std::int64_t pad = kernel / 2;
        branch = b.op(Op::conv, {y, b.weight({width, channels, kernel, kernel}), b.weight({width})},
                      conv_attributes({pad, pad, pad, pad}, {1, 1}, {1, 1}));
        if (pick(rng, 0, 1) == 0) branch = b.op(Op::relu, {branch});
      }
      if (pick(rng, 0, 5) == 0) outputs.push_back(branch);
      branches.push_back(branch);
      widths.push_back(width);
    }
    if (branches.size() >= 3 && pick(rng, 0, 2) == 0) {
      branches[1] = b.op(Op::concat, {branches[0], branches[1]}, channels_axis);
      branches.erase(branches.begin());
    }
    y = b.op(Op::concat, branches, channels_axis);
    channels = std::accumulate(widths.begin(), widths.end(), std::int64_t{0});
    if (m + 1 < modules && pick(rng, 0, 3) == 0) outputs.push_back(y);
  }
  outputs.push_back(y);
  return b.done(outputs);
}

// A blocked kernel writes a concat of whole channel blocks in place: the calls computing its
// sources write them into their slices of its result (the others are copied there). Every
// candidate of random Fire- and Inception-like modules matches the reference in both blocked
// layouts, the modules' channel counts whole blocks of 8 (whole blocks of nChw16c or not) or not.
TEST(OnednnBackend, BlockedConcatsWrittenInPlaceMatchTheReference) {
  for (Layout layout : {Layout::nChw8c, Layout::nChw16c}) {
    const std::unique_ptr<Backend> blocked = make_onednn_backend(1, layout);
    std::mt19937_64 rng(79);
    std::size_t candidates = 0;
    for (int trial = 0; trial < 10; ++trial) {
      const Graph model = random_concat_modules(rng, static_cast<std::uint64_t>(trial));
      // (rtol 1e-3: convolutions of up to a hundred channels sum a thousand products, in another
      // order than the reference's)
      const testing::CandidateReport report =
          testing::check_every_candidate(*blocked, model, static_cast<std::uint64_t>(trial), 1e-3);
      EXPECT_TRUE(report.failures.empty()) << to_string(layout) << " trial " << trial << ": "
                                           << ::testing::PrintToString(report.failures);
      candidates += report.candidates;
    }
    EXPECT_GT(candidates, 20u);
  }
}

/// A chain of three 3x3 convolutions with Relus over [1, channels, size, size].
Graph conv_chain(std::int64_t channels, std::int64_t size) {
  GraphBuilder b(5);
  int y = b.input({1, channels, size, size}, "x");
  for (int k = 0; k < 3; ++k) {
    y = b.op(Op::relu, {b.op(Op::conv, {y, b.weight({channels, channels, 3, 3}), b.weight({channels})},
                             conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}))});
  }
  return b.done(y);
}

// The kernels of a thread share one scratch for their blocked values; a kernel run after another
// grew it (and so moved it) finds its values at the new place.
TEST(OnednnBackend, KernelsFollowTheSharedScratchWhenItGrows) {
  const std::unique_ptr<Backend> backend = make_onednn_backend();
  CpuDevice cpu;
  struct Compiled {
    Function function;
    std::unique_ptr<Kernel> kernel;
    std::vector<Tensor> inputs, expected;
  };
  auto compile_whole = [&](const Graph& model) {
    Compiled c;
    for (Function& f : testing::candidate_functions(*backend, model)) {
      if (f.body().size() > c.function.body().size()) c.function = std::move(f);
    }
    collage::Result<std::unique_ptr<Kernel>> kernel = backend->compile(c.function, cpu);
    EXPECT_TRUE(kernel.ok()) << kernel.error().message;
    if (kernel.ok()) c.kernel = std::move(kernel).value();
    c.inputs = testing::random_inputs(c.function.graph, 3);
    c.expected = evaluate(c.function.graph, c.inputs).value();
    return c;
  };
  auto run_matches = [](Compiled& c) -> ::testing::AssertionResult {
    Tensor out(c.expected[0].shape, std::nanf(""));
    const collage::Status ran = c.kernel->run({c.inputs[0].data.data()}, {out.data.data()});
    if (!ran.ok()) return ::testing::AssertionFailure() << ran.message();
    std::string worst;
    if (!all_close(out, c.expected[0], 1e-3, 1e-3, &worst)) return ::testing::AssertionFailure() << worst;
    return ::testing::AssertionSuccess();
  };
  Compiled small = compile_whole(conv_chain(8, 6));
  Compiled large = compile_whole(conv_chain(32, 40));
  ASSERT_TRUE(small.kernel && large.kernel);
  ASSERT_EQ(small.function.body().size(), 6u);
  EXPECT_TRUE(run_matches(small));
  EXPECT_TRUE(run_matches(large));
  EXPECT_TRUE(run_matches(small));
}

TEST(OnednnBackend, RunsSeveralCallsInOneKernel) {
  const std::unique_ptr<Backend> made = make_onednn_backend();
  const Backend& backend = *made;
  GraphBuilder b(8);
  const int x = b.input({5, 6}, "x");
  const int h = b.op(Op::relu, {b.op(Op::matmul, {x, b.weight({6, 7})})});
  Attributes last;
  last.set("axis", 1);
  const int y = b.op(Op::softmax, {b.op(Op::matmul, {h, b.weight({7, 3})})}, last);
  b.output(y);
  b.output(h);
  b.output(y);
  EXPECT_TRUE(testing::runs_like_reference(backend, whole_model_function(b.done()), 3));
}

/// x [1, c, size, size] through a 3x3 convolution of stride 1 (padded by 1, plus a bias, a
/// residual sum and a Relu), a 1x1 one and a 3x3 one of stride 2.
Graph winograd_and_other_convs(std::int64_t c, std::int64_t size, std::uint64_t seed) {
  GraphBuilder b(seed);
  const int x = b.input({1, c, size, size}, "x");
  const int wide = b.op(Op::conv, {x, b.weight({c, c, 3, 3}), b.weight({c})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  const int sum = b.op(Op::relu, {b.op(Op::add, {wide, x})});
  const int pointwise = b.op(Op::conv, {sum, b.weight({c, c, 1, 1})}, conv_attributes({0, 0, 0, 0}, {1, 1}, {1, 1}));
  b.output(b.op(Op::conv, {pointwise, b.weight({c, c, 3, 3})}, conv_attributes({1, 1, 1, 1}, {2, 2}, {1, 1})));
  return b.done();
}

/// Whether oneDNN has a Winograd kernel for a 16-channel 3x3 convolution on this CPU.
bool winograd_on_this_cpu() {
  GraphBuilder b(1);
  b.output(b.op(Op::conv, {b.input({1, 16, 8, 8}, "x"), b.weight({16, 16, 3, 3})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1})));
  const Graph g = b.done();
  collage::Result<onednn::CallPlan> plan = onednn::plan(g, LibraryCall{"", {g.outputs()[0]}});
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() && onednn::winograd_available(*plan);
}

TEST(OnednnWinograd, ProposesOnlyThreeByThreeConvolutionsOfStrideOneAndTheyMatchTheReference) {
  const std::unique_ptr<Backend> made = make_onednn_winograd_backend();
  const Backend& backend = *made;
  if (!winograd_on_this_cpu()) {
    EXPECT_TRUE(testing::candidate_functions(backend, winograd_and_other_convs(16, 8, 1)).empty());
    GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU: the backend proposes nothing";
  }
  for (const auto& [channels, size] : {std::pair<std::int64_t, std::int64_t>{16, 8}, {32, 13}, {64, 6}}) {
    const Graph model = winograd_and_other_convs(channels, size, static_cast<std::uint64_t>(channels));
    // Winograd's transforms round differently from the direct sum of products.
    const testing::CandidateReport r = testing::check_every_candidate(backend, model, 3, 1e-3, 1e-4);
    EXPECT_TRUE(r.failures.empty()) << ::testing::PrintToString(r.failures);
    std::vector<std::string> labels = r.labels;
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, (std::vector<std::string>{"onednn.conv_sum", "onednn.conv_sum_relu", "op:Conv"}));
  }
}

TEST(OnednnWinograd, OnlyThreeByThreeConvolutionsOfStrideOneHaveItsShapeAndOnednnPlansThemDirect) {
  const Graph model = winograd_and_other_convs(16, 8, 2);
  std::vector<bool> shapes;
  for (int n = 0; n < static_cast<int>(model.size()); ++n) {
    if (model.node(n).op != Op::conv) continue;
    collage::Result<onednn::CallPlan> p = onednn::plan(model, LibraryCall{"", {n}});
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_FALSE(p->winograd);
    shapes.push_back(onednn::winograd_shape(*p));
  }
  EXPECT_EQ(shapes, (std::vector<bool>{true, false, false}));
}

}  // namespace
}  // namespace tc

#endif  // TC_HAVE_ONEDNN
