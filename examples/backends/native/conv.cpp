#include "backends/native/conv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tc::native {

namespace {

using collage::Error;
using collage::ErrorCode;

/// Channels per group up to which a grouped convolution runs the direct loop (per group, the GEMM
/// would have a tiny K and few rows).
constexpr std::int64_t kDirectMaxGroupChannels = 4;

/// Copies the spatial entries of `src` (rank r = spatial dims) into the last r of three slots.
bool spread(const std::vector<std::int64_t>& src, std::size_t offset, std::size_t r, std::int64_t* dst) {
  if (r > 3 || src.size() < offset + r) return false;
  for (std::size_t j = 0; j < r; ++j) dst[3 - r + j] = src[offset + j];
  return true;
}

/// Output positions o in [0, out) with 0 <= o * stride + offset < in: [*lo, *hi).
void valid_outputs(std::int64_t offset, std::int64_t stride, std::int64_t in, std::int64_t out, std::int64_t* lo,
                   std::int64_t* hi) {
  std::int64_t a = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  std::int64_t b = in - offset <= 0 ? 0 : (in - offset + stride - 1) / stride;
  *lo = std::min(a, out);
  *hi = std::max(*lo, std::min(b, out));
}

}  // namespace

collage::Result<ConvKernel> ConvKernel::make(const loops::ConvCore& core) {
  const std::size_t r = core.x_shape.size() - 2;
  ConvKernel k;
  if (r < 1 || r > 3) {
    return Error{ErrorCode::invalid_argument,
                 "native: Conv with " + std::to_string(r) + " spatial dimensions (1 to 3 are supported)"};
  }
  k.n_ = core.x_shape[0];
  k.c_ = core.x_shape[1];
  k.m_ = core.w_shape[0];
  k.group_ = core.group;
  k.cg_ = k.c_ / k.group_;
  k.mg_ = k.m_ / k.group_;
  spread(core.x_shape, 2, r, k.in_);
  spread(core.out_shape, 2, r, k.out_);
  spread(core.w_shape, 2, r, k.k_);
  spread(core.strides, 0, r, k.stride_);
  spread(core.dilations, 0, r, k.dil_);
  spread(core.pads, 0, r, k.pad_);
  k.direct_ = r <= 2 && k.group_ > 1 && k.cg_ <= kDirectMaxGroupChannels;
  k.pointwise_ = k.k_[0] * k.k_[1] * k.k_[2] == 1;
  for (int j = 0; j < 3; ++j) k.pointwise_ = k.pointwise_ && k.stride_[j] == 1 && k.pad_[j] == 0;
  return k;
}

void ConvKernel::pack_image(const float* x, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc,
                            float* dst) {
  // Input coordinates of each column's window origin.
  for (auto& v : column_base_) v.resize(static_cast<std::size_t>(nc));
  std::int64_t o[3] = {j0 / (out_[1] * out_[2]), (j0 / out_[2]) % out_[1], j0 % out_[2]};
  for (std::int64_t jj = 0; jj < nc; ++jj) {
    for (int d = 0; d < 3; ++d) column_base_[d][static_cast<std::size_t>(jj)] = o[d] * stride_[d] - pad_[d];
    if (++o[2] == out_[2]) {
      o[2] = 0;
      if (++o[1] == out_[1]) {
        o[1] = 0;
        ++o[0];
      }
    }
  }
  const std::int64_t kvol = k_[0] * k_[1] * k_[2];
  const std::int64_t plane = in_[0] * in_[1] * in_[2];
  const auto d_in = static_cast<std::uint64_t>(in_[0]);
  const auto h_in = static_cast<std::uint64_t>(in_[1]);
  const auto w_in = static_cast<std::uint64_t>(in_[2]);
  const std::int64_t* bd = column_base_[0].data();
  const std::int64_t* bh = column_base_[1].data();
  const std::int64_t* bw = column_base_[2].data();
  const std::int64_t strips = (nc + kGemmNr - 1) / kGemmNr;
  for (std::int64_t p = 0; p < kc; ++p) {
    const std::int64_t row = k0 + p;
    const std::int64_t c = row / kvol;
    const std::int64_t t = row % kvol;
    const std::int64_t od = (t / (k_[1] * k_[2])) * dil_[0];
    const std::int64_t oh = ((t / k_[2]) % k_[1]) * dil_[1];
    const std::int64_t ow = (t % k_[2]) * dil_[2];
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
        out[l] = inside ? image[(id * in_[1] + ih) * in_[2] + iw] : 0.0f;
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
  const std::int64_t spatial = out_[0] * out_[1] * out_[2];
  const std::int64_t plane = in_[0] * in_[1] * in_[2];
  const std::int64_t kvol = k_[0] * k_[1] * k_[2];
  const std::int64_t kdim = cg_ * kvol;
  for (std::int64_t n = 0; n < n_; ++n) {
    for (std::int64_t g = 0; g < group_; ++g) {
      const float* image = x + (n * c_ + g * cg_) * plane;
      float* result = out + (n * m_ + g * mg_) * spatial;
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
  // Two spatial dimensions (one is the case H = 1): in_[0] = out_[0] = 1.
  const std::int64_t h = in_[1], wd = in_[2], oh = out_[1], ow = out_[2];
  const std::int64_t kh = k_[1], kw = k_[2];
  const std::int64_t sh = stride_[1], sw = stride_[2];
  const std::int64_t plane = h * wd;
  const std::int64_t out_plane = oh * ow;
  for (std::int64_t n = 0; n < n_; ++n) {
    for (std::int64_t m = 0; m < m_; ++m) {
      const std::int64_t g = m / mg_;
      float* result = out + (n * m_ + m) * out_plane;
      std::fill(result, result + out_plane, 0.0f);
      for (std::int64_t c = 0; c < cg_; ++c) {
        const float* image = x + (n * c_ + g * cg_ + c) * plane;
        const float* weights = w + (m * cg_ + c) * kh * kw;
        for (std::int64_t y = 0; y < oh; ++y) {
          float* row = result + y * ow;
          for (std::int64_t ty = 0; ty < kh; ++ty) {
            const std::int64_t iy = y * sh - pad_[1] + ty * dil_[1];
            if (iy < 0 || iy >= h) continue;
            const float* in_row = image + iy * wd;
            for (std::int64_t tx = 0; tx < kw; ++tx) {
              const float wv = weights[ty * kw + tx];
              const std::int64_t offset = tx * dil_[2] - pad_[2];
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
      done((n * m_ + m) * out_plane, (n * m_ + m + 1) * out_plane);
    }
  }
}

collage::Result<PoolKernel> PoolKernel::make(const loops::PoolCore& core) {
  const std::size_t r = core.x_shape.size() - 2;
  if (r < 1 || r > 3) {
    return Error{ErrorCode::invalid_argument,
                 "native: pooling with " + std::to_string(r) + " spatial dimensions (1 to 3 are supported)"};
  }
  PoolKernel k;
  k.max_ = core.max;
  k.count_include_pad_ = core.count_include_pad;
  k.planes_ = core.x_shape[0] * core.x_shape[1];
  spread(core.x_shape, 2, r, k.in_);
  spread(core.out_shape, 2, r, k.out_);
  spread(core.kernel, 0, r, k.k_);
  spread(core.strides, 0, r, k.stride_);
  spread(core.dilations, 0, r, k.dil_);
  spread(core.pads, 0, r, k.pad_);
  spread(core.pads, r, r, k.pad_end_);
  return k;
}

void PoolKernel::run(const float* x, float* out, RangeDone done) const {
  const std::int64_t plane = in_[0] * in_[1] * in_[2];
  const std::int64_t out_plane = out_[0] * out_[1] * out_[2];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Taps inside the input (and inside the padded input) per output position, per dimension.
  auto taps = [&](int d, std::int64_t o, std::int64_t* first, std::int64_t* last, std::int64_t* padded) {
    const std::int64_t start = o * stride_[d] - pad_[d];
    *first = 0;
    *last = 0;
    *padded = 0;
    bool seen = false;
    for (std::int64_t t = 0; t < k_[d]; ++t) {
      const std::int64_t i = start + t * dil_[d];
      if (i < in_[d] + pad_end_[d]) ++*padded;
      if (i < 0 || i >= in_[d]) continue;
      if (!seen) *first = t;
      seen = true;
      *last = t + 1;
    }
  };
  std::vector<std::int64_t> first[3], last[3], padded[3];
  for (int d = 0; d < 3; ++d) {
    first[d].resize(static_cast<std::size_t>(out_[d]));
    last[d].resize(static_cast<std::size_t>(out_[d]));
    padded[d].resize(static_cast<std::size_t>(out_[d]));
    for (std::int64_t o = 0; o < out_[d]; ++o) {
      const auto u = static_cast<std::size_t>(o);
      taps(d, o, &first[d][u], &last[d][u], &padded[d][u]);
    }
  }
  for (std::int64_t p = 0; p < planes_; ++p) {
    const float* image = x + p * plane;
    float* result = out + p * out_plane;
    std::int64_t at = 0;
    for (std::int64_t o0 = 0; o0 < out_[0]; ++o0) {
      for (std::int64_t o1 = 0; o1 < out_[1]; ++o1) {
        for (std::int64_t o2 = 0; o2 < out_[2]; ++o2) {
          const std::size_t u0 = static_cast<std::size_t>(o0), u1 = static_cast<std::size_t>(o1),
                            u2 = static_cast<std::size_t>(o2);
          float best = -std::numeric_limits<float>::infinity();
          float sum = 0.0f;
          std::int64_t inside = 0;
          for (std::int64_t t0 = first[0][u0]; t0 < last[0][u0]; ++t0) {
            const std::int64_t i0 = o0 * stride_[0] - pad_[0] + t0 * dil_[0];
            if (i0 < 0 || i0 >= in_[0]) continue;
            for (std::int64_t t1 = first[1][u1]; t1 < last[1][u1]; ++t1) {
              const std::int64_t i1 = o1 * stride_[1] - pad_[1] + t1 * dil_[1];
              if (i1 < 0 || i1 >= in_[1]) continue;
              const float* line = image + (i0 * in_[1] + i1) * in_[2];
              const std::int64_t base = o2 * stride_[2] - pad_[2];
              for (std::int64_t t2 = first[2][u2]; t2 < last[2][u2]; ++t2) {
                const std::int64_t i2 = base + t2 * dil_[2];
                if (i2 < 0 || i2 >= in_[2]) continue;
                const float v = line[i2];
                best = (v > best || v != v) ? v : best;
                sum += v;
                ++inside;
              }
            }
          }
          float value = best;
          if (!max_) {
            const std::int64_t count = count_include_pad_ ? padded[0][u0] * padded[1][u1] * padded[2][u2] : inside;
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
