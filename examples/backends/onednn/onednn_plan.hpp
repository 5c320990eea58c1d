#pragma once

/// \file
/// What the onednn backend will do for one library call, decided from the graph alone (no
/// oneDNN): one primitive with its post-ops, in plain row-major layouts. The partition rule uses it
/// to propose only what compiles (and under its one canonical name), the compiler builds the
/// primitive from it.

#include <cstdint>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/kit/library_call.hpp"
#include "tensor/graph.hpp"

namespace tc::onednn {

using Dims = std::vector<std::int64_t>;

/// oneDNN eltwise algorithms the backend uses (alpha and beta as oneDNN defines them).
enum class Eltwise { relu, clip, logistic, tanh, gelu_erf, swish, exp, log, sqrt, abs, linear, pow };

/// oneDNN binary algorithms.
enum class Binary { add, sub, mul, div, max, min };

/// A tensor a primitive reads: a node of the graph seen with `dims` (and `strides` in elements,
/// dense row-major when empty). A constant may be scaled once at compile time (`scale`) and, for
/// normalisation parameters, broadcast to `dims`.
struct Operand {
  int node = -1;
  Dims dims;
  Dims strides;
  float scale = 1.0f;

  bool present() const { return node >= 0; }
};

/// One post-op of a convolution or matmul: an eltwise algorithm or a binary one with `operand`
/// (broadcast to the destination; dims aligned to its rank).
struct PostOp {
  bool is_binary = false;
  Eltwise eltwise = Eltwise::relu;
  float alpha = 0.0f;
  float beta = 0.0f;
  Binary binary = Binary::add;
  Operand operand;
};

/// Pooling algorithms.
enum class Pooling { max, avg_include_padding, avg_exclude_padding };

/// Reduction algorithms.
enum class Reduction { sum, mean, max };

/// One call of the onednn backend: a primitive, its operands and post-ops.
struct CallPlan {
  enum class Kind { conv, matmul, pool, softmax, layer_norm, batch_norm, eltwise, binary, reduction, transpose, concat };
  Kind kind = Kind::eltwise;
  /// The canonical composite name of what it fuses ("onednn.conv_bias_sum_relu"); "onednn." and
  /// the operator's name for a single operator.
  std::string name;
  /// The node the call writes, and its dims as the primitive sees them.
  int root = -1;
  Dims dst;
  /// conv: src, weights (grouped [G, M/G, C/G, k...] when group > 1), bias. matmul: src,
  /// weights, bias. Others: src (and weights for a binary's second operand; scale and shift for
  /// the normalisations; mean and variance for batch norm).
  Operand src, weights, bias, scale, shift, mean, variance;
  /// concat: every input, in order (src is the first).
  std::vector<Operand> sources;
  std::vector<PostOp> post_ops;
  /// matmul: oneDNN's output scale, applied to the product plus bias before the post-ops.
  float output_scale = 1.0f;
  /// conv / pooling windows: kernel spatial sizes, strides, dilations (oneDNN's, counting from
  /// 0), padding.
  Dims kernel, strides, dilations, pad_l, pad_r;
  Pooling pooling = Pooling::max;
  Reduction reduction = Reduction::sum;
  Eltwise eltwise = Eltwise::relu;
  Binary binary = Binary::add;
  float alpha = 0.0f;
  float beta = 0.0f;
  /// softmax and concat axis.
  int axis = 0;
  /// layer / batch norm: the shape scale, shift, mean and variance broadcast to (oneDNN reads
  /// them as one vector of numel(param_shape)), epsilon, and for batch norm a fused Relu.
  Dims param_shape;
  float epsilon = 0.0f;
  bool fuse_relu = false;
  /// conv: run as oneDNN's Winograd convolution (the onednn_winograd backend's plans).
  bool winograd = false;
};

/// Whether `p` is a convolution of the shape oneDNN's Winograd kernels take: 2-D, 3x3, stride 1,
/// not dilated, not grouped.
bool winograd_shape(const CallPlan& p);

/// Plans `call` of `g` (a Function's graph or a model). Composite calls: Conv or MatMul / Gemm
/// followed by a bias, a scale (MatMul/Gemm), a sum and an activation (post-ops); LayerNorm as
/// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add); BatchNormalization + Relu; GELU or SiLU
/// alone. Single operators: Conv, MatMul, Gemm, pooling, Softmax, LayerNormalization,
/// BatchNormalization, ReduceMean/Sum/Max, Transpose, Concat, eltwise (Relu, Sigmoid, Tanh, Exp, Log,
/// Sqrt, Abs, Clip, LeakyRelu, Neg, Reciprocal, Pow by a constant) and binary (Add, Sub, Mul, Div,
/// Max, Min, one operand of the output's shape). Anything else is an error naming it.
collage::Result<CallPlan> plan(const Graph& g, const LibraryCall& call);

/// The nodes whose values `plan` reads (-1 for absent ones).
std::vector<int> operands(const CallPlan& plan);

/// Whether every window of a convolution or pooling plan reads some element of its input (none
/// lies wholly in the padding, as a pad as large as the kernel or a dilation spreading the taps
/// over it can make one).
bool every_window_reads_input(const CallPlan& p);

}  // namespace tc::onednn
