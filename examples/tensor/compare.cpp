#include "tensor/compare.hpp"

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <system_error>
#include <vector>

#include <collage/support/numbers.hpp>

namespace tc {

namespace {

/// How far `a` is from `e` in units of the tolerance: <= 1 is close, +inf for a mismatched NaN
/// or infinity.
double excess(double a, double e, double rtol, double atol, double& tolerance) {
  tolerance = atol + rtol * std::fabs(e);
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e) ? 0.0 : HUGE_VAL;
  if (std::isinf(a) || std::isinf(e)) return a == e ? 0.0 : HUGE_VAL;
  const double diff = std::fabs(a - e);
  if (tolerance <= 0.0) return diff == 0.0 ? 0.0 : HUGE_VAL;
  return diff / tolerance;
}

/// `v` in the shortest form that reads back to the same float.
std::string format_float(float v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

std::string multi_index_text(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return to_string(index);
}

}  // namespace

bool all_close(const Tensor& actual, const Tensor& expected, double rtol, double atol, std::string* worst) {
  if (actual.shape != expected.shape || actual.size() != expected.size()) {
    if (worst != nullptr) {
      *worst = "shape " + to_string(actual.shape) + " (" + std::to_string(actual.size()) + " elements) vs expected " +
               to_string(expected.shape) + " (" + std::to_string(expected.size()) + " elements)";
    }
    return false;
  }
  std::int64_t differ = 0;
  std::int64_t worst_at = -1;
  double worst_excess = -1.0;
  double worst_tolerance = 0.0;
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    double tolerance = 0.0;
    const double x = excess(actual.data[k], expected.data[k], rtol, atol, tolerance);
    if (x > 1.0) ++differ;
    if (x > worst_excess) {
      worst_excess = x;
      worst_at = i;
      worst_tolerance = tolerance;
    }
  }
  if (worst != nullptr) {
    if (worst_at < 0) {
      *worst = "no elements";
    } else {
      const auto k = static_cast<std::size_t>(worst_at);
      const float a = actual.data[k];
      const float e = expected.data[k];
      *worst = std::to_string(differ) + " of " + std::to_string(actual.size()) + " elements differ; worst at " +
               std::to_string(worst_at) + " " + multi_index_text(worst_at, actual.shape) + ": " +
               format_float(a) + " vs expected " + format_float(e) + " (|diff| " +
               collage::format_double(std::fabs(static_cast<double>(a) - e), 3) + (differ > 0 ? " > " : " <= ") + "tolerance " +
               collage::format_double(worst_tolerance, 3) + ")";
    }
  }
  return differ == 0;
}

}  // namespace tc
