#pragma once

/// \file
/// Layouts of float32 tensors in memory: plain (dense row-major) and the channel-blocked layouts
/// that CPU convolution libraries run fastest in (oneDNN's nChw8c and nChw16c, ONNX Runtime's
/// NCHWc), and the reorders between them.

#include <cstddef>
#include <string>

#include "tensor/shape.hpp"

namespace tc {

/// How a tensor's elements are laid out. A blocked layout applies to rank-4 tensors [N, C, H, W]
/// with at least one block of channels: channels in blocks of 8 or 16, the block innermost
/// ([N, C/b, H, W, b]), the last block padded with zeros when b does not divide C. A tensor of any
/// other rank, or with fewer channels than a block (an image's 3, which padding would make 16 and
/// which convolutions read plain), is plain in every layout.
enum class Layout { plain, nChw8c, nChw16c };

/// "plain", "nChw8c", "nChw16c".
std::string to_string(Layout layout);

/// The channel block of `layout` (1 for plain).
std::size_t channel_block(Layout layout);

/// Whether a tensor of `shape` is stored otherwise than plain in `layout`.
bool is_blocked(const Shape& shape, Layout layout);

/// The layout a tensor of `shape` has where values are kept in `layout`: `layout` when it is
/// blocked there, else plain.
Layout layout_of(const Shape& shape, Layout layout);

/// The floats a tensor of `shape` occupies in `layout` (its padding included).
std::size_t stored_floats(const Shape& shape, Layout layout);

/// Writes the tensor of `shape` held at `from` in layout `from_layout` to `to` in `to_layout`
/// (padding written as zeros). `from` and `to` must not overlap.
void reorder(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape);

/// Part `part` of `parts` of reorder(): whole channel blocks of the blocked side (of the
/// destination between two blocked layouts), or a contiguous share of a copy. The parts write
/// disjoint floats, so they may run at once on different threads; together they do what reorder()
/// does.
void reorder_part(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape, int part,
                  int parts);

/// The blocked layout this CPU's vector width suits: nChw16c with AVX-512, else nChw8c.
Layout native_blocked_layout();

}  // namespace tc
