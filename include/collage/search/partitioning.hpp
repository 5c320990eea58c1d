#pragma once

/// \file
/// Partitioning: what a searcher returns — the chosen candidates, their total cost and statistics.

#include <cstddef>
#include <string>
#include <vector>

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
};

}  // namespace collage
