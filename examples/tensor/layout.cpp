#include "tensor/layout.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tc {

std::string to_string(Layout layout) {
  switch (layout) {
    case Layout::plain: return "plain";
    case Layout::nChw8c: return "nChw8c";
    case Layout::nChw16c: return "nChw16c";
  }
  return "plain";
}

std::size_t channel_block(Layout layout) {
  switch (layout) {
    case Layout::plain: return 1;
    case Layout::nChw8c: return 8;
    case Layout::nChw16c: return 16;
  }
  return 1;
}

bool is_blocked(const Shape& shape, Layout layout) { return layout != Layout::plain && shape.size() == 4; }

Layout layout_of(const Shape& shape, Layout layout) { return is_blocked(shape, layout) ? layout : Layout::plain; }

std::size_t stored_floats(const Shape& shape, Layout layout) {
  if (!is_blocked(shape, layout)) return static_cast<std::size_t>(numel(shape));
  const auto block = static_cast<std::int64_t>(channel_block(layout));
  const std::int64_t padded = (shape[1] + block - 1) / block * block;
  return static_cast<std::size_t>(shape[0] * padded * shape[2] * shape[3]);
}

namespace {

/// Calls visit(plain, blocked, channels, hw) for each block of b channels of each image of a
/// [N, C, H, W] tensor: the offsets of its first value in the plain tensor and in the blocked one,
/// its channels (fewer than b in a last, padded block) and the H*W positions of each.
template <std::size_t B, class Visit>
void for_each_block(const Shape& shape, Visit visit) {
  const auto n = static_cast<std::size_t>(shape[0]);
  const auto c = static_cast<std::size_t>(shape[1]);
  const auto hw = static_cast<std::size_t>(shape[2] * shape[3]);
  const std::size_t blocks = (c + B - 1) / B;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t cb = 0; cb < blocks; ++cb) {
      visit((i * c + cb * B) * hw, (i * blocks + cb) * hw * B, std::min(B, c - cb * B), hw);
    }
  }
}

/// Plain [N, C, H, W] to [N, C/b, H, W, b]: for each block of channels, a transpose of its
/// b x (H*W) rows into (H*W) x b, the missing channels of the last block zero.
template <std::size_t B>
void to_blocked(const float* from, float* to, const Shape& shape) {
  for_each_block<B>(shape, [&](std::size_t plain, std::size_t blocked, std::size_t channels, std::size_t hw) {
    const float* src = from + plain;
    float* dst = to + blocked;
    if (channels < B) std::memset(dst, 0, hw * B * sizeof(float));
    for (std::size_t p = 0; p < hw; ++p) {
      for (std::size_t k = 0; k < channels; ++k) dst[p * B + k] = src[k * hw + p];
    }
  });
}

/// Positions from_blocked writes at a time for each channel: their kTile blocks stay in the L1
/// cache while it reads one channel of each after the other.
constexpr std::size_t kTile = 32;

/// The inverse of to_blocked.
template <std::size_t B>
void from_blocked(const float* from, float* to, const Shape& shape) {
  for_each_block<B>(shape, [&](std::size_t plain, std::size_t blocked, std::size_t channels, std::size_t hw) {
    const float* src = from + blocked;
    float* dst = to + plain;
    for (std::size_t p0 = 0; p0 < hw; p0 += kTile) {
      const std::size_t p1 = std::min(hw, p0 + kTile);
      for (std::size_t k = 0; k < channels; ++k) {
        for (std::size_t p = p0; p < p1; ++p) dst[k * hw + p] = src[p * B + k];
      }
    }
  });
}

void to_blocked(const float* from, float* to, Layout layout, const Shape& shape) {
  if (layout == Layout::nChw8c) return to_blocked<8>(from, to, shape);
  to_blocked<16>(from, to, shape);
}

void from_blocked(const float* from, float* to, Layout layout, const Shape& shape) {
  if (layout == Layout::nChw8c) return from_blocked<8>(from, to, shape);
  from_blocked<16>(from, to, shape);
}

}  // namespace

void reorder(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape) {
  from_layout = layout_of(shape, from_layout);
  to_layout = layout_of(shape, to_layout);
  if (from_layout == to_layout) {
    std::memcpy(to, from, stored_floats(shape, from_layout) * sizeof(float));
    return;
  }
  if (from_layout == Layout::plain) return to_blocked(from, to, to_layout, shape);
  if (to_layout == Layout::plain) return from_blocked(from, to, from_layout, shape);
  // Between two blocked layouts, through a plain copy.
  std::vector<float> plain(static_cast<std::size_t>(numel(shape)));
  from_blocked(from, plain.data(), from_layout, shape);
  to_blocked(plain.data(), to, to_layout, shape);
}

Layout native_blocked_layout() {
#if defined(__x86_64__) || defined(__i386__)
  static const Layout layout = __builtin_cpu_supports("avx512f") ? Layout::nChw16c : Layout::nChw8c;
  return layout;
#else
  return Layout::nChw8c;
#endif
}

}  // namespace tc
