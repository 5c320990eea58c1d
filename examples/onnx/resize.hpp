#pragma once

/// \file
/// Internal to examples/onnx/: the one-dimensional interpolation of ONNX's Resize (and Upsample):
/// for each output index of one axis, the input indices it reads and their weights. Resize is
/// separable, so the reader lowers it one axis at a time.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <collage/support/result.hpp>

namespace tc::detail {

enum class ResizeMode { nearest, linear, cubic };
enum class CoordinateMode { half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn };
enum class NearestMode { round_prefer_floor, round_prefer_ceil, floor, ceil };

/// How one Resize interpolates (the attributes, decoded).
struct ResizeSpec {
  ResizeMode mode = ResizeMode::nearest;
  CoordinateMode coordinates = CoordinateMode::half_pixel;
  NearestMode nearest = NearestMode::round_prefer_floor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
};

/// The decoded attributes of Resize (opset 11 on); an error names an unknown or unsupported value
/// (tf_crop_and_resize).
collage::Result<ResizeSpec> resize_spec(const std::string& mode, const std::string& coordinates, const std::string& nearest,
                                        double cubic_coeff_a, bool exclude_outside);

/// The taps of one output element: (input index, weight) pairs, indices within [0, in).
using Taps = std::vector<std::pair<std::int64_t, double>>;

/// The taps of every output index of an axis resized from `in` to `out` elements at `scale`
/// (the given scale, or out / in when sizes were given, `from_sizes`). Out-of-range neighbours
/// read the edge element, as ONNX's reference does.
std::vector<Taps> resize_taps(const ResizeSpec& spec, std::int64_t in, std::int64_t out, double scale, bool from_sizes);

/// The input index of each output when every output copies one input element (weight 1), else
/// nothing.
std::vector<std::int64_t> selected_indices(const std::vector<Taps>& taps);

}  // namespace tc::detail
