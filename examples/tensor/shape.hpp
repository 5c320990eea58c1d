#pragma once

/// \file
/// Shapes of float32 tensors: dimension lists, element counts, strides and broadcasting.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tc {

/// The dimensions of a tensor, outermost first; {} is a scalar. Every dimension is >= 0.
using Shape = std::vector<std::int64_t>;

/// The number of elements of `shape` (1 for a scalar).
std::int64_t numel(const Shape& shape);

/// Row-major strides of `shape`, in elements (the last dimension has stride 1).
std::vector<std::int64_t> row_major_strides(const Shape& shape);

/// "[2,3,4]".
std::string to_string(const Shape& shape);

/// The numpy-style broadcast of `a` and `b` (dimensions aligned at the end, 1 stretches), or
/// nothing when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/// `axis` in [-rank, rank) made non-negative, or nothing when out of range.
std::optional<std::int64_t> normalize_axis(std::int64_t axis, std::size_t rank);

/// The row-major coordinates of element `flat` of a tensor of shape `shape`.
std::vector<std::int64_t> unravel_index(std::int64_t flat, const Shape& shape);

/// The product of dims[begin, end).
std::int64_t product(const Shape& dims, std::size_t begin, std::size_t end);

/// Strides (in elements) of a row-major tensor of shape `in` read through a broadcast to `out`
/// (dimensions aligned at the end): 0 where `in` lacks the dimension or stretches a 1.
std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& out);

/// The offset, under `strides` (one per dimension of `out`), of element `flat` of a row-major
/// tensor of shape `out`: with broadcast_strides(), where a broadcast operand's element lives.
std::int64_t broadcast_offset(std::int64_t flat, const Shape& out, const std::vector<std::int64_t>& strides);

}  // namespace tc
