#include "backends/native/gemm.hpp"

#include <algorithm>
#include <cstring>

namespace tc::native {

namespace {

constexpr std::int64_t kMr = kGemmMr;
constexpr std::int64_t kNr = kGemmNr;
constexpr int kLanes = 4;  // the SSE width every x86-64 has; wider targets vectorise the groups as well
constexpr int kGroups = static_cast<int>(kNr) / kLanes;
static_assert(kNr % kLanes == 0, "kGemmNr must be a multiple of the lane group");

/// kLanes consecutive values of a row of the register tile. Writing the micro-kernel over these
/// small groups (rather than one MR x NR array) makes GCC and Clang keep the tile in vector
/// registers.
struct Lanes {
  float v[kLanes];
};

/// acc = A-strip (kc x MR, packed) x B-strip (kc x NR, packed); C[MR x NR] = acc, or += acc.
void micro_kernel(std::int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict c,
                  std::int64_t ldc, bool accumulate) {
  Lanes acc[kMr][kGroups];
  for (auto& row : acc) {
    for (Lanes& g : row) {
      for (float& x : g.v) x = 0.0f;
    }
  }
  for (std::int64_t p = 0; p < kc; ++p) {
    Lanes bv[kGroups];
    for (int g = 0; g < kGroups; ++g) {
      for (int l = 0; l < kLanes; ++l) bv[g].v[l] = b[p * kNr + g * kLanes + l];
    }
    for (int i = 0; i < kMr; ++i) {
      const float ai = a[p * kMr + i];
      for (int g = 0; g < kGroups; ++g) {
        for (int l = 0; l < kLanes; ++l) acc[i][g].v[l] += ai * bv[g].v[l];
      }
    }
  }
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    for (int g = 0; g < kGroups; ++g) {
      for (int l = 0; l < kLanes; ++l) {
        if (accumulate) {
          row[g * kLanes + l] += acc[i][g].v[l];
        } else {
          row[g * kLanes + l] = acc[i][g].v[l];
        }
      }
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
