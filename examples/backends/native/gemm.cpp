#include "backends/native/gemm.hpp"

#include <algorithm>
#include <cstring>

#include "backends/kit/fast_math.hpp"

namespace tc::native {

namespace {

constexpr std::int64_t kMr = kGemmMr;
constexpr std::int64_t kNr = kGemmNr;
constexpr int kLanes = kGemmLanes;
constexpr int kGroups = static_cast<int>(kNr) / kLanes;
static_assert(kNr % kLanes == 0, "kGemmNr must be a multiple of the vector width");
static_assert(kGemmMc % kMr == 0 && kGemmNc % kNr == 0, "cache blocks must hold whole register tiles");

/// kLanes floats in one vector register (GCC's and Clang's vector extension: the compiler keeps the
/// register tile in registers and emits one multiply-add per vector).
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void store(float* p, const Vec& v) { std::memcpy(p, &v, sizeof v); }

/// acc = A-strip (kc x MR, packed) x B-strip (kc x NR, packed); C[MR x NR] = acc, or += acc.
void micro_kernel(std::int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict c,
                  std::int64_t ldc, bool accumulate) {
  Vec acc[kMr][kGroups] = {};
  for (std::int64_t p = 0; p < kc; ++p) {
    Vec bv[kGroups];
    for (int g = 0; g < kGroups; ++g) bv[g] = load(b + p * kNr + g * kLanes);
    for (int i = 0; i < kMr; ++i) {
      const float ai = a[p * kMr + i];
      for (int g = 0; g < kGroups; ++g) acc[i][g] += ai * bv[g];
    }
  }
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    for (int g = 0; g < kGroups; ++g) {
      float* out = row + g * kLanes;
      store(out, accumulate ? load(out) + acc[i][g] : acc[i][g]);
    }
  }
}

/// Packs rows [i0, i0 + mc) and columns [k0, k0 + kc) of A as ceil(mc / MR) strips of kc x MR
/// (zero past row mc).
void pack_a(const MatrixRef& a, std::int64_t i0, std::int64_t mc, std::int64_t k0, std::int64_t kc, float* dst) {
  for (std::int64_t s = 0; s < mc; s += kMr) {
    float* strip = dst + s * kc;
    const std::int64_t rows = std::min(kMr, mc - s);
    for (std::int64_t i = 0; i < kMr; ++i) {
      if (i >= rows) {
        for (std::int64_t p = 0; p < kc; ++p) strip[p * kMr + i] = 0.0f;
        continue;
      }
      const float* src = a.data + (i0 + s + i) * a.rs + k0 * a.cs;
      if (a.cs == 1) {
        for (std::int64_t p = 0; p < kc; ++p) strip[p * kMr + i] = src[p];
      } else {
        for (std::int64_t p = 0; p < kc; ++p) strip[p * kMr + i] = src[p * a.cs];
      }
    }
  }
}

}  // namespace

bool gemm_small_m(std::int64_t m, std::int64_t n, std::int64_t k, const MatrixRef& a, const MatrixRef& b, float* c,
                  std::int64_t ldc, GemmWorkspace& workspace) {
  if (m > kGemmSmallM || (b.cs != 1 && b.rs != 1)) return false;
  // A's rows, contiguous.
  workspace.a.resize(static_cast<std::size_t>(m * k));
  float* rows = workspace.a.data();
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) rows[i * k + p] = a.data[i * a.rs + p * a.cs];
  }
  if (b.cs == 1) {
    // Row-major B: C's rows accumulate scaled rows of B, a chunk of columns at a time (in L1).
    constexpr std::int64_t kChunk = 1024;
    for (std::int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const std::int64_t cols = std::min(kChunk, n - j0);
      for (std::int64_t i = 0; i < m; ++i) std::fill(c + i * ldc + j0, c + i * ldc + j0 + cols, 0.0f);
      for (std::int64_t p = 0; p < k; ++p) {
        const float* __restrict brow = b.data + p * b.rs + j0;
        for (std::int64_t i = 0; i < m; ++i) {
          const float s = rows[i * k + p];
          float* __restrict crow = c + i * ldc + j0;
          for (std::int64_t j = 0; j < cols; ++j) crow[j] += s * brow[j];
        }
      }
    }
    return true;
  }
  // Column-major B: each element of C is a dot product of two contiguous vectors.
  for (std::int64_t j = 0; j < n; ++j) {
    const float* col = b.data + j * b.cs;
    for (std::int64_t i = 0; i < m; ++i) {
      c[i * ldc + j] = dot_of(rows + i * k, col, k);
    }
  }
  return true;
}

void pack_b_matrix(const MatrixRef& b, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst) {
  for (std::int64_t s = 0; s < nc; s += kNr) {
    float* strip = dst + s * kc;
    const std::int64_t cols = std::min(kNr, nc - s);
    for (std::int64_t p = 0; p < kc; ++p) {
      const float* src = b.data + (k0 + p) * b.rs + (j0 + s) * b.cs;
      float* out = strip + p * kNr;
      if (b.cs == 1 && cols == kNr) {
        std::memcpy(out, src, sizeof(float) * kNr);
        continue;
      }
      std::int64_t j = 0;
      for (; j < cols; ++j) out[j] = src[j * b.cs];
      for (; j < kNr; ++j) out[j] = 0.0f;
    }
  }
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const MatrixRef& a, PackB pack_b, float* c, std::int64_t ldc,
          GemmWorkspace& workspace, GemmDone done) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (std::int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    done(0, m, 0, n);
    return;
  }
  const std::int64_t kc_max = std::min(kGemmKc, k);
  const std::int64_t mc_max = std::min(kGemmMc, (m + kMr - 1) / kMr * kMr);
  const std::int64_t nc_max = std::min(kGemmNc, (n + kNr - 1) / kNr * kNr);
  workspace.a.resize(static_cast<std::size_t>(mc_max * kc_max));
  workspace.b.resize(static_cast<std::size_t>(nc_max * kc_max));
  float* pa = workspace.a.data();
  float* pb = workspace.b.data();
  float edge[kMr * kNr];
  for (std::int64_t jc = 0; jc < n; jc += kGemmNc) {
    const std::int64_t nc = std::min(kGemmNc, n - jc);
    for (std::int64_t pc = 0; pc < k; pc += kGemmKc) {
      const std::int64_t kc = std::min(kGemmKc, k - pc);
      const bool accumulate = pc > 0;
      const bool last = pc + kc == k;
      pack_b(pc, kc, jc, nc, pb);
      for (std::int64_t ic = 0; ic < m; ic += kGemmMc) {
        const std::int64_t mc = std::min(kGemmMc, m - ic);
        pack_a(a, ic, mc, pc, kc, pa);
        for (std::int64_t jr = 0; jr < nc; jr += kNr) {
          const std::int64_t cols = std::min(kNr, nc - jr);
          for (std::int64_t ir = 0; ir < mc; ir += kMr) {
            const std::int64_t rows = std::min(kMr, mc - ir);
            float* ct = c + (ic + ir) * ldc + jc + jr;
            if (rows == kMr && cols == kNr) {
              micro_kernel(kc, pa + ir * kc, pb + jr * kc, ct, ldc, accumulate);
              continue;
            }
            micro_kernel(kc, pa + ir * kc, pb + jr * kc, edge, kNr, false);
            for (std::int64_t i = 0; i < rows; ++i) {
              for (std::int64_t j = 0; j < cols; ++j) {
                ct[i * ldc + j] = accumulate ? ct[i * ldc + j] + edge[i * kNr + j] : edge[i * kNr + j];
              }
            }
          }
        }
        if (last) done(ic, ic + mc, jc, jc + nc);
      }
    }
  }
}

}  // namespace tc::native
