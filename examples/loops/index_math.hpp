#pragma once

/// \file
/// Index arithmetic shared by the native CPU loops and the CUDA kernels generated from the same
/// tile programs (backends/cuda/, which compiles this header into every NVRTC program):
/// unravelling linear indexes, affine offsets over a domain, and the interval of a run along the
/// innermost dimension where a bounds check holds. Plain functions over raw arrays, usable in host
/// and device code.

#include <cstdint>

#if defined(__CUDACC__)
#define COLLAGE_TC_HOST_DEVICE __host__ __device__
#else
#define COLLAGE_TC_HOST_DEVICE
#endif

namespace tc::loops {

/// The largest rank of an evaluation domain (after splitting and coalescing).
inline constexpr int kMaxDomainRank = 16;

/// Writes the row-major coordinates of `linear` in `dims[0..rank)` to `coords`.
COLLAGE_TC_HOST_DEVICE inline void unravel(std::int64_t linear, const std::int64_t* dims, int rank,
                                           std::int64_t* coords) {
  for (int d = rank - 1; d >= 0; --d) {
    const std::int64_t n = dims[d];
    if (n <= 1) {
      coords[d] = 0;
      continue;
    }
    coords[d] = linear % n;
    linear /= n;
  }
}

/// The row-major linear index of `coords` in `dims[0..rank)`.
COLLAGE_TC_HOST_DEVICE inline std::int64_t ravel(const std::int64_t* coords, const std::int64_t* dims, int rank) {
  std::int64_t linear = 0;
  for (int d = 0; d < rank; ++d) linear = linear * dims[d] + coords[d];
  return linear;
}

/// offset + sum of coef[d] * coords[d] for d < rank.
COLLAGE_TC_HOST_DEVICE inline std::int64_t affine_at(std::int64_t offset, const std::int64_t* coef,
                                                     const std::int64_t* coords, int rank) {
  std::int64_t v = offset;
  for (int d = 0; d < rank; ++d) v += coef[d] * coords[d];
  return v;
}

/// Ceiling of a / b for b > 0.
COLLAGE_TC_HOST_DEVICE inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/// Narrows [*j0, *j1) to the j where lo <= e0 + step * j < hi (step of either sign, or 0).
COLLAGE_TC_HOST_DEVICE inline void clip_to_check(std::int64_t e0, std::int64_t step, std::int64_t lo, std::int64_t hi,
                                                 std::int64_t* j0, std::int64_t* j1) {
  if (step == 0) {
    if (e0 < lo || e0 >= hi) *j1 = *j0;
    return;
  }
  std::int64_t a;
  std::int64_t b;
  if (step > 0) {
    a = ceil_div(lo - e0, step);  // first j with e >= lo
    b = ceil_div(hi - e0, step);  // first j with e >= hi
  } else {
    a = ceil_div(e0 - hi + 1, -step);  // first j with e <= hi - 1
    b = ceil_div(e0 - lo + 1, -step);  // first j with e <= lo - 1
  }
  const std::int64_t first = a > *j0 ? a : *j0;
  const std::int64_t end = b < *j1 ? b : *j1;
  if (end <= first) {
    *j1 = *j0;  // empty, and still within the caller's range
  } else {
    *j0 = first;
    *j1 = end;
  }
}

/// For a walk over the rows of a row-major domain (every coordinate but the innermost), what an
/// affine expression gains when coordinate `d` (< rank - 1) increments and the coordinates
/// between it and the innermost wrap to 0: coef[d] - sum over d < e < rank - 1 of coef[e] *
/// (dims[e] - 1).
COLLAGE_TC_HOST_DEVICE inline std::int64_t row_carry(const std::int64_t* coef, const std::int64_t* dims, int rank,
                                                     int d) {
  std::int64_t carry = coef[d];
  for (int e = d + 1; e < rank - 1; ++e) carry -= coef[e] * (dims[e] - 1);
  return carry;
}

/// The row a gather reads for index value `v` along an axis of `size` rows: v itself, or v + size
/// for a negative v; -1 when v is outside [-size, size) or not a number (truncated toward zero).
COLLAGE_TC_HOST_DEVICE inline std::int64_t gather_row(float v, std::int64_t size) {
  if (!(v >= -static_cast<float>(size) && v < static_cast<float>(size))) return -1;
  const auto k = static_cast<std::int64_t>(v);
  const std::int64_t row = k < 0 ? k + size : k;
  return row < size ? row : -1;
}

}  // namespace tc::loops
