#include "backends/cudnn/cudnn_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <collage/cost/cost_oracle.hpp>

#include "backends/cublas/cublas_backend.hpp"
#include "backends/cudnn/cudnn_kernel.hpp"
#include "backends/cudnn/cudnn_plan.hpp"
#include "backends/registry.hpp"
#include "backends/gpu_test_support.hpp"
#include "costing/kernel_timing.hpp"
#include "runtime/cpu_device.hpp"
#include "driver/configurations.hpp"
#include "executor/executable.hpp"
#include "backends/reference/reference_backend.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

using Ints = std::vector<std::int64_t>;
using cudnn::CallPlan;
using cudnn::ConvPlan;
using cudnn::PoolMode;
using cudnn::PoolPlan;
using cudnn::SoftmaxPlan;
using testing::Claim;
using testing::claims;
using testing::conv_attributes;
using testing::GraphBuilder;
using testing::operator_nodes;
using testing::pool_attributes;

collage::Result<CallPlan> plan_all(const Graph& g) { return cudnn::plan(g, LibraryCall{"", operator_nodes(g)}); }

/// The rule of the cudnn backend.
collage::PartitionSpec<Graph> cudnn_spec() { return make_cudnn_backend()->spec(); }

struct CudnnCase {
  std::string name;
  Graph graph;
};

/// Convolutions (1-3 spatial dims, strides, dilations, pads, groups, depthwise) with every
/// epilogue the backend runs, poolings of each kind, softmax over each axis.
std::vector<CudnnCase> cudnn_cases() {
  struct Conv {
    std::string name;
    Shape x;
    std::int64_t out_channels;
    Ints kernel, pads, strides, dilations;
    std::int64_t group;
  };
  const std::vector<Conv> convs{
      {"3x3 same", {1, 3, 9, 9}, 8, {3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
      {"3x2 strided dilated", {2, 4, 10, 7}, 6, {3, 2}, {1, 0, 1, 0}, {2, 2}, {1, 2}, 1},
      {"depthwise", {1, 8, 7, 7}, 8, {3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 8},
      {"grouped 1x1", {1, 6, 5, 3}, 4, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 2},
      {"1-D", {2, 5, 11}, 4, {3}, {2, 2}, {2}, {2}, 1},
      {"3-D", {1, 2, 5, 5, 5}, 3, {3, 3, 3}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1},
  };
  const std::vector<std::string> epilogues{"",           "+ bias input",       "+ bias add",      "relu",
                                           "bias, relu", "+ residual",         "bias, residual, relu"};
  std::vector<CudnnCase> cases;
  std::uint64_t seed = 1;
  for (const Conv& c : convs) {
    for (std::size_t e = 0; e < epilogues.size(); ++e) {
      GraphBuilder b(seed++);
      const int x = b.input(c.x);
      Shape w_shape{c.out_channels, c.x[1] / c.group};
      w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
      std::vector<int> in{x, b.weight(w_shape)};
      const bool bias_input = e == 1 || e == 4 || e == 6;
      if (bias_input) in.push_back(b.weight({c.out_channels}));
      int y = b.op(Op::conv, in, conv_attributes(c.pads, c.strides, c.dilations, c.group));
      if (e == 2) {
        Shape channel(c.x.size() - 1, 1);
        channel[0] = c.out_channels;
        y = b.op(Op::add, {b.weight(channel), y});
      }
      if (e == 5 || e == 6) y = b.op(Op::add, {y, b.input(b.shape(y))});
      if (e == 3 || e == 4 || e == 6) y = b.op(Op::relu, {y});
      cases.push_back({"conv " + c.name + " " + epilogues[e], b.done(y)});
    }
  }
  struct Pool {
    std::string name;
    Op op;
    Shape x;
    Attributes attrs;
  };
  const std::vector<Pool> pools{
      {"max 3x3/2 pad 1", Op::max_pool, {1, 4, 9, 9}, pool_attributes({3, 3}, {2, 2}, {1, 1, 1, 1})},
      {"max 2x2/2 odd input", Op::max_pool, {2, 3, 7, 5}, pool_attributes({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {"max ceil mode, same size", Op::max_pool, {1, 2, 8, 8}, pool_attributes({2, 2}, {2, 2}, {0, 0, 0, 0}, true)},
      {"max 3-D", Op::max_pool, {1, 2, 5, 6, 7}, pool_attributes({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},
      {"average excluding pads", Op::average_pool, {1, 3, 6, 6}, pool_attributes({3, 3}, {1, 1}, {1, 1, 1, 1})},
      {"average including pads", Op::average_pool, {1, 3, 6, 6}, pool_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}, false, true)},
      {"average 1-D", Op::average_pool, {1, 3, 10}, pool_attributes({3}, {2}, {1, 1})},
      {"global average", Op::global_average_pool, {2, 5, 7, 6}, {}},
      {"global max", Op::global_max_pool, {1, 3, 4, 4}, {}},
      {"global average 1-D", Op::global_average_pool, {2, 3, 9}, {}},
  };
  for (const Pool& p : pools) {
    GraphBuilder b(seed++);
    cases.push_back({"pool " + p.name, b.done(b.op(p.op, {b.input(p.x)}, p.attrs))});
  }
  const std::vector<std::pair<Shape, std::int64_t>> softmaxes{
      {{2, 3, 4, 5}, 0}, {{2, 3, 4, 5}, 1}, {{2, 3, 4, 5}, 2}, {{2, 3, 4, 5}, 3}, {{7, 10}, 1}, {{1, 2, 5, 7}, -1}};
  for (const auto& [shape, axis] : softmaxes) {
    GraphBuilder b(seed++);
    Attributes a;
    a.set("axis", axis);
    cases.push_back({"softmax " + to_string(shape) + " axis " + std::to_string(axis), b.done(b.op(Op::softmax, {b.input(shape)}, a))});
  }
  return cases;
}

/// Calls `f` with every index of `dims` (row-major order).
void for_each_index(const std::vector<int>& dims, const std::function<void(const std::vector<int>&)>& f) {
  std::vector<int> i(dims.size(), 0);
  for (int d : dims) {
    if (d <= 0) return;
  }
  while (true) {
    f(i);
    std::size_t d = dims.size();
    while (d > 0 && ++i[d - 1] == dims[d - 1]) i[--d] = 0;
    if (d == 0) return;
  }
}

/// The flat row-major offset of `index` in `dims`.
std::int64_t offset(const std::vector<int>& dims, const std::vector<int>& index) {
  std::int64_t at = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) at = at * dims[d] + index[d];
  return at;
}

/// y as cuDNN computes it from the plan's descriptors: act(cross-correlation + z + bias), NC(D)HW.
Tensor emulate_conv(const ConvPlan& p, const std::vector<Tensor>& values, const Shape& shape) {
  const std::vector<float>& x = values[static_cast<std::size_t>(p.x)].data;
  const std::vector<float>& w = values[static_cast<std::size_t>(p.w)].data;
  const float* bias = p.bias >= 0 ? values[static_cast<std::size_t>(p.bias)].data.data() : nullptr;
  const float* z = p.z >= 0 ? values[static_cast<std::size_t>(p.z)].data.data() : nullptr;
  const std::size_t s = p.pads.size();
  const int per_group_out = p.w_dims[0] / p.groups;
  Tensor y(shape);
  for_each_index(p.y_dims, [&](const std::vector<int>& o) {
    const int n = o[0];
    const int k = o[1];
    const int group = k / per_group_out;
    double acc = 0.0;
    for (int c = 0; c < p.w_dims[1]; ++c) {
      const std::vector<int> window(p.w_dims.begin() + 2, p.w_dims.end());
      for_each_index(window, [&](const std::vector<int>& r) {
        std::vector<int> xi{n, group * p.w_dims[1] + c};
        for (std::size_t d = 0; d < s; ++d) {
          const int at = o[d + 2] * p.strides[d] - p.pads[d] + r[d] * p.dilations[d];
          if (at < 0 || at >= p.x_dims[d + 2]) return;
          xi.push_back(at);
        }
        std::vector<int> wi{k, c};
        wi.insert(wi.end(), r.begin(), r.end());
        acc += static_cast<double>(x[static_cast<std::size_t>(offset(p.x_dims, xi))]) *
               w[static_cast<std::size_t>(offset(p.w_dims, wi))];
      });
    }
    const std::int64_t at = offset(p.y_dims, o);
    double v = acc + (bias != nullptr ? bias[k] : 0.0) + (z != nullptr ? z[at] : 0.0);
    if (p.relu) v = std::max(v, 0.0);
    y.data[static_cast<std::size_t>(at)] = static_cast<float>(v);
  });
  return y;
}

/// y as cuDNN's pooling computes it: windows over the padded input; max and the excluding average
/// ignore the padding, the including average divides by the window's size.
Tensor emulate_pool(const PoolPlan& p, const std::vector<Tensor>& values, const Shape& shape) {
  const std::vector<float>& x = values[static_cast<std::size_t>(p.x)].data;
  Tensor y(shape);
  for_each_index(p.y_dims, [&](const std::vector<int>& o) {
    double max = -std::numeric_limits<double>::infinity();
    double sum = 0.0;
    int count = 0;
    int size = 0;
    for_each_index(p.window, [&](const std::vector<int>& r) {
      ++size;
      std::vector<int> xi{o[0], o[1]};
      for (std::size_t d = 0; d < p.window.size(); ++d) {
        const int at = o[d + 2] * p.strides[d] - p.pads[d] + r[d];
        if (at < 0 || at >= p.x_dims[d + 2]) return;
        xi.push_back(at);
      }
      const double v = x[static_cast<std::size_t>(offset(p.x_dims, xi))];
      max = std::max(max, v);
      sum += v;
      ++count;
    });
    const double v = p.mode == PoolMode::max ? max : sum / (p.mode == PoolMode::average_include_pad ? size : count);
    y.data[static_cast<std::size_t>(offset(p.y_dims, o))] = static_cast<float>(v);
  });
  return y;
}

/// y as cuDNN's channel softmax of an N x C x H x 1 tensor computes it.
Tensor emulate_softmax(const SoftmaxPlan& p, const std::vector<Tensor>& values, const Shape& shape) {
  const std::vector<float>& x = values[static_cast<std::size_t>(p.x)].data;
  const int c_dim = p.dims[1];
  const int h_dim = p.dims[2];
  Tensor y(shape);
  for (int n = 0; n < p.dims[0]; ++n) {
    for (int h = 0; h < h_dim; ++h) {
      auto at = [&](int c) { return static_cast<std::size_t>((std::int64_t{n} * c_dim + c) * h_dim + h); };
      double max = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < c_dim; ++c) max = std::max(max, static_cast<double>(x[at(c)]));
      double sum = 0.0;
      for (int c = 0; c < c_dim; ++c) sum += std::exp(x[at(c)] - max);
      for (int c = 0; c < c_dim; ++c) y.data[at(c)] = static_cast<float>(std::exp(x[at(c)] - max) / sum);
    }
  }
  return y;
}

// ---- The plan --------------------------------------------------------------------------------

TEST(CudnnPlan, ConvolutionDescriptors) {
  GraphBuilder b;
  const int x = b.input({2, 4, 10, 7});
  const int w = b.weight({6, 2, 3, 2});
  const int bias = b.weight({6});
  const int conv = b.op(Op::conv, {x, w, bias}, conv_attributes({1, 0, 1, 0}, {2, 1}, {1, 2}, 2));
  collage::Result<CallPlan> planned = plan_all(b.done(conv));
  ASSERT_TRUE(planned.ok()) << planned.error().message;
  const ConvPlan& p = std::get<ConvPlan>(*planned);
  EXPECT_EQ(p.x, x);
  EXPECT_EQ(p.w, w);
  EXPECT_EQ(p.bias, bias);
  EXPECT_EQ(p.z, -1);
  EXPECT_FALSE(p.relu);
  EXPECT_EQ(p.x_dims, (std::vector<int>{2, 4, 10, 7}));
  EXPECT_EQ(p.w_dims, (std::vector<int>{6, 2, 3, 2}));
  EXPECT_EQ(p.y_dims, (std::vector<int>{2, 6, 5, 5}));
  EXPECT_EQ(p.pads, (std::vector<int>{1, 0}));
  EXPECT_EQ(p.strides, (std::vector<int>{2, 1}));
  EXPECT_EQ(p.dilations, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.groups, 2);
  EXPECT_EQ(cudnn::operands(*planned), (std::vector<int>{x, w, bias, -1}));
}

TEST(CudnnPlan, OneDimensionalProblemsGetAUnitHeight) {
  GraphBuilder b;
  const int conv = b.op(Op::conv, {b.input({2, 5, 11}), b.weight({4, 5, 3})}, conv_attributes({2, 2}, {2}, {2}));
  collage::Result<CallPlan> planned = plan_all(b.done(conv));
  ASSERT_TRUE(planned.ok()) << planned.error().message;
  const ConvPlan& p = std::get<ConvPlan>(*planned);
  EXPECT_EQ(p.x_dims, (std::vector<int>{2, 5, 1, 11}));
  EXPECT_EQ(p.w_dims, (std::vector<int>{4, 5, 1, 3}));
  EXPECT_EQ(p.y_dims, (std::vector<int>{2, 4, 1, 6}));
  EXPECT_EQ(p.pads, (std::vector<int>{0, 2}));
  EXPECT_EQ(p.strides, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.dilations, (std::vector<int>{1, 2}));
}

TEST(CudnnPlan, RefusesAsymmetricPads) {
  GraphBuilder b;
  const int conv = b.op(Op::conv, {b.input({1, 3, 8, 8}), b.weight({4, 3, 2, 2})}, conv_attributes({0, 0, 1, 1}, {1, 1}, {1, 1}));
  collage::Result<CallPlan> p = plan_all(b.done(conv));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("cuDNN pads both sides alike"), std::string::npos) << p.error().message;
}

TEST(CudnnPlan, BiasResidualAndRelu) {
  {
    GraphBuilder b;  // a channel bias added after the convolution
    const int conv = b.op(Op::conv, {b.input({1, 3, 6, 6}), b.weight({4, 3, 3, 3})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
    const int bias = b.weight({4, 1, 1});
    collage::Result<CallPlan> p = plan_all(b.done(b.op(Op::relu, {b.op(Op::add, {conv, bias})})));
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(std::get<ConvPlan>(*p).bias, bias);
    EXPECT_TRUE(std::get<ConvPlan>(*p).relu);
  }
  {
    GraphBuilder b;  // the convolution's own bias and a residual
    const int x = b.input({1, 4, 6, 6});
    const int bias = b.weight({4});
    const int conv = b.op(Op::conv, {x, b.weight({4, 4, 3, 3}), bias}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
    collage::Result<CallPlan> p = plan_all(b.done(b.op(Op::relu, {b.op(Op::add, {x, conv})})));
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(std::get<ConvPlan>(*p).bias, bias);
    EXPECT_EQ(std::get<ConvPlan>(*p).z, x);
  }
}

TEST(CudnnPlan, RefusesWhatCudnnDoesNotFuse) {
  const Attributes same = conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1});
  {
    GraphBuilder b;  // a second bias
    const int conv = b.op(Op::conv, {b.input({1, 3, 6, 6}), b.weight({4, 3, 3, 3}), b.weight({4})}, same);
    EXPECT_FALSE(plan_all(b.done(b.op(Op::add, {conv, b.weight({1, 4, 1, 1})}))).ok());
  }
  {
    GraphBuilder b;  // an addend of another shape
    const int conv = b.op(Op::conv, {b.input({1, 3, 6, 6}), b.weight({4, 3, 3, 3})}, same);
    collage::Result<CallPlan> p = plan_all(b.done(b.op(Op::add, {conv, b.weight({1, 1, 6, 6})})));
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("cannot add"), std::string::npos) << p.error().message;
  }
  {
    GraphBuilder b;  // another activation
    const int conv = b.op(Op::conv, {b.input({1, 3, 6, 6}), b.weight({4, 3, 3, 3})}, same);
    EXPECT_FALSE(plan_all(b.done(b.op(Op::sigmoid, {conv}))).ok());
  }
  {
    GraphBuilder b;  // relu before the residual
    const int x = b.input({1, 4, 6, 6});
    const int conv = b.op(Op::conv, {x, b.weight({4, 4, 3, 3})}, same);
    EXPECT_FALSE(plan_all(b.done(b.op(Op::add, {b.op(Op::relu, {conv}), x}))).ok());
  }
  {
    GraphBuilder b;  // nothing fuses with a pooling
    const int pool = b.op(Op::max_pool, {b.input({1, 3, 6, 6})}, pool_attributes({2, 2}, {2, 2}, {0, 0, 0, 0}));
    EXPECT_FALSE(plan_all(b.done(b.op(Op::relu, {pool}))).ok());
  }
}

TEST(CudnnPlan, Pooling) {
  {
    GraphBuilder b;
    const int pool = b.op(Op::average_pool, {b.input({1, 3, 10})}, pool_attributes({3}, {2}, {1, 1}, false, true));
    collage::Result<CallPlan> planned = plan_all(b.done(pool));
    ASSERT_TRUE(planned.ok()) << planned.error().message;
    const PoolPlan& p = std::get<PoolPlan>(*planned);
    EXPECT_EQ(p.mode, PoolMode::average_include_pad);
    EXPECT_EQ(p.x_dims, (std::vector<int>{1, 3, 1, 10}));
    EXPECT_EQ(p.y_dims, (std::vector<int>{1, 3, 1, 5}));
    EXPECT_EQ(p.window, (std::vector<int>{1, 3}));
    EXPECT_EQ(p.pads, (std::vector<int>{0, 1}));
    EXPECT_EQ(p.strides, (std::vector<int>{1, 2}));
  }
  {
    GraphBuilder b;
    collage::Result<CallPlan> planned = plan_all(b.done(b.op(Op::global_average_pool, {b.input({2, 5, 7, 6})})));
    ASSERT_TRUE(planned.ok()) << planned.error().message;
    EXPECT_EQ(std::get<PoolPlan>(*planned).window, (std::vector<int>{7, 6}));
    EXPECT_EQ(std::get<PoolPlan>(*planned).y_dims, (std::vector<int>{2, 5, 1, 1}));
  }
  {
    GraphBuilder b;  // ceil mode that adds a window
    const int pool = b.op(Op::max_pool, {b.input({1, 2, 7, 7})}, pool_attributes({2, 2}, {2, 2}, {0, 0, 0, 0}, true));
    collage::Result<CallPlan> p = plan_all(b.done(pool));
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("ceil_mode"), std::string::npos) << p.error().message;
  }
  {
    GraphBuilder b;  // dilated
    Attributes a = pool_attributes({2, 2}, {1, 1}, {0, 0, 0, 0});
    a.set("dilations", Ints{2, 2});
    EXPECT_FALSE(plan_all(b.done(b.op(Op::max_pool, {b.input({1, 2, 7, 7})}, a))).ok());
  }
}

TEST(CudnnPlan, SoftmaxAsChannelSoftmax) {
  GraphBuilder b;
  Attributes a;
  a.set("axis", std::int64_t{2});
  collage::Result<CallPlan> planned = plan_all(b.done(b.op(Op::softmax, {b.input({2, 3, 4, 5})}, a)));
  ASSERT_TRUE(planned.ok()) << planned.error().message;
  EXPECT_EQ(std::get<SoftmaxPlan>(*planned).dims, (std::vector<int>{6, 4, 5, 1}));
}

TEST(CudnnPlan, DescriptorsComputeTheGraph) {
  for (const CudnnCase& c : cudnn_cases()) {
    SCOPED_TRACE(c.name);
    collage::Result<CallPlan> p = plan_all(c.graph);
    ASSERT_TRUE(p.ok()) << p.error().message;
    const std::vector<Tensor> inputs = testing::random_inputs(c.graph, 3);
    collage::Result<std::vector<Tensor>> values = evaluate_all(c.graph, inputs);
    ASSERT_TRUE(values.ok()) << values.error().message;
    const Tensor& expected = (*values)[static_cast<std::size_t>(c.graph.outputs()[0])];
    Tensor got;
    if (const auto* conv = std::get_if<ConvPlan>(&*p)) got = emulate_conv(*conv, *values, expected.shape);
    if (const auto* pool = std::get_if<PoolPlan>(&*p)) got = emulate_pool(*pool, *values, expected.shape);
    if (const auto* softmax = std::get_if<SoftmaxPlan>(&*p)) got = emulate_softmax(*softmax, *values, expected.shape);
    std::string worst;
    EXPECT_TRUE(all_close(got, expected, 1e-5, 1e-5, &worst)) << worst;
  }
}

// ---- The rule ---------------------------------------------------------------------------------

std::vector<Claim> sorted(std::vector<Claim> v) {
  std::sort(v.begin(), v.end(), [](const Claim& a, const Claim& b) {
    return a.composite != b.composite ? a.composite < b.composite : a.nodes < b.nodes;
  });
  return v;
}

TEST(CudnnRule, ClaimsAResidualBlock) {
  const Graph g = testing::residual_block();
  const int c1 = g.find("conv1"), r1 = g.find("relu1"), c2 = g.find("conv2"), sum = g.find("residual"),
            r2 = g.find("relu2"), pool = g.find("pool");
  EXPECT_EQ(sorted(claims(cudnn_spec(), g)), sorted({{"cudnn.conv", {c1}},
                                                     {"cudnn.conv_relu", {c1, r1}},
                                                     {"cudnn.conv", {c2}},
                                                     {"cudnn.conv_add", {c2, sum}},
                                                     {"cudnn.conv_add_relu", {c2, sum, r2}},
                                                     {"cudnn.global_avg_pool", {pool}}}));
}

TEST(CudnnRule, ClaimsABiasAddedAfterTheConvolutionAndThePooling) {
  GraphBuilder b;
  const int conv = b.op(Op::conv, {b.input({1, 1, 28, 28}), b.weight({8, 1, 5, 5})}, conv_attributes({2, 2, 2, 2}, {1, 1}, {1, 1}));
  const int add = b.op(Op::add, {conv, b.weight({8, 1, 1})});
  const int relu = b.op(Op::relu, {add});
  const int pool = b.op(Op::max_pool, {relu}, pool_attributes({2, 2}, {2, 2}, {0, 0, 0, 0}));
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  const int flat = b.op(Op::flatten, {pool}, axis);
  const int softmax = b.op(Op::softmax, {flat}, axis);
  EXPECT_EQ(sorted(claims(cudnn_spec(), b.done(softmax))),
            sorted({{"cudnn.conv", {conv}},
                    {"cudnn.conv_add", {conv, add}},
                    {"cudnn.conv_add_relu", {conv, add, relu}},
                    {"cudnn.max_pool", {pool}},
                    {"cudnn.softmax", {softmax}}}));
}

TEST(CudnnRule, LeavesWhatItCannotRun) {
  GraphBuilder b;
  const int conv = b.op(Op::conv, {b.input({1, 3, 8, 8}), b.weight({4, 3, 2, 2})}, conv_attributes({0, 0, 1, 1}, {1, 1}, {1, 1}));
  const int pool = b.op(Op::max_pool, {conv}, pool_attributes({3, 3}, {2, 2}, {0, 0, 0, 0}, true));  // 4x4, floor 3x3
  const int out = b.op(Op::sigmoid, {b.op(Op::matmul, {b.op(Op::flatten, {pool}), b.weight({64, 3})})});
  EXPECT_TRUE(claims(cudnn_spec(), b.done(out)).empty());
}

// ---- The backend ------------------------------------------------------------------------------

TEST(CudnnBackend, IsACudaTarget) { testing::expect_cuda_target(*make_cudnn_backend(), "cudnn"); }

TEST(CudnnBackend, CompileSaysWhyWithoutAGpu) {
  GraphBuilder b;
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  const Function f = whole_model_function(b.done(b.op(Op::softmax, {b.input({2, 5})}, axis)));
  testing::expect_refusals_without_a_gpu(*make_cudnn_backend(), f);
}

// ---- On a GPU ---------------------------------------------------------------------------------

using CudnnGpu = testing::GpuTest;

TEST_F(CudnnGpu, KernelsMatchTheReference) {
  std::unique_ptr<Backend> backend = make_cudnn_backend();
  for (const CudnnCase& c : cudnn_cases()) {
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), c.graph, c.name);
  }
}

TEST_F(CudnnGpu, Tf32KernelsMatchTheReferenceLoosely) {
  cudnn::Options tf32;
  tf32.tf32 = true;
  std::unique_ptr<Backend> backend = make_cudnn_backend(tf32);
  for (const CudnnCase& c : cudnn_cases()) {
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), c.graph, c.name, 2e-2, 2e-2);
  }
}

TEST_F(CudnnGpu, AKernelRunsAgainWithOtherInputs) {
  GraphBuilder b;
  const int x = b.input({1, 4, 6, 6});
  const int conv = b.op(Op::conv, {x, b.weight({4, 4, 3, 3})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  const Graph g = b.done(b.op(Op::relu, {b.op(Op::add, {conv, x})}));
  for (std::uint64_t seed : {1, 2, 3}) {
    testing::expect_kernel_matches_reference(*make_cudnn_backend(), testing::cuda_device(), g, "seed " + std::to_string(seed),
                                             1e-3, 1e-4, seed);
  }
}

TEST_F(CudnnGpu, AConvolutionIsTimedWithItsWeightsOutOfTheL2OnADeviceThatHasNotReadBefore) {
  GraphBuilder b;
  const int conv = b.op(Op::conv, {b.input({1, 64, 14, 14}), b.weight({64, 64, 3, 3})},
                        conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  const Function function = whole_model_function(b.done(b.op(Op::relu, {conv})));
  CudaDevice fresh(0);  // its read kernel and eviction buffer are made by the measurement
  KernelTimingOptions options;
  options.model_weight_bytes = fresh.cache_bytes();
  ASSERT_TRUE(model_weights_outgrow(fresh, options));
  collage::Result<collage::Measurement> cold = time_function(function, *make_cudnn_backend(), fresh, options);
  ASSERT_TRUE(cold.ok()) << cold.error().message;
  EXPECT_GT(cold->cost.raw(), 0.0);
}

TEST_F(CudnnGpu, AModelRunsAcrossTheCpuAndTheGpu) {
  const Graph model = testing::residual_block();
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(make_cudnn_backend());
  backends.add(make_cublas_backend());
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  devices.add(testing::cuda_device());
  // The GPU targets are cheap for what they claim, so convolutions go there and the rest stays.
  auto oracle = collage::make_oracle<Graph>("gpu first", [](const collage::DataflowGraph<Graph>& g,
                                                            const collage::Candidate& c, const auto&) {
    double cost = 0.1;
    for (std::size_t i : c.sub_graph.inside()) {
      if (g.needs_kernel(i)) cost += c.target == "general" ? 5.0 : 1.0;
    }
    return collage::Cost::value(cost);
  });
  const Configuration config{"collage", {"general", "cudnn", "cublas"}, collage::SearchAlgorithm::exact};
  auto partitioned = partition_model(*dataflow, backends, config, *oracle);
  ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  std::size_t gpu_parts = 0, copies = 0;
  for (const StepInfo& step : exe->steps()) {
    gpu_parts += step.target == "cudnn" || step.target == "cublas";
    copies += step.target == "copy";
  }
  EXPECT_GE(gpu_parts, 3u);  // conv1 + relu, conv2 + residual + relu, the pool; the Gemm too
  EXPECT_GE(copies, 1u);
  testing::expect_executable_matches_reference(*exe, model);
}

}  // namespace
}  // namespace tc
