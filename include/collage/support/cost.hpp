#pragma once

/// \file
/// Cost: the additive, totally ordered cost of running a candidate on a backend.

#include <cmath>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "collage/support/numbers.hpp"

namespace collage {

/// The cost of a candidate (or a sum of candidates). One of:
///  - a known value v >= 0 (Zero is the value 0),
///  - Unknown: the oracle could not tell (stored as NaN),
///  - Invalid: the candidate cannot run at all (stored as +inf, or as the negative number given
///    to value(), see not_a_cost()).
///
/// Order (a strict total order; NaN never reaches a comparison):
///   every known value (ascending) < Unknown < Invalid, and Unknown == Unknown.
/// So an Unknown candidate is chosen only when no known alternative exists, and a priority queue
/// keyed by Cost stays a valid heap.
///
/// Addition:
///   Invalid + x = Invalid;  Unknown + known = Unknown;  known + known = their sum
///   (a sum that overflows to +inf is Invalid). Addition is commutative, associative and monotone
///   under the order above: a <= b implies a + c <= b + c.
class Cost {
 public:
  /// Zero cost.
  constexpr Cost() = default;

  static constexpr Cost zero() { return Cost(0.0); }
  static constexpr Cost unknown() { return Cost(std::numeric_limits<double>::quiet_NaN()); }
  static constexpr Cost invalid() { return Cost(std::numeric_limits<double>::infinity()); }

  /// A known cost. NaN gives Unknown and +inf Invalid. A negative value or -inf is no cost at all:
  /// it gives an Invalid cost that remembers the number (not_a_cost()), so that no negative cost
  /// can reach a shortest-path search and an oracle that answers one is reported (the oracle
  /// checks of CostOracle::measure_batch() turn it into an Error naming the value).
  static Cost value(double v) {
    if (std::isnan(v)) return unknown();
    if (v == std::numeric_limits<double>::infinity()) return invalid();
    return Cost(v);
  }

  bool is_known() const { return value_ >= 0.0 && value_ < std::numeric_limits<double>::infinity(); }
  bool is_unknown() const { return std::isnan(value_); }
  bool is_invalid() const { return value_ == std::numeric_limits<double>::infinity() || value_ < 0.0; }
  bool is_zero() const { return value_ == 0.0; }

  /// The negative number or -inf this Invalid cost was made from by value(), which is an
  /// oracle's mistake rather than a cost; nothing for every other cost. Arithmetic forgets it (a
  /// sum with such a cost is plain Invalid).
  std::optional<double> not_a_cost() const {
    if (value_ < 0.0) return value_;
    return std::nullopt;
  }

  /// The raw value: the cost when known, NaN when Unknown, +inf when Invalid.
  constexpr double raw() const { return value_ < 0.0 ? std::numeric_limits<double>::infinity() : value_; }

  friend Cost operator+(Cost a, Cost b) {
    if (a.is_invalid() || b.is_invalid()) return invalid();
    if (a.is_unknown() || b.is_unknown()) return unknown();
    return value(a.value_ + b.value_);
  }
  Cost& operator+=(Cost that) { return *this = *this + that; }

  friend bool operator<(Cost a, Cost b) {
    int ra = a.rank();
    int rb = b.rank();
    if (ra != rb) return ra < rb;
    return ra == 0 && a.value_ < b.value_;
  }
  friend bool operator==(Cost a, Cost b) { return a.rank() == b.rank() && (a.rank() != 0 || a.value_ == b.value_); }
  friend bool operator!=(Cost a, Cost b) { return !(a == b); }
  friend bool operator>(Cost a, Cost b) { return b < a; }
  friend bool operator<=(Cost a, Cost b) { return !(b < a); }
  friend bool operator>=(Cost a, Cost b) { return !(a < b); }

  /// "12.5", "unknown" or "invalid"; known values print with 12 significant digits (as "%.12g"
  /// in the C locale), the same under every locale.
  std::string to_string() const {
    if (is_unknown()) return "unknown";
    if (is_invalid()) return "invalid";
    return format_double(value_, 12);
  }
  friend std::ostream& operator<<(std::ostream& os, Cost c) { return os << c.to_string(); }

 private:
  constexpr explicit Cost(double v) : value_(v) {}
  /// 0 known, 1 unknown, 2 invalid: the coarse key of the total order.
  int rank() const { return is_unknown() ? 1 : (is_invalid() ? 2 : 0); }

  double value_ = 0.0;
};

namespace detail {

/// `c` as the text files of collage (traces, measurement databases) keep it: "unknown", "invalid"
/// or the shortest form of the value that reads back to exactly it.
inline std::string format_cost(Cost c) {
  if (c.is_unknown()) return "unknown";
  if (c.is_invalid()) return "invalid";
  return format_double(c.raw());
}

/// The cost format_cost() wrote as `text`, or nothing.
inline std::optional<Cost> parse_cost(std::string_view text) {
  if (text == "unknown") return Cost::unknown();
  if (text == "invalid") return Cost::invalid();
  std::optional<double> v = parse_non_negative(text);
  if (!v) return std::nullopt;
  return Cost::value(*v);
}

}  // namespace detail

}  // namespace collage
