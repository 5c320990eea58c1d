#pragma once

/// \file
/// combine: grows candidates by repeatedly joining touching ones, steered by combiner rules.

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "collage/partition/valid_superset.hpp"
#include "collage/rules/partition_rule.hpp"
#include "collage/rules/rule_context.hpp"
#include "collage/support/epoch_marks.hpp"
#include "collage/support/identity_index.hpp"

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
    Combiner c(Mode::pair,
               "by_kind(" + std::string(to_string(upstream_max)) + "," + std::string(to_string(downstream_max)) + ")",
               nullptr);
    c.kind_bounds_ = KindBounds{upstream_max, downstream_max};
    return c;
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
  /// a producer of each of its fields, all at once (so a concat can fuse with the branches it
  /// concatenates). A field's producers are the candidates of kind at most injective that have it
  /// as an exit, and its own singleton candidate; a field that needs no kernel may stay outside.
  static Combiner tuple_arg() { return Combiner(Mode::tuple_arg, "tuple_arg", nullptr); }
  /// Joins a candidate with one projection (tuple field access) of its results; over the rounds,
  /// with every set of them (so a split can fuse with the projection it feeds into a kernel while
  /// its other projections stay outside).
  static Combiner tuple_proj() { return Combiner(Mode::tuple_proj, "tuple_proj", nullptr); }
  /// Joins a candidate with its tensor-constant inputs.
  static Combiner constant() { return Combiner(Mode::constant, "constant", nullptr); }

  Mode mode() const { return mode_; }
  const std::string& describe() const { return name_; }
  bool accepts(const DataflowGraph<G>& graph, const SubGraph& upstream, const SubGraph& downstream) const {
    if (kind_bounds_) return upstream.kind() <= kind_bounds_->upstream && downstream.kind() <= kind_bounds_->downstream;
    return predicate_(graph, upstream, downstream);
  }

 private:
  /// by_kind's bounds, tested in accepts() without a std::function call (combine asks for every
  /// touching pair).
  struct KindBounds {
    OpKind upstream;
    OpKind downstream;
  };

  Combiner(Mode mode, std::string name, PairPredicate predicate)
      : mode_(mode), name_(std::move(name)), predicate_(std::move(predicate)) {}

  Mode mode_;
  std::string name_;
  PairPredicate predicate_;
  std::optional<KindBounds> kind_bounds_;
};

/// What one `combine` run did (see CombineLimits::report).
struct CombineStats {
  /// Rounds that looked for joins (the last one found nothing new, or the budget ran out).
  std::size_t rounds = 0;
  /// Candidates of the sub-rule (after removing duplicates).
  std::size_t seeds = 0;
  /// Joins some combiner proposed (a touching pair, a tuple with its fields, a candidate with its
  /// projections or constants), counted once per proposal.
  std::size_t joins_tried = 0;
  /// Proposed joins that were new, convex and (pairwise joins) within max_depth: built as
  /// sub-graphs.
  std::size_t joins_built = 0;
  /// Proposed joins left out because no sub-graph valid under the enclosing only_valid's config
  /// can contain them (RuleContext::valid_under, ValidSupersetTest): neither they nor anything
  /// grown from them would be kept. Not counted in joins_built. (tuple_arg drops such choices of
  /// producers before it proposes them; those are not counted.)
  std::size_t joins_ruled_out = 0;
  /// Candidates the run returned (seeds and joins).
  std::size_t candidates = 0;
  /// Whether the run stopped at a limit with joins left to find (so larger candidates may be
  /// missing): CombineLimits::max_candidates or the collection's CandidateBudget.
  bool truncated = false;
  /// The limit it stopped at, e.g. "max_candidates_per_rule (250000)" (empty when not truncated).
  std::string stopped_by;
  /// Tuples around which tuple_arg offered CombineLimits::max_tuple_joins joins and dropped the
  /// other choices of producers.
  std::size_t tuple_joins_capped = 0;
  /// Exit sets with CombineLimits::max_joins_per_exit joins, after which joins with those exits
  /// were dropped.
  std::size_t exits_capped = 0;
};

/// Limits on `combine`.
struct CombineLimits {
  /// Largest depth (SubGraph::depth) of a candidate made by a pairwise join (0: unlimited). The
  /// other combiners add the constants, projections or tuple around one candidate and are not
  /// bounded, as in TVM's Collage: wrap combine in only_valid to bound the result (the enclosing
  /// only_valid's depth bound then applies to every join, which loses nothing it keeps).
  std::size_t max_depth = 0;
  /// Stop growing once this many candidates exist (a guard against exponential growth, e.g.
  /// combiner `all` without a depth bound on a long chain; the cut is deterministic). The
  /// collection's CandidateBudget applies too. A run that stops at either says so in
  /// CombineStats and in a warning of its RuleContext.
  std::size_t max_candidates = 1000000;
  /// Most joins tuple_arg offers around one tuple in one run, all its consumers and rounds
  /// together (0: unlimited). A tuple of n fields with k producers each has k^n such joins for
  /// each consumer (TVM's rule offers them all): a wide join (Inception, DenseNet, attention
  /// heads) would otherwise fill the budget with them. The joins are chosen field by field, each
  /// field's producers in the order they were found (its own node first); a run that drops some
  /// says so in CombineStats and in a warning of its RuleContext.
  std::size_t max_tuple_joins = 4096;
  /// Most joins built with the same exit nodes in one run (0: unlimited). Candidates that differ
  /// only in which side branches they take in (the tails of n parallel chains feeding one
  /// concatenation: 2^n sets, each as deep as the deepest tail) all share their exits; this keeps
  /// the joins found first (smaller ones, in earlier rounds), so the rule's result stays within
  /// this many candidates per exit set. A run that drops some says so in CombineStats and in a
  /// warning of its RuleContext.
  std::size_t max_joins_per_exit = 4096;
  /// When set, called at the end of every run with what it did (for benchmarks, tuning and
  /// warning about truncated runs).
  std::function<void(const CombineStats&)> report = nullptr;
};

namespace detail {

/// A join before it is built: the union of the inside sets and the nested groups it would carry
/// (sorted, as a SubGraph keeps them), with the hash SubGraph::hash would give it.
struct JoinKey {
  IndexSet inside;
  boost::container::small_vector<const NestedSubGraph*, 4> nested;
  std::size_t hash = 0;

  /// Adds the nested groups of `s`.
  void add_nested(const SubGraph& s) {
    for (const NestedSubGraph& n : s.nested()) nested.push_back(&n);
  }
  /// Sorts the nested groups and computes the hash (as SubGraph::hash).
  void seal() {
    std::sort(nested.begin(), nested.end(), [](const NestedSubGraph* a, const NestedSubGraph* b) { return *a < *b; });
    hash = inside.hash();
    for (const NestedSubGraph* n : nested) hash = hash_nested_group(hash, *n);
  }
  /// Whether `s` is this join (the identity of SubGraph's ==).
  bool same_as(const SubGraph& s) const {
    if (s.inside() != inside || s.nested().size() != nested.size()) return false;
    for (std::size_t k = 0; k < nested.size(); ++k) {
      if (!(*nested[k] == s.nested()[k])) return false;
    }
    return true;
  }
  std::vector<NestedSubGraph> nested_groups() const {
    std::vector<NestedSubGraph> out;
    out.reserve(nested.size());
    for (const NestedSubGraph* n : nested) out.push_back(*n);
    return out;
  }
};

/// Ids by node (those of the sub-graphs having the node as an entry, say), as one array sorted by
/// node: contiguous, so long lists on dense graphs read fast, and no allocation per node. Ids are
/// added in batches (combine adds them between rounds only); each batch moves the array once.
class NodeIndex {
 public:
  explicit NodeIndex(std::size_t nodes) : offsets_(nodes + 1, 0) {}

  /// Indexes the ids up to `count` not indexed yet under the nodes of set_of(id).
  template <class SetOf>
  void extend(std::size_t count, SetOf set_of) {
    // added_[n + 1]: new entries of node n; then, summed, new entries of the nodes before n.
    added_.assign(offsets_.size(), 0);
    for (std::size_t id = indexed_; id < count; ++id) {
      for (std::size_t node : set_of(id)) ++added_[node + 1];
    }
    for (std::size_t n = 1; n < added_.size(); ++n) added_[n] += added_[n - 1];
    ids_.resize(offsets_.back() + added_.back());
    // Node n's old entries move right by added_[n]; its new ones follow them.
    next_.resize(offsets_.size() - 1);
    for (std::size_t n = offsets_.size() - 1; n-- > 0;) {
      std::copy_backward(ids_.begin() + static_cast<std::ptrdiff_t>(offsets_[n]),
                         ids_.begin() + static_cast<std::ptrdiff_t>(offsets_[n + 1]),
                         ids_.begin() + static_cast<std::ptrdiff_t>(offsets_[n + 1] + added_[n]));
      next_[n] = offsets_[n + 1] + added_[n];
    }
    for (std::size_t n = 0; n < offsets_.size(); ++n) offsets_[n] += added_[n];
    for (std::size_t id = indexed_; id < count; ++id) {
      for (std::size_t node : set_of(id)) ids_[next_[node]++] = id;
    }
    indexed_ = count;
  }
  /// Calls f(id) for each id indexed under `node`, ascending.
  template <class F>
  void for_each(std::size_t node, F f) const {
    for (std::size_t k = offsets_[node]; k < offsets_[node + 1]; ++k) f(ids_[k]);
  }

 private:
  std::vector<std::size_t> offsets_;  // ids of node n: ids_[offsets_[n] .. offsets_[n + 1])
  std::vector<std::size_t> ids_;
  std::size_t indexed_ = 0;         // ids [0, indexed_) are in ids_
  std::vector<std::size_t> added_;  // scratch of extend()
  std::vector<std::size_t> next_;   // scratch of extend()
};

/// All candidates of one combine run: de-duplicated sub-graphs with ids in the order they were
/// added (the sub-rule's candidates first), and indexes from node to the ids having that node as
/// an entry or an exit.
/// Where a sub-graph meets another in a pairwise join, for the depth of their union without
/// visiting it (CombineRule's union_depth): the depth value of each exit that counts (the longest path inside
/// ending there) and the height of each entry (the longest path inside starting there).
struct DepthEnds {
  boost::container::small_vector<std::pair<std::size_t, std::uint32_t>, 2> exits;
  boost::container::small_vector<std::pair<std::size_t, std::uint32_t>, 2> entries;
};

/// Fills `ends` (empty) with the DepthEnds of `s`, where depths grow with the inside set
/// (depth_grows_with_inside): there a node that is neither a constant nor inlinable counts 1 on
/// every path through it. Filled in place: g++ 12 at -O1 misreads the inlined move of a
/// small_vector (-Wstringop-overread).
template <class G>
void fill_depth_ends(const DataflowGraph<G>& graph, const SubGraph& s, DepthEnds& ends) {
  const boost::container::small_vector<std::size_t, 16> nodes(s.inside().begin(), s.inside().end());
  boost::container::small_vector<std::uint32_t, 16> value(nodes.size(), 0);
  boost::container::small_vector<std::uint32_t, 16> height(nodes.size(), 0);
  auto at = [&](std::size_t i) { return static_cast<std::size_t>(std::lower_bound(nodes.begin(), nodes.end(), i) - nodes.begin()); };
  auto counts = [&](std::size_t i) -> std::uint32_t { return graph.is_constant(i) || graph.is_inlinable(i) ? 0 : 1; };
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    std::uint32_t best = 0;
    for (std::size_t j : graph.inputs(nodes[k])) {
      if (s.inside().contains(j)) best = std::max(best, value[at(j)]);
    }
    value[k] = best + counts(nodes[k]);
  }
  for (std::size_t k = nodes.size(); k-- > 0;) {
    std::uint32_t best = 0;
    for (std::size_t o : graph.outputs(nodes[k])) {
      if (s.inside().contains(o)) best = std::max(best, height[at(o)]);
    }
    height[k] = best + counts(nodes[k]);
  }
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (counts(nodes[k]) != 0 && s.exit().contains(nodes[k])) ends.exits.emplace_back(nodes[k], value[k]);
    if (s.entry().contains(nodes[k])) ends.entries.emplace_back(nodes[k], height[k]);
  }
}

class CandidatePool {
 public:
  explicit CandidatePool(std::size_t nodes) : by_entry_(nodes), by_exit_(nodes) {}

  /// Adds the sub-rule's candidates (before any join), each unless an equal sub-graph came before.
  void add_seeds(std::vector<Candidate> seeds) {
    assert(items_.empty());
    items_.reserve(seeds.size());
    std::size_t kept = 0;
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      const std::size_t h = seeds[k].sub_graph.hash();
      const SubGraph& s = seeds[k].sub_graph;
      if (index_.find(h, [&](std::size_t id) { return items_[id] == s; }) != npos) continue;
      if (kept != k) seeds[kept] = std::move(seeds[k]);
      add(seeds[kept++].sub_graph, h);
    }
    seeds.resize(kept);
    seeds_ = std::move(seeds);
  }
  /// Adds a join known to be absent (it reaches the entry and exit indexes at the next reindex()).
  void add(SubGraph s, std::size_t hash) {
    items_.push_back(std::move(s));
    index_.push(hash);
  }
  /// Brings the entry and exit indexes up to date with every sub-graph added.
  void reindex() {
    by_entry_.extend(items_.size(), [&](std::size_t id) -> const IndexSet& { return items_[id].entry(); });
    by_exit_.extend(items_.size(), [&](std::size_t id) -> const IndexSet& { return items_[id].exit(); });
  }
  /// The id of the sub-graph `key` describes, or npos.
  std::size_t find(const JoinKey& key) const {
    return index_.find(key.hash, [&](std::size_t id) { return key.same_as(items_[id]); });
  }
  std::size_t size() const { return items_.size(); }
  const SubGraph& operator[](std::size_t id) const { return items_[id]; }
  /// Calls f(id) for each sub-graph with `node` as an entry.
  template <class F>
  void for_each_with_entry(std::size_t node, F f) const {
    by_entry_.for_each(node, f);
  }
  /// Calls f(id) for each sub-graph with `node` as an exit.
  template <class F>
  void for_each_with_exit(std::size_t node, F f) const {
    by_exit_.for_each(node, f);
  }

  /// The candidates in canonical order: the sub-rule's as they came, the joins stamped with
  /// `target` and `rule_name`. `runs` are the ids where each round's (sorted) additions start.
  std::vector<Candidate> take(const std::vector<std::size_t>& runs, const Name& target,
                              const Name& rule_name) {
    // Ids are distinct sub-graphs, so ordering them by sub-graph is the canonical order. Each round
    // added its joins in order, so only the runs need merging (the seeds' run is canonical
    // unless the sub-rule broke its contract; then it is sorted here).
    std::vector<std::size_t> order(items_.size());
    for (std::size_t id = 0; id < order.size(); ++id) order[id] = id;
    // The first inside index decides most comparisons; keep it at hand rather than in each core.
    std::vector<std::size_t> first(items_.size());
    for (std::size_t id = 0; id < first.size(); ++id) first[id] = items_[id].first_inside();
    auto before = [&](std::size_t a, std::size_t b) {
      return first[a] != first[b] ? first[a] < first[b] : items_[a] < items_[b];
    };
    auto seeds_end = order.begin() + static_cast<std::ptrdiff_t>(seeds_.size());
    if (!std::is_sorted(order.begin(), seeds_end, before)) std::sort(order.begin(), seeds_end, before);
    std::size_t merged = seeds_.size();
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::size_t run_end = k + 1 < runs.size() ? runs[k + 1] : order.size();
      std::inplace_merge(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(merged),
                         order.begin() + static_cast<std::ptrdiff_t>(run_end), before);
      merged = run_end;
    }
    std::vector<Candidate> result;
    result.reserve(order.size());
    for (std::size_t id : order) {
      if (id < seeds_.size()) {
        result.push_back(std::move(seeds_[id]));
      } else {
        result.push_back(Candidate{std::move(items_[id]), target, rule_name});
      }
    }
    return result;
  }

 private:
  std::vector<Candidate> seeds_;  // ids [0, seeds_.size())
  std::vector<SubGraph> items_;
  IdentityIndex index_;
  NodeIndex by_entry_;
  NodeIndex by_exit_;
};

// How this differs from TVM's Collage (CombinePartitionRule; docs/rules.md compares the two in
// full): TVM compared every pair of candidates in every round; here each round follows only
// touching pairs, found through the entry/exit indexes of the pool, and only pairs with at least
// one member added in the previous round (older pairs were tried already). Each round may join an
// old candidate with a new one in either direction, so growth does not depend on how candidates
// were produced. Every join must be convex; a pairwise join must also be within max_depth (its own
// depth, where TVM bounds the sum of the parts' depths); other validity (exits, taps) is left to
// only_valid.
//
// Cost: a touching pair is visited once per round however many pairwise combiners accept it, and
// a join is described by its inside set and nested groups (a JoinKey) until it proves new (absent
// from the pool and from this round's finds), within max_depth and convex; only then is its
// SubGraph built. The pool stores each sub-graph once, looked up by hash. The result is the same
// as building every join and filtering afterwards: joins are pure functions of their parts, and
// each round adds its new joins in sorted order. (A run cut at max_candidates keeps the joins found
// first: candidates in id order, each one's partners by node, then id. Deterministic, but which
// joins are kept depends on that order.)
template <class G>
class CombineRule final : public RuleImpl<G> {
 public:
  CombineRule(std::string name, PartitionRule<G> sub, std::vector<Combiner<G>> combiners, CombineLimits limits)
      : name_(std::move(name)), sub_(std::move(sub)), combiners_(std::move(combiners)), limits_(std::move(limits)) {
    for (std::size_t k = 0; k < combiners_.size(); ++k) {
      (combiners_[k].mode() == Combiner<G>::Mode::pair ? pairwise_ : growers_).push_back(k);
    }
  }

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    Run run(*this, graph, ctx);
    run.pool.add_seeds(sub_.all_candidates(graph, target, ctx));
    run.stats.seeds = run.pool.size();
    std::vector<std::size_t> runs;  // where each round's additions start
    std::size_t first_new = 0;
    while (first_new < run.pool.size() && !run.stats.truncated) {
      ++run.stats.rounds;
      run.pool.reindex();
      run.one_round(first_new);
      first_new = run.pool.size();
      runs.push_back(first_new);
      std::vector<std::size_t> order(run.found.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      auto before = [&](std::size_t a, std::size_t b) { return run.found[a] < run.found[b]; };
      if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
      for (std::size_t k : order) run.pool.add(std::move(run.found[k]), run.found_hashes[k]);
      run.found.clear();
      run.found_hashes.clear();
      run.found_index.clear();
    }
    std::vector<Candidate> result = run.pool.take(runs, target, name_);
    run.stats.candidates = result.size();
    if (run.stats.truncated) {
      ctx.run->warn("target '" + target + "', rule '" + name_ + "' (combine): stopped at " + run.stats.stopped_by +
                    " in round " + std::to_string(run.stats.rounds) + " after " +
                    std::to_string(run.stats.joins_built) + " joins; the joins not found by then are dropped, so " +
                    "larger candidates of this rule may be missing");
    }
    if (run.stats.tuple_joins_capped != 0) {
      ctx.run->warn("target '" + target + "', rule '" + name_ + "' (combine): tuple_arg offered at most " +
                    std::to_string(limits_.max_tuple_joins) + " joins around a tuple (max_tuple_joins) and dropped " +
                    "the other choices of producers at " + std::to_string(run.stats.tuple_joins_capped) +
                    " tuples, so some joins of a wide tuple's producers are missing");
    }
    if (run.stats.exits_capped != 0) {
      ctx.run->warn("target '" + target + "', rule '" + name_ + "' (combine): kept at most " +
                    std::to_string(limits_.max_joins_per_exit) + " joins with the same exit nodes (max_joins_per_exit) " +
                    "and dropped the later ones for " + std::to_string(run.stats.exits_capped) +
                    " exit sets, so some candidates that take in more side branches are missing");
    }
    if (limits_.report) limits_.report(run.stats);
    return result;
  }

  std::string describe() const override {
    std::string out = "combine(" + sub_.describe() + ", [";
    for (std::size_t k = 0; k < combiners_.size(); ++k) out += (k == 0 ? "" : ", ") + combiners_[k].describe();
    return out + "], max_depth " + std::to_string(limits_.max_depth) + ")";
  }
  const std::string& name() const override { return name_; }

 private:
  /// The state of one candidates() call.
  struct Run {
    Run(const CombineRule& r, const DataflowGraph<G>& g, const RuleContext& c)
        : rule(r),
          graph(g),
          ctx(c),
          join_depth(c.max_depth),
          pair_depth(c.within_depth(r.limits_.max_depth).max_depth),
          pool(g.size()),
          depth_grows(detail::depth_grows_with_inside(g)) {
      if (c.valid_under) {
        superset_test.emplace(g, *c.valid_under);
        if (!superset_test->can_rule_out()) superset_test.reset();
      }
    }

    const CombineRule& rule;
    const DataflowGraph<G>& graph;
    const RuleContext& ctx;
    /// The depth bound of every join (the context's: 0 when none), and of pairwise joins (the
    /// tighter of the context's and CombineLimits::max_depth).
    std::size_t join_depth;
    std::size_t pair_depth;
    CandidatePool pool;
    bool depth_grows;  // detail::depth_grows_with_inside(graph)
    /// Rules out joins that the enclosing only_valid would drop with all they grow into (none
    /// without one, or when its config rules nothing out).
    std::optional<ValidSupersetTest<G>> superset_test;
    /// This round's new joins, and their index (ids are positions in `found`).
    std::vector<SubGraph> found;
    IdentityIndex found_index;
    std::vector<std::size_t> found_hashes;
    CombineStats stats;
    std::vector<std::optional<DepthEnds>> ends;  // by pool id, where depth_grows (union_depth): on first use
    std::vector<std::size_t> partners;  // scratch: the partners of one candidate, each once
    EpochMarks partner_marks;  // by pool id: in `partners`
    bool has_tuples = true;           // whether the graph has a tuple node (join_tuple_args)
    std::vector<std::size_t> tuples;  // scratch of join_tuple_args(): the tuples to look at
    /// Joins built with each exit set, by the set's hash: an exit set is told apart by its hash
    /// alone (64 bits: two sets that share one would only count together toward the cap, which
    /// warns when it drops a join), so no set is copied. Positions in `joins_per_exit`.
    IdentityIndex exit_ids;
    std::vector<std::size_t> joins_per_exit;
    std::vector<std::size_t> tuple_offered;  // by node: joins tuple_arg offered around it
    EpochMarks tuple_marks;           // by node: in `tuples`
    JoinKey key;                      // scratch

    /// Finds the joins of one round, for candidates [first_new, pool.size()) and their partners.
    void one_round(std::size_t first_new) {
      const std::size_t end = pool.size();
      bool tuple_arg = false;
      for (std::size_t id = first_new; id < end && !stats.truncated; ++id) {
        if (!rule.pairwise_.empty()) join_pairs(id, first_new);
        for (std::size_t c : rule.growers_) {
          const SubGraph& sub = pool[id];
          switch (rule.combiners_[c].mode()) {
            case Combiner<G>::Mode::pair:
              break;
            case Combiner<G>::Mode::tuple_arg:
              tuple_arg = true;  // after the loop: it looks at whole tuples
              break;
            case Combiner<G>::Mode::tuple_proj:
              for (std::size_t o : sub.output()) {
                if (graph.is_projection(o)) grow(sub, [o](IndexSet& extra) { extra.add(o); });
              }
              break;
            case Combiner<G>::Mode::constant:
              grow(sub, [&](IndexSet& extra) {
                for (std::size_t i : sub.input()) {
                  if (graph.is_constant(i)) extra.add(i);
                }
              });
              break;
          }
        }
      }
      if (tuple_arg && !stats.truncated) join_tuple_args(first_new);
    }

    /// Offers the join `key` describes (its inside set and nested groups filled in): kept when
    /// it is new, convex and at most `max_depth` deep (0: any depth). Its depth is at least
    /// `min_depth` and, when `max_depth_known` is set, at most that. `pair`, when given, are the
    /// two sub-graphs whose union the join is (for a cheaper convexity test).
    void offer(std::size_t max_depth, std::size_t min_depth, std::size_t max_depth_known = npos,
               std::pair<const SubGraph*, const SubGraph*> pair = {}) {
      ++stats.joins_tried;
      if (ctx.run->out_of_time()) {
        stop(ctx.run->stop_reason(stats.joins_built));
        return;
      }
      // The cheap, local test first: the depth needs only the graph's edges among the inside nodes.
      if (max_depth != 0 && max_depth_known > max_depth &&
          (min_depth > max_depth || detail::inside_depth(graph, key.inside, max_depth) > max_depth)) {
        return;
      }
      key.seal();
      if (pool.find(key) != npos) return;
      if (found_index.find(key.hash, [&](std::size_t k) { return key.same_as(found[k]); }) != npos) return;
      if (superset_test && !superset_test->may_grow_valid(key.inside)) {
        ++stats.joins_ruled_out;
        return;
      }
      const bool convex = pair.first != nullptr ? is_convex_union(graph, key.inside, *pair.first, *pair.second)
                                                : is_convex(graph, key.inside);
      if (!convex) return;
      if (pool.size() + found.size() >= rule.limits_.max_candidates) {
        stop("the rule's max_candidates (" + std::to_string(rule.limits_.max_candidates) + ")");
        return;
      }
      if (std::string reason = ctx.run->stop_reason(stats.joins_built); !reason.empty()) {
        stop(std::move(reason));
        return;
      }
      SubGraph joined(graph, std::move(key.inside), key.nested_groups());
      if (rule.limits_.max_joins_per_exit != 0) {
        const std::size_t exit_hash = joined.exit().hash();
        std::size_t exit_id = exit_ids.find(exit_hash, [](std::size_t) { return true; });
        if (exit_id == npos) {
          exit_id = joins_per_exit.size();
          exit_ids.push(exit_hash);
          joins_per_exit.push_back(0);
        }
        std::size_t& same_exits = joins_per_exit[exit_id];
        if (same_exits >= rule.limits_.max_joins_per_exit) {
          if (same_exits++ == rule.limits_.max_joins_per_exit) ++stats.exits_capped;
          return;
        }
        ++same_exits;
      }
      ++stats.joins_built;
      found.push_back(std::move(joined));
      found_hashes.push_back(key.hash);
      found_index.push(key.hash);
      ctx.run->add_join(found.back().heap_bytes() + sizeof(Candidate));
    }

    /// Stops the run at the limit `reason` names.
    void stop(std::string reason) {
      stats.truncated = true;
      if (stats.stopped_by.empty()) stats.stopped_by = std::move(reason);
    }

    /// Offers new_id joined with every touching partner that some pairwise combiner accepts:
    /// downstream partners through its outputs, and (old) upstream partners through its entries'
    /// inputs.
    void join_pairs(std::size_t new_id, std::size_t first_new) {
      const SubGraph& me = pool[new_id];
      start_partners();
      for (std::size_t o : me.output()) {
        pool.for_each_with_entry(o, [&](std::size_t id) { add_partner(id); });
      }
      for (std::size_t id : partners) try_pair(new_id, id);
      start_partners();
      for (std::size_t i : me.input()) {
        pool.for_each_with_exit(i, [&](std::size_t id) {
          if (id < first_new) add_partner(id);  // pairs of two new candidates were tried above
        });
      }
      for (std::size_t id : partners) try_pair(id, new_id);
    }

    /// Offers the union of pool[up_id] and pool[down_id] (which it feeds) when some pairwise
    /// combiner accepts it.
    void try_pair(std::size_t up_id, std::size_t down_id) {
      const SubGraph& up = pool[up_id];
      const SubGraph& down = pool[down_id];
      if (up.inside().intersects(down.inside())) return;
      bool accepted = false;
      for (std::size_t c : rule.pairwise_) {
        if (rule.combiners_[c].accepts(graph, up, down)) {
          accepted = true;
          break;
        }
      }
      if (!accepted) return;
      const std::size_t max_depth = pair_depth;
      if (max_depth != 0 && std::max(up.depth(), down.depth()) > max_depth) {
        ++stats.joins_tried;  // offer() would refuse it: spare the union and the nested groups' copy
        return;
      }
      // Without an edge from down back into up, a path through the union runs through up,
      // then through down: at most up.depth() + down.depth() nodes, and exactly the longest of
      // the paths within each and those that cross between them, where depths grow.
      const bool one_way = !down.output().intersects(up.inside());
      std::size_t depth_known = one_way ? up.depth() + down.depth() : npos;
      if (one_way && depth_grows && max_depth != 0 && depth_known > max_depth) {
        depth_known = union_depth(up_id, down_id);
        if (depth_known > max_depth) {
          ++stats.joins_tried;
          return;
        }
      }
      key.inside = up.inside();
      key.inside |= down.inside();
      key.nested.clear();
      key.add_nested(up);
      key.add_nested(down);
      offer(max_depth, std::max(up.depth(), down.depth()), depth_known, {&up, &down});
    }

    /// The depth of the union of pool[up_id] and pool[down_id] when no edge runs from the second
    /// back into the first and depths grow with the inside set: the deeper of the two, or of a
    /// path ending at an exit of the first continued from an entry of the second.
    std::size_t union_depth(std::size_t up_id, std::size_t down_id) {
      if (ends.size() < pool.size()) ends.resize(pool.size());  // before taking references into it
      const DepthEnds& from = depth_ends_of(up_id);
      const DepthEnds& to = depth_ends_of(down_id);
      const SubGraph& down = pool[down_id];
      std::size_t depth = std::max(pool[up_id].depth(), down.depth());
      for (const auto& [exit, value] : from.exits) {
        for (std::size_t o : graph.outputs(exit)) {
          if (!down.inside().contains(o)) continue;
          for (const auto& [entry, height] : to.entries) {
            if (entry == o) depth = std::max<std::size_t>(depth, value + height);
          }
        }
      }
      return depth;
    }

    /// ends[id], filled when it was not (`ends` holds an element for it).
    const DepthEnds& depth_ends_of(std::size_t id) {
      if (!ends[id]) detail::fill_depth_ends(graph, pool[id], ends[id].emplace());
      return *ends[id];
    }

    /// Empties `partners` for a new list. add_partner() drops repeats in constant time and keeps
    /// the order found (by node, then id): on dense graphs a candidate reaches thousands of
    /// partners through many of its nodes, and sorting those lists took most of combine's time.
    void start_partners() {
      partners.clear();
      partner_marks.clear(pool.size());
    }
    void add_partner(std::size_t id) {
      if (partner_marks.mark(id)) partners.push_back(id);
    }

    /// tuple_arg for one round. For each tuple that a candidate new in this round reads, or one of
    /// whose fields a new candidate produces: offers each union of a consumer (a candidate of kind
    /// at most injective that reads the tuple), the tuple and one producer per field with at
    /// least one part new. A field's producers: the candidates of kind at most injective that have
    /// it as an exit (TVM's rule) and its own singleton candidate (of any kind); a field that needs
    /// no kernel (an input) may also stay outside. One producer may serve several fields; the
    /// parts must be disjoint.
    void join_tuple_args(std::size_t first_new) {
      if (first_new == 0) {  // the first round: is there any tuple at all?
        has_tuples = false;
        for (std::size_t i = 0; i < graph.size() && !has_tuples; ++i) has_tuples = graph.is_tuple(i);
      }
      if (!has_tuples) return;
      tuples.clear();
      tuple_marks.clear(graph.size());
      auto consider = [&](std::size_t t) {
        if (graph.is_tuple(t) && tuple_marks.mark(t)) tuples.push_back(t);
      };
      for (std::size_t id = first_new; id < pool.size(); ++id) {
        const SubGraph& s = pool[id];
        for (std::size_t i : s.input()) consider(i);
        for (std::size_t x : s.exit()) {
          for (std::size_t o : graph.outputs(x)) {
            if (!s.inside().contains(o)) consider(o);
          }
        }
      }
      std::sort(tuples.begin(), tuples.end());
      for (std::size_t t : tuples) {
        if (stats.truncated) return;
        join_tuple(t, first_new);
      }
    }

    /// join_tuple_args for tuple node t.
    void join_tuple(std::size_t t, std::size_t first_new) {
      start_partners();
      for (std::size_t e : graph.outputs(t)) pool.for_each_with_entry(e, [&](std::size_t id) { add_partner(id); });
      std::vector<std::size_t> consumers;
      for (std::size_t id : partners) {
        const SubGraph& c = pool[id];
        if (join_depth != 0 && c.depth() > join_depth) continue;
        if (c.kind() > OpKind::injective || c.inside().contains(t)) continue;
        if (superset_test) {  // a join around the consumer holds it and t
          key.inside = c.inside();
          key.inside.add(t);
          if (!superset_test->may_grow_valid(key.inside)) continue;
        }
        consumers.push_back(id);
      }
      if (consumers.empty()) return;
      // options[k]: the choices for the k-th distinct field.
      std::vector<std::vector<std::size_t>> options;
      const IndexSpan fields = graph.inputs(t);
      for (const std::size_t* f = fields.begin(); f != fields.end(); ++f) {
        if (std::find(fields.begin(), f, *f) != f) continue;  // a field repeated
        std::vector<std::size_t>& choices = options.emplace_back();
        if (!graph.needs_kernel(*f)) choices.push_back(kOutside);
        pool.for_each_with_exit(*f, [&](std::size_t id) {
          const SubGraph& p = pool[id];
          if (join_depth != 0 && p.depth() > join_depth) return;  // the join would be deeper still
          if (p.kind() <= OpKind::injective || p.size() == 1) choices.push_back(id);
        });
        if (choices.empty()) return;  // nothing produces this field
      }
      TupleJoin join;
      join.t = t;
      join.first_new = first_new;
      join.most = rule.limits_.max_tuple_joins == 0 ? npos : rule.limits_.max_tuple_joins;
      if (tuple_offered.empty()) tuple_offered.assign(graph.size(), 0);
      join.offered = &tuple_offered[t];
      if (join.capped()) return;
      for (std::size_t c : consumers) {
        join.consumer = &pool[c];
        if (!usable_choices(join, options)) continue;
        join.parts.clear();
        choose_field(join, 0, c >= first_new);
        if (stats.truncated || join.capped()) break;
      }
    }

    /// A field's choice that leaves the field outside the join.
    static constexpr std::size_t kOutside = npos;

    /// One tuple_arg join being chosen: the consumer, tuple node t, the usable choices per
    /// distinct field and the producers taken so far.
    struct TupleJoin {
      std::size_t t = npos;
      std::size_t first_new = 0;
      const SubGraph* consumer = nullptr;
      std::vector<std::vector<std::size_t>> options;
      std::vector<bool> new_from;  // [k]: whether a choice for a field from the k-th on is new
      boost::container::small_vector<std::size_t, 4> parts;
      std::size_t* offered = nullptr;  // joins offered around t so far (tuple_offered[t])
      std::size_t most = 0;            // CombineLimits::max_tuple_joins, npos for no limit
      /// Whether the joins around t reached their limit.
      bool capped() const { return *offered >= most; }
    };

    /// Fills join.options with the choices of `options` (per distinct field) that can join
    /// join.consumer: a field left outside, or a producer disjoint from the consumer and t whose
    /// union with them is not deeper than the bound (where depths grow with the inside set, a
    /// union with more producers is at least as deep). False when some field has none.
    bool usable_choices(TupleJoin& join, const std::vector<std::vector<std::size_t>>& options) {
      const SubGraph& consumer = *join.consumer;
      join.options.resize(options.size());
      join.new_from.assign(options.size() + 1, false);
      for (std::size_t k = 0; k < options.size(); ++k) {
        std::vector<std::size_t>& usable = join.options[k];
        usable.clear();
        for (std::size_t id : options[k]) {
          if (id != kOutside) {
            const SubGraph& p = pool[id];
            if (p.inside().contains(join.t) || p.inside().intersects(consumer.inside())) continue;
            const bool bound_depth = join_depth != 0 && depth_grows;
            if (bound_depth || superset_test) {
              key.inside = consumer.inside();
              key.inside.add(join.t);
              key.inside |= p.inside();
              if (bound_depth && detail::inside_depth(graph, key.inside, join_depth) > join_depth) continue;
              if (superset_test && !superset_test->may_grow_valid(key.inside)) continue;
            }
          }
          usable.push_back(id);
        }
        if (usable.empty()) return false;
      }
      for (std::size_t k = options.size(); k-- > 0;) {
        const std::vector<std::size_t>& usable = join.options[k];
        join.new_from[k] = join.new_from[k + 1] || std::any_of(usable.begin(), usable.end(), [&](std::size_t id) {
                             return id != kOutside && id >= join.first_new;
                           });
      }
      return true;
    }

    /// Chooses the producer of the k-th distinct field and those after it, depth first: a choice
    /// that overlaps the consumer, t or a producer taken for an earlier field is dropped with
    /// every choice after it, and so is a branch in which no part can be new in this round or
    /// whose parts no valid sub-graph contains (under only_valid). Each complete choice is offered
    /// (offer_tuple_join).
    void choose_field(TupleJoin& join, std::size_t k, bool any_new) {
      const std::vector<std::vector<std::size_t>>& options = join.options;
      if (stats.truncated || join.capped() || (!any_new && !join.new_from[k])) return;
      if (k == options.size()) {
        if (ctx.run->out_of_time()) {
          stop(ctx.run->stop_reason(stats.joins_built));
          return;
        }
        if (++*join.offered == join.most) ++stats.tuple_joins_capped;  // once per tuple: no more after this
        offer_tuple_join(*join.consumer, join.t, join.parts);
        return;
      }
      for (std::size_t id : options[k]) {
        const bool taken = id == kOutside || std::find(join.parts.begin(), join.parts.end(), id) != join.parts.end();
        if (taken) {  // a field left outside, or one more field of a producer taken already
          choose_field(join, k + 1, any_new);
          continue;
        }
        if (overlaps_join(join, pool[id])) continue;
        join.parts.push_back(id);
        if (!superset_test || may_grow_valid(join)) choose_field(join, k + 1, any_new || id >= join.first_new);
        join.parts.pop_back();
        if (stats.truncated || join.capped()) return;
      }
    }

    /// Whether the consumer, t and the producers taken so far may lie in a sub-graph valid under
    /// the enclosing only_valid's config (so may every join that adds more producers).
    bool may_grow_valid(const TupleJoin& join) {
      key.inside = join.consumer->inside();
      key.inside.add(join.t);
      for (std::size_t id : join.parts) key.inside |= pool[id].inside();
      return superset_test->may_grow_valid(key.inside);
    }

    /// Whether producer `p` shares a node with a producer taken already.
    bool overlaps_join(const TupleJoin& join, const SubGraph& p) const {
      for (std::size_t id : join.parts) {
        if (p.inside().intersects(pool[id].inside())) return true;
      }
      return false;
    }

    /// Offers the union of `consumer`, tuple node t and the disjoint producers `parts`.
    void offer_tuple_join(const SubGraph& consumer, std::size_t t,
                          const boost::container::small_vector<std::size_t, 4>& parts) {
      key.inside = consumer.inside();
      key.inside.add(t);
      key.nested.clear();
      key.add_nested(consumer);
      for (std::size_t id : parts) {
        const SubGraph& p = pool[id];
        key.inside |= p.inside();
        key.add_nested(p);
      }
      offer(join_depth, consumer.depth());
    }

    template <class Collect>
    void grow(const SubGraph& sub, Collect collect) {
      IndexSet extra(graph.size());
      collect(extra);
      if (extra.empty()) return;
      key.inside = sub.inside();
      key.inside |= extra;
      key.nested.clear();
      key.add_nested(sub);
      offer(join_depth, sub.depth());
    }

  };
  Name name_;
  PartitionRule<G> sub_;
  std::vector<Combiner<G>> combiners_;
  CombineLimits limits_;
  std::vector<std::size_t> pairwise_;  // the pairwise combiners, as positions in combiners_
  std::vector<std::size_t> growers_;   // the others
};

}  // namespace detail

/// Repeatedly joins touching candidates of `sub` (and the joins so far) that some combiner
/// accepts, until nothing new appears. Joined candidates are convex; pairwise joins are at most
/// `limits.max_depth` deep. The result holds `sub`'s candidates and every join: at least what TVM's
/// CombinePartitionRule proposes with the same combiners (docs/rules.md).
template <class G>
PartitionRule<G> combine(PartitionRule<G> sub, std::vector<Combiner<G>> combiners, CombineLimits limits = {},
                         std::string name = "combine") {
  return make_rule<G, detail::CombineRule<G>>(std::move(name), std::move(sub), std::move(combiners), std::move(limits));
}

}  // namespace collage
