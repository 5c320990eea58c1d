#pragma once

/// \file
/// combine: grows candidates by repeatedly joining touching ones, steered by combiner rules.

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/rules/partition_rule.hpp"

namespace collage {

/// Decides which candidates `combine` may join. Pairwise combiners look at an upstream candidate
/// and a downstream one it feeds; the others grow one candidate by nodes around it.
template <class G>
class Combiner {
 public:
  /// Whether `upstream` (which feeds `downstream`) may be joined with it.
  using PairPredicate = std::function<bool(const DataflowGraph<G>&, const SubGraph& upstream, const SubGraph& downstream)>;
  enum class Mode { pair, tuple_arg, tuple_proj, constant };

  /// Joins when upstream.kind() <= upstream_max and downstream.kind() <= downstream_max.
  static Combiner by_kind(OpKind upstream_max, OpKind downstream_max) {
    return pairwise("by_kind(" + std::string(to_string(upstream_max)) + "," + std::string(to_string(downstream_max)) + ")",
                    [upstream_max, downstream_max](const DataflowGraph<G>&, const SubGraph& up, const SubGraph& down) {
                      return up.kind() <= upstream_max && down.kind() <= downstream_max;
                    });
  }
  /// Joins any touching pair.
  static Combiner all() {
    return pairwise("all", [](const DataflowGraph<G>&, const SubGraph&, const SubGraph&) { return true; });
  }
  /// A user-defined pairwise combiner.
  static Combiner pairwise(std::string name, PairPredicate predicate) {
    return Combiner(Mode::pair, std::move(name), std::move(predicate));
  }
  /// Joins a candidate (of kind at most injective) that consumes a tuple with that tuple node and
  /// the singleton candidates producing each of its fields, all at once (so a concat can fuse
  /// with the branches it concatenates).
  static Combiner tuple_arg() { return Combiner(Mode::tuple_arg, "tuple_arg", nullptr); }
  /// Joins a candidate with every projection (tuple field access) of its results.
  static Combiner tuple_proj() { return Combiner(Mode::tuple_proj, "tuple_proj", nullptr); }
  /// Joins a candidate with its tensor-constant inputs.
  static Combiner constant() { return Combiner(Mode::constant, "constant", nullptr); }

  Mode mode() const { return mode_; }
  const std::string& describe() const { return name_; }
  bool accepts(const DataflowGraph<G>& graph, const SubGraph& upstream, const SubGraph& downstream) const {
    return predicate_(graph, upstream, downstream);
  }

 private:
  Combiner(Mode mode, std::string name, PairPredicate predicate)
      : mode_(mode), name_(std::move(name)), predicate_(std::move(predicate)) {}

  Mode mode_;
  std::string name_;
  PairPredicate predicate_;
};

/// Limits on `combine`.
struct CombineLimits {
  /// Largest depth of a combined candidate (0: unlimited).
  std::size_t max_depth = 0;
  /// Stop growing once this many candidates exist (a guard against exponential growth, e.g.
  /// combiner `all` without a depth bound on a wide graph; the cut is deterministic).
  std::size_t max_candidates = 1000000;
};

namespace detail {

/// All candidates of one combine run: de-duplicated, with indexes from node to the candidates
/// having that node as an entry or an exit.
class CandidatePool {
 public:
  explicit CandidatePool(std::size_t nodes) : by_entry_(nodes), by_exit_(nodes) {}

  /// Adds `c` unless an equal sub-graph is already present; returns whether it was added.
  bool add(Candidate c) {
    auto [it, inserted] = ids_.emplace(c.sub_graph, items_.size());
    if (!inserted) return false;
    for (std::size_t e : c.sub_graph.entry()) by_entry_[e].push_back(items_.size());
    for (std::size_t x : c.sub_graph.exit()) by_exit_[x].push_back(items_.size());
    items_.push_back(std::move(c));
    return true;
  }
  /// The id of the candidate whose sub-graph is `s`, or npos.
  std::size_t find(const SubGraph& s) const {
    auto it = ids_.find(s);
    return it == ids_.end() ? npos : it->second;
  }
  std::size_t size() const { return items_.size(); }
  const Candidate& operator[](std::size_t id) const { return items_[id]; }
  const std::vector<std::size_t>& with_entry(std::size_t node) const { return by_entry_[node]; }
  const std::vector<std::size_t>& with_exit(std::size_t node) const { return by_exit_[node]; }
  std::vector<Candidate> take() { return std::move(items_); }

 private:
  std::vector<Candidate> items_;
  std::unordered_map<SubGraph, std::size_t> ids_;
  std::vector<std::vector<std::size_t>> by_entry_;
  std::vector<std::vector<std::size_t>> by_exit_;
};

// How this differs from TVM's Collage (CombinePartitionRule): TVM compared every pair of
// candidates in every round; here each round follows only touching pairs, found through the
// entry/exit indexes of the pool, and only pairs with at least one member added in the previous
// round (older pairs were tried already). Each round may join an old candidate with a new one, so
// growth does not depend on how candidates were produced. Combined candidates must stay convex and
// within max_depth; other validity (exits, taps) is left to only_valid.
template <class G>
class CombineRule final : public RuleImpl<G> {
 public:
  CombineRule(std::string name, PartitionRule<G> sub, std::vector<Combiner<G>> combiners, CombineLimits limits)
      : name_(std::move(name)), sub_(std::move(sub)), combiners_(std::move(combiners)), limits_(limits) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const std::string& target) const override {
    CandidatePool pool(graph.size());
    for (Candidate& c : sub_.all_candidates(graph, target)) pool.add(std::move(c));
    std::size_t first_new = 0;
    while (first_new < pool.size() && pool.size() < limits_.max_candidates) {
      std::vector<SubGraph> found = one_round(graph, pool, first_new);
      first_new = pool.size();
      std::sort(found.begin(), found.end());
      for (SubGraph& s : found) {
        if (pool.size() >= limits_.max_candidates) break;
        pool.add(Candidate{std::move(s), target, name_, std::nullopt});
      }
    }
    std::vector<Candidate> result = pool.take();
    canonicalize(result);
    return result;
  }

  std::string describe() const override {
    std::string out = "combine(" + sub_.describe() + ", [";
    for (std::size_t k = 0; k < combiners_.size(); ++k) out += (k == 0 ? "" : ", ") + combiners_[k].describe();
    return out + "], max_depth " + std::to_string(limits_.max_depth) + ")";
  }
  const std::string& name() const override { return name_; }

 private:
  /// The joins of one round, for candidates [first_new, pool.size()) and their partners.
  std::vector<SubGraph> one_round(const DataflowGraph<G>& graph, const CandidatePool& pool,
                                  std::size_t first_new) const {
    std::vector<SubGraph> found;
    auto offer = [&](SubGraph s) {
      if (limits_.max_depth != 0 && s.depth() > limits_.max_depth) return;
      if (!graph.is_convex(s.inside())) return;
      if (pool.find(s) != npos) return;
      found.push_back(std::move(s));
    };
    const std::size_t end = pool.size();
    for (const Combiner<G>& combiner : combiners_) {
      for (std::size_t id = first_new; id < end; ++id) {
        const SubGraph& sub = pool[id].sub_graph;
        switch (combiner.mode()) {
          case Combiner<G>::Mode::pair:
            join_pairs(graph, pool, combiner, id, first_new, offer);
            break;
          case Combiner<G>::Mode::tuple_arg:
            join_tuple_args(graph, pool, sub, offer);
            break;
          case Combiner<G>::Mode::tuple_proj:
            grow(graph, sub, offer, [&](IndexSet& extra) {
              for (std::size_t x : sub.exit()) {
                for (std::size_t o : graph.outputs(x)) {
                  if (graph.is_projection(o) && !sub.inside().contains(o)) extra.add(o);
                }
              }
            });
            break;
          case Combiner<G>::Mode::constant:
            grow(graph, sub, offer, [&](IndexSet& extra) {
              for (std::size_t i : sub.input()) {
                if (graph.is_constant(i)) extra.add(i);
              }
            });
            break;
        }
      }
    }
    return found;
  }

  /// Offers new_id joined with every touching partner: downstream partners through its outputs,
  /// and (old) upstream partners through its entries' inputs.
  template <class Offer>
  static void join_pairs(const DataflowGraph<G>& graph, const CandidatePool& pool, const Combiner<G>& combiner,
                         std::size_t new_id, std::size_t first_new, Offer& offer) {
    const SubGraph& me = pool[new_id].sub_graph;
    auto try_pair = [&](const SubGraph& up, const SubGraph& down) {
      if (up.inside().intersects(down.inside()) || !combiner.accepts(graph, up, down)) return;
      offer(up.disjoint_union(graph, down));
    };
    std::vector<std::size_t> partners;
    for (std::size_t o : me.output()) {
      for (std::size_t id : pool.with_entry(o)) partners.push_back(id);
    }
    dedupe(partners);
    for (std::size_t id : partners) try_pair(me, pool[id].sub_graph);
    partners.clear();
    for (std::size_t i : me.input()) {
      for (std::size_t id : pool.with_exit(i)) {
        if (id < first_new) partners.push_back(id);  // pairs of two new candidates were tried above
      }
    }
    dedupe(partners);
    for (std::size_t id : partners) try_pair(pool[id].sub_graph, me);
  }

  template <class Offer>
  static void join_tuple_args(const DataflowGraph<G>& graph, const CandidatePool& pool, const SubGraph& sub,
                              Offer& offer) {
    if (sub.kind() > OpKind::injective) return;
    for (std::size_t e : sub.entry()) {
      for (std::size_t t : graph.inputs(e)) {
        if (!graph.is_tuple(t) || sub.inside().contains(t)) continue;
        IndexSet joined = sub.inside();
        joined.add(t);
        std::vector<NestedSubGraph> nested = sub.nested();
        bool ok = true;
        for (std::size_t f : graph.inputs(t)) {
          if (!graph.needs_kernel(f) || joined.contains(f)) continue;  // a plain input stays outside
          const std::size_t producer = pool.find(SubGraph(graph, IndexSet(graph.size(), {f})));
          if (producer == npos) {
            ok = false;
            break;
          }
          joined.add(f);
        }
        if (ok) offer(SubGraph(graph, std::move(joined), {}, std::move(nested)));
      }
    }
  }

  template <class Offer, class Collect>
  static void grow(const DataflowGraph<G>& graph, const SubGraph& sub, Offer& offer, Collect collect) {
    IndexSet extra(graph.size());
    collect(extra);
    if (extra.empty()) return;
    offer(SubGraph(graph, sub.inside() | extra, {}, sub.nested()));
  }

  static void dedupe(std::vector<std::size_t>& ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }

  std::string name_;
  PartitionRule<G> sub_;
  std::vector<Combiner<G>> combiners_;
  CombineLimits limits_;
};

}  // namespace detail

/// Repeatedly joins touching candidates of `sub` (and the joins so far) that some combiner
/// accepts, until nothing new appears. Joined candidates are convex and at most
/// `limits.max_depth` deep. The result holds `sub`'s candidates and every join.
template <class G>
PartitionRule<G> combine(PartitionRule<G> sub, std::vector<Combiner<G>> combiners, CombineLimits limits = {},
                         std::string name = "combine") {
  return make_rule<G, detail::CombineRule<G>>(std::move(name), std::move(sub), std::move(combiners), limits);
}

}  // namespace collage
