#pragma once

/// \file
/// SubGraphConfig and Validity: the limits a sub-graph must respect to become one kernel.

#include <cstddef>
#include <string>
#include <string_view>

namespace collage {

/// Limits on a sub-graph; 0 means unlimited.
struct SubGraphConfig {
  /// Most exit nodes (nodes whose value is used outside, or results).
  std::size_t max_exits = 0;
  /// Whether an exit may also feed an inside node (a "tap").
  bool allow_taps = false;
  /// Most nodes on the longest path inside from an entry (SubGraph::depth).
  std::size_t max_depth = 0;

  friend bool operator==(const SubGraphConfig& a, const SubGraphConfig& b) {
    return a.max_exits == b.max_exits && a.allow_taps == b.allow_taps && a.max_depth == b.max_depth;
  }
};

/// "{max_exits N, taps allowed|forbidden, max_depth N}", as rules describe a config.
inline std::string to_string(const SubGraphConfig& config) {
  return "{max_exits " + std::to_string(config.max_exits) + ", taps " + (config.allow_taps ? "allowed" : "forbidden") +
         ", max_depth " + std::to_string(config.max_depth) + "}";
}

/// The outcome of SubGraph::check: valid, or the first rule broken (checked in this order).
enum class Validity {
  valid,
  empty,              ///< no inside node
  too_many_exits,     ///< more exits than max_exits
  tap,                ///< an exit feeds an inside node and taps are not allowed
  too_deep,           ///< depth above max_depth
  multiple_scopes,    ///< inside nodes from more than one scope
  nested_not_inside,  ///< a nested group is empty or has nodes outside the sub-graph
  nested_overlap,     ///< two nested groups share a node
  nested_invalid,     ///< a nested group is not itself valid (e.g. not convex)
  not_convex,         ///< a path leaves the sub-graph and comes back in
  other_graph,        ///< made over a graph of another size than the one it is checked against
};

/// A short phrase for reports, e.g. "not convex".
constexpr std::string_view to_string(Validity v) {
  switch (v) {
    case Validity::valid: return "valid";
    case Validity::other_graph: return "made over another graph";
    case Validity::empty: return "empty";
    case Validity::too_many_exits: return "too many exits";
    case Validity::tap: return "an exit also feeds an inside node (tap)";
    case Validity::too_deep: return "too deep";
    case Validity::multiple_scopes: return "spans more than one scope";
    case Validity::nested_not_inside: return "a nested group is not inside";
    case Validity::nested_overlap: return "nested groups overlap";
    case Validity::nested_invalid: return "a nested group is invalid";
    case Validity::not_convex: return "not convex";
  }
  return "invalid";
}

}  // namespace collage
