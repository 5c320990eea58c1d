#pragma once

/// \file
/// What the cudnn backend computes for one call, worked out on the host with no GPU: the cuDNN
/// descriptors' parameters of a convolution with the bias, residual and relu cuDNN fuses into it,
/// a pooling, or a softmax. cuDNN's legacy descriptors take tensors of 4 or 5 dimensions and one
/// pad per spatial dimension, so 1-D problems get a unit height and asymmetric pads are refused.

#include <variant>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/kit/library_call.hpp"
#include "tensor/graph.hpp"

namespace tc::cudnn {

/// Choices of the cudnn backend.
struct Options {
  /// Let convolutions use TF32 tensor cores (CUDNN_DEFAULT_MATH) instead of FMA arithmetic only
  /// (CUDNN_FMA_MATH, full FP32).
  bool tf32 = false;
  /// The most scratch memory one convolution's algorithm may use.
  std::size_t max_workspace_bytes = std::size_t{256} << 20;
};

/// A convolution, y = act(conv(x, w) + z + bias), NC(D)HW.
struct ConvPlan {
  int x = -1;
  int w = -1;
  /// A per-output-channel bias (K values), or -1.
  int bias = -1;
  /// A tensor of y's shape added before the activation (a residual), or -1.
  int z = -1;
  int result = -1;
  bool relu = false;
  /// cuDNN's tensor and filter dimensions (4 or 5 of them).
  std::vector<int> x_dims;
  std::vector<int> w_dims;
  std::vector<int> y_dims;
  /// Per spatial dimension of the cuDNN problem (2 or 3 of them).
  std::vector<int> pads;
  std::vector<int> strides;
  std::vector<int> dilations;
  int groups = 1;
};

/// How a pooling reduces its window.
enum class PoolMode { max, average_include_pad, average_exclude_pad };

/// A pooling, NC(D)HW.
struct PoolPlan {
  int x = -1;
  int result = -1;
  PoolMode mode = PoolMode::max;
  std::vector<int> x_dims;
  std::vector<int> y_dims;
  std::vector<int> window;
  std::vector<int> pads;
  std::vector<int> strides;
};

/// A softmax over one axis, as cuDNN's channel softmax of an N x C x H x 1 tensor: N the product
/// of the dimensions before the axis, C the axis, H the product of those after it.
struct SoftmaxPlan {
  int x = -1;
  int result = -1;
  std::vector<int> dims;
};

/// One call of the cudnn backend.
using CallPlan = std::variant<ConvPlan, PoolPlan, SoftmaxPlan>;

/// The nodes whose values `plan` reads (-1 for absent ones).
std::vector<int> operands(const CallPlan& plan);

/// Plans `call` of `graph` (shapes and attributes canonical): a Conv followed, read as an anchor
/// and its epilogue (see read_anchor_chain), by up to two Adds of values from outside the call (a
/// per-channel vector becomes the bias, unless Conv has one; a tensor of the output's shape the
/// residual z) and a Relu last; or one MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool or
/// Softmax. Fails naming what cuDNN cannot do: asymmetric pads, dilated or ceil-mode pooling that
/// changes the output size, tensors of more than 2^31 - 1 elements, other operators.
collage::Result<CallPlan> plan(const Graph& graph, const LibraryCall& call);

}  // namespace tc::cudnn
