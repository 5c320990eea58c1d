#pragma once

/// \file
/// The quotient graph of a partitioning (each part one node, each node in no part a group of its
/// own): its parts in dependency order or the cycle that prevents one (quotient_order), and whether
/// one more part would close a cycle (QuotientCycleCheck).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <queue>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/support/epoch_marks.hpp"

namespace collage {

/// The quotient graph of a partitioning, ordered. `parts` lists the parts in a topological order
/// of the quotient (among parts ready together, the smallest part number first), when there is
/// one; otherwise `cycle` holds a cycle of groups, each step feeding the next (the last feeds the
/// first), where a group is a part p (< part count) or a node i in no part (part count + i).
struct QuotientOrder {
  std::vector<std::size_t> parts;
  std::vector<std::size_t> cycle;
  bool acyclic() const { return cycle.empty(); }
};

/// Orders the quotient of the partitioning that puts node i in part `owner[i]` (npos: in no
/// part, so a group of its own). Values flow through nodes in no part, so a part that reads a host
/// node depends on the parts feeding that node. Inputs that are inlinable nodes carry no
/// dependency (each consumer inlines its own copy).
template <class G>
QuotientOrder quotient_order(const DataflowGraph<G>& graph, const std::vector<std::size_t>& owner, std::size_t part_count) {
  const std::size_t n = graph.size();
  auto group = [&](std::size_t i) { return owner[i] != npos ? owner[i] : part_count + i; };
  std::vector<std::vector<std::size_t>> preds(part_count + n);
  std::vector<std::vector<std::size_t>> succs(part_count + n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j : graph.inputs(i)) {
      if (graph.is_inlinable(j)) continue;
      const std::size_t gi = group(i);
      const std::size_t gj = group(j);
      if (gi == gj) continue;
      preds[gi].push_back(gj);
      succs[gj].push_back(gi);
    }
  }
  std::vector<std::size_t> pending(part_count + n);
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t g = 0; g < part_count + n; ++g) {
    pending[g] = preds[g].size();
    if (pending[g] == 0) ready.push(g);
  }
  QuotientOrder result;
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t g = ready.top();
    ready.pop();
    ++done;
    if (g < part_count) result.parts.push_back(g);
    for (std::size_t s : succs[g]) {
      if (--pending[s] == 0) ready.push(s);
    }
  }
  if (done == part_count + n) return result;
  // Walk back through unfinished predecessors until a group repeats: that is a cycle.
  result.parts.clear();
  std::size_t g = 0;
  while (pending[g] == 0) ++g;
  std::vector<std::size_t> walk;
  std::vector<std::size_t> seen_at(part_count + n, npos);
  while (seen_at[g] == npos) {
    seen_at[g] = walk.size();
    walk.push_back(g);
    for (std::size_t q : preds[g]) {
      if (pending[q] != 0) {
        g = q;
        break;
      }
    }
  }
  result.cycle.assign(walk.begin() + static_cast<std::ptrdiff_t>(seen_at[g]), walk.end());
  std::reverse(result.cycle.begin(), result.cycle.end());
  return result;
}

/// Whether a region, made one part beside the parts of a partial partitioning, would close a cycle
/// in their quotient graph: whether some path leaves the region and comes back, where a path that
/// enters a part at one node may leave it from any other. Node-level convexity is not enough: with
/// edges a->d, b->c, a->c, b->d, {a,d} and {b,c} are both convex but feed each other. For growing
/// a partitioning one region at a time (a greedy partitioner's claims, coalescing merges); keeps
/// scratch between calls, so one check serves one thread.
class QuotientCycleCheck {
 public:
  /// Whether `joined` closes a cycle among the parts. `owner[i]` is the part holding node i, or
  /// npos (entries of joined's own nodes are not read: a part absorbed into joined may still be
  /// listed there); parts are numbered below `part_count` and `sub_graph_of(p)` is part p's
  /// sub-graph. Walks from joined's outputs through free nodes (their outputs) and parts (their
  /// outputs), but not through free nodes after joined's last node, nor parts that start after it:
  /// neither can lead back. O(nodes and parts walked).
  template <class G, class SubGraphOf>
  bool closes_cycle(const DataflowGraph<G>& graph, const SubGraph& joined, const std::vector<std::size_t>& owner,
                    std::size_t part_count, SubGraphOf sub_graph_of) {
    const IndexSet& inside = joined.inside();
    const std::size_t last = inside.last_inside();
    nodes_.clear(graph.size());
    parts_.clear(part_count);
    stack_.assign(joined.output().begin(), joined.output().end());
    auto follow = [&](const auto& outputs) {
      for (std::size_t o : outputs) {
        if (inside.contains(o)) return true;
        stack_.push_back(o);
      }
      return false;
    };
    while (!stack_.empty()) {
      const std::size_t v = stack_.back();
      stack_.pop_back();
      const std::size_t p = owner[v];
      if (p == npos) {
        if (v > last || !nodes_.mark(v)) continue;
        if (follow(graph.outputs(v))) return true;
      } else {
        if (!parts_.mark(p)) continue;
        const SubGraph& part = sub_graph_of(p);
        if (part.first_inside() > last) continue;
        if (follow(part.output())) return true;
      }
    }
    return false;
  }

 private:
  detail::EpochMarks nodes_;  // free nodes walked
  detail::EpochMarks parts_;  // parts walked
  std::vector<std::size_t> stack_;
};

}  // namespace collage
