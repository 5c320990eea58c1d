#pragma once

/// \file
/// StateSpace: the state space every searcher walks (the start state, the goal test and the
/// successor function: which candidates apply to a covered set, and the state that results).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "collage/search/partitioning.hpp"
#include "collage/search/search_problem.hpp"
#include "collage/search/transfers.hpp"
#include "collage/support/epoch_marks.hpp"

namespace collage {
namespace detail {

/// One search state: the settled nodes, the kernel nodes ready to start a candidate, and the
/// progress made.
struct SearchState {
  CoveredSet covered;
  /// Unsettled kernel nodes all of whose inputs are available, ascending (a few, on most graphs).
  boost::container::small_vector<std::uint32_t, 6> ready;
  std::size_t kernels_covered = 0;
  /// Sum of min_share over the covered kernel nodes (for the A* bound).
  double covered_share = 0;

  /// Bytes `ready` holds on the heap.
  std::size_t ready_heap_bytes() const {
    return ready.capacity() > ready.static_capacity ? ready.capacity() * sizeof(std::uint32_t) : 0;
  }
};

/// The scratch marks and lists of a StateSpace's walks, kept between calls to save allocations.
/// Each search run owns one and passes it to the StateSpace, which is itself immutable: searches
/// over one problem can run at once, each on its own thread with its own scratch.
struct SearchScratch {
  /// for_each_successor()'s marks: a node was a pivot, a candidate was tried.
  EpochMarks node_marks{};
  EpochMarks item_marks{};
  /// for_each_successor()'s pivots and waits, the fixed nodes of a step, the readiness walk of
  /// the next state, the walk that decides whether a node is available.
  std::vector<std::size_t> pivots{};
  std::vector<std::size_t> waits{};
  std::vector<std::size_t> fixed{};
  std::vector<std::size_t> walk{};
  std::vector<std::size_t> seen{};
  std::vector<std::size_t> stack{};
  std::vector<std::size_t> visited{};
  /// charge_transfers()'s walk and the walk that decides whether a value is still read.
  std::vector<std::size_t> transfer{};
  std::vector<std::size_t> live{};
};

/// The searchers' state space over a SearchProblem: start(), is_goal(), and the successor
/// function, apply() for one candidate and for_each_successor() for the candidates a searcher
/// expands a state by. A candidate applies when none of its nodes is settled and each of its
/// inputs is available: settled, or a node that needs no kernel whose own inputs are available
/// (it is then fixed to the host). Every applied candidate's inputs therefore come from
/// earlier candidates or the host, so every sequence of applications is a topological order of an
/// acyclic partitioning; and every acyclic partitioning can be applied in a topological order of
/// its quotient, so the states reach all of them.
///
/// A StateSpace does not change after construction; the functions that walk the graph take a
/// SearchScratch of the caller's (one per thread), which the callback of for_each_successor()
/// must not pass back in.
template <class G>
class StateSpace {
 public:
  explicit StateSpace(const SearchProblem<G>& problem)
      : problem_(problem),
        graph_(problem.graph()),
        transfers_(problem.transfers().enabled()),
        universe_(graph_.size(), [this](std::size_t i) { return always_host(i); }) {
    link_lines();
  }

  /// The state before anything is chosen.
  SearchState start(SearchScratch& scratch) const {
    SearchState s;
    s.covered.settled = universe_.none();
    s.covered.first_open = universe_.first_unsettled(s.covered.settled);
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (graph_.needs_kernel(i) && inputs_available(s.covered, i, scratch)) s.ready.push_back(static_cast<std::uint32_t>(i));
    }
    return s;
  }

  bool is_goal(const SearchState& s) const { return s.kernels_covered == problem_.kernel_nodes(); }

  /// Node i is settled in `c`, or is a node that always stays with the host (for those, whether
  /// they can feed a candidate depends on their inputs: see available()).
  bool settled(const CoveredSet& c, std::size_t i) const {
    if (i < c.first_open) return true;
    if (i == c.first_open) return false;
    return universe_.contains(c.settled, i) || always_host(i);
  }

  /// The state after choosing candidate `item` in `s`, or nothing when it does not apply.
  std::optional<SearchState> apply(const SearchState& s, std::size_t item, SearchScratch& scratch) const {
    if (touches_settled(s.covered, item)) return std::nullopt;
    std::optional<Step> step = cover(s, item, nullptr, scratch);
    if (!step) return std::nullopt;
    return complete(s, item, std::move(*step), scratch);
  }

  /// Calls f(item, next state) for each candidate the searchers apply in `s`: a subset of the
  /// applicable ones that keeps every partitioning reachable.
  ///
  /// The rule works on pivot nodes, starting with u = s.ready[0], the first unsettled kernel
  /// node. For a pivot v, every candidate that holds v and no settled node is tried. Some of
  /// those *wait*: they do not apply yet, or apply only by fixing contested nodes to the host.
  /// A candidate that does not apply makes a pivot of a ready kernel node behind its first
  /// unavailable input (reached by following unavailable inputs); one that fixes contested nodes
  /// makes pivots of those nodes. Each node is a pivot at most once per state.
  ///
  /// Why nothing is lost: take any acyclic partitioning P whose parts applied so far gave `s`,
  /// and its part X0 that holds u. If X0 applies without fixing a node that P puts in another
  /// part, it is tried. If not, X0 waits, and the pivot it makes lies in a part X1 of P that is
  /// not applied yet and is a proper ancestor of X0 in P's quotient: either an unsettled kernel
  /// node that X0's input comes from (not in X0, which is convex), or a contested node X0 would
  /// fix that P puts in a part. X1 holds its pivot and no settled node, so it is tried in turn,
  /// and so on: the parts X0, X1, ... climb P's acyclic quotient, so some Xm applies without
  /// fixing anything P puts in a part (its producers are applied: the applied parts are closed
  /// under ancestors) and is tried. So P is reached (and the rule depends on `s` alone, so
  /// merging equal states loses nothing). This keeps independent branches from being
  /// interleaved: a candidate that holds the join of w branches makes a pivot in one branch only.
  /// f(item, next state, step cost) gets the cost of the step: the item's effective cost plus the
  /// transfers it causes in `s`.
  template <class F>
  void for_each_successor(const SearchState& s, SearchScratch& scratch, F f) const {
    for_each_successor(s, scratch, [](std::size_t, const CoveredSet&, double) { return true; }, f);
  }

  /// for_each_successor(s, f) that works out a successor in full only when want(item, its
  /// covered set, step cost) is true: a searcher that already has a state with that covered set
  /// (states with equal covered sets are equal) skips the rest of the work.
  template <class Want, class F>
  void for_each_successor(const SearchState& s, SearchScratch& scratch, Want want, F f) const {
    if (s.ready.empty()) return;
    EpochMarks& node_marks = scratch.node_marks;
    EpochMarks& item_marks = scratch.item_marks;
    node_marks.clear(graph_.size());
    item_marks.clear(problem_.size());
    std::vector<std::size_t>& pivots = scratch.pivots;
    pivots.assign(1, s.ready[0]);
    node_marks.mark(s.ready[0]);
    std::vector<std::size_t>& waits_on = scratch.waits;
    while (!pivots.empty()) {
      const std::size_t v = pivots.back();
      pivots.pop_back();
      auto [first, last] = problem_.covering(v);
      for (const std::uint32_t* id = first; id != last; ++id) {
        if (!item_marks.mark(*id)) continue;
        if (touches_settled(s.covered, *id)) continue;
        waits_on.clear();
        std::optional<Step> step = cover(s, *id, &waits_on, scratch);
        for (std::size_t w : waits_on) {
          const std::size_t pivot = step ? w : ready_behind(s.covered, w, scratch);
          if (node_marks.mark(pivot)) pivots.push_back(pivot);
        }
        if (step && want(*id, step->covered, step->cost)) {
          const double cost = step->cost;
          f(*id, complete(s, *id, std::move(*step), scratch), cost);
        }
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
  Partitioning assemble(const std::vector<std::size_t>& items, SearchScratch& scratch) const {
    Partitioning result;
    IndexSet used(graph_.size());
    const TransferTable& transfers = problem_.transfers();
    DensePlacements where(transfers.enabled() ? graph_.size() : 0);
    for (std::size_t id : items) {
      const auto& item = problem_[id];
      Candidate c = item.candidate();
      c.cost = item.cost;
      result.total += item.cost;
      result.effective_total += item.effective;
      if (transfers.enabled()) {
        const double moved =
            charge_transfers(graph_, transfers, item.input, item.inside, problem_.device(id), where, scratch.transfer);
        result.transfers.push_back(moved);
        result.total += Cost::value(moved);
        result.effective_total += Cost::value(moved);
      }
      used |= item.inside;
      result.parts.push_back(std::move(c));
    }
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (!used.contains(i)) result.host.push_back(i);
    }
    result.stats.candidates = problem_.size();
    result.graph = graph_.fingerprint();
    return result;
  }

  /// assemble(items, scratch) with a scratch of its own, for a caller that walks nothing else.
  Partitioning assemble(const std::vector<std::size_t>& items) const {
    SearchScratch scratch;
    return assemble(items, scratch);
  }

 private:
  /// What applying a candidate settles, before the rest of the next state is worked out.
  struct Step {
    CoveredSet covered;  // the next state's covered set
    IndexSet added;      // the nodes the candidate settles (its own and the contested ones it fixes)
    double cost = 0;     // the candidate's effective cost plus the transfers it causes
  };

  /// apply() for a candidate known to hold no settled node, up to the covered set. When
  /// `waits_on` is given, appends what the candidate waits on: its first unavailable input when it
  /// does not apply, else the contested nodes it fixes to the host.
  std::optional<Step> cover(const SearchState& s, std::size_t item, std::vector<std::size_t>* waits_on,
                            SearchScratch& scratch) const {
    const IndexSet& inside = problem_[item].inside;
    std::vector<std::size_t>& fixed = scratch.fixed;  // nodes without kernel the candidate takes from the host
    fixed.clear();
    for (std::size_t i : problem_[item].input) {
      if (!available(s.covered, i, &fixed, scratch)) {
        if (waits_on != nullptr) waits_on->push_back(i);  // the first unavailable input
        return std::nullopt;
      }
    }
    if (waits_on != nullptr) waits_on->insert(waits_on->end(), fixed.begin(), fixed.end());
    Step step;
    step.added = inside;
    for (std::size_t i : fixed) {
      if (!always_host(i)) step.added.add(i);
    }
    step.covered = settle(s.covered, step.added);
    settle_dead_neighbours(step.covered, inside, scratch);
    step.cost = problem_[item].effective.raw();
    if (transfers_) step.cost += place(s.covered.placement, item, step.covered, scratch);
    return step;
  }

  /// Records in `next` where the values its unsettled nodes still read are, after `item` is applied
  /// with `before` the placement of the state it is applied in, and returns the transfers it causes.
  double place(const PlacementList& before, std::size_t item, CoveredSet& next, SearchScratch& scratch) const {
    next.placement = before;
    SortedPlacements store{*this, next, next.placement.items(), scratch.live};
    const double moved = charge_transfers(graph_, problem_.transfers(), problem_[item].input, problem_[item].inside,
                                          problem_.device(item), store, scratch.transfer);
    auto& list = store.list;
    list.erase(std::remove_if(list.begin(), list.end(), [&](const Placement& p) { return !still_read(next, p.node, scratch.live); }),
               list.end());
    return moved;
  }

  /// The placement of a state's covered set as charge_transfers() reads it.
  struct SortedPlacements {
    const StateSpace& space;
    const CoveredSet& covered;
    std::vector<Placement>& list;  // covered's placement
    std::vector<std::size_t>& live;  // still_read()'s walk

    Placement* find(std::size_t node) {
      auto it = lower(node);
      return it != list.end() && it->node == node ? &*it : nullptr;
    }
    void put(Placement p) {
      auto it = lower(p.node);
      if (it != list.end() && it->node == p.node) {
        *it = p;
      } else {
        list.insert(it, p);
      }
    }
    bool keeps(std::size_t node) const { return space.still_read(covered, node, live); }
    std::vector<Placement>::iterator lower(std::size_t node) {
      return std::lower_bound(list.begin(), list.end(), node,
                              [](const Placement& p, std::size_t n) { return p.node < n; });
    }
  };

  /// Whether some unsettled node of `c` reads node n's value, directly or through nodes without
  /// kernels. `stack` is scratch.
  bool still_read(const CoveredSet& c, std::size_t n, std::vector<std::size_t>& stack) const {
    stack.assign(1, n);
    while (!stack.empty()) {
      const std::size_t at = stack.back();
      stack.pop_back();
      for (std::size_t o : graph_.outputs(at)) {
        if (travels_free(graph_, o)) continue;
        if (!settled(c, o)) return true;
        if (!graph_.needs_kernel(o)) stack.push_back(o);
      }
    }
    return false;
  }

  /// The state after `item` in `s`, from the step cover() made.
  SearchState complete(const SearchState& s, std::size_t item, Step step, SearchScratch& scratch) const {
    const IndexSet& inside = problem_[item].inside;
    SearchState next;
    next.covered = std::move(step.covered);
    next.kernels_covered = s.kernels_covered + problem_[item].kernels;
    next.covered_share = s.covered_share;
    for (std::size_t i : inside) {
      if (graph_.needs_kernel(i)) next.covered_share += problem_.min_share(i);
    }
    // Ready nodes: the old ones not covered now, and kernel consumers reached from the newly
    // settled nodes through nodes without kernels.
    for (std::uint32_t r : s.ready) {
      if (!inside.contains(r)) next.ready.push_back(r);
    }
    // The old ones stay sorted; the few new ones are sorted and merged in.
    const auto old_ready = static_cast<std::ptrdiff_t>(next.ready.size());
    std::vector<std::size_t>& walk = scratch.walk;
    std::vector<std::size_t>& seen = scratch.seen;
    walk.assign(step.added.begin(), step.added.end());
    seen.clear();
    while (!walk.empty()) {
      std::size_t n = walk.back();
      walk.pop_back();
      for (std::size_t o : graph_.outputs(n)) {
        if (std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
        seen.push_back(o);
        if (!graph_.needs_kernel(o)) {
          walk.push_back(o);  // a tuple or projection may now pass values on
        } else if (!settled(next.covered, o) && inputs_available(next.covered, o, scratch)) {
          next.ready.push_back(static_cast<std::uint32_t>(o));
        }
      }
    }
    std::sort(next.ready.begin() + old_ready, next.ready.end());
    std::inplace_merge(next.ready.begin(), next.ready.begin() + old_ready, next.ready.end());
    next.ready.erase(std::unique(next.ready.begin(), next.ready.end()), next.ready.end());
    return next;
  }

  /// A ready kernel node behind `input`, an unavailable input of some candidate: found by
  /// following unavailable inputs back until a kernel node's inputs are all available. Along a
  /// line (see link_lines()) it jumps, so that the end of a long branch waiting for its join
  /// does not cost a walk down the branch in every state.
  std::size_t ready_behind(const CoveredSet& c, std::size_t input, SearchScratch& scratch) const {
    std::size_t n = input;
    while (true) {
      if (line_up_[n] != kNoLine) n = first_unsettled_on_line(c, n);
      std::size_t next = npos;
      for (std::size_t j : graph_.inputs(n)) {
        if (!available(c, j, nullptr, scratch)) {
          next = j;
          break;
        }
      }
      if (next == npos) return n;  // a kernel node: an unavailable node without kernel has an unavailable input
      n = next;
    }
  }

  /// Links the lines of the graph: kernel node n continues a line from its input p when p is a
  /// kernel node and n's other inputs are always available (inlinable, or without kernel and with
  /// no kernel node behind them), so that p is the one input n can wait on.
  /// Along a line the settled nodes are a prefix (a candidate that settles n settles p too, or
  /// needs it available, which for a kernel node is settled), so the first unsettled node behind
  /// one is found by jumping: jump_[n] is a skew-binary jump pointer up the line (Myers, "An
  /// applicative random-access stack", 1983), whose walks take logarithmic steps.
  void link_lines() {
    const std::size_t n = graph_.size();
    line_up_.assign(n, kNoLine);
    jump_.assign(n, kNoLine);
    line_depth_.assign(n, 0);
    std::vector<bool> always_available(n);
    auto kernel = [&](std::size_t i) { return graph_.needs_kernel(i) && !graph_.is_inlinable(i); };
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t up = npos;
      bool one = true;  // at most one input may be unavailable, a kernel node
      for (std::size_t j : graph_.inputs(i)) {
        if (always_available[j]) continue;
        if (up != npos || !kernel(j)) one = false;
        up = j;
      }
      always_available[i] = graph_.is_inlinable(i) || (!graph_.needs_kernel(i) && up == npos);
      if (!kernel(i) || !one || up == npos) continue;
      line_up_[i] = static_cast<std::uint32_t>(up);
      line_depth_[i] = line_depth_[up] + 1;
      const std::uint32_t j1 = jump_[up];
      const bool skew = j1 != kNoLine && jump_[j1] != kNoLine &&
                        line_depth_[up] - line_depth_[j1] == line_depth_[j1] - line_depth_[jump_[j1]];
      jump_[i] = skew ? jump_[j1] : static_cast<std::uint32_t>(up);
    }
  }

  /// The first unsettled node of the line through n, an unsettled kernel node on a line, going
  /// back from n.
  std::size_t first_unsettled_on_line(const CoveredSet& c, std::size_t n) const {
    while (line_up_[n] != kNoLine) {
      if (!settled(c, jump_[n])) {
        n = jump_[n];
      } else if (!settled(c, line_up_[n])) {
        n = line_up_[n];
      } else {
        break;
      }
    }
    return n;
  }

  /// Settles the contested nodes without kernels next to `inside` (its inlinable inputs and its
  /// outputs) that no candidate can hold any more, because each candidate that holds one holds a
  /// settled node, and that need nothing unavailable. Whether such a node is settled no longer
  /// matters, so settling it merges states that differ only in it: a scalar fused into one
  /// candidate and left out of another, once its consumer is covered either way.
  void settle_dead_neighbours(CoveredSet& c, const IndexSet& inside, SearchScratch& scratch) const {
    IndexSet dead(graph_.size());
    auto consider = [&](std::size_t j) {
      if (graph_.needs_kernel(j) || !problem_.contested(j) || settled(c, j)) return;
      if (!graph_.is_inlinable(j) && !inputs_available(c, j, scratch)) return;
      auto [first, last] = problem_.covering(j);
      for (const std::uint32_t* id = first; id != last; ++id) {
        if (!touches_settled(c, *id)) return;
      }
      dead.add(j);
    };
    for (std::size_t n : inside) {
      for (std::size_t j : graph_.inputs(n)) {
        if (graph_.is_inlinable(j)) consider(j);
      }
      for (std::size_t o : graph_.outputs(n)) consider(o);
    }
    if (!dead.empty()) c = settle(c, dead);
  }

  /// Whether `item` holds a settled node (none of its nodes always stays with the host).
  bool touches_settled(const CoveredSet& c, std::size_t item) const {
    auto [first, last] = problem_.words(item);
    return universe_.meets(c.settled, first, last);
  }

  bool always_host(std::size_t i) const { return !graph_.needs_kernel(i) && !problem_.contested(i); }

  /// Whether node i can feed a candidate now: a covered kernel node, an inlinable node, a settled
  /// node without kernel, or a node without kernel whose ancestors up to kernel nodes are
  /// available. Appends the contested nodes this would fix to the host to `fixed`. Iterative.
  bool available(const CoveredSet& c, std::size_t i, std::vector<std::size_t>* fixed, SearchScratch& scratch) const {
    if (feeds_without_walk(c, i)) return true;  // the common cases, without a walk
    if (graph_.needs_kernel(i)) return false;
    std::vector<std::size_t>& stack = scratch.stack;
    std::vector<std::size_t>& visited = scratch.visited;
    stack.assign(1, i);
    visited.clear();
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      if (feeds_without_walk(c, n)) continue;
      if (graph_.needs_kernel(n)) return false;
      if (std::find(visited.begin(), visited.end(), n) != visited.end()) continue;
      visited.push_back(n);
      if (fixed != nullptr && !always_host(n)) fixed->push_back(n);
      for (std::size_t j : graph_.inputs(n)) stack.push_back(j);
    }
    return true;
  }
  /// Node i can feed a candidate whatever its inputs: inlinable, a settled kernel node, or a
  /// contested node without kernel that is settled.
  bool feeds_without_walk(const CoveredSet& c, std::size_t i) const {
    if (graph_.is_inlinable(i)) return true;
    if (graph_.needs_kernel(i)) return settled(c, i);
    return !always_host(i) && settled(c, i);
  }
  bool inputs_available(const CoveredSet& c, std::size_t i, SearchScratch& scratch) const {
    for (std::size_t j : graph_.inputs(i)) {
      if (!available(c, j, nullptr, scratch)) return false;
    }
    return true;
  }

  /// `c` with `added` settled.
  CoveredSet settle(const CoveredSet& c, const IndexSet& added) const {
    CoveredSet next{0, universe_.with(c.settled, added), {}};
    next.first_open = universe_.first_unsettled(next.settled);
    return next;
  }

  const SearchProblem<G>& problem_;
  const DataflowGraph<G>& graph_;
  const bool transfers_;  // whether moves between devices are charged
  const SettledUniverse universe_;  // of the states' settled sets: the nodes always with the host preset
  /// The lines of link_lines(), by node: the input a node continues its line from, a jump pointer
  /// up the line, and the node's depth on it (kNoLine where a node continues none).
  static constexpr std::uint32_t kNoLine = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> line_up_;
  std::vector<std::uint32_t> jump_;
  std::vector<std::uint32_t> line_depth_;
};

}  // namespace detail
}  // namespace collage
