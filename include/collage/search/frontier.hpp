#pragma once

/// \file
/// The state transitions shared by the searchers: which candidates apply to a covered set, and the
/// covered set that results.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "collage/search/partitioning.hpp"
#include "collage/search/search_problem.hpp"

namespace collage {
namespace detail {

/// One search state: the settled nodes, the kernel nodes ready to start a candidate, and the
/// progress made.
struct SearchState {
  CoveredSet covered;
  /// Unsettled kernel nodes all of whose inputs are available, ascending.
  std::vector<std::uint32_t> ready;
  std::size_t kernels_covered = 0;
  /// Sum of min_share over the covered kernel nodes (for the A* bound).
  double covered_share = 0;
};

/// Applies candidates to states. A candidate applies when none of its nodes is settled and each
/// of its inputs is available: settled, or a node that needs no kernel whose own inputs are
/// available (it is then fixed to the host). Every applied candidate's inputs therefore come from
/// earlier candidates or the host, so every sequence of applications is a topological order of an
/// acyclic partitioning; and every acyclic partitioning can be applied in a topological order of
/// its quotient, so the states reach all of them.
template <class G>
class Frontier {
 public:
  explicit Frontier(const SearchProblem<G>& problem) : problem_(problem), graph_(problem.graph()) {}

  /// The state before anything is chosen.
  SearchState start() const {
    SearchState s;
    s.covered.beyond = IndexSet(graph_.size());
    s.covered.first_open = advance(s.covered, 0);
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (graph_.needs_kernel(i) && inputs_available(s.covered, i)) s.ready.push_back(static_cast<std::uint32_t>(i));
    }
    return s;
  }

  bool is_goal(const SearchState& s) const { return s.kernels_covered == problem_.kernel_nodes(); }

  /// Node i is settled in `c`, or is a node that always stays with the host (for those, whether
  /// they can feed a candidate depends on their inputs: see available()).
  bool settled(const CoveredSet& c, std::size_t i) const {
    if (i < c.first_open) return true;
    if (i == c.first_open) return false;
    return c.beyond.contains(i) || always_host(i);
  }

  /// The state after choosing candidate `item` in `s`, or nothing when it does not apply.
  std::optional<SearchState> apply(const SearchState& s, std::size_t item) const {
    const SubGraph& sub = problem_[item].candidate.sub_graph;
    for (std::size_t i : sub.inside()) {
      if (settled(s.covered, i)) return std::nullopt;
    }
    std::vector<std::size_t> fixed;  // nodes without kernels that the candidate takes from the host
    for (std::size_t i : sub.input()) {
      if (!available(s.covered, i, &fixed)) return std::nullopt;
    }
    SearchState next;
    next.kernels_covered = s.kernels_covered + problem_[item].kernels;
    next.covered_share = s.covered_share;
    IndexSet added = sub.inside();
    for (std::size_t i : sub.inside()) {
      if (graph_.needs_kernel(i)) next.covered_share += problem_.min_share(i);
    }
    for (std::size_t i : fixed) {
      if (!always_host(i)) added.add(i);
    }
    next.covered = settle(s.covered, added);
    // Ready nodes: the old ones not covered now, and kernel consumers reached from the newly
    // settled nodes through nodes without kernels.
    for (std::uint32_t r : s.ready) {
      if (!sub.inside().contains(r)) next.ready.push_back(r);
    }
    std::vector<std::size_t> walk(added.begin(), added.end());
    std::vector<std::size_t> seen;
    while (!walk.empty()) {
      std::size_t n = walk.back();
      walk.pop_back();
      for (std::size_t o : graph_.outputs(n)) {
        if (std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
        seen.push_back(o);
        if (!graph_.needs_kernel(o)) {
          walk.push_back(o);  // a tuple or projection may now pass values on
        } else if (!settled(next.covered, o) && inputs_available(next.covered, o)) {
          next.ready.push_back(static_cast<std::uint32_t>(o));
        }
      }
    }
    std::sort(next.ready.begin(), next.ready.end());
    next.ready.erase(std::unique(next.ready.begin(), next.ready.end()), next.ready.end());
    return next;
  }

  /// The first kernel node not yet covered (npos at the goal).
  std::size_t first_uncovered_kernel(const CoveredSet& c) const {
    for (std::size_t i = c.first_open; i < graph_.size(); ++i) {
      if (graph_.needs_kernel(i) && !settled(c, i)) return i;
    }
    return npos;
  }

  /// Builds the partitioning from the chosen items, in order.
  Partitioning assemble(const std::vector<std::size_t>& items) const {
    Partitioning result;
    IndexSet used(graph_.size());
    for (std::size_t id : items) {
      const auto& item = problem_[id];
      Candidate c = item.candidate;
      c.cost = item.cost;
      result.total += item.cost;
      result.effective_total += item.effective;
      used |= c.sub_graph.inside();
      result.parts.push_back(std::move(c));
    }
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (!used.contains(i)) result.host.push_back(i);
    }
    result.stats.candidates = problem_.size();
    return result;
  }

 private:
  bool always_host(std::size_t i) const { return !graph_.needs_kernel(i) && !problem_.contested(i); }

  /// Whether node i can feed a candidate now: a covered kernel node, an inlinable node, a settled
  /// node without kernel, or a node without kernel whose ancestors up to kernel nodes are
  /// available. Appends the contested nodes this would fix to the host to `fixed`. Iterative.
  bool available(const CoveredSet& c, std::size_t i, std::vector<std::size_t>* fixed) const {
    std::vector<std::size_t> stack{i};
    std::vector<std::size_t> visited;
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      if (graph_.is_inlinable(n)) continue;
      if (graph_.needs_kernel(n)) {
        if (!settled(c, n)) return false;
        continue;
      }
      if (!always_host(n) && settled(c, n)) continue;
      if (std::find(visited.begin(), visited.end(), n) != visited.end()) continue;
      visited.push_back(n);
      if (fixed != nullptr && !always_host(n)) fixed->push_back(n);
      for (std::size_t j : graph_.inputs(n)) stack.push_back(j);
    }
    return true;
  }
  bool inputs_available(const CoveredSet& c, std::size_t i) const {
    for (std::size_t j : graph_.inputs(i)) {
      if (!available(c, j, nullptr)) return false;
    }
    return true;
  }

  /// The first unsettled index at or after `from`.
  std::size_t advance(const CoveredSet& c, std::size_t from) const {
    std::size_t p = from;
    while (p < graph_.size() && (c.beyond.contains(p) || always_host(p))) ++p;
    return p;
  }

  /// `c` with `added` settled, in canonical form.
  CoveredSet settle(const CoveredSet& c, const IndexSet& added) const {
    CoveredSet next{c.first_open, c.beyond | added};
    if (added.contains(c.first_open)) {
      next.first_open = advance(next, c.first_open);
      while (true) {
        std::size_t low = next.beyond.first_inside();
        if (low == npos || low > next.first_open) break;
        next.beyond.remove(low);
      }
    }
    return next;
  }

  const SearchProblem<G>& problem_;
  const DataflowGraph<G>& graph_;
};

}  // namespace detail
}  // namespace collage
