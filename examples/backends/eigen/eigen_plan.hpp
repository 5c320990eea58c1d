#pragma once

/// \file
/// What the eigen backend will do for one library call, decided from the graph alone (no Eigen):
/// a batched GEMM or an im2col convolution, each with a fused epilogue (added tensors such as a
/// bias, then relu, clip or GELU). The partition rule uses it to propose only what compiles, and
/// the compiler builds its kernel from it.

#include <cstdint>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/kit/library_call.hpp"
#include "tensor/graph.hpp"

namespace tc::eigen {

/// A tensor added to a GEMM's output, read through the output's [rows, cols] view: element
/// (r, c) adds scale * value[(r % period) * row_stride + c * col_stride] (a stride of 0 repeats).
struct AddendPlan {
  int node = -1;
  std::int64_t period = 1;
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 0;
  float scale = 1.0f;
};

/// The activation ending an epilogue.
enum class Activation { none, relu, clip, gelu_erf };

/// What is applied to each output block once its GEMM is done, while it is in cache.
struct EpiloguePlan {
  std::vector<AddendPlan> addends;
  Activation activation = Activation::none;
  float lo = 0.0f;  ///< clip bounds
  float hi = 0.0f;
};

/// out[i] = alpha * op(A[i]) * op(B[i]) for each batch element i, with row-major [m, k] / [k, n]
/// operands (op transposes when asked). When B is shared by every batch element and A is dense,
/// the batch is folded into m (one GEMM of batch * m rows).
struct GemmPlan {
  int a = -1;
  int b = -1;
  std::int64_t m = 0, k = 0, n = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  /// Offsets (in floats) of each batch element's A and B; the output's is i * m * n.
  std::vector<std::int64_t> a_offsets, b_offsets;
};

/// A 1-D or 2-D convolution (1-D as height 1) as im2col + one GEMM per image and group.
struct ConvPlan {
  int x = -1;
  int w = -1;
  std::int64_t batch = 0, channels = 0, height = 0, width = 0;
  std::int64_t out_channels = 0, kernel_h = 0, kernel_w = 0, out_h = 0, out_w = 0;
  std::int64_t group = 1;
  std::int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, dilation_h = 1, dilation_w = 1;

  /// A 1x1 kernel, stride 1, no padding: the input is its own im2col matrix.
  bool pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0 &&
           out_h == height && out_w == width;
  }
};

/// One call of the eigen backend.
struct CallPlan {
  enum class Kind { gemm, conv };
  Kind kind = Kind::gemm;
  GemmPlan gemm;
  ConvPlan conv;
  EpiloguePlan epilogue;
  /// The node the call writes.
  int root = -1;
};

/// Plans `call` of `g` (a Function's graph or a model): MatMul (batched, broadcasting) or Gemm, or
/// a 1-D/2-D Conv with constant weights (any group), then constant addends broadcast along the
/// output's batch (a bias), then at most one of Relu, Clip, GELU (erf form). Anything else is an
/// error naming it ("Conv with 3 spatial dims").
collage::Result<CallPlan> plan(const Graph& g, const LibraryCall& call);

/// The nodes whose values `plan` reads.
std::vector<int> operands(const CallPlan& plan);

}  // namespace tc::eigen
