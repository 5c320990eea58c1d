#include "backends/native/conv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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
  // Input coordinates of each column's window origin.
  for (auto& v : column_base_) v.resize(static_cast<std::size_t>(nc));
  std::int64_t o[3] = {j0 / (g_.out[1] * g_.out[2]), (j0 / g_.out[2]) % g_.out[1], j0 % g_.out[2]};
  for (std::int64_t jj = 0; jj < nc; ++jj) {
    for (int d = 0; d < 3; ++d) column_base_[d][static_cast<std::size_t>(jj)] = o[d] * g_.stride[d] - g_.pad[d];
    if (++o[2] == g_.out[2]) {
      o[2] = 0;
      if (++o[1] == g_.out[1]) {
        o[1] = 0;
        ++o[0];
      }
    }
  }
  const std::int64_t kvol = g_.k[0] * g_.k[1] * g_.k[2];
  const std::int64_t plane = g_.in[0] * g_.in[1] * g_.in[2];
  const auto d_in = static_cast<std::uint64_t>(g_.in[0]);
  const auto h_in = static_cast<std::uint64_t>(g_.in[1]);
  const auto w_in = static_cast<std::uint64_t>(g_.in[2]);
  const std::int64_t* bd = column_base_[0].data();
  const std::int64_t* bh = column_base_[1].data();
  const std::int64_t* bw = column_base_[2].data();
  const std::int64_t strips = (nc + kGemmNr - 1) / kGemmNr;
  for (std::int64_t p = 0; p < kc; ++p) {
    const std::int64_t row = k0 + p;
    const std::int64_t c = row / kvol;
    const std::int64_t t = row % kvol;
    const std::int64_t od = (t / (g_.k[1] * g_.k[2])) * g_.dil[0];
    const std::int64_t oh = ((t / g_.k[2]) % g_.k[1]) * g_.dil[1];
    const std::int64_t ow = (t % g_.k[2]) * g_.dil[2];
    const float* image = x + c * plane;
    for (std::int64_t s = 0; s < strips; ++s) {
      float* out = dst + s * kc * kGemmNr + p * kGemmNr;
      const std::int64_t first = s * kGemmNr;
      const std::int64_t cols = std::min(kGemmNr, nc - first);
      for (std::int64_t l = 0; l < cols; ++l) {
        const std::int64_t jj = first + l;
        const std::int64_t id = bd[jj] + od;
        const std::int64_t ih = bh[jj] + oh;
        const std::int64_t iw = bw[jj] + ow;
        const bool inside = static_cast<std::uint64_t>(id) < d_in && static_cast<std::uint64_t>(ih) < h_in &&
                            static_cast<std::uint64_t>(iw) < w_in;
        out[l] = inside ? image[(id * g_.in[1] + ih) * g_.in[2] + iw] : 0.0f;
      }
      for (std::int64_t l = cols; l < kGemmNr; ++l) out[l] = 0.0f;
    }
  }
}

void ConvKernel::run(const float* x, const float* w, float* out, RangeDone done) {
  if (direct_) {
    run_direct(x, w, out, done);
    return;
  }
  const std::int64_t spatial = g_.out[0] * g_.out[1] * g_.out[2];
  const std::int64_t plane = g_.in[0] * g_.in[1] * g_.in[2];
  const std::int64_t kvol = g_.k[0] * g_.k[1] * g_.k[2];
  const std::int64_t kdim = cg_ * kvol;
  for (std::int64_t n = 0; n < g_.n; ++n) {
    for (std::int64_t g = 0; g < g_.group; ++g) {
      const float* image = x + (n * g_.c + g * cg_) * plane;
      float* result = out + (n * g_.m + g * mg_) * spatial;
      const MatrixRef a{w + g * mg_ * kdim, kdim, 1};
      auto pack = [&](std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst) {
        if (pointwise_) {
          pack_b_matrix(MatrixRef{image, plane, 1}, k0, kc, j0, nc, dst);
        } else {
          pack_image(image, k0, kc, j0, nc, dst);
        }
      };
      const std::int64_t base = result - out;
      auto finished = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
        if (j0 == 0 && j1 == spatial) {
          done(base + i0 * spatial, base + i1 * spatial);
          return;
        }
        for (std::int64_t i = i0; i < i1; ++i) done(base + i * spatial + j0, base + i * spatial + j1);
      };
      gemm(mg_, spatial, kdim, a, pack, result, spatial, workspace_, finished);
    }
  }
}

void ConvKernel::run_direct(const float* x, const float* w, float* out, RangeDone done) {
  // The two inner spatial dimensions (the outer one is of size 1 and unpadded).
  const std::int64_t h = g_.in[1], wd = g_.in[2], oh = g_.out[1], ow = g_.out[2];
  const std::int64_t kh = g_.k[1], kw = g_.k[2];
  const std::int64_t sh = g_.stride[1], sw = g_.stride[2];
  const std::int64_t plane = h * wd;
  const std::int64_t out_plane = oh * ow;
  for (std::int64_t n = 0; n < g_.n; ++n) {
    for (std::int64_t m = 0; m < g_.m; ++m) {
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

void PoolKernel::run(const float* x, float* out, RangeDone done) const {
  const std::int64_t plane = g_.in[0] * g_.in[1] * g_.in[2];
  const std::int64_t out_plane = g_.out[0] * g_.out[1] * g_.out[2];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Taps inside the input (and inside the padded input) per output position, per dimension.
  auto taps = [&](int d, std::int64_t o, std::int64_t* first, std::int64_t* last, std::int64_t* padded) {
    const std::int64_t start = o * g_.stride[d] - g_.pad[d];
    *first = 0;
    *last = 0;
    *padded = 0;
    bool seen = false;
    for (std::int64_t t = 0; t < g_.k[d]; ++t) {
      const std::int64_t i = start + t * g_.dil[d];
      if (i < g_.in[d] + g_.pad_end[d]) ++*padded;
      if (i < 0 || i >= g_.in[d]) continue;
      if (!seen) *first = t;
      seen = true;
      *last = t + 1;
    }
  };
  std::vector<std::int64_t> first[3], last[3], padded[3];
  for (int d = 0; d < 3; ++d) {
    first[d].resize(static_cast<std::size_t>(g_.out[d]));
    last[d].resize(static_cast<std::size_t>(g_.out[d]));
    padded[d].resize(static_cast<std::size_t>(g_.out[d]));
    for (std::int64_t o = 0; o < g_.out[d]; ++o) {
      const auto u = static_cast<std::size_t>(o);
      taps(d, o, &first[d][u], &last[d][u], &padded[d][u]);
    }
  }
  for (std::int64_t p = 0; p < g_.planes; ++p) {
    const float* image = x + p * plane;
    float* result = out + p * out_plane;
    std::int64_t at = 0;
    for (std::int64_t o0 = 0; o0 < g_.out[0]; ++o0) {
      for (std::int64_t o1 = 0; o1 < g_.out[1]; ++o1) {
        for (std::int64_t o2 = 0; o2 < g_.out[2]; ++o2) {
          const std::size_t u0 = static_cast<std::size_t>(o0), u1 = static_cast<std::size_t>(o1),
                            u2 = static_cast<std::size_t>(o2);
          float best = -std::numeric_limits<float>::infinity();
          float sum = 0.0f;
          std::int64_t inside = 0;
          for (std::int64_t t0 = first[0][u0]; t0 < last[0][u0]; ++t0) {
            const std::int64_t i0 = o0 * g_.stride[0] - g_.pad[0] + t0 * g_.dil[0];
            if (i0 < 0 || i0 >= g_.in[0]) continue;
            for (std::int64_t t1 = first[1][u1]; t1 < last[1][u1]; ++t1) {
              const std::int64_t i1 = o1 * g_.stride[1] - g_.pad[1] + t1 * g_.dil[1];
              if (i1 < 0 || i1 >= g_.in[1]) continue;
              const float* line = image + (i0 * g_.in[1] + i1) * g_.in[2];
              const std::int64_t base = o2 * g_.stride[2] - g_.pad[2];
              for (std::int64_t t2 = first[2][u2]; t2 < last[2][u2]; ++t2) {
                const std::int64_t i2 = base + t2 * g_.dil[2];
                if (i2 < 0 || i2 >= g_.in[2]) continue;
                const float v = line[i2];
                best = (v > best || v != v) ? v : best;
                sum += v;
                ++inside;
              }
            }
          }
          float value = best;
          if (!g_.max) {
            const std::int64_t count = g_.count_include_pad ? padded[0][u0] * padded[1][u1] * padded[2][u2] : inside;
            value = count > 0 ? sum / static_cast<float>(count) : nan;
          }
          result[at++] = value;
        }
      }
    }
    done(p * out_plane, (p + 1) * out_plane);
  }
}

}  // namespace tc::native
