#pragma once

/// \file
/// The native backend's blocked GEMM (BLIS-style loops over packed panels of A and B and a
/// register-tiled micro-kernel the compiler vectorises), with a callback for each finished block
/// of C so that fused epilogues run while the block is in cache.

#include <cstdint>
#include <vector>

#include "backends/native/function_ref.hpp"

namespace tc::native {

/// The micro-kernel's register tile, sized to the vector registers the build targets
/// (TC_CPU_ARCH_FLAGS): AVX-512 has 32 of 16 floats (12 x 32: 24 accumulators), AVX2 16 of 8
/// (6 x 16: 12 accumulators), baseline x86-64 16 of 4 (8 x 8 is fastest with GCC; Clang spills that
/// tile and does best with 6 x 8, see docs/kernels.md). Only the native backend's own sources,
/// all compiled with those flags, may use these.
#if defined(__AVX512F__)
inline constexpr int kGemmLanes = 16;
inline constexpr std::int64_t kGemmMr = 12;
inline constexpr std::int64_t kGemmNr = 32;
#elif defined(__AVX2__) && defined(__FMA__)
inline constexpr int kGemmLanes = 8;
inline constexpr std::int64_t kGemmMr = 6;
inline constexpr std::int64_t kGemmNr = 16;
#else
inline constexpr int kGemmLanes = 4;
#if defined(__clang__)
inline constexpr std::int64_t kGemmMr = 6;
#else
inline constexpr std::int64_t kGemmMr = 8;
#endif
inline constexpr std::int64_t kGemmNr = 8;
#endif
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

/// Rows up to which gemm_small_m beats packing (matrix-vector shapes: a classifier at batch 1).
inline constexpr std::int64_t kGemmSmallM = 4;

/// C = A x B for at most kGemmSmallM rows, streaming B once without packing it: row-major B by
/// scaled row additions, column-major B (a transposed weight) by dot products. False, with C
/// untouched, when B is neither.
bool gemm_small_m(std::int64_t m, std::int64_t n, std::int64_t k, const MatrixRef& a, const MatrixRef& b, float* c,
                  std::int64_t ldc, GemmWorkspace& workspace);

/// pack_b for a matrix in memory.
void pack_b_matrix(const MatrixRef& b, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst);

}  // namespace tc::native
