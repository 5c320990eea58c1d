#pragma once

/// \file
/// Index arithmetic of the cuda backend's generated kernels that goes beyond the tile programs'
/// (loops/index_math.hpp): where a convolution, a pooling window (over the loop IR's geometries,
/// loops/window.hpp), a batched matrix product or a reduction finds its operands. Plain structs of
/// constants and inline functions, compiled into every NVRTC program (the generator writes a
/// geometry as a local constant, so the compiler folds it) and into the host, where the tests run
/// the same functions as plain loops against the reference interpreter. Needs only <cstdint>.

#include <cstdint>

#include "loops/index_math.hpp"
#include "loops/window.hpp"

namespace tc::cudagen {

/// The largest number of batch dimensions of a matrix product.
inline constexpr int kMaxBatchRank = 8;

/// A quiet NaN (an average over no elements).
COLLAGE_TC_HOST_DEVICE inline float quiet_nan() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7fc00000);
#else
  return __builtin_nanf("");
#endif
}

/// Positive infinity (a maximum over no elements is its negation).
COLLAGE_TC_HOST_DEVICE inline float infinity() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7f800000);
#else
  return __builtin_huge_valf();
#endif
}

/// max(a, b) that is NaN when either is (as the native backend's and the reference's maxima).
COLLAGE_TC_HOST_DEVICE inline float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }

/// min(a, b) that is NaN when a is (as the native backend's Min).
COLLAGE_TC_HOST_DEVICE inline float nan_min(float a, float b) { return (a < b || a != a) ? a : b; }

/// x clamped to [lo, hi], NaN staying NaN (Clip, HardSigmoid).
COLLAGE_TC_HOST_DEVICE inline float clamp(float x, float lo, float hi) {
  const float a = x < lo ? lo : x;
  return a > hi ? hi : a;
}

/// A batched matrix product C = A x B: element (i, j) of batch z's A at
/// a_offset(z) + a_rs * i + a_cs * j (likewise B); C dense, [batch..., m, n].
struct GemmGeom {
  std::int64_t m, n, k;
  std::int64_t a_rs, a_cs, b_rs, b_cs;
  int batch_rank;
  std::int64_t batch[kMaxBatchRank];
  std::int64_t a_batch_strides[kMaxBatchRank];
  std::int64_t b_batch_strides[kMaxBatchRank];
};

/// The number of batches.
COLLAGE_TC_HOST_DEVICE inline std::int64_t gemm_batches(const GemmGeom& g) {
  std::int64_t count = 1;
  for (int d = 0; d < g.batch_rank; ++d) count *= g.batch[d];
  return count;
}

/// The offsets of batch z's A and B.
COLLAGE_TC_HOST_DEVICE inline void gemm_batch_offsets(const GemmGeom& g, std::int64_t z, std::int64_t* a,
                                                      std::int64_t* b) {
  std::int64_t coords[kMaxBatchRank];
  loops::unravel(z, g.batch, g.batch_rank, coords);
  *a = loops::affine_at(0, g.a_batch_strides, coords, g.batch_rank);
  *b = loops::affine_at(0, g.b_batch_strides, coords, g.batch_rank);
}

/// Where C's element (i, j) of batch z lies.
COLLAGE_TC_HOST_DEVICE inline std::int64_t gemm_output_offset(const GemmGeom& g, std::int64_t z, std::int64_t i,
                                                              std::int64_t j) {
  return (z * g.m + i) * g.n + j;
}

/// An index into a row-major [..., extent[0], extent[1], extent[2]] as the coordinates of its
/// three innermost dimensions and the index over the leading ones.
struct SpatialIndex {
  std::int64_t outer;
  std::int64_t at[3];
};

/// Index p of a row-major [..., extent[0], extent[1], extent[2]] split into a SpatialIndex.
COLLAGE_TC_HOST_DEVICE inline SpatialIndex split_spatial(std::int64_t p, const std::int64_t (&extent)[3]) {
  const std::int64_t at2 = p % extent[2];
  p /= extent[2];
  const std::int64_t at1 = p % extent[1];
  p /= extent[1];
  return SpatialIndex{p / extent[0], {p % extent[0], at1, at2}};
}

/// The columns of each group's matrix product: batch x output positions.
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_columns(const loops::ConvGeom& g) {
  return g.n * g.out[0] * g.out[1] * g.out[2];
}

/// The convolution as one matrix product per group (implicit im2col): A's element (i, kk) of
/// group z is weight (z * features + i, kk) ...
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_weight_offset(const loops::ConvGeom& g, std::int64_t z, std::int64_t i,
                                                              std::int64_t kk) {
  return (z * loops::conv_group_features(g) + i) * loops::conv_depth(g) + kk;
}

/// ... B's element (kk, j) is the input under tap kk (channel, then taps row-major) of output
/// position j (batch, then positions row-major), -1 where that tap is in the padding ...
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_image_offset(const loops::ConvGeom& g, std::int64_t z, std::int64_t kk,
                                                             std::int64_t j) {
  const std::int64_t window = loops::conv_window(g);
  const std::int64_t channel = z * loops::conv_group_channels(g) + kk / window;
  std::int64_t t = kk % window;
  const std::int64_t t2 = t % g.k[2];
  t /= g.k[2];
  const std::int64_t t1 = t % g.k[1];
  const std::int64_t t0 = t / g.k[1];
  const SpatialIndex pos = split_spatial(j, g.out);
  const std::int64_t batch = pos.outer;
  const std::int64_t i0 = pos.at[0] * g.stride[0] - g.pad[0] + t0 * g.dil[0];
  const std::int64_t i1 = pos.at[1] * g.stride[1] - g.pad[1] + t1 * g.dil[1];
  const std::int64_t i2 = pos.at[2] * g.stride[2] - g.pad[2] + t2 * g.dil[2];
  if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2]) return -1;
  return (((batch * g.c + channel) * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2;
}

/// ... and C's element (i, j) is output (batch, z * features + i, position).
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_output_offset(const loops::ConvGeom& g, std::int64_t z, std::int64_t i,
                                                              std::int64_t j) {
  const std::int64_t plane = g.out[0] * g.out[1] * g.out[2];
  const std::int64_t batch = j / plane;
  return (batch * g.m + z * loops::conv_group_features(g) + i) * plane + j % plane;
}

/// Output element o of the convolution computed directly (the depthwise kernel: one thread per
/// output, summing its group's channels and taps).
COLLAGE_TC_HOST_DEVICE inline float conv_direct(const loops::ConvGeom& g, const float* x, const float* w,
                                                std::int64_t o) {
  const SpatialIndex pos = split_spatial(o, g.out);
  const std::int64_t feature = pos.outer % g.m;
  const std::int64_t batch = pos.outer / g.m;
  const std::int64_t channels = loops::conv_group_channels(g);
  const std::int64_t first = feature / loops::conv_group_features(g) * channels;
  float acc = 0.0f;
  for (std::int64_t c = 0; c < channels; ++c) {
    const float* image = x + (batch * g.c + first + c) * g.in[0] * g.in[1] * g.in[2];
    const float* taps = w + (feature * channels + c) * loops::conv_window(g);
    for (std::int64_t t0 = 0; t0 < g.k[0]; ++t0) {
      const std::int64_t i0 = pos.at[0] * g.stride[0] - g.pad[0] + t0 * g.dil[0];
      if (i0 < 0 || i0 >= g.in[0]) continue;
      for (std::int64_t t1 = 0; t1 < g.k[1]; ++t1) {
        const std::int64_t i1 = pos.at[1] * g.stride[1] - g.pad[1] + t1 * g.dil[1];
        if (i1 < 0 || i1 >= g.in[1]) continue;
        const float* line = image + (i0 * g.in[1] + i1) * g.in[2];
        const float* row = taps + (t0 * g.k[1] + t1) * g.k[2];
        for (std::int64_t t2 = 0; t2 < g.k[2]; ++t2) {
          const std::int64_t i2 = pos.at[2] * g.stride[2] - g.pad[2] + t2 * g.dil[2];
          if (i2 < 0 || i2 >= g.in[2]) continue;
          acc += line[i2] * row[t2];
        }
      }
    }
  }
  return acc;
}

/// Output element o of the pooling: padding never wins a max; an average divides by the taps
/// inside the input, or with count_include_pad by those inside the padded input (NaN for none).
COLLAGE_TC_HOST_DEVICE inline float pool_value(const loops::PoolGeom& g, const float* x, std::int64_t o) {
  const SpatialIndex pos = split_spatial(o, g.out);
  const float* image = x + pos.outer * g.in[0] * g.in[1] * g.in[2];
  float best = -infinity();
  float sum = 0.0f;
  std::int64_t inside = 0;
  std::int64_t padded = 0;
  for (std::int64_t t0 = 0; t0 < g.k[0]; ++t0) {
    const std::int64_t i0 = pos.at[0] * g.stride[0] - g.pad[0] + t0 * g.dil[0];
    for (std::int64_t t1 = 0; t1 < g.k[1]; ++t1) {
      const std::int64_t i1 = pos.at[1] * g.stride[1] - g.pad[1] + t1 * g.dil[1];
      for (std::int64_t t2 = 0; t2 < g.k[2]; ++t2) {
        const std::int64_t i2 = pos.at[2] * g.stride[2] - g.pad[2] + t2 * g.dil[2];
        if (i0 < g.in[0] + g.pad_end[0] && i1 < g.in[1] + g.pad_end[1] && i2 < g.in[2] + g.pad_end[2]) ++padded;
        if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2]) continue;
        const float v = image[(i0 * g.in[1] + i1) * g.in[2] + i2];
        best = nan_max(v, best);
        sum += v;
        ++inside;
      }
    }
  }
  if (g.max) return best;
  const std::int64_t count = g.count_include_pad ? padded : inside;
  return count > 0 ? sum / static_cast<float>(count) : quiet_nan();
}

/// A reduction's input domain (a tile program's, coalesced): each dimension is either reduced or
/// kept, the results are the kept coordinates row-major and each result's elements the reduced
/// coordinates row-major.
struct ReduceGeom {
  int rank;
  std::int64_t dims[loops::kMaxDomainRank];
  bool reduced[loops::kMaxDomainRank];
};

/// The domain coordinates of element q of result r.
COLLAGE_TC_HOST_DEVICE inline void reduce_coords(const ReduceGeom& g, std::int64_t r, std::int64_t q,
                                                 std::int64_t* coords) {
  for (int d = g.rank - 1; d >= 0; --d) {
    std::int64_t& v = g.reduced[d] ? q : r;
    coords[d] = v % g.dims[d];
    v /= g.dims[d];
  }
}

}  // namespace tc::cudagen
