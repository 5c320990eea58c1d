#pragma once

/// \file
/// Matching a Pattern in a graph: every match rooted at one node (match_at) or at every node
/// (match_all), overlapping ones included.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <ostream>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/rules/pattern.hpp"
#include "collage/support/index_set.hpp"
#include "collage/support/index_span.hpp"

namespace collage {

/// One match: the node the pattern's top matched, and the inside set (the matched op nodes).
struct PatternMatch {
  std::size_t root = 0;
  IndexSet inside;

  /// Same root and same inside set.
  friend bool operator==(const PatternMatch& a, const PatternMatch& b) {
    return a.root == b.root && a.inside == b.inside;
  }
  friend bool operator!=(const PatternMatch& a, const PatternMatch& b) { return !(a == b); }
  /// By root, then by inside set (IndexSet's order).
  friend bool operator<(const PatternMatch& a, const PatternMatch& b) {
    if (a.root != b.root) return a.root < b.root;
    return a.inside < b.inside;
  }
  /// Prints as `3:{1..3}`.
  friend std::ostream& operator<<(std::ostream& os, const PatternMatch& m) {
    return os << m.root << ':' << m.inside;
  }
};

namespace detail {

/// Enumerates the matches of pattern nodes at graph nodes. Recursion follows the pattern (small),
/// never the graph: matching at one root visits at most (pattern size) graph nodes per way the
/// alternatives combine.
template <class G>
class PatternMatcher {
 public:
  /// A partial inside set: sorted, without repeats.
  using Inside = std::vector<std::size_t>;

  explicit PatternMatcher(const DataflowGraph<G>& graph) : graph_(graph) {}

  /// Every distinct inside set with which `pattern` matches at node i (sorted, unique; an empty
  /// result means no match, `{{}}` a match that puts nothing inside).
  std::vector<Inside> match(const Pattern<G>& pattern, std::size_t i) const {
    if (pattern.node_->has_alternatives) return match(*pattern.node_, i);
    Inside inside;
    if (!match_one(*pattern.node_, i, inside)) return {};
    std::sort(inside.begin(), inside.end());
    inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
    return {std::move(inside)};
  }

 private:
  /// Whether a pattern without alternatives (which matches in one way at most) matches at node i;
  /// appends the match's inside nodes to `inside` (in any order, maybe repeated).
  bool match_one(const PatternNode<G>& p, std::size_t i, Inside& inside) const {
    if (!head_matches(p, i)) return false;
    if (p.tag == PatternTag::wildcard || p.tag == PatternTag::constant) return true;
    if (!p.any_args) {
      const IndexSpan inputs = graph_.inputs(i);
      if (!arity_ok(p, inputs)) return false;
      for (std::size_t k = 0; k < p.args.size(); ++k) {
        if (!match_one(*p.args[k], inputs[k], inside)) return false;
      }
    }
    if (!graph_.is_inlinable(i)) inside.push_back(i);
    return true;
  }

  /// Whether node i passes the test of p itself, arguments aside: its op name, kind or
  /// predicate; for `const`, being a constant; always for `*`. (Not for alternatives.)
  bool head_matches(const PatternNode<G>& p, std::size_t i) const {
    switch (p.tag) {
      case PatternTag::wildcard: return true;
      case PatternTag::constant: return graph_.is_constant(i) || (graph_.is_inlinable(i) && graph_.inputs(i).empty());
      case PatternTag::op: return graph_.op_name(i) == p.name;
      case PatternTag::kind: return graph_.kind(i) == p.kind;
      case PatternTag::predicate: return p.predicate && p.predicate(graph_, i);
      case PatternTag::alt: break;
    }
    return false;
  }

  /// Whether a node with `inputs` has the arguments p asks for (exactly, or at least with `...`).
  static bool arity_ok(const PatternNode<G>& p, IndexSpan inputs) {
    return p.more_args ? inputs.size() >= p.args.size() : inputs.size() == p.args.size();
  }

  std::vector<Inside> match(const PatternNode<G>& p, std::size_t i) const {
    if (p.tag == PatternTag::alt) {
      std::vector<Inside> all;
      for (const auto& a : p.args) {
        std::vector<Inside> some = match(*a, i);
        all.insert(all.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
      }
      canonicalize(all);
      return all;
    }
    if (!head_matches(p, i)) return {};
    if (p.tag == PatternTag::wildcard || p.tag == PatternTag::constant) return {Inside{}};
    return match_args(p, i);
  }

  /// The matches of an op / kind / predicate node whose head already matched node i: the
  /// cartesian product over argument positions, plus i itself unless it is inlinable.
  std::vector<Inside> match_args(const PatternNode<G>& p, std::size_t i) const {
    std::vector<Inside> result{Inside{}};
    if (!p.any_args) {
      const IndexSpan inputs = graph_.inputs(i);
      if (!arity_ok(p, inputs)) return {};
      std::vector<std::vector<Inside>> per_arg;
      per_arg.reserve(p.args.size());
      for (std::size_t k = 0; k < p.args.size(); ++k) {
        per_arg.push_back(match(*p.args[k], inputs[k]));
        if (per_arg.back().empty()) return {};
      }
      for (const std::vector<Inside>& options : per_arg) result = product(result, options);
    }
    if (!graph_.is_inlinable(i)) {
      // Every node of an argument's match is an input (transitively) of i, so has a smaller
      // post-DFS index: appending keeps each set sorted.
      // A common suffix can reorder sets where one was a prefix of another ({1} < {1,3} but
      // {1,3,4} < {1,4}): sort again.
      for (Inside& inside : result) inside.push_back(i);
      if (result.size() > 1) canonicalize(result);
    }
    return result;
  }

  /// Every union of one set from `a` and one from `b`, sorted and unique.
  static std::vector<Inside> product(const std::vector<Inside>& a, const std::vector<Inside>& b) {
    if (b.size() == 1 && b.front().empty()) return a;
    std::vector<Inside> result;
    result.reserve(a.size() * b.size());
    for (const Inside& x : a) {
      for (const Inside& y : b) {
        Inside u;
        u.reserve(x.size() + y.size());
        std::set_union(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(u));
        result.push_back(std::move(u));
      }
    }
    canonicalize(result);
    return result;
  }

  static void canonicalize(std::vector<Inside>& sets) {
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  }

  const DataflowGraph<G>& graph_;
};

/// Appends the matches of `pattern` rooted at `root` with a non-empty inside set, ascending.
template <class G>
void append_matches(const DataflowGraph<G>& graph, const PatternMatcher<G>& matcher, const Pattern<G>& pattern,
                    std::size_t root, std::vector<PatternMatch>& out) {
  // The matcher's sets are sorted index vectors in lexicographic order, which is IndexSet's order.
  for (const std::vector<std::size_t>& inside : matcher.match(pattern, root)) {
    if (inside.empty()) continue;
    PatternMatch m{root, graph.empty_set()};
    for (std::size_t i : inside) m.inside.add(i);
    out.push_back(std::move(m));
  }
}

}  // namespace detail

/// The matches of `pattern` rooted at node `root`: every distinct inside set, ascending, without
/// the empty one (see match_all).
template <class G>
std::vector<PatternMatch> match_at(const DataflowGraph<G>& graph, const Pattern<G>& pattern, std::size_t root) {
  std::vector<PatternMatch> result;
  detail::append_matches(graph, detail::PatternMatcher<G>(graph), pattern, root, result);
  return result;
}

/// Every match of `pattern` in `graph`, overlapping ones included: for each node (ascending
/// index) every distinct way the pattern matches rooted there. A match's inside set holds the
/// nodes matched by op / kind / predicate patterns except inlinable nodes; nodes matched by `*`
/// or `const` are not inside. Sorted by (root, inside), without duplicates; matches with an empty
/// inside set are dropped.
template <class G>
std::vector<PatternMatch> match_all(const DataflowGraph<G>& graph, const Pattern<G>& pattern) {
  std::vector<PatternMatch> result;
  const detail::PatternMatcher<G> matcher(graph);
  for (std::size_t root = 0; root < graph.size(); ++root) detail::append_matches(graph, matcher, pattern, root, result);
  return result;
}

}  // namespace collage
