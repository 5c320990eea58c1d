#pragma once

/// \file
/// The native backend's blocked GEMM (BLIS-style loops over packed panels of A and B and a
/// register-tiled micro-kernel the compiler vectorises), with a callback for each finished block
/// of C so that fused epilogues run while the block is in cache.

#include <cstdint>
#include <vector>

#include "backends/native/function_ref.hpp"

namespace tc::native {

/// Rows and columns of the micro-kernel's register tile.
inline constexpr std::int64_t kGemmMr = 6;
inline constexpr std::int64_t kGemmNr = 8;
/// Cache blocking: a kc x nc panel of B (L2), an mc x kc block of A (L2), kc x nr strips of B (L1).
inline constexpr std::int64_t kGemmKc = 256;
inline constexpr std::int64_t kGemmMc = 96;
inline constexpr std::int64_t kGemmNc = 512;

/// Packed panels, reused across calls.
struct GemmWorkspace {
  std::vector<float> a;
  std::vector<float> b;
};

/// A row-major-or-not matrix: element (i, j) at data[i * rs + j * cs].
struct MatrixRef {
  const float* data = nullptr;
  std::int64_t rs = 0;
  std::int64_t cs = 0;
};

/// Writes rows [k0, k0 + kc) and columns [j0, j0 + nc) of B into `dst` as ceil(nc / kGemmNr)
/// panels, each kc rows of kGemmNr consecutive values (zero past column nc).
using PackB = FunctionRef<void(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst)>;
/// Called once C[i0, i1) x [j0, j1) holds its final values.
using GemmDone = FunctionRef<void(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1)>;

/// C = A x B with A m x k, B k x n (through pack_b), C row-major with leading dimension ldc.
/// Single-threaded. With k == 0, C is zeroed.
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const MatrixRef& a, PackB pack_b, float* c, std::int64_t ldc,
          GemmWorkspace& workspace, GemmDone done);

/// pack_b for a matrix in memory.
void pack_b_matrix(const MatrixRef& b, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst);

}  // namespace tc::native
