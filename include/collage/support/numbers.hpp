#pragma once

/// \file
/// The one way collage writes and reads numbers in text (reports, traces, databases): through
/// std::to_chars / std::from_chars, so the same value gives the same bytes under every locale;
/// and the one way it cuts a line of such text into its fields.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace collage {

/// `v` in the shortest form that reads back to exactly `v` ("0.1", "1e+300", "inf", "nan").
inline std::string format_double(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

/// `v` rounded to `digits` significant digits, trailing zeros dropped, as printf's "%.<digits>g"
/// in the C locale ("2.1" for 2.1000000000000001 with 12 digits).
inline std::string format_double(double v, int digits) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

/// The number that all of `text` spells (decimal or scientific, as format_double writes), or
/// nothing: empty text, trailing characters, a leading '+' or whitespace, and out-of-range values
/// are rejected. "inf" and "nan" parse (callers that must reject them check the value).
inline std::optional<double> parse_double(std::string_view text) {
  double v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  if (first == last) return std::nullopt;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last) return std::nullopt;
  return v;
}

/// A finite number >= 0 that all of `text` spells, or nothing.
inline std::optional<double> parse_non_negative(std::string_view text) {
  std::optional<double> v = parse_double(text);
  if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
  return v;
}

/// The non-negative integer that all of `text` spells in decimal digits, or nothing (a sign, a
/// fraction, an exponent or a value beyond `max` is rejected rather than cast).
inline std::optional<std::size_t> parse_index(std::string_view text,
                                              std::size_t max = std::numeric_limits<std::size_t>::max()) {
  std::size_t v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  if (first == last) return std::nullopt;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || v > max) return std::nullopt;
  return v;
}

/// The fields of `text` between the separators `sep`: one more than there are separators, empty
/// ones included.
inline std::vector<std::string_view> split_fields(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace collage
