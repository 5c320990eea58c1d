#pragma once

/// \file
/// NameSupply: deterministic fresh names ("fused", "fused_1", "fused_2", ...).

#include <string>
#include <string_view>
#include <unordered_map>

namespace collage {

/// Hands out names that are unique within this supply. The first request for a prefix returns the
/// prefix itself (unless reserved); later ones append "_1", "_2", ... The sequence depends only on
/// the order of requests.
class NameSupply {
 public:
  /// Marks `name` as taken, e.g. a name the user's IR already uses.
  void reserve(std::string_view name) { taken_.emplace(std::string(name), 0); }

  /// A name starting with `prefix` that this supply has not handed out or reserved.
  std::string fresh(std::string_view prefix) {
    std::string name(prefix);
    auto [it, inserted] = taken_.emplace(name, 0);
    if (inserted) return name;
    std::size_t& last_suffix = it->second;  // element references survive rehashing; iterators do not
    while (true) {
      std::string candidate = name + "_" + std::to_string(++last_suffix);
      if (taken_.emplace(candidate, 0).second) return candidate;
    }
  }

 private:
  std::unordered_map<std::string, std::size_t> taken_;  // name -> last suffix tried
};

}  // namespace collage
