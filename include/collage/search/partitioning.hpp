#pragma once

/// \file
/// Partitioning: what a searcher returns — the chosen candidates, their total cost and statistics.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/fingerprint.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/support/cost.hpp"

namespace collage {

/// Counters describing one search.
struct SearchStats {
  std::string algorithm;
  /// Usable candidates the search could choose from.
  std::size_t candidates = 0;
  /// States taken off the frontier and expanded.
  std::size_t states_expanded = 0;
  /// Distinct states created.
  std::size_t states_generated = 0;
  /// Wall-clock seconds of the search itself.
  double seconds = 0;
  /// The layer (kernel nodes covered) from which a beam search kept one state per layer because
  /// its time budget ran out; npos when it never did.
  std::size_t narrowed_at = static_cast<std::size_t>(-1);
};

/// A complete, valid partitioning: disjoint candidates covering every node that needs a kernel,
/// whose quotient graph is acyclic.
struct Partitioning {
  /// The chosen candidates, in an order in which each one's inputs are produced by earlier ones
  /// or by the host (a topological order of the quotient). `cost` holds the oracle's estimate plus
  /// the target's penalty.
  std::vector<Candidate> parts;
  /// With transfers (SearchCosts::transfers), per part (same order): the cost of the moves between
  /// devices charged to it (its inputs brought to its device, its graph outputs to the host).
  /// Empty without transfers.
  std::vector<double> transfers;
  /// The sum of the parts' costs and transfers (Unknown when some part's cost is Unknown).
  Cost total;
  /// What the search minimised: `total` with each Unknown part at the fallback cost.
  Cost effective_total;
  /// Nodes in no part, left to the host (they need no kernel), ascending.
  std::vector<std::size_t> host;
  SearchStats stats;
  /// The graph the partitioning was made over (the searchers record it; a partitioning made by
  /// hand has none).
  GraphFingerprint graph;
};

namespace detail {

/// An ErrorCode::wrong_graph Error, prefixed with `what`, when `partitioning` was not made over
/// `graph`: its recorded fingerprint is another graph's, or (when it has none) some part is a
/// sub-graph of a graph of another size.
template <class G>
std::optional<Error> check_graph(const DataflowGraph<G>& graph, const Partitioning& partitioning, std::string_view what) {
  if (partitioning.graph.recorded()) return check_same_graph(partitioning.graph, graph.fingerprint(), what);
  for (const Candidate& c : partitioning.parts) {
    if (c.sub_graph.inside().universe() != graph.size()) {
      return Error{ErrorCode::wrong_graph, std::string(what) + " was made over a graph of " +
                                               std::to_string(c.sub_graph.inside().universe()) +
                                               " nodes, not this one of " + std::to_string(graph.size())};
    }
  }
  return std::nullopt;
}

}  // namespace detail

}  // namespace collage
