#pragma once

/// \file
/// combine_split_bounded: a pruning policy for combine that bounds how many times a maximal
/// fusible region may be split, instead of bounding depth (for accelerators that want large
/// fusions).

#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collage/rules/combine.hpp"
#include "collage/rules/max_coalesce.hpp"
#include "collage/rules/partition_rule.hpp"
#include "collage/rules/rule_context.hpp"

namespace collage {

/// Limits on combine_split_bounded.
struct SplitBoundLimits {
  /// Most cuts of a maximal fusible region (0: only the whole regions).
  std::size_t max_splits = 0;
  /// Stop adding segments once this many candidates exist (a guard for max_splits >= 2 on very
  /// large regions; the cut is deterministic). The collection's CandidateBudget applies too; a run
  /// that stops at either says so in a warning of its RuleContext.
  std::size_t max_candidates = 1000000;
};

namespace detail {

/// Union-find over positions 0..m-1 that counts components of the positions added so far.
class SegmentComponents {
 public:
  /// Forgets everything; positions 0..m-1 may be added.
  void reset(std::size_t m) {
    parent_.assign(m, npos);
    components_ = 0;
  }
  /// Adds position k as a component of its own.
  void add(std::size_t k) {
    parent_[k] = k;
    ++components_;
  }
  /// Joins the components of two added positions.
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    parent_[std::max(a, b)] = std::min(a, b);
    --components_;
  }
  /// Number of components among the positions added.
  std::size_t components() const { return components_; }

 private:
  std::size_t find(std::size_t k) {
    while (parent_[k] != k) {
      parent_[k] = parent_[parent_[k]];
      k = parent_[k];
    }
    return k;
  }
  std::vector<std::size_t> parent_;
  std::size_t components_ = 0;
};

/// The rule behind combine_split_bounded.
template <class G>
class SplitBoundRule final : public RuleImpl<G> {
 public:
  SplitBoundRule(std::string name, PartitionRule<G> sub, std::vector<Combiner<G>> combiners, SplitBoundLimits limits)
      : name_(std::move(name)), sub_(std::move(sub)), combiners_(std::move(combiners)), limits_(limits) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    std::vector<Candidate> result = sub_.all_candidates(graph, target, ctx.for_parts());
    std::unordered_set<SubGraph> seen;  // membership only; the order comes from canonicalize
    for (const Candidate& c : result) seen.insert(c.sub_graph);
    std::vector<Candidate> regions = fusible_regions(graph, result);
    std::sort(regions.begin(), regions.end());
    std::vector<std::size_t> position(graph.size(), npos);
    Segments out{result, seen, ctx, 0, {}};
    for (const Candidate& region : regions) {
      if (!add_segments(graph, region.sub_graph, target, position, out)) {
        ctx.run->warn("target '" + target + "', rule '" + name_ + "' (combine_split_bounded): stopped at " +
                      out.stopped_by + " after " + std::to_string(out.built) +
                      " segments; the segments of the regions not reached are dropped");
        break;
      }
    }
    canonicalize(result);
    return result;
  }

  std::string describe() const override {
    std::string out = "combine_split_bounded(" + sub_.describe() + ", [";
    for (std::size_t k = 0; k < combiners_.size(); ++k) out += (k == 0 ? "" : ", ") + combiners_[k].describe();
    return out + "], max_splits " + std::to_string(limits_.max_splits) + ")";
  }
  const std::string& name() const override { return name_; }

 private:
  /// (a) of combine_split_bounded: grows a disjoint pick of `seeds` to a fixpoint.
  std::vector<Candidate> fusible_regions(const DataflowGraph<G>& graph, const std::vector<Candidate>& seeds) const {
    RegionMerger<G> merger(graph, pick_disjoint(seeds, graph.size()).chosen);
    auto convex = [&](const SubGraph& joined) { return is_convex(graph, joined.inside(), joined.output()); };
    bool any_pairwise = false;
    for (const Combiner<G>& c : combiners_) any_pairwise = any_pairwise || c.mode() == Combiner<G>::Mode::pair;
    // try_absorb changes nothing unless it succeeds, and then we return at once: the references
    // below stay valid while they are used.
    merger.run([&](RegionMerger<G>& m, std::size_t r) {
      const SubGraph& me = m.region(r).sub_graph;
      if (any_pairwise) {
        for (std::size_t n : m.owners_of(me.output())) {
          const SubGraph& down = m.region(n).sub_graph;
          if (accepts_pair(graph, me, down) && m.try_absorb(r, down.inside(), convex)) return true;
        }
      }
      for (const Combiner<G>& combiner : combiners_) {
        IndexSet extra = graph.empty_set();
        switch (combiner.mode()) {
          case Combiner<G>::Mode::pair:
            continue;
          case Combiner<G>::Mode::tuple_proj:
            for (std::size_t o : me.output()) {
              if (graph.is_projection(o)) extra.add(o);
            }
            break;
          case Combiner<G>::Mode::constant:
            for (std::size_t i : me.input()) {
              if (graph.is_constant(i)) extra.add(i);
            }
            break;
          case Combiner<G>::Mode::tuple_arg:
            if (me.kind() > OpKind::injective) continue;
            for (std::size_t t : me.input()) {
              if (!graph.is_tuple(t)) continue;
              IndexSet joined(graph.size(), {t});
              bool ok = true;
              for (std::size_t f : graph.inputs(t)) {
                if (!graph.needs_kernel(f) || me.inside().contains(f)) continue;  // a plain input stays outside
                if (m.owner(f) == npos) {
                  ok = false;
                  break;
                }
                joined.add(f);
              }
              if (ok && m.try_absorb(r, joined, convex)) return true;
            }
            continue;
        }
        if (!extra.empty() && m.try_absorb(r, extra, convex)) return true;
      }
      return false;
    }, MergeSchedule::greedy);
    return merger.take(name_);
  }

  bool accepts_pair(const DataflowGraph<G>& graph, const SubGraph& up, const SubGraph& down) const {
    for (const Combiner<G>& c : combiners_) {
      if (c.mode() == Combiner<G>::Mode::pair && c.accepts(graph, up, down)) return true;
    }
    return false;
  }

  /// Where add_segments() puts new segments, and what it spent.
  struct Segments {
    std::vector<Candidate>& result;
    std::unordered_set<SubGraph>& seen;
    const RuleContext& ctx;
    std::size_t built;       // segments added
    std::string stopped_by;  // the limit that stopped the run, once one has
  };

  /// (b) of combine_split_bounded for one region. Returns false once the budget is spent.
  bool add_segments(const DataflowGraph<G>& graph, const SubGraph& region, const Name& target,
                    std::vector<std::size_t>& position, Segments& out) const {
    std::vector<Candidate>& result = out.result;
    const std::vector<std::size_t> nodes = region.inside().to_vector();
    const std::size_t m = nodes.size();
    for (std::size_t k = 0; k < m; ++k) position[nodes[k]] = k;
    // Every contiguous segment of a convex region's topological order is convex: a path leaving
    // the segment re-enters the region first either at a node of the segment (impossible: the
    // region is convex), or before it (unreachable: smaller index) or after it (cannot reach back
    // into the segment: larger index). So only non-convex regions need the check per segment.
    const bool region_convex = is_convex(graph, region.inside(), region.output());
    bool within_budget = true;
    auto emit = [&](std::size_t i, std::size_t j) {
      if (result.size() >= limits_.max_candidates) {
        out.stopped_by = "the rule's max_candidates (" + std::to_string(limits_.max_candidates) + ")";
        within_budget = false;
        return;
      }
      if (std::string reason = out.ctx.run->stop_reason(out.built); !reason.empty()) {
        out.stopped_by = std::move(reason);
        within_budget = false;
        return;
      }
      IndexSet inside = graph.empty_set();
      bool kernel = false;
      for (std::size_t k = i; k <= j; ++k) {
        inside.add(nodes[k]);
        kernel = kernel || graph.needs_kernel(nodes[k]);
      }
      if (!kernel) return;  // nothing to run (e.g. a lone projection or tuple)
      if (!region_convex && !is_convex(graph, inside)) return;
      std::vector<NestedSubGraph> nested;
      for (const NestedSubGraph& group : region.nested()) {
        const IndexSet& group_inside = group.sub_graph.inside();
        if (group_inside.is_subset_of(inside)) {
          nested.push_back(group);
        } else if (group_inside.intersects(inside)) {
          return;  // the segment cuts a nested group (e.g. a composite), which is atomic
        }
      }
      SubGraph s(graph, std::move(inside), std::move(nested));
      if (!out.seen.insert(s).second) return;
      ++out.built;
      out.ctx.run->add_join(s.heap_bytes() + sizeof(Candidate));
      result.push_back(Candidate{std::move(s), target, name_});
    };
    SegmentComponents components;
    // Forward sweep from segment start i: adds nodes i..m-1, each joined to its inputs in the
    // segment; `take(j)` says whether to emit [i..j] when it is connected.
    auto sweep_forward = [&](std::size_t i, auto take) {
      components.reset(m);
      for (std::size_t j = i; j < m && within_budget; ++j) {
        components.add(j);
        for (std::size_t in : graph.inputs(nodes[j])) {
          const std::size_t p = position[in];
          if (p != npos && p >= i && p < j) components.unite(p, j);
        }
        if (components.components() == 1 && take(j)) emit(i, j);
      }
    };
    const std::size_t last = m - 1;
    if (limits_.max_splits == 0) {
      sweep_forward(0, [&](std::size_t j) { return j == last; });
    } else if (limits_.max_splits == 1) {
      sweep_forward(0, [](std::size_t) { return true; });  // prefixes
      // Suffixes: a backward sweep, each node joined to its consumers in the segment.
      components.reset(m);
      for (std::size_t i = m; i-- > 1 && within_budget;) {
        components.add(i);
        for (std::size_t out : graph.outputs(nodes[i])) {
          const std::size_t p = position[out];
          if (p != npos && p > i) components.unite(p, i);
        }
        if (components.components() == 1) emit(i, last);
      }
    } else {
      for (std::size_t i = 0; i < m && within_budget; ++i) sweep_forward(i, [](std::size_t) { return true; });
    }
    for (std::size_t k = 0; k < m && within_budget; ++k) emit(k, k);  // singletons: always
    for (std::size_t k = 0; k < m; ++k) position[nodes[k]] = npos;
    return within_budget;
  }

  Name name_;
  PartitionRule<G> sub_;
  std::vector<Combiner<G>> combiners_;
  SplitBoundLimits limits_;
};

}  // namespace detail

/// Like combine, but instead of bounding the depth of joined candidates, bounds how many times a
/// maximal fusible region may be split:
///
///  (a) Maximal fusible regions. Starting from a maximal set of pairwise-disjoint candidates of
///      `sub` (greedy, canonical order), regions grow to a fixpoint, visited in ascending order of
///      their first node; each region grows as far as it can before the next one moves (so
///      conv2d -> add -> relu -> sum with FuseOps' combiners gives {conv, add, relu} and {sum}).
///      A region absorbs a downstream neighbouring region (through its smallest output first) when
///      some pairwise combiner accepts the pair (upstream, downstream) and the union is convex;
///      failing that, in the order the combiners are listed, `tuple_proj` absorbs the projections
///      of its results, `constant` its tensor-constant inputs, and `tuple_arg` (for a region of
///      kind <= injective) a tuple it consumes together with the regions producing that tuple's
///      fields (every field that needs a kernel must be held by some region), each only when the
///      union is convex. A region absorbs whole regions, never parts of them; nested groups are
///      kept. Only node-level convexity is asked for: unlike `coalesce`, regions here are only a
///      source of candidates, so they need not be acyclic as a quotient graph. Growing a region of
///      m nodes costs O(m^2) at worst (it is rebuilt on each merge); see RegionMerger and
///      `coalesce` for the rest of the cost.
///  (b) Bounded splits. For each region R, its nodes in ascending post-DFS (topological) order
///      r_0..r_{m-1}, the candidates are the segments [r_i..r_j] with (i > 0) + (j < m-1) <=
///      max_splits that are weakly connected through edges inside the segment and convex;
///      singletons are always included. Segments without a node that needs a kernel (a lone
///      projection or tuple taken in by tuple_proj / tuple_arg) and segments that cut a nested
///      group of R (a composite is atomic) are dropped. So max_splits 0 gives the regions, 1 their
///      prefixes and suffixes (O(m) segments per region, each built in O(m)), 2 or more every
///      connected contiguous segment (O(m^2) segments per region, O(m^3) work to build them all).
///
/// The result also holds every candidate of `sub` (unchanged, with its rule name); new ones carry
/// `name`. Regions are expanded in ascending order of their first node, and segments stop being
/// added once `limits.max_candidates` candidates exist (a deterministic cut) or the collection's
/// CandidateBudget is spent. Canonical order.
template <class G>
PartitionRule<G> combine_split_bounded(PartitionRule<G> sub, std::vector<Combiner<G>> combiners,
                                       SplitBoundLimits limits, std::string name = "combine_split_bounded") {
  return make_rule<G, detail::SplitBoundRule<G>>(std::move(name), std::move(sub), std::move(combiners), limits);
}

/// combine_split_bounded with `max_splits` and the default candidate budget.
template <class G>
PartitionRule<G> combine_split_bounded(PartitionRule<G> sub, std::vector<Combiner<G>> combiners,
                                       std::size_t max_splits, std::string name = "combine_split_bounded") {
  SplitBoundLimits limits;
  limits.max_splits = max_splits;
  return combine_split_bounded(std::move(sub), std::move(combiners), limits, std::move(name));
}

}  // namespace collage
