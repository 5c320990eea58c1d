#include "tensor/layout.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

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

bool is_blocked(const Shape& shape, Layout layout) {
  return layout != Layout::plain && shape.size() == 4 && shape[1] >= static_cast<std::int64_t>(channel_block(layout));
}

Layout layout_of(const Shape& shape, Layout layout) { return is_blocked(shape, layout) ? layout : Layout::plain; }

std::size_t stored_floats(const Shape& shape, Layout layout) {
  if (!is_blocked(shape, layout)) return static_cast<std::size_t>(numel(shape));
  const auto block = static_cast<std::int64_t>(channel_block(layout));
  const std::int64_t padded = (shape[1] + block - 1) / block * block;
  return static_cast<std::size_t>(shape[0] * padded * shape[2] * shape[3]);
}

namespace {

/// Calls visit(plain, blocked, channels, hw) for the blocks [first, last) of b channels of a
/// [N, C, H, W] tensor, counted image by image: the offsets of a block's first value in the plain
/// tensor and in the blocked one, its channels (fewer than b in a last, padded block) and the H*W
/// positions of each.
template <std::size_t B, class Visit>
void for_each_block(const Shape& shape, std::size_t first, std::size_t last, Visit visit) {
  const auto c = static_cast<std::size_t>(shape[1]);
  const auto hw = static_cast<std::size_t>(shape[2] * shape[3]);
  const std::size_t blocks = (c + B - 1) / B;
  for (std::size_t b = first; b < last; ++b) {
    const std::size_t i = b / blocks, cb = b % blocks;
    visit((i * c + cb * B) * hw, (i * blocks + cb) * hw * B, std::min(B, c - cb * B), hw);
  }
}

/// Plain [N, C, H, W] to [N, C/b, H, W, b] for blocks [first, last): for each block of channels, a
/// transpose of its b x (H*W) rows into (H*W) x b, the missing channels of the last block zero.
template <std::size_t B>
void to_blocked(const float* from, float* to, const Shape& shape, std::size_t first, std::size_t last) {
  for_each_block<B>(shape, first, last, [&](std::size_t plain, std::size_t blocked, std::size_t channels, std::size_t hw) {
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
void from_blocked(const float* from, float* to, const Shape& shape, std::size_t first, std::size_t last) {
  for_each_block<B>(shape, first, last, [&](std::size_t plain, std::size_t blocked, std::size_t channels, std::size_t hw) {
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

/// Blocks [first, last) of `to` in blocked layout B, read from `from` in blocked layout A: each
/// value straight from its block of A, the padding zero.
template <std::size_t A, std::size_t B>
void between_blocked(const float* from, float* to, const Shape& shape, std::size_t first, std::size_t last) {
  const auto c = static_cast<std::size_t>(shape[1]);
  const std::size_t blocks_a = (c + A - 1) / A;
  for_each_block<B>(shape, first, last, [&](std::size_t plain, std::size_t blocked, std::size_t channels, std::size_t hw) {
    const std::size_t image = plain / (c * hw), c0 = plain / hw % c;
    float* dst = to + blocked;
    if (channels < B) std::memset(dst, 0, hw * B * sizeof(float));
    for (std::size_t k = 0; k < channels; ++k) {
      const std::size_t channel = c0 + k;
      const float* src = from + ((image * blocks_a + channel / A) * hw) * A + channel % A;
      for (std::size_t p = 0; p < hw; ++p) dst[p * B + k] = src[p * A];
    }
  });
}

/// The channel blocks of `layout` in a [N, C, H, W] tensor: N times C/b rounded up.
std::size_t block_count(const Shape& shape, Layout layout) {
  const std::size_t b = channel_block(layout);
  return static_cast<std::size_t>(shape[0]) * ((static_cast<std::size_t>(shape[1]) + b - 1) / b);
}

/// Part `part` of `parts` of [0, n): contiguous, in order, differing by at most one.
std::pair<std::size_t, std::size_t> part_of(std::size_t n, int part, int parts) {
  const auto p = static_cast<std::size_t>(part), ps = static_cast<std::size_t>(std::max(parts, 1));
  return {n * p / ps, n * (p + 1) / ps};
}

}  // namespace

void reorder(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape) {
  reorder_part(from, from_layout, to, to_layout, shape, 0, 1);
}

void reorder_part(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape, int part,
                  int parts) {
  from_layout = layout_of(shape, from_layout);
  to_layout = layout_of(shape, to_layout);
  if (from_layout == to_layout) {
    const auto [begin, end] = part_of(stored_floats(shape, from_layout), part, parts);
    std::memcpy(to + begin, from + begin, (end - begin) * sizeof(float));
    return;
  }
  // Each part writes whole blocks of the blocked side (of the destination between two blocked layouts).
  const Layout split = to_layout == Layout::plain ? from_layout : to_layout;
  const auto [first, last] = part_of(block_count(shape, split), part, parts);
  const bool wide_from = from_layout == Layout::nChw16c, wide_to = to_layout == Layout::nChw16c;
  if (from_layout == Layout::plain) {
    if (wide_to) return to_blocked<16>(from, to, shape, first, last);
    return to_blocked<8>(from, to, shape, first, last);
  }
  if (to_layout == Layout::plain) {
    if (wide_from) return from_blocked<16>(from, to, shape, first, last);
    return from_blocked<8>(from, to, shape, first, last);
  }
  if (wide_from) return between_blocked<16, 8>(from, to, shape, first, last);
  between_blocked<8, 16>(from, to, shape, first, last);
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
