#pragma once

/// \file
/// detail::Evolver: the moves of the evolutionary search (mutations and crossover over sets of a
/// SearchProblem's candidates) and the validation of what they make.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "collage/search/partitioning.hpp"
#include "collage/search/search_problem.hpp"
#include "collage/search/state_space.hpp"
#include "collage/support/epoch_marks.hpp"

namespace collage {
namespace detail {

/// A uniform double in [0, 1) from the top 53 bits (the same on every standard library, unlike
/// std::uniform_real_distribution).
inline double unit_random(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

/// A uniform-enough index in [0, n), n > 0 (the same on every standard library).
inline std::size_t random_index(std::mt19937_64& rng, std::size_t n) { return static_cast<std::size_t>(rng() % n); }

/// The moves of the evolutionary search over sets of item ids of a SearchProblem, and their
/// validation by replay through the StateSpace.
template <class G>
class Evolver {
 public:
  Evolver(const SearchProblem<G>& problem, std::uint64_t seed)
      : problem_(problem), graph_(problem.graph()), space_(problem), rng_(seed) {
    const std::size_t n = graph_.size();
    owner_.assign(n, npos);
    status_.assign(problem.size(), kAbsent);
    group_of_.resize(problem.size());
    std::map<IndexSet, std::size_t> groups;
    for (std::size_t id = 0; id < problem.size(); ++id) {
      const IndexSet& inside = problem[id].inside;
      auto [it, inserted] = groups.emplace(inside, groups_.size());
      if (inserted) groups_.emplace_back();
      groups_[it->second].push_back(id);
      group_of_[id] = it->second;
    }
    by_inside_ = std::move(groups);
  }

  std::mt19937_64& rng() { return rng_; }

  /// The id of the item equal to `part` (same sub-graph and target; the same rule name preferred).
  std::optional<std::size_t> find_item(const Candidate& part) const {
    std::size_t first_kernel = npos;
    for (std::size_t i : part.sub_graph.inside()) {
      if (i < graph_.size() && graph_.needs_kernel(i)) {
        first_kernel = i;
        break;
      }
    }
    if (first_kernel == npos) return std::nullopt;
    std::optional<std::size_t> found;
    auto [first, last] = problem_.starting_at(first_kernel);
    for (std::size_t id = first; id < last; ++id) {
      const Candidate& c = problem_[id].candidate();
      if (c.target != part.target || c.sub_graph != part.sub_graph) continue;
      if (c.rule_name == part.rule_name) return id;
      if (!found) found = id;
    }
    return found;
  }

  /// The items in an order in which the StateSpace applies each of them (a topological order of
  /// the quotient), or nothing when they overlap, leave a kernel node uncovered or form a cycle.
  std::optional<std::vector<std::size_t>> order(std::vector<std::size_t> items) {
    std::sort(items.begin(), items.end());
    std::optional<std::vector<std::size_t>> result;
    bool disjoint = std::adjacent_find(items.begin(), items.end()) == items.end();
    for (std::size_t k = 0; disjoint && k < items.size(); ++k) {
      for (std::size_t i : inside(items[k])) {
        if (owner_[i] != npos) {
          disjoint = false;
          break;
        }
        set_owner(i, items[k]);
      }
    }
    if (disjoint) {
      for (std::size_t id : items) status_[id] = kPending;
      SearchState state = space_.start(scratch_);
      std::vector<std::size_t> applied;
      applied.reserve(items.size());
      std::vector<bool> done(items.size(), false);
      bool progress = true;
      while (applied.size() < items.size() && progress) {
        progress = false;
        for (std::size_t k = 0; k < items.size(); ++k) {
          if (done[k] || !inputs_ready(items[k])) continue;
          std::optional<SearchState> next = space_.apply(state, items[k], scratch_);
          if (!next) continue;
          state = std::move(*next);
          done[k] = true;
          status_[items[k]] = kApplied;
          applied.push_back(items[k]);
          progress = true;
        }
      }
      if (applied.size() == items.size() && space_.is_goal(state)) result = std::move(applied);
      for (std::size_t id : items) status_[id] = kAbsent;
    }
    clear_owners();
    return result;
  }

  /// Applies one random move to `items` (a valid individual's item ids): change a part's backend,
  /// split a part, merge a part with a touching neighbour, or grow a part by a larger overlapping
  /// item (re-covering what it displaces). Returns false (leaving `items` as it was) when no move
  /// was found after a few tries. The result may be invalid: order() decides.
  bool mutate(std::vector<std::size_t>& items) {
    if (items.empty()) return false;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const std::size_t kind = random_index(rng_, 4);
      const std::size_t at = random_index(rng_, items.size());
      std::vector<std::size_t> next;
      bool done = false;
      switch (kind) {
        case 0: done = change_backend(items, at, next); break;
        case 1: done = split(items, at, next); break;
        case 2: done = merge(items, at, next); break;
        default: done = grow(items, at, next); break;
      }
      clear_owners();
      if (done) {
        items = std::move(next);
        return true;
      }
    }
    return false;
  }

  /// A child of two individuals given in topological order: a random non-empty proper prefix of
  /// `a`, then every item of `b` (in its order) that fits beside it, then random items covering
  /// whatever kernel nodes remain. Empty when the remainder cannot be covered.
  std::vector<std::size_t> crossover(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    if (a.size() < 2) return a;
    const std::size_t cut = 1 + random_index(rng_, a.size() - 1);
    std::vector<std::size_t> child(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(cut));
    for (std::size_t id : child) take(id);
    for (std::size_t id : b) {
      if (fits(id)) {
        take(id);
        child.push_back(id);
      }
    }
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (graph_.needs_kernel(i) && owner_[i] == npos) open.push_back(i);
    }
    const bool covered = fill(open, npos, npos, child);
    clear_owners();
    if (!covered) return {};
    return child;
  }

  /// The partitioning of items given in topological order.
  Partitioning assemble(const std::vector<std::size_t>& ordered) const { return space_.assemble(ordered); }

 private:
  static constexpr unsigned char kAbsent = 0;
  static constexpr unsigned char kPending = 1;
  static constexpr unsigned char kApplied = 2;

  const IndexSet& inside(std::size_t id) const { return problem_[id].inside; }

  void set_owner(std::size_t node, std::size_t id) {
    owner_[node] = id;
    touched_.push_back(node);
  }
  void clear_owners() {
    for (std::size_t i : touched_) owner_[i] = npos;
    touched_.clear();
  }
  /// Marks every node of item `id` as owned by it.
  void take(std::size_t id) {
    for (std::size_t i : inside(id)) set_owner(i, id);
  }
  /// Marks the nodes of item `id` as free again.
  void give_up(std::size_t id) {
    for (std::size_t i : inside(id)) set_owner(i, npos);
  }
  /// Whether every node of item `id` is free.
  bool fits(std::size_t id) const {
    for (std::size_t i : inside(id)) {
      if (owner_[i] != npos) return false;
    }
    return true;
  }

  /// Whether no pending item (of the individual being ordered) owns a node that item `id` reads,
  /// directly or through nodes that stay with the host. Applying an item before such a producer
  /// would fix the producer's shared nodes to the host and wrongly make the individual stuck.
  bool inputs_ready(std::size_t id) {
    visited_.clear(graph_.size());
    std::vector<std::size_t> stack(inside_inputs(id));
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      if (!visited_.mark(n)) continue;
      if (graph_.is_inlinable(n)) continue;
      if (owner_[n] != npos) {
        if (status_[owner_[n]] == kPending) return false;
        continue;
      }
      if (graph_.needs_kernel(n)) continue;  // uncovered: apply() refuses
      for (std::size_t j : graph_.inputs(n)) stack.push_back(j);
    }
    return true;
  }
  std::vector<std::size_t> inside_inputs(std::size_t id) const {
    const IndexSet& in = problem_[id].input;
    return std::vector<std::size_t>(in.begin(), in.end());
  }

  /// Covers the free kernel nodes among `nodes` (ascending) with random free items other than
  /// `exclude` of at most `max_kernels` kernel nodes, appending them to `items`.
  bool fill(const std::vector<std::size_t>& nodes, std::size_t exclude, std::size_t max_kernels,
            std::vector<std::size_t>& items) {
    std::vector<std::size_t> options;
    for (std::size_t k : nodes) {
      if (owner_[k] != npos) continue;
      options.clear();
      auto [first, last] = problem_.covering(k);
      for (const std::uint32_t* id = first; id != last; ++id) {
        if (*id != exclude && problem_[*id].kernels <= max_kernels && fits(*id)) options.push_back(*id);
      }
      if (options.empty()) return false;
      const std::size_t chosen = options[random_index(rng_, options.size())];
      take(chosen);
      items.push_back(chosen);
    }
    return true;
  }

  std::vector<std::size_t> kernel_nodes_of(std::size_t id) const {
    std::vector<std::size_t> out;
    for (std::size_t i : inside(id)) {
      if (graph_.needs_kernel(i)) out.push_back(i);
    }
    return out;
  }

  /// items without position `at`, owners taken.
  std::vector<std::size_t> without(const std::vector<std::size_t>& items, std::size_t at) {
    std::vector<std::size_t> rest;
    rest.reserve(items.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k == at) continue;
      rest.push_back(items[k]);
      take(items[k]);
    }
    return rest;
  }

  /// (a) The same inside set, another item (another target, or other nested groups).
  bool change_backend(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    const std::vector<std::size_t>& group = groups_[group_of_[x]];
    if (group.size() < 2) return false;
    std::size_t pick = random_index(rng_, group.size() - 1);
    if (group[pick] == x) pick = group.size() - 1;  // skip x: x is at `pick`, take the last instead
    next = items;
    next[at] = group[pick];
    return true;
  }

  /// (b) A random cover of the part's kernel nodes by items with fewer kernel nodes.
  bool split(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    if (problem_[x].kernels < 2) return false;
    next = without(items, at);
    return fill(kernel_nodes_of(x), x, problem_[x].kernels - 1, next);
  }

  /// (c) The part and a touching neighbour replaced by an item whose inside is their union.
  bool merge(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    for (std::size_t id : items) take(id);
    std::vector<std::size_t> neighbours;
    const SubGraph& sub = problem_[x].candidate().sub_graph;
    for (const IndexSet* side : {&sub.input(), &sub.output()}) {
      for (std::size_t i : *side) {
        if (owner_[i] != npos && owner_[i] != x) neighbours.push_back(owner_[i]);
      }
    }
    std::sort(neighbours.begin(), neighbours.end());
    neighbours.erase(std::unique(neighbours.begin(), neighbours.end()), neighbours.end());
    if (neighbours.empty()) return false;
    const std::size_t y = neighbours[random_index(rng_, neighbours.size())];
    auto found = by_inside_.find(inside(x) | inside(y));
    if (found == by_inside_.end()) return false;
    const std::vector<std::size_t>& group = groups_[found->second];
    next.clear();
    for (std::size_t id : items) {
      if (id != x && id != y) next.push_back(id);
    }
    next.push_back(group[random_index(rng_, group.size())]);
    return true;
  }

  /// (d) An item that contains one of the part's kernel nodes and reaches beyond the part
  /// replaces every part it overlaps; the displaced kernel nodes it does not hold are covered again
  /// at random.
  bool grow(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    const std::vector<std::size_t> kernels = kernel_nodes_of(x);
    const std::size_t k = kernels[random_index(rng_, kernels.size())];
    std::vector<std::size_t> options;
    auto [first, last] = problem_.covering(k);
    for (const std::uint32_t* id = first; id != last; ++id) {
      if (!inside(*id).is_subset_of(inside(x))) options.push_back(*id);
    }
    if (options.empty()) return false;
    const std::size_t z = options[random_index(rng_, options.size())];
    for (std::size_t id : items) take(id);
    std::vector<std::size_t> displaced;
    for (std::size_t i : inside(z)) {
      if (owner_[i] != npos) displaced.push_back(owner_[i]);
    }
    std::sort(displaced.begin(), displaced.end());
    displaced.erase(std::unique(displaced.begin(), displaced.end()), displaced.end());
    next.clear();
    for (std::size_t id : items) {
      if (!std::binary_search(displaced.begin(), displaced.end(), id)) next.push_back(id);
    }
    std::vector<std::size_t> open;
    for (std::size_t id : displaced) {
      give_up(id);
      for (std::size_t i : kernel_nodes_of(id)) {
        if (!inside(z).contains(i)) open.push_back(i);
      }
    }
    std::sort(open.begin(), open.end());
    take(z);
    next.push_back(z);
    return fill(open, npos, npos, next);
  }

  const SearchProblem<G>& problem_;
  const DataflowGraph<G>& graph_;
  detail::StateSpace<G> space_;
  /// The scratch of the walks through space_ (an Evolver serves one run).
  detail::SearchScratch scratch_;
  std::mt19937_64 rng_;
  /// Items with the same inside set, and each item's group.
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<std::size_t> group_of_;
  std::map<IndexSet, std::size_t> by_inside_;
  /// Scratch: the item owning each node (npos when free), and the nodes set since the last clear.
  std::vector<std::size_t> owner_;
  std::vector<std::size_t> touched_;
  /// Scratch: per item, absent / pending / applied while ordering an individual.
  std::vector<unsigned char> status_;
  /// Scratch: visit marks of inputs_ready().
  EpochMarks visited_;
};

}  // namespace detail
}  // namespace collage
