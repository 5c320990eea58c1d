#pragma once

/// \file
/// Candidate: a sub-graph a target could run, produced by a partition rule.

#include <string>

#include "collage/partition/sub_graph.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/name.hpp"

namespace collage {

/// A sub-graph, the target (backend) that could run it, the rule that proposed it, and its cost
/// once an oracle has estimated it. The target and rule name are Names (interned): a rule stamps
/// the same two on thousands of candidates.
struct Candidate {
  SubGraph sub_graph;
  Name target;
  Name rule_name;
  /// The candidate's cost: Cost::unknown() until an oracle has answered (and when it could not
  /// tell), the one spelling of "not estimated". Rules leave it Unknown unless they know the cost
  /// (the host rule's zero); estimate_costs() asks the oracle for every Unknown one, and the
  /// search treats those the oracle left Unknown by its fallback rule (SearchCosts).
  Cost cost = Cost::unknown();

  /// Identity for de-duplication: same inside set, same nesting, same target.
  friend bool operator==(const Candidate& a, const Candidate& b) {
    return a.target == b.target && a.sub_graph == b.sub_graph;
  }
  friend bool operator!=(const Candidate& a, const Candidate& b) { return !(a == b); }
  /// The deterministic candidate order: by sub-graph (first inside index first), then target,
  /// then rule name.
  friend bool operator<(const Candidate& a, const Candidate& b) {
    if (int c = SubGraph::compare(a.sub_graph, b.sub_graph)) return c < 0;
    if (int c = a.target.compare(b.target)) return c < 0;
    return a.rule_name.compare(b.rule_name) < 0;
  }
  /// "target:rule:{inside}[nested groups]".
  std::string to_string() const { return target + ":" + rule_name + ":" + sub_graph.to_string(); }
  /// As to_string() with the sub-graph's labels over `graph`: "target:rule:conv2d+relu{3,4}".
  template <class G>
  std::string to_string(const DataflowGraph<G>& graph) const {
    return target + ":" + rule_name + ":" + sub_graph.to_string(graph);
  }
};

}  // namespace collage
