#pragma once

/// \file
/// What the cublas backend computes for one call, worked out on the host with no GPU: a MatMul or
/// Gemm with the epilogue cuBLASLt fuses into it (a scale, a bias vector, a same-shape addend as
/// its C matrix, relu or GELU), as a row-major batched problem (CallPlan), and that problem in
/// the column-major terms cuBLASLt takes (LtProblem).

#include <cstddef>
#include <cstdint>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/kit/library_call.hpp"
#include "tensor/graph.hpp"

namespace tc::cublas {

/// Choices of the cublas backend.
struct Options {
  /// Run erf GELU (the decomposed Div/Erf/Add/Mul/Mul exporters emit) as cuBLASLt's GELU epilogue,
  /// which is the tanh approximation: it differs from erf GELU by up to 4.7e-4 absolute (near
  /// x = -2.7), beyond the default output check (rtol 1e-3, atol 1e-4), so it is off by default.
  bool approximate_gelu = false;
  /// TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32, 10-bit mantissa products) instead of full
  /// FP32 arithmetic (CUBLAS_COMPUTE_32F).
  bool tf32 = false;
  /// The most scratch memory one matmul may use (the algorithm heuristic's limit).
  std::size_t max_workspace_bytes = std::size_t{32} << 20;
};

/// The activation applied last by the epilogue.
enum class Activation { none, relu, gelu_tanh };

/// One call of the cublas backend, row-major: for each batch b,
///
///     D[b] = act(alpha * op(A[b]) * op(B[b]) + beta * C[b] + bias)
///
/// with op(A) of m x k, op(B) of k x n, D and C dense m x n, bias a length-n vector added to every
/// row. Node ids are of the graph the plan was made from.
struct CallPlan {
  int a = -1;
  int b = -1;
  /// The same-shape addend, or -1 (beta is then 0).
  int c = -1;
  /// The bias vector, or -1.
  int bias = -1;
  /// The call's last node: its value is D.
  int result = -1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  /// A is stored k x m (B: n x k), as Gemm's transA (transB) says.
  bool trans_a = false;
  bool trans_b = false;
  /// Elements between consecutive batches of A and of B; 0 when every batch reads the same matrix.
  std::int64_t stride_a = 0;
  std::int64_t stride_b = 0;
  double alpha = 1.0;
  double beta = 0.0;
  Activation activation = Activation::none;
};

/// The nodes whose values `plan` reads (A, B, then C and the bias; -1 for absent ones).
std::vector<int> operands(const CallPlan& plan);

/// Plans `call` of `graph` (shapes inferred), read as an anchor and its epilogue (see
/// read_anchor_chain): a MatMul or Gemm, then optionally a scale by a scalar constant (Div or
/// Mul), up to two Adds of a value from outside the call (a length-n vector becomes the bias, a
/// tensor of the result's shape C; Gemm's own C counts as one), and last Relu or, with
/// options.approximate_gelu, GELU in its erf forms. Fails naming what cuBLASLt cannot express:
/// batch dims that broadcast other than "all" or "none", an addend of another shape, two biases,
/// an operation it does not fuse.
collage::Result<CallPlan> plan(const Graph& graph, const LibraryCall& call, const Options& options);

/// One matrix as cuBLASLt sees it: column-major, rows x cols with leading dimension ld, batches
/// batch_stride elements apart.
struct LtMatrix {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};

/// A CallPlan as a column-major cuBLASLt problem. Row-major D = op(A) op(B) is column-major
/// D^T = op(B)^T op(A)^T, so cuBLASLt's "A" is the plan's B and its "B" is the plan's A:
///
///     D'[b] (n x m) = act(alpha * opA'(A'[b]) * opB'(B'[b]) + beta * C'[b] + bias)
///
/// with the bias indexed by D's rows (the plan's n, as cuBLASLt's bias epilogue wants).
struct LtProblem {
  /// Whether cuBLASLt transposes its A (the plan's B) and its B (the plan's A).
  bool trans_a = false;
  bool trans_b = false;
  LtMatrix a;
  LtMatrix b;
  /// The layout of C and of D.
  LtMatrix d;
  std::int64_t batch = 1;
};

/// The column-major problem of `plan`.
LtProblem lt_problem(const CallPlan& plan);

}  // namespace tc::cublas
