#pragma once

/// \file
/// Attributes: the named, typed attributes of a node (ints, floats, int lists), kept sorted by
/// name so that printing them is deterministic.

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace tc {

/// One attribute value: an integer, a float (held as double), or a list of integers.
using AttrValue = std::variant<std::int64_t, double, std::vector<std::int64_t>>;

/// A node's attributes by name.
class Attributes {
 public:
  Attributes() = default;

  void set(const std::string& name, std::int64_t v) { values_[name] = v; }
  void set(const std::string& name, int v) { values_[name] = static_cast<std::int64_t>(v); }
  void set(const std::string& name, double v) { values_[name] = v; }
  void set(const std::string& name, float v) { values_[name] = static_cast<double>(v); }
  void set(const std::string& name, std::vector<std::int64_t> v) { values_[name] = std::move(v); }
  void erase(const std::string& name) { values_.erase(name); }

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /// The integer `name`, or `fallback` when absent or not an integer.
  std::int64_t get_int(const std::string& name, std::int64_t fallback = 0) const;
  /// The float `name` (an integer is converted), or `fallback`.
  double get_float(const std::string& name, double fallback = 0.0) const;
  /// The int list `name`, or `fallback`.
  std::vector<std::int64_t> get_ints(const std::string& name, std::vector<std::int64_t> fallback = {}) const;

  const std::map<std::string, AttrValue>& values() const { return values_; }
  /// "axis=1,pads=[0,0,1,1]": deterministic, locale-independent, floats exact (shortest form).
  std::string to_string() const;

  friend bool operator==(const Attributes& a, const Attributes& b) { return a.values_ == b.values_; }
  friend bool operator!=(const Attributes& a, const Attributes& b) { return !(a == b); }

 private:
  std::map<std::string, AttrValue> values_;
};

}  // namespace tc
