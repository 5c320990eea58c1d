#include "backends/native/conv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/kit/fast_math.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc::native {

namespace {

/// Channels per group up to which a grouped convolution runs the direct loop (per group, the GEMM
/// would have a tiny K and few rows).
constexpr std::int64_t kDirectMaxGroupChannels = 4;

/// Output positions o in [0, out) with 0 <= o * stride + offset < in: [*lo, *hi).
void valid_outputs(std::int64_t offset, std::int64_t stride, std::int64_t in, std::int64_t out, std::int64_t* lo,
                   std::int64_t* hi) {
  std::int64_t a = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  std::int64_t b = in - offset <= 0 ? 0 : (in - offset + stride - 1) / stride;
  *lo = std::min(a, out);
  *hi = std::max(*lo, std::min(b, out));
}

}  // namespace

ConvKernel::ConvKernel(const loops::ConvGeom& geom) : g_(geom) {
  cg_ = loops::conv_group_channels(g_);
  mg_ = loops::conv_group_features(g_);
  // The direct loop runs the two inner spatial dimensions (the outer one of size 1, unpadded).
  const bool planar = g_.in[0] == 1 && g_.out[0] == 1 && g_.k[0] == 1 && g_.pad[0] == 0;
  direct_ = planar && g_.group > 1 && cg_ <= kDirectMaxGroupChannels;
  pointwise_ = loops::conv_window(g_) == 1;
  for (int j = 0; j < 3; ++j) pointwise_ = pointwise_ && g_.stride[j] == 1 && g_.pad[j] == 0 && g_.out[j] == g_.in[j];
}

void ConvKernel::pack_image(const float* x, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc,
                            float* dst) {
  const std::int64_t kvol = g_.k[0] * g_.k[1] * g_.k[2];
  const std::int64_t plane = g_.in[0] * g_.in[1] * g_.in[2];
  const std::int64_t out_w = g_.out[2];
  const std::int64_t stride_w = g_.stride[2];
  for (std::int64_t p = 0; p < kc; ++p) {
    const std::int64_t row = k0 + p;
    const std::int64_t c = row / kvol;
    const std::int64_t t = row % kvol;
    const std::int64_t tap[3] = {t / (g_.k[1] * g_.k[2]), (t / g_.k[2]) % g_.k[1], t % g_.k[2]};
    const float* image = x + c * plane;
    // Output columns o2 whose input column is inside the image: [lo, hi).
    const std::int64_t offset = tap[2] * g_.dil[2] - g_.pad[2];
    std::int64_t lo = 0;
    std::int64_t hi = 0;
    valid_outputs(offset, stride_w, g_.in[2], out_w, &lo, &hi);
    // Column jj of the block is output position j0 + jj; walk it one output row at a time, and
    // within a row one packed strip (kGemmNr columns) at a time.
    std::int64_t o1 = (j0 / out_w) % g_.out[1];
    std::int64_t o0 = j0 / (out_w * g_.out[1]);
    std::int64_t o2 = j0 % out_w;
    for (std::int64_t jj = 0; jj < nc;) {
      const std::int64_t id = o0 * g_.stride[0] - g_.pad[0] + tap[0] * g_.dil[0];
      const std::int64_t ih = o1 * g_.stride[1] - g_.pad[1] + tap[1] * g_.dil[1];
      const bool row_inside = id >= 0 && id < g_.in[0] && ih >= 0 && ih < g_.in[1];
      const float* line = row_inside ? image + (id * g_.in[1] + ih) * g_.in[2] : nullptr;
      const std::int64_t row_end = jj + std::min(out_w - o2, nc - jj);
      while (jj < row_end) {
        const std::int64_t lane = jj % kGemmNr;
        const std::int64_t n = std::min(kGemmNr - lane, row_end - jj);
        float* out = dst + (jj / kGemmNr) * kc * kGemmNr + p * kGemmNr + lane;
        // Within [0, n): zeros before a, the image over [a, b), zeros after.
        const std::int64_t a = row_inside ? std::clamp(lo - o2, std::int64_t{0}, n) : n;
        const std::int64_t b = row_inside ? std::clamp(hi - o2, a, n) : n;
        std::fill(out, out + a, 0.0f);
        if (stride_w == 1) {
          std::copy(line + o2 + a + offset, line + o2 + b + offset, out + a);
        } else {
          for (std::int64_t l = a; l < b; ++l) out[l] = line[(o2 + l) * stride_w + offset];
        }
        std::fill(out + b, out + n, 0.0f);
        jj += n;
        o2 += n;
      }
      if (o2 == out_w) {
        o2 = 0;
        if (++o1 == g_.out[1]) {
          o1 = 0;
          ++o0;
        }
      }
    }
    // Zeros past column nc, to the end of the last strip.
    const std::int64_t tail = nc % kGemmNr;
    if (tail != 0) {
      float* out = dst + (nc / kGemmNr) * kc * kGemmNr + p * kGemmNr;
      std::fill(out + tail, out + kGemmNr, 0.0f);
    }
  }
}

void ConvKernel::run(const float* x, const float* w, float* out, RangeDone done, int part, int parts) {
  if (direct_) {
    run_direct(x, w, out, done, part, parts);
    return;
  }
  const std::int64_t spatial = g_.out[0] * g_.out[1] * g_.out[2];
  const std::int64_t plane = g_.in[0] * g_.in[1] * g_.in[2];
  const std::int64_t kvol = g_.k[0] * g_.k[1] * g_.k[2];
  const std::int64_t kdim = cg_ * kvol;
  // This part's channels of each group [i_lo, i_hi) and output columns [j_lo, j_hi).
  const OutputBlock block = share_output(mg_, spatial, kGemmMr, kGemmNr, part, parts);
  if (block.empty()) return;
  const std::int64_t i_lo = block.i0, i_hi = block.i1, j_lo = block.j0, j_hi = block.j1;
  for (std::int64_t n = 0; n < g_.n; ++n) {
    for (std::int64_t g = 0; g < g_.group; ++g) {
      const float* image = x + (n * g_.c + g * cg_) * plane;
      float* result = out + (n * g_.m + g * mg_ + i_lo) * spatial + j_lo;
      const MatrixRef a{w + (g * mg_ + i_lo) * kdim, kdim, 1};
      auto pack = [&](std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst) {
        if (pointwise_) {
          pack_b_matrix(MatrixRef{image, plane, 1}, k0, kc, j_lo + j0, nc, dst);
        } else {
          pack_image(image, k0, kc, j_lo + j0, nc, dst);
        }
      };
      const std::int64_t base = result - out;
      const std::int64_t cols = j_hi - j_lo;
      auto finished = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
        if (j0 == 0 && j1 == spatial) {
          done(base + i0 * spatial, base + i1 * spatial);
          return;
        }
        for (std::int64_t i = i0; i < i1; ++i) done(base + i * spatial + j0, base + i * spatial + j1);
      };
      gemm(i_hi - i_lo, cols, kdim, a, pack, result, spatial, workspace_, finished);
    }
  }
}

void ConvKernel::run_direct(const float* x, const float* w, float* out, RangeDone done, int part, int parts) {
  // The two inner spatial dimensions (the outer one is of size 1 and unpadded).
  const std::int64_t h = g_.in[1], wd = g_.in[2], oh = g_.out[1], ow = g_.out[2];
  const std::int64_t kh = g_.k[1], kw = g_.k[2];
  const std::int64_t sh = g_.stride[1], sw = g_.stride[2];
  const std::int64_t plane = h * wd;
  const std::int64_t out_plane = oh * ow;
  const auto [m_lo, m_hi] = share(g_.m, 1, part, parts);
  for (std::int64_t n = 0; n < g_.n; ++n) {
    for (std::int64_t m = m_lo; m < m_hi; ++m) {
      const std::int64_t g = m / mg_;
      float* result = out + (n * g_.m + m) * out_plane;
      std::fill(result, result + out_plane, 0.0f);
      for (std::int64_t c = 0; c < cg_; ++c) {
        const float* image = x + (n * g_.c + g * cg_ + c) * plane;
        const float* weights = w + (m * cg_ + c) * kh * kw;
        for (std::int64_t y = 0; y < oh; ++y) {
          float* row = result + y * ow;
          for (std::int64_t ty = 0; ty < kh; ++ty) {
            const std::int64_t iy = y * sh - g_.pad[1] + ty * g_.dil[1];
            if (iy < 0 || iy >= h) continue;
            const float* in_row = image + iy * wd;
            for (std::int64_t tx = 0; tx < kw; ++tx) {
              const float wv = weights[ty * kw + tx];
              const std::int64_t offset = tx * g_.dil[2] - g_.pad[2];
              std::int64_t lo = 0;
              std::int64_t hi = 0;
              valid_outputs(offset, sw, wd, ow, &lo, &hi);
              if (sw == 1) {
                const float* src = in_row + offset;
                for (std::int64_t xo = lo; xo < hi; ++xo) row[xo] += wv * src[xo];
              } else {
                for (std::int64_t xo = lo; xo < hi; ++xo) row[xo] += wv * in_row[xo * sw + offset];
              }
            }
          }
        }
      }
      done((n * g_.m + m) * out_plane, (n * g_.m + m + 1) * out_plane);
    }
  }
}

void PoolKernel::run(const float* x, float* out, RangeDone done, int part, int parts) const {
  const std::int64_t plane = g_.in[0] * g_.in[1] * g_.in[2];
  const std::int64_t out_w = g_.out[2];
  const std::int64_t out_plane = g_.out[0] * g_.out[1] * out_w;
  // Per dimension and output position: the taps inside the input ([first, last): the input
  // coordinate grows with the tap) and the taps inside the padded input (average's divisor).
  struct Taps {
    std::int64_t first = 0, last = 0, padded = 0;
  };
  std::vector<Taps> taps[3];
  for (int d = 0; d < 3; ++d) {
    taps[d].resize(static_cast<std::size_t>(g_.out[d]));
    for (std::int64_t o = 0; o < g_.out[d]; ++o) {
      Taps& t = taps[d][static_cast<std::size_t>(o)];
      const std::int64_t start = o * g_.stride[d] - g_.pad[d];
      bool seen = false;
      for (std::int64_t k = 0; k < g_.k[d]; ++k) {
        const std::int64_t i = start + k * g_.dil[d];
        if (i < g_.in[d] + g_.pad_end[d]) ++t.padded;
        if (i < 0 || i >= g_.in[d]) continue;
        if (!seen) t.first = k;
        seen = true;
        t.last = k + 1;
      }
    }
  }
  // One output row at a time: each tap of the two outer dimensions adds a strided input row to the
  // whole output row (a loop the compiler vectorises), then the row is finished.
  std::vector<float> row(static_cast<std::size_t>(out_w));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto [p_lo, p_hi] = share(g_.planes, 1, part, parts);
  for (std::int64_t p = p_lo; p < p_hi; ++p) {
    const float* image = x + p * plane;
    float* result = out + p * out_plane;
    for (std::int64_t o0 = 0; o0 < g_.out[0]; ++o0) {
      const Taps& t0 = taps[0][static_cast<std::size_t>(o0)];
      for (std::int64_t o1 = 0; o1 < g_.out[1]; ++o1, result += out_w) {
        const Taps& t1 = taps[1][static_cast<std::size_t>(o1)];
        std::fill(row.begin(), row.end(), g_.max ? -std::numeric_limits<float>::infinity() : 0.0f);
        float* acc = row.data();
        for (std::int64_t k0 = t0.first; k0 < t0.last; ++k0) {
          const std::int64_t i0 = o0 * g_.stride[0] - g_.pad[0] + k0 * g_.dil[0];
          for (std::int64_t k1 = t1.first; k1 < t1.last; ++k1) {
            const std::int64_t i1 = o1 * g_.stride[1] - g_.pad[1] + k1 * g_.dil[1];
            const float* line = image + (i0 * g_.in[1] + i1) * g_.in[2];
            for (std::int64_t k2 = 0; k2 < g_.k[2]; ++k2) {
              const std::int64_t offset = k2 * g_.dil[2] - g_.pad[2];
              std::int64_t lo = 0;
              std::int64_t hi = 0;
              valid_outputs(offset, g_.stride[2], g_.in[2], out_w, &lo, &hi);
              const std::int64_t sw = g_.stride[2];
              if (g_.max) {
                for (std::int64_t o2 = lo; o2 < hi; ++o2) acc[o2] = nan_max(line[o2 * sw + offset], acc[o2]);
              } else {
                for (std::int64_t o2 = lo; o2 < hi; ++o2) acc[o2] += line[o2 * sw + offset];
              }
            }
          }
        }
        if (g_.max) {
          std::copy(row.begin(), row.end(), result);  // -inf where no tap is inside, as ONNX has it
          continue;
        }
        for (std::int64_t o2 = 0; o2 < out_w; ++o2) {
          const Taps& t2 = taps[2][static_cast<std::size_t>(o2)];
          const std::int64_t count = g_.count_include_pad
                                         ? t0.padded * t1.padded * t2.padded
                                         : (t0.last - t0.first) * (t1.last - t1.first) * (t2.last - t2.first);
          result[o2] = count > 0 ? acc[o2] / static_cast<float>(count) : nan;
        }
      }
    }
    done(p * out_plane, (p + 1) * out_plane);
  }
}

}  // namespace tc::native
