#pragma once

/// \file
/// max_coalesce and coalesce: merge touching candidates of one target into the largest ones that
/// stay valid under a SubGraphConfig (e.g. to collapse adjacent kernels of one backend after the
/// search). Also holds the region-merging machinery that combine_split_bounded shares.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/partition/quotient.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/rules/partition_rule.hpp"

namespace collage {
namespace detail {

/// The result of pick_disjoint: the chosen, pairwise-disjoint candidates and the others, each in
/// the order given.
struct DisjointPick {
  std::vector<Candidate> chosen;
  std::vector<Candidate> rest;
};

/// Walks `candidates` in order and keeps each one that shares no node with those kept before (a
/// maximal set of pairwise-disjoint candidates, greedy in the given order). Empty candidates go to
/// `rest`. O(total inside size).
inline DisjointPick pick_disjoint(std::vector<Candidate> candidates, std::size_t nodes) {
  DisjointPick pick;
  std::vector<bool> taken(nodes, false);
  for (Candidate& c : candidates) {
    const IndexSet& inside = c.sub_graph.inside();
    bool free = !inside.empty();
    for (std::size_t i : inside) {
      if (taken[i]) {
        free = false;
        break;
      }
    }
    if (!free) {
      pick.rest.push_back(std::move(c));
      continue;
    }
    for (std::size_t i : inside) taken[i] = true;
    pick.chosen.push_back(std::move(c));
  }
  return pick;
}

/// How RegionMerger::run schedules merges (see there).
enum class MergeSchedule { greedy, balanced };

/// Pairwise-disjoint regions of a graph that grow by absorbing nodes and whole neighbouring
/// regions, until a fixpoint. The regions start as the given candidates; an owner array maps each
/// node to the region holding it, so neighbours are found through a region's input and output
/// nodes, never by comparing pairs of regions.
///
/// The policy (what a region may absorb) is the `step` passed to run(); RegionMerger supplies the
/// deterministic schedule, the bookkeeping, and skips regions whose surroundings have not changed
/// since they last failed to grow.
template <class G>
class RegionMerger {
 public:
  /// `regions` must be pairwise disjoint and non-empty (see pick_disjoint).
  RegionMerger(const DataflowGraph<G>& graph, std::vector<Candidate> regions)
      : graph_(&graph),
        regions_(std::move(regions)),
        owner_(graph.size(), npos),
        alive_(regions_.size(), true),
        merged_(regions_.size(), false),
        changed_at_(regions_.size(), 0),
        scanned_at_(regions_.size(), kNever),
        mark_(regions_.size(), false) {
    for (std::size_t id = 0; id < regions_.size(); ++id) {
      for (std::size_t i : regions_[id].sub_graph.inside()) owner_[i] = id;
    }
  }

  /// The region holding node i, or npos.
  std::size_t owner(std::size_t i) const { return owner_[i]; }
  /// Region `id` (meaningful while alive).
  const Candidate& region(std::size_t id) const { return regions_[id]; }
  /// Whether region `id` still exists (it has not been absorbed).
  bool alive(std::size_t id) const { return alive_[id]; }

  /// The distinct regions holding any of `nodes`, in order of the smallest such node; nodes no
  /// region holds are skipped.
  std::vector<std::size_t> owners_of(const IndexSet& nodes) {
    std::vector<std::size_t> result;
    for (std::size_t i : nodes) {
      const std::size_t o = owner_[i];
      if (o == npos || mark_[o]) continue;
      mark_[o] = true;
      result.push_back(o);
    }
    for (std::size_t o : result) mark_[o] = false;
    return result;
  }

  /// Whether the regions stay acyclic as a quotient graph (regions as single nodes, with the nodes
  /// no region holds as themselves) if `joined` (a union about to be made of some regions and free
  /// nodes) became one region (see QuotientCycleCheck).
  bool keeps_quotient_acyclic(const SubGraph& joined) {
    return !quotient_.closes_cycle(*graph_, joined, owner_, regions_.size(),
                                   [&](std::size_t q) -> const SubGraph& { return regions_[q].sub_graph; });
  }

  /// Region `into` absorbs the nodes `extra` and every region holding one of them, provided
  /// `accept(joined)` says yes for the joined sub-graph (built with disjoint_union semantics: the
  /// nested groups of every part are kept). Returns whether it did; nothing changes otherwise.
  template <class Accept>
  bool try_absorb(std::size_t into, const IndexSet& extra, Accept&& accept) {
    const SubGraph& base = regions_[into].sub_graph;
    IndexSet inside = base.inside();
    std::vector<NestedSubGraph> nested(base.nested().begin(), base.nested().end());
    std::vector<std::size_t> absorbed;
    std::vector<std::size_t> claimed;
    for (std::size_t i : extra) {
      if (inside.contains(i)) continue;
      const std::size_t o = owner_[i];
      if (o == npos) {
        inside.add(i);
        claimed.push_back(i);
        continue;
      }
      absorbed.push_back(o);
      const SubGraph& other = regions_[o].sub_graph;
      inside |= other.inside();
      nested.insert(nested.end(), other.nested().begin(), other.nested().end());
    }
    if (absorbed.empty() && claimed.empty()) return false;
    SubGraph joined(*graph_, std::move(inside), std::move(nested));
    if (!accept(joined)) return false;
    ++clock_;
    for (std::size_t o : absorbed) {
      for (std::size_t i : regions_[o].sub_graph.inside()) owner_[i] = into;
      alive_[o] = false;
      regions_[o] = Candidate{};
    }
    for (std::size_t i : claimed) owner_[i] = into;
    regions_[into].sub_graph = std::move(joined);
    merged_[into] = true;
    changed_at_[into] = clock_;
    return true;
  }

  /// Runs `step(*this, r)` to a fixpoint. Each pass visits the live regions in ascending order of
  /// their first inside node (as at the start of the pass); `step` tries r's moves in its own fixed
  /// order, performs the first one accepted (through try_absorb into r) and returns true, or
  /// returns false. Passes repeat until one merges nothing. A region is skipped when neither it nor
  /// any region holding one of its input or output nodes (or an input of a tuple among its inputs)
  /// changed since its last fruitless step: `step` must decide from those regions only (every
  /// policy here does).
  ///
  /// `schedule` says how often a visit steps its region:
  ///  - greedy: until `step` returns false, so the first region grows as far as it can before the
  ///    next one moves (regions fill from the top; a chain of p parts that collapses into one
  ///    rebuilds a growing region p times: O(n^2));
  ///  - balanced: once, so merges pair up (a chain of p parts collapses in about log2(p) passes,
  ///    each rebuilding regions of total size <= n).
  template <class Step>
  void run(Step&& step, MergeSchedule schedule) {
    bool progress = true;
    while (progress) {
      progress = false;
      std::vector<std::size_t> order;
      for (std::size_t id = 0; id < regions_.size(); ++id) {
        if (alive_[id]) order.push_back(id);
      }
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return regions_[a].sub_graph.first_inside() < regions_[b].sub_graph.first_inside();
      });
      for (std::size_t r : order) {
        if (!alive_[r] || !dirty(r)) continue;
        bool merged = step(*this, r);
        if (merged) {
          progress = true;
          if (schedule == MergeSchedule::balanced) continue;
          while (step(*this, r)) {
          }
        }
        scanned_at_[r] = clock_;
      }
    }
  }

  /// The live regions; merged ones carry `rule_name` and no cost, the others are unchanged.
  std::vector<Candidate> take(const Name& rule_name) {
    std::vector<Candidate> result;
    for (std::size_t id = 0; id < regions_.size(); ++id) {
      if (!alive_[id]) continue;
      if (merged_[id]) {
        regions_[id].rule_name = rule_name;
        regions_[id].cost = Cost::unknown();
      }
      result.push_back(std::move(regions_[id]));
    }
    return result;
  }

 private:
  static constexpr std::size_t kNever = npos;

  /// Whether region r must be stepped again (see run).
  bool dirty(std::size_t r) const {
    const std::size_t since = scanned_at_[r];
    if (since == kNever || changed_at_[r] > since) return true;
    auto changed = [&](std::size_t i) {
      const std::size_t o = owner_[i];
      return o != npos && changed_at_[o] > since;
    };
    const SubGraph& s = regions_[r].sub_graph;
    for (std::size_t i : s.output()) {
      if (changed(i)) return true;
    }
    for (std::size_t i : s.input()) {
      if (changed(i)) return true;
      if (graph_->is_tuple(i)) {
        for (std::size_t f : graph_->inputs(i)) {
          if (changed(f)) return true;
        }
      }
    }
    return false;
  }

  const DataflowGraph<G>* graph_;
  std::vector<Candidate> regions_;
  std::vector<std::size_t> owner_;
  std::vector<bool> alive_;
  std::vector<bool> merged_;
  std::vector<std::size_t> changed_at_;  // clock_ after the region's last growth (0: never grew)
  std::vector<std::size_t> scanned_at_;  // clock_ at the end of its last fruitless step, or kNever
  std::vector<bool> mark_;               // scratch for owners_of
  std::size_t clock_ = 0;                // number of merges so far
  QuotientCycleCheck quotient_;          // scratch of keeps_quotient_acyclic
};

/// coalesce over candidates that are already pairwise disjoint and non-empty.
template <class G>
std::vector<Candidate> coalesce_disjoint(const DataflowGraph<G>& graph, std::vector<Candidate> parts,
                                         const SubGraphConfig& config) {
  RegionMerger<G> merger(graph, std::move(parts));
  merger.run([&](RegionMerger<G>& m, std::size_t r) {
    // try_absorb changes nothing unless it succeeds, and then we return at once: the references
    // below stay valid while they are used.
    auto valid = [&](const SubGraph& joined) {
      return joined.is_valid(graph, config) && m.keeps_quotient_acyclic(joined);
    };
    std::vector<std::size_t> same;  // the downstream neighbours of r's target
    for (std::size_t n : m.owners_of(m.region(r).sub_graph.output())) {
      if (m.region(n).target == m.region(r).target) same.push_back(n);
    }
    for (std::size_t n : same) {
      if (m.try_absorb(r, m.region(n).sub_graph.inside(), valid)) return true;
    }
    if (same.size() < 2) return false;
    // A fan-out may be valid only as a whole (e.g. without taps, r cannot take one branch of two).
    IndexSet all = graph.empty_set();
    for (std::size_t n : same) all |= m.region(n).sub_graph.inside();
    return m.try_absorb(r, all, valid);
  }, MergeSchedule::balanced);
  return merger.take("max_coalesce");
}

/// The rule behind max_coalesce.
template <class G>
class MaxCoalesceRule final : public RuleImpl<G> {
 public:
  MaxCoalesceRule(std::vector<PartitionRule<G>> subs, SubGraphConfig config)
      : subs_(std::move(subs)), config_(config), name_("max_coalesce") {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    std::vector<Candidate> all;
    for (const PartitionRule<G>& sub : subs_) {
      std::vector<Candidate> some = sub.all_candidates(graph, target, ctx.for_parts());
      all.insert(all.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
    }
    DisjointPick pick = pick_disjoint(std::move(all), graph.size());
    std::vector<Candidate> result = coalesce_disjoint(graph, std::move(pick.chosen), config_);
    canonicalize(result);
    return result;
  }
  std::string describe() const override {
    std::string out = "max_coalesce(";
    if (subs_.size() != 1) out += "[";
    for (std::size_t k = 0; k < subs_.size(); ++k) out += (k == 0 ? "" : ", ") + subs_[k].describe();
    if (subs_.size() != 1) out += "]";
    return out + ", " + collage::to_string(config_) + ")";
  }
  const std::string& name() const override { return name_; }

 private:
  std::vector<PartitionRule<G>> subs_;
  SubGraphConfig config_;
  Name name_;
};

}  // namespace detail

/// Merges touching parts of the same target into the largest ones that stay valid under `config`
/// (SubGraph::is_valid), until no merge is possible; parts of different targets are never merged.
/// Meant for after the search: `parts` are a partitioning's (pairwise disjoint) parts. A merge is
/// also refused when it would make the parts cyclic as a quotient graph (two convex parts that feed
/// each other), so an acyclic partitioning stays acyclic. Parts are first put in canonical order; a
/// part that overlaps an earlier one takes no part in merging and is returned unchanged. The result
/// is in canonical order, which need not be a topological order of the parts.
///
/// Merging is deterministic: in each pass, regions are visited in ascending order of their first
/// inside node; a region absorbs the downstream neighbour (of its target) reached through its
/// smallest output node whose union is valid, or, when no single one is, all its downstream
/// neighbours of its target at once (a fan-out can be valid only whole, e.g. without taps); one
/// merge per visit. Passes repeat until one merges nothing. The result is maximal in that sense
/// (no region can absorb one, or all, of its downstream neighbours of its target), not necessarily
/// the fewest possible regions: a union reachable only through an invalid intermediate is not
/// found. Merged parts keep every nested group (disjoint_union), are labelled afresh, carry rule
/// name "max_coalesce" and no cost; unmerged parts are returned as given.
///
/// Cost. With n nodes, e edges and p parts: at most p - 1 merges. Each try builds the union's
/// sub-graph and checks it: O(k log k + w + e_k) for a union of k nodes with e_k edges whose index
/// range spans w nodes (the convexity sweep), plus the quotient walk over what the union reaches
/// within that range: O(n log n + e) at worst. A pass costs O(p log p) to order the regions, plus
/// at most (out-degree + 1) tries per region visited; a region is visited again only when it or a
/// neighbouring region changed. Worst case: p passes (one merge each, e.g. one region absorbing a
/// fan-out of p branches one by one) of up to e tries each: O(p * e * (n log n + e)). Typical
/// cases are far cheaper: a chain of p parts collapsing into one takes about log2(p) passes of
/// O(n log n) each (merges are balanced: one per visit).
template <class G>
std::vector<Candidate> coalesce(const DataflowGraph<G>& graph, std::vector<Candidate> parts,
                                const SubGraphConfig& config) {
  canonicalize(parts);
  detail::DisjointPick pick = detail::pick_disjoint(std::move(parts), graph.size());
  std::vector<Candidate> result = detail::coalesce_disjoint(graph, std::move(pick.chosen), config);
  result.insert(result.end(), std::make_move_iterator(pick.rest.begin()), std::make_move_iterator(pick.rest.end()));
  canonicalize(result);
  return result;
}

/// A rule that coalesces the candidates of `sub`: it takes a maximal set of pairwise-disjoint
/// candidates of `sub`, greedily in canonical order, and merges touching ones into the largest that
/// stay valid under `config`, exactly as `coalesce` does (see there for order and cost). The result
/// is only the (merged and unmerged) chosen candidates, canonical; candidates of `sub` that
/// overlapped a chosen one are dropped.
template <class G>
PartitionRule<G> max_coalesce(PartitionRule<G> sub, SubGraphConfig config = {}) {
  std::vector<PartitionRule<G>> subs;
  subs.push_back(std::move(sub));
  return make_rule<G, detail::MaxCoalesceRule<G>>(std::move(subs), config);
}

/// max_coalesce over the candidates of several rules in priority order: the disjoint candidates
/// are taken from the first rule's (canonical) list, then the second's, and so on, as a greedy
/// partitioner applies a pattern table in table order (TVM's MergeComposite); then they merge as
/// in max_coalesce.
template <class G>
PartitionRule<G> max_coalesce(std::vector<PartitionRule<G>> subs_in_priority, SubGraphConfig config = {}) {
  return make_rule<G, detail::MaxCoalesceRule<G>>(std::move(subs_in_priority), config);
}

}  // namespace collage
