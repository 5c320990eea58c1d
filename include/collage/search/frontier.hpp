#pragma once

/// \file
/// The state transitions shared by the searchers: which candidates apply to a covered set, and the
/// covered set that results.

#include <algorithm>
#include <cstddef>
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

  /// The state after choosing candidate `item` in `s`, or nothing when it does not apply. When
  /// it applies, `*fixes_host` (if given) tells whether it fixed contested nodes to the host.
  std::optional<SearchState> apply(const SearchState& s, std::size_t item, bool* fixes_host = nullptr) const {
    if (touches_settled(s.covered, item)) return std::nullopt;
    return apply_free(s, item, fixes_host);
  }

  /// Calls f(item, next state) for each candidate the searchers apply in `s`: a subset of the
  /// applicable ones that keeps every partitioning reachable. Let u = s.ready[0], the first
  /// unsettled kernel node (every earlier kernel node is settled, so u is ready), and `limit` the
  /// largest node of the candidates that hold u and no settled node and either do not apply yet
  /// or apply only by fixing contested nodes to the host (u itself when there are none). Tried
  /// are the candidates that hold u and those whose smallest node is below `limit`.
  ///
  /// Why nothing is lost: take any acyclic partitioning P whose parts applied so far gave `s`,
  /// and its part Q that holds u. If Q applies without fixing a node that P puts in another
  /// part, it is tried. If not, some part of P not yet applied is an ancestor of Q in P's
  /// quotient, and so max(Q) <= limit. A minimal such part M applies without fixing anything P
  /// puts in a part (its producers are applied: the applied parts are closed under ancestors),
  /// and since M holds an ancestor of a node of Q, min(M) < max(Q) <= limit: M is tried. Either
  /// way a part of P is tried, so P is reached (and the rule depends on `s` alone, so merging
  /// equal states loses nothing). This keeps independent chains from being interleaved in every
  /// order (about (L+1)^w states for w chains of L nodes) except while a candidate at u waits
  /// for them, e.g. one that also holds their join.
  template <class F>
  void for_each_successor(const SearchState& s, F f) const {
    if (s.ready.empty()) return;
    const std::size_t u = s.ready[0];
    std::size_t limit = u;
    auto [first_at_u, last_at_u] = problem_.starting_at(u);
    for (std::size_t item = first_at_u; item < last_at_u; ++item) {
      if (touches_settled(s.covered, item)) continue;
      bool fixes_host = false;
      std::optional<SearchState> next = apply_free(s, item, &fixes_host);
      if (!next || fixes_host) limit = std::max(limit, problem_[item].last_node);
      if (next) f(item, std::move(*next));
    }
    for (std::size_t k = 1; k < s.ready.size(); ++k) {
      auto [first, last] = problem_.starting_at(s.ready[k]);
      for (std::size_t item = first; item < last; ++item) {
        if (problem_[item].first_node >= limit) continue;
        if (std::optional<SearchState> next = apply(s, item)) f(item, std::move(*next));
      }
    }
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
  /// apply() for a candidate known to hold no settled node.
  std::optional<SearchState> apply_free(const SearchState& s, std::size_t item, bool* fixes_host) const {
    const SubGraph& sub = problem_[item].candidate.sub_graph;

    std::vector<std::size_t> fixed;  // nodes without kernels that the candidate takes from the host
    for (std::size_t i : sub.input()) {
      if (!available(s.covered, i, &fixed)) return std::nullopt;
    }
    if (fixes_host != nullptr) *fixes_host = !fixed.empty();
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
    next.ready.reserve(s.ready.size() + 4);
    for (std::uint32_t r : s.ready) {
      if (!sub.inside().contains(r)) next.ready.push_back(r);
    }
    // The old ones stay sorted; the few new ones are sorted and merged in.
    const auto old_ready = static_cast<std::ptrdiff_t>(next.ready.size());
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
    std::sort(next.ready.begin() + old_ready, next.ready.end());
    std::inplace_merge(next.ready.begin(), next.ready.begin() + old_ready, next.ready.end());
    next.ready.erase(std::unique(next.ready.begin(), next.ready.end()), next.ready.end());
    return next;
  }

  bool touches_settled(const CoveredSet& c, std::size_t item) const {
    for (std::size_t i : problem_[item].candidate.sub_graph.inside()) {
      if (settled(c, i)) return true;
    }
    return false;
  }

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
