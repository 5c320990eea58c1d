#pragma once

/// \file
/// Tensor: a float32 tensor with a static shape, owned on the host.

#include <cstdint>
#include <vector>

#include "tensor/shape.hpp"

namespace tc {

/// A dense row-major float32 tensor on the host.
struct Tensor {
  Shape shape;
  std::vector<float> data;

  Tensor() = default;
  /// A tensor of `shape` filled with `fill`.
  explicit Tensor(Shape s, float fill = 0.0f) : shape(std::move(s)), data(static_cast<std::size_t>(numel(shape)), fill) {}
  Tensor(Shape s, std::vector<float> values) : shape(std::move(s)), data(std::move(values)) {}

  std::int64_t size() const { return static_cast<std::int64_t>(data.size()); }
  std::size_t bytes() const { return data.size() * sizeof(float); }
};

}  // namespace tc
