#pragma once

/// \file
/// ValidSupersetTest: whether a sub-graph could still lie inside one that is valid under a
/// SubGraphConfig, so that a growing rule can leave out the joins no valid candidate contains.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/support/index_set.hpp"

namespace collage {

/// Answers, for a set X of nodes of one graph, a necessary condition for "some convex sub-graph S
/// that contains X is valid under `config`": when it says no, no such S exists.
///
/// What S must contain besides X:
///  - without taps, an exit of X that feeds a node of X cannot be an exit of S, so every node it
///    feeds is in S (and it must not be a result of the graph);
///  - with at most one exit: every node of a graph is a result or feeds another, so every node of
///    S reaches S's exit, which is therefore X's last node or lies beyond X; the other exits of X
///    are not S's exits, so every node they feed is in S (and none of them is a result).
/// S is convex, so it holds every path between two of those nodes, and S is at least as deep as
/// the longest such path counts (a path of operators that do not derive from constants alone
/// counts each node, as SubGraph::depth does). X is ruled out when that is deeper than the
/// config allows, or when it holds a result that cannot be an exit of S, or more results than S
/// may have exits.
///
/// With at most one exit there is more: every node of S but its exit e has all its outputs in S
/// and is no result, so every path from a node x of X to the results stays in S until it meets e.
/// So e post-dominates every node of X, and S holds every path from x to p, X's nearest common
/// post-dominator (which lies on each path from x to e). X is ruled out when no node
/// post-dominates all of it, or when the longest path from a node of X to p counts more than the
/// depth allowed. Every path from x to the results passes through p, so that longest path is the
/// longest from x to the results less the longest from p onwards, p itself counted once: a
/// lookup per node of X, with one common post-dominator query each.
///
/// Cost per test: the nodes of X and their out-edges, then the nodes the forced set reaches within
/// its index range and their out-edges; a range over kMaxRange nodes is not walked (that depth
/// test is then skipped; the post-dominator one is not).
template <class G>
class ValidSupersetTest {
 public:
  ValidSupersetTest(const DataflowGraph<G>& graph, const SubGraphConfig& config) : graph_(graph), config_(config) {
    const std::size_t n = graph.size();
    counts_.assign(n, 0);
    std::vector<bool> from_constants(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      const bool leaf_constant = graph.is_constant(i) || graph.is_inlinable(i);
      bool all_inputs_constant = !graph.inputs(i).empty();
      for (std::size_t j : graph.inputs(i)) all_inputs_constant = all_inputs_constant && from_constants[j];
      from_constants[i] = leaf_constant || all_inputs_constant;
      counts_[i] = from_constants[i] ? 0 : 1;
    }
    if (config.max_exits == 1 && config.max_depth != 0) {
      longest_onwards_.assign(n, 0);
      for (std::size_t i = n; i-- > 0;) {  // outputs have larger indexes
        std::uint32_t onwards = 0;
        for (std::size_t o : graph.outputs(i)) onwards = std::max(onwards, longest_onwards_[o]);
        longest_onwards_[i] = onwards + counts_[i];
      }
    }
  }

  /// Whether the test can rule anything out under its config (all but "any exits, taps allowed,
  /// any depth").
  bool can_rule_out() const { return config_.max_depth != 0 || config_.max_exits != 0 || !config_.allow_taps; }

  /// False when no convex sub-graph valid under the config contains the nodes `inside` (a set of
  /// the graph this test was made for; it need not be convex). So when it is false for a set, it
  /// is false for every set that contains it.
  bool may_grow_valid(const IndexSet& inside) {
    if (config_.max_exits == 1 && !single_exit_may_hold(inside)) return false;
    forced_ = inside;
    rest_.clear();
    std::size_t results = 0;
    for (std::size_t i : inside) {
      const bool result = graph_.is_external(i);
      bool feeds_inside = false;
      bool feeds_outside = false;
      for (std::size_t o : graph_.outputs(i)) {
        (inside.contains(o) ? feeds_inside : feeds_outside) = true;
      }
      if (!result && !feeds_outside) continue;  // not an exit
      results += result ? 1 : 0;
      if (!config_.allow_taps && feeds_inside) {
        if (result) return false;  // it must stay an exit, and would be a tap
        for (std::size_t o : graph_.outputs(i)) forced_.add(o);
      } else {
        rest_.push_back(i);
      }
    }
    if (config_.max_exits != 0 && results > config_.max_exits) return false;
    if (config_.max_exits == 1 && rest_.size() > 1) {
      // Every node of the graph is a result or feeds another, so each node of S but its exit
      // feeds a node of S, and every node of S reaches the exit: that is the last node of X or
      // lies beyond X, and every other exit of X feeds only nodes of S.
      const std::size_t last = inside.last_inside();
      for (std::size_t e : rest_) {
        if (e == last) continue;
        if (graph_.is_external(e)) return false;
        for (std::size_t o : graph_.outputs(e)) forced_.add(o);
      }
    }
    if (config_.max_depth == 0) return true;
    return !too_deep(forced_);
  }

  /// Index ranges longer than this are not tested.
  static constexpr std::size_t kMaxRange = std::size_t{1} << 16;

 private:
  /// The post-dominator test (for max_exits == 1): false when no node post-dominates every node of
  /// `inside`, or when a path from one of them to their nearest common post-dominator counts more
  /// than config_.max_depth nodes.
  bool single_exit_may_hold(const IndexSet& inside) const {
    std::size_t meet = inside.first_inside();
    if (meet == npos) return true;
    std::uint32_t longest = 0;
    for (std::size_t i : inside) {
      meet = graph_.common_post_dominator(meet, i);
      if (meet == npos) return false;
      if (!longest_onwards_.empty()) longest = std::max(longest, longest_onwards_[i]);
    }
    return longest_onwards_.empty() || longest - longest_onwards_[meet] + counts_[meet] <= config_.max_depth;
  }

  /// Whether a path between two nodes of `forced` counts more than config_.max_depth nodes.
  bool too_deep(const IndexSet& forced) {
    const std::size_t lo = forced.first_inside();
    if (lo == npos) return false;
    const std::size_t hi = forced.last_inside();
    if (hi - lo >= kMaxRange) return false;
    const std::size_t range = hi - lo + 1;
    // length_[k]: the most counted nodes on a path from a forced node to node lo + k (0: not reached yet).
    length_.assign(range, 0);
    reached_.assign(range / 64 + 1, 0);
    auto reach = [&](std::size_t node, std::uint32_t length) {
      const std::size_t k = node - lo;
      reached_[k / 64] |= std::uint64_t{1} << (k % 64);
      length_[k] = std::max(length_[k], length);
    };
    for (std::size_t f : forced) reach(f, counts_[f]);
    for (std::size_t w = 0; w < reached_.size(); ++w) {
      // Outputs have larger indexes: a node reached from bit b of word w lands above b in w, or later.
      while (reached_[w] != 0) {
        const std::size_t k = w * 64 + static_cast<std::size_t>(__builtin_ctzll(reached_[w]));
        reached_[w] &= reached_[w] - 1;
        const std::size_t node = lo + k;
        if (length_[k] > config_.max_depth && forced.contains(node)) return true;
        for (std::size_t o : graph_.outputs(node)) {
          if (o <= hi) reach(o, length_[k] + counts_[o]);
        }
      }
    }
    return false;
  }

  const DataflowGraph<G>& graph_;
  SubGraphConfig config_;
  std::vector<std::uint8_t> counts_;  // by node: 1 when it adds to a path's depth wherever it is
  /// By node, with at most one exit and a depth bound: the most counted nodes on a path from it to
  /// a result, itself included.
  std::vector<std::uint32_t> longest_onwards_;
  IndexSet forced_;
  std::vector<std::size_t> rest_;
  std::vector<std::uint32_t> length_;
  std::vector<std::uint64_t> reached_;
};

}  // namespace collage
