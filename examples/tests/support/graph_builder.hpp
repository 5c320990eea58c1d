#pragma once

/// \file
/// What every test of the example compiler builds graphs with: seeded random tensors, and
/// GraphBuilder, which adds inputs, random weights and operators (each operator's shape inferred
/// as it is added) without error values to handle: a mistake in a test's graph is a test failure
/// naming it, and the build goes on.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tensor/graph.hpp"
#include "tensor/shape_inference.hpp"

namespace tc::testing {

/// A tensor of `shape` with values uniform in [lo, hi] from `rng`.
inline Tensor random_tensor(const Shape& shape, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.data) v = dist(rng);
  return t;
}

/// A uniform integer in [lo, hi] from `rng`.
inline std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

/// One random tensor from `rng`, uniform in [lo, hi], per input of `g` (in order).
inline std::vector<Tensor> random_inputs(const Graph& g, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  std::vector<Tensor> out;
  for (int in : g.inputs()) out.push_back(random_tensor(g.node(in).shape, rng, lo, hi));
  return out;
}

/// One seeded random tensor, uniform in [lo, hi], per input of `g`.
inline std::vector<Tensor> random_inputs(const Graph& g, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  return random_inputs(g, rng, lo, hi);
}

/// Builds a graph node by node. Names are made up ("in0", "w3", "s5"); operators get their shapes
/// (and canonical attributes) as they are added, so shape() reads them while building.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::uint64_t seed = 1) : rng_(seed) {}

  /// A graph input of `shape`, named `name` ("in<k>" when empty).
  int input(const Shape& shape, std::string name = "") {
    return g_.add_input(name.empty() ? "in" + std::to_string(g_.size()) : std::move(name), shape);
  }
  /// A constant of `shape` with values uniform in [lo, hi].
  int weight(const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
    return g_.add_constant("w" + std::to_string(g_.size()), random_tensor(shape, rng_, lo, hi));
  }
  /// A constant holding `value`.
  int constant(Tensor value) { return g_.add_constant("c" + std::to_string(g_.size()), std::move(value)); }
  /// A one-element constant of rank 0.
  int scalar(float v) { return constant(Tensor(Shape{}, std::vector<float>{v})); }

  /// `op` over `inputs`; a wrong arity, a bad input index or a shape that does not fit fails the
  /// test and returns the node anyway (or the first input when it could not be added).
  int op(Op op, std::vector<int> inputs, Attributes attrs = {}) {
    const int fallback = inputs.empty() ? 0 : inputs.front();
    collage::Result<int> n = g_.add_op(op, std::move(inputs), std::move(attrs));
    if (!n.ok()) {
      ADD_FAILURE() << n.error().message;
      return fallback;
    }
    collage::Status inferred = infer_node_shape(g_, *n);
    EXPECT_TRUE(inferred.ok()) << inferred.message();
    return *n;
  }
  /// A reduction of `x` over `axes`.
  int reduce(Op op, int x, std::vector<std::int64_t> axes, bool keepdims = true) {
    Attributes a;
    a.set("axes", std::move(axes));
    a.set("keepdims", keepdims ? 1 : 0);
    return this->op(op, {x}, std::move(a));
  }

  /// GELU as nn.GELU exports it: (x * (erf(x / sqrt 2) + 1)) * 0.5.
  int gelu(int x) {
    const int e = op(Op::erf, {op(Op::div, {x, scalar(1.4142135f)})});
    return op(Op::mul, {op(Op::mul, {x, op(Op::add, {e, scalar(1.0f)})}), scalar(0.5f)});
  }
  /// GELU's other exported form, operands swapped: (0.5 * x) * (1 + erf((1 / sqrt 2) * x)).
  int gelu_swapped(int x) {
    const int half = op(Op::mul, {scalar(0.5f), x});
    const int e = op(Op::erf, {op(Op::mul, {scalar(0.70710678f), x})});
    return op(Op::mul, {half, op(Op::add, {scalar(1.0f), e})});
  }
  /// LayerNorm over the last `axes` dims as exporters decompose it (ReduceMean, Sub, Pow,
  /// ReduceMean, Add, Sqrt, Div), then times `scale` and plus `bias` when given (>= 0).
  int layer_norm(int x, std::size_t axes, int scale = -1, int bias = -1, float eps = 1e-5f) {
    const std::size_t rank = shape(x).size();
    std::vector<std::int64_t> reduced;
    for (std::size_t d = rank - axes; d < rank; ++d) reduced.push_back(static_cast<std::int64_t>(d));
    const int mean = reduce(Op::reduce_mean, x, reduced);
    const int diff = op(Op::sub, {x, mean});
    const int var = reduce(Op::reduce_mean, op(Op::pow, {diff, scalar(2.0f)}), reduced);
    int y = op(Op::div, {diff, op(Op::sqrt, {op(Op::add, {var, scalar(eps)})})});
    if (scale >= 0) y = op(Op::mul, {y, scale});
    if (bias >= 0) y = op(Op::add, {y, bias});
    return y;
  }

  /// The shape of node `n` (known for every node added so far).
  const Shape& shape(int n) const { return g_.node(n).shape; }
  /// Marks `n` a graph output.
  void output(int n) { g_.add_output(n); }
  /// The graph so far (outputs as marked).
  const Graph& graph() const { return g_; }
  /// The graph with `outputs` (added to those marked so far); the builder is left empty.
  Graph done(const std::vector<int>& outputs = {}) {
    for (int n : outputs) g_.add_output(n);
    return std::exchange(g_, Graph{});
  }
  Graph done(int output) { return done(std::vector<int>{output}); }

  std::mt19937_64& rng() { return rng_; }

 private:
  Graph g_;
  std::mt19937_64 rng_;
};

/// Conv attributes: pads (begins then ends), strides, dilations, group.
inline Attributes conv_attributes(std::vector<std::int64_t> pads, std::vector<std::int64_t> strides,
                                  std::vector<std::int64_t> dilations, std::int64_t group = 1) {
  Attributes a;
  a.set("pads", std::move(pads));
  a.set("strides", std::move(strides));
  a.set("dilations", std::move(dilations));
  a.set("group", group);
  return a;
}

/// MaxPool / AveragePool attributes.
inline Attributes pool_attributes(std::vector<std::int64_t> kernel, std::vector<std::int64_t> strides,
                                  std::vector<std::int64_t> pads, bool ceil_mode = false, bool count_include_pad = false) {
  Attributes a;
  a.set("kernel_shape", std::move(kernel));
  a.set("strides", std::move(strides));
  a.set("pads", std::move(pads));
  a.set("ceil_mode", ceil_mode ? 1 : 0);
  a.set("count_include_pad", count_include_pad ? 1 : 0);
  return a;
}

/// Gemm attributes, as ONNX names them.
inline Attributes gemm_attributes(bool trans_a, bool trans_b, float alpha = 1.0f, float beta = 1.0f) {
  Attributes a;
  a.set("transA", trans_a ? 1 : 0);
  a.set("transB", trans_b ? 1 : 0);
  a.set("alpha", alpha);
  a.set("beta", beta);
  return a;
}

}  // namespace tc::testing
