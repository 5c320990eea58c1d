#include "backends/native/row_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/kit/fast_math.hpp"
#include "loops/index_math.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc::native {

namespace {

/// Rows handed to done() at a time.
constexpr std::int64_t kRowsPerCallback = 16;

/// The values of `access` (over `dims`, numel `size`) read from `src`, or src itself when the
/// access is dense.
const float* expand(const loops::Access& access, const Shape& dims, std::int64_t size, const float* src,
                    float* buffer) {
  const Ints strides = row_major_strides(dims);
  bool dense = access.linear.offset == 0 && !access.has_holes();
  for (std::size_t d = 0; d < dims.size(); ++d) dense = dense && (dims[d] == 1 || access.linear.coef[d] == strides[d]);
  if (dense) return src;
  Ints c(dims.size());
  const int rank = static_cast<int>(dims.size());
  for (std::int64_t i = 0; i < size; ++i) {
    loops::unravel(i, dims.data(), rank, c.data());
    buffer[i] = src[access.linear.at(c)];
  }
  return buffer;
}

}  // namespace

void softmax(const loops::SoftmaxCore& core, const float* x, float* out, std::vector<float>& scratch, RangeDone done,
             int part, int parts) {
  const std::int64_t len = core.axis;
  const std::int64_t inner = core.inner;
  const std::int64_t block = len * inner;
  const auto [first, last] = share(core.outer, 1, part, parts);
  if (inner == 1) {
    for (std::int64_t r0 = first; r0 < last; r0 += kRowsPerCallback) {
      const std::int64_t r1 = std::min(last, r0 + kRowsPerCallback);
      for (std::int64_t r = r0; r < r1; ++r) {
        const float* in = x + r * len;
        float* y = out + r * len;
        const float m = max_of(in, len, -std::numeric_limits<float>::infinity());
        for (std::int64_t k = 0; k < len; ++k) y[k] = fast_exp(in[k] - m);
        const float inv = 1.0f / sum_of(y, len);
        for (std::int64_t k = 0; k < len; ++k) y[k] *= inv;
      }
      done(r0 * len, r1 * len);
    }
    return;
  }
  scratch.resize(static_cast<std::size_t>(2 * inner));
  float* best = scratch.data();
  float* sum = best + inner;
  for (std::int64_t o = first; o < last; ++o) {
    const float* in = x + o * block;
    float* y = out + o * block;
    std::fill(best, best + inner, -std::numeric_limits<float>::infinity());
    std::fill(sum, sum + inner, 0.0f);
    for (std::int64_t k = 0; k < len; ++k) {
      const float* row = in + k * inner;
      for (std::int64_t i = 0; i < inner; ++i) best[i] = nan_max(row[i], best[i]);
    }
    for (std::int64_t k = 0; k < len; ++k) {
      const float* row = in + k * inner;
      float* yr = y + k * inner;
      for (std::int64_t i = 0; i < inner; ++i) {
        yr[i] = fast_exp(row[i] - best[i]);
        sum[i] += yr[i];
      }
    }
    for (std::int64_t i = 0; i < inner; ++i) sum[i] = 1.0f / sum[i];
    for (std::int64_t k = 0; k < len; ++k) {
      float* yr = y + k * inner;
      for (std::int64_t i = 0; i < inner; ++i) yr[i] *= sum[i];
    }
    done(o * block, (o + 1) * block);
  }
}

void layer_norm(const loops::LayerNormCore& core, const float* x, const float* scale, const float* bias, float* out,
                std::vector<float>& params, RangeDone done, int part, int parts) {
  const std::int64_t cols = core.cols;
  params.resize(static_cast<std::size_t>(2 * cols));
  const float* s = expand(core.scale_access, core.normalized, cols, scale, params.data());
  const float* b = bias != nullptr ? expand(core.bias_access, core.normalized, cols, bias, params.data() + cols) : nullptr;
  const float inv_cols = cols > 0 ? 1.0f / static_cast<float>(cols) : 0.0f;
  const auto [first, last] = share(core.rows, 1, part, parts);
  for (std::int64_t r0 = first; r0 < last; r0 += kRowsPerCallback) {
    const std::int64_t r1 = std::min(last, r0 + kRowsPerCallback);
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* in = x + r * cols;
      float* y = out + r * cols;
      const float mean = sum_of(in, cols) * inv_cols;
      for (std::int64_t k = 0; k < cols; ++k) y[k] = in[k] - mean;
      const float var = dot_of(y, y, cols);
      const float rstd = 1.0f / std::sqrt(var * inv_cols + core.epsilon);
      if (b != nullptr) {
        for (std::int64_t j = 0; j < cols; ++j) y[j] = y[j] * rstd * s[j] + b[j];
      } else {
        for (std::int64_t j = 0; j < cols; ++j) y[j] = y[j] * rstd * s[j];
      }
    }
    done(r0 * cols, r1 * cols);
  }
}

void gather(const loops::GatherCore& core, const float* data, const float* indices, float* out, RangeDone done,
            int part, int parts) {
  const std::int64_t inner = core.inner;
  const auto [first, last] = share(core.outer * core.count, 1, part, parts);
  for (std::int64_t r0 = first; r0 < last; r0 += kRowsPerCallback) {
    const std::int64_t r1 = std::min(last, r0 + kRowsPerCallback);
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t o = r / core.count;
      const std::int64_t row = loops::gather_row(indices[r % core.count], core.size);
      float* y = out + r * inner;
      if (row < 0) {
        std::fill(y, y + inner, std::numeric_limits<float>::quiet_NaN());
      } else {
        std::copy_n(data + (o * core.size + row) * inner, inner, y);
      }
    }
    done(r0 * inner, r1 * inner);
  }
}

}  // namespace tc::native
