#include "onnx/resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace tc::detail {

namespace {

/// ONNX's x_original of output index i; `length` is ONNX's length_resized (in * scale, not
/// rounded, when scales were given).
double source_coordinate(CoordinateMode mode, std::int64_t i, double scale, std::int64_t in, std::int64_t out, double length) {
  const double x = static_cast<double>(i);
  switch (mode) {
    case CoordinateMode::half_pixel: return (x + 0.5) / scale - 0.5;
    case CoordinateMode::half_pixel_symmetric: {
      const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
      const double center = static_cast<double>(in) / 2;
      return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case CoordinateMode::pytorch_half_pixel: return length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::align_corners: return length == 1 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1);
    case CoordinateMode::asymmetric: return x / scale;
    case CoordinateMode::tf_half_pixel_for_nn: return (x + 0.5) / scale;
  }
  return x;
}

std::int64_t nearest_index(NearestMode mode, double x) {
  const double f = std::floor(x);
  switch (mode) {
    case NearestMode::round_prefer_floor: return static_cast<std::int64_t>(x - f == 0.5 ? f : std::round(x));
    case NearestMode::round_prefer_ceil: return static_cast<std::int64_t>(x - f == 0.5 ? f + 1 : std::round(x));
    case NearestMode::floor: return static_cast<std::int64_t>(f);
    case NearestMode::ceil: return static_cast<std::int64_t>(std::ceil(x));
  }
  return static_cast<std::int64_t>(f);
}

/// Sets `value` to the enumerator named `name` in `names`; false when none is.
template <class E, std::size_t N>
bool lookup(const std::pair<const char*, E> (&names)[N], const std::string& name, E& value) {
  for (const auto& [text, e] : names) {
    if (name == text) {
      value = e;
      return true;
    }
  }
  return false;
}

/// Keys' cubic convolution kernel with parameter a at distance d.
double cubic_weight(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

}  // namespace

collage::Result<ResizeSpec> resize_spec(const std::string& mode, const std::string& coordinates, const std::string& nearest,
                                        double cubic_coeff_a, bool exclude_outside) {
  const auto bad = [](const std::string& what) {
    return collage::Error{collage::ErrorCode::invalid_argument, what + " is not supported"};
  };
  static constexpr std::pair<const char*, ResizeMode> kModes[] = {
      {"nearest", ResizeMode::nearest}, {"linear", ResizeMode::linear}, {"cubic", ResizeMode::cubic}};
  static constexpr std::pair<const char*, CoordinateMode> kCoordinates[] = {
      {"half_pixel", CoordinateMode::half_pixel},       {"half_pixel_symmetric", CoordinateMode::half_pixel_symmetric},
      {"pytorch_half_pixel", CoordinateMode::pytorch_half_pixel}, {"align_corners", CoordinateMode::align_corners},
      {"asymmetric", CoordinateMode::asymmetric},       {"tf_half_pixel_for_nn", CoordinateMode::tf_half_pixel_for_nn}};
  static constexpr std::pair<const char*, NearestMode> kNearest[] = {
      {"round_prefer_floor", NearestMode::round_prefer_floor}, {"round_prefer_ceil", NearestMode::round_prefer_ceil},
      {"floor", NearestMode::floor}, {"ceil", NearestMode::ceil}};
  ResizeSpec spec;
  spec.cubic_coeff_a = cubic_coeff_a;
  spec.exclude_outside = exclude_outside;
  if (!lookup(kModes, mode, spec.mode)) return bad("mode '" + mode + "'");
  if (!lookup(kCoordinates, coordinates, spec.coordinates)) return bad("coordinate_transformation_mode '" + coordinates + "'");
  if (!lookup(kNearest, nearest, spec.nearest)) return bad("nearest_mode '" + nearest + "'");
  return spec;
}

std::vector<Taps> resize_taps(const ResizeSpec& spec, std::int64_t in, std::int64_t out, double scale, bool from_sizes) {
  const double length = from_sizes ? static_cast<double>(out) : static_cast<double>(in) * scale;
  const auto clamp = [in](std::int64_t j) { return std::clamp<std::int64_t>(j, 0, in - 1); };
  std::vector<Taps> taps(static_cast<std::size_t>(std::max<std::int64_t>(out, 0)));
  for (std::int64_t i = 0; i < out; ++i) {
    Taps& t = taps[static_cast<std::size_t>(i)];
    const double x = source_coordinate(spec.coordinates, i, scale, in, out, length);
    if (spec.mode == ResizeMode::nearest) {
      t.emplace_back(clamp(nearest_index(spec.nearest, x)), 1.0);
      continue;
    }
    const double x0 = std::floor(x);
    const double frac = x - x0;
    const auto base = static_cast<std::int64_t>(x0);
    if (spec.mode == ResizeMode::linear) {
      // The ONNX reference clamps the coordinate for linear, so the edge element is read unblended.
      const double xc = std::clamp(x, 0.0, static_cast<double>(in - 1));
      const auto lo = static_cast<std::int64_t>(std::floor(xc));
      const double w = xc - static_cast<double>(lo);
      t.emplace_back(lo, 1 - w);
      if (w != 0) t.emplace_back(clamp(lo + 1), w);
      continue;
    }
    double total = 0;
    for (std::int64_t k = -1; k <= 2; ++k) {
      const std::int64_t j = base + k;
      double w = cubic_weight(frac - static_cast<double>(k), spec.cubic_coeff_a);
      if (spec.exclude_outside && (j < 0 || j >= in)) w = 0;
      total += w;
      t.emplace_back(clamp(j), w);
    }
    if (spec.exclude_outside && total != 0) {
      for (auto& tap : t) tap.second /= total;
    }
  }
  return taps;
}

std::vector<std::int64_t> selected_indices(const std::vector<Taps>& taps) {
  std::vector<std::int64_t> indices;
  for (const Taps& t : taps) {
    if (t.size() != 1 || t[0].second != 1.0) return {};
    indices.push_back(t[0].first);
  }
  return indices;
}

}  // namespace tc::detail
