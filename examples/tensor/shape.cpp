#include "tensor/shape.hpp"

#include <algorithm>

namespace tc {

std::int64_t numel(const Shape& shape) { return product(shape, 0, shape.size()); }

std::int64_t product(const Shape& dims, std::size_t begin, std::size_t end) {
  std::int64_t n = 1;
  for (std::size_t k = begin; k < end && k < dims.size(); ++k) n *= dims[k];
  return n;
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t k = 0; k < shape.size(); ++k) out += (k ? "," : "") + std::to_string(shape[k]);
  return out + "]";
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const std::int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::optional<std::int64_t> normalize_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  const std::vector<std::int64_t> in_strides = row_major_strides(in);
  std::vector<std::int64_t> strides(out.size(), 0);
  const std::size_t shift = out.size() - in.size();
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) strides[d + shift] = in_strides[d];
  }
  return strides;
}

std::int64_t broadcast_offset(std::int64_t flat, const Shape& out, const std::vector<std::int64_t>& strides) {
  std::int64_t offset = 0;
  for (std::size_t d = out.size(); d-- > 0;) {
    if (out[d] == 0) return 0;
    offset += (flat % out[d]) * strides[d];
    flat /= out[d];
  }
  return offset;
}

std::vector<std::int64_t> unravel_index(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> at(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    at[d] = flat % shape[d];
    flat /= shape[d];
  }
  return at;
}

}  // namespace tc
