#pragma once

/// \file
/// PartitionSpec (a target and the rule that proposes its candidates) and ready-made rules in the
/// styles of TVM's Collage: native fusion (FuseOps), operator-predicate BYOC, pattern-table BYOC,
/// library composites inside native kernels, and "fuse exactly these patterns".

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "collage/partition/sub_graph_config.hpp"
#include "collage/rules/base_rules.hpp"
#include "collage/rules/combinators.hpp"
#include "collage/rules/combine.hpp"
#include "collage/rules/max_coalesce.hpp"
#include "collage/rules/partition_rule.hpp"
#include "collage/rules/pattern.hpp"
#include "collage/rules/pattern_rule.hpp"

namespace collage {

/// A backend the partitioner may use: its name, the rule proposing the sub-graphs it could run,
/// and a cost added per partition it runs (a kernel-launch or transition penalty).
template <class G>
struct PartitionSpec {
  std::string target;
  PartitionRule<G> rule;
  double penalty = 0.0;

  /// Every candidate of `rule` for `target` over `graph` (canonical: sorted, no duplicates), under
  /// the default CandidateBudget (collect_candidates() runs every spec under one budget and keeps
  /// the rules' warnings).
  std::vector<Candidate> all_candidates(const DataflowGraph<G>& graph) const {
    return rule.all_candidates(graph, target);
  }
  /// all_candidates() within `ctx`.
  std::vector<Candidate> all_candidates(const DataflowGraph<G>& graph, const RuleContext& ctx) const {
    return rule.all_candidates(graph, target, ctx);
  }
};

/// A labelled pattern, as in a BYOC pattern table: ("cutlass.dense_bias", dense(*, const) ...).
template <class G>
using PatternTable = std::vector<std::pair<std::string, Pattern<G>>>;

/// The combiners of TVM's FuseOps: by_kind(anchor, broadcast), by_kind(broadcast, reduce),
/// by_kind(injective, injective), tuple_arg, tuple_proj.
template <class G>
std::vector<Combiner<G>> fuse_ops_combiners() {
  using C = Combiner<G>;
  return {C::by_kind(OpKind::anchor, OpKind::broadcast), C::by_kind(OpKind::broadcast, OpKind::reduce),
          C::by_kind(OpKind::injective, OpKind::injective), C::tuple_arg(), C::tuple_proj()};
}

/// What one kernel may be in the ready-made rules, as in TVM's Collage: at most one exit, no taps,
/// at most `max_depth` deep (0: unlimited).
inline SubGraphConfig kernel_config(std::size_t max_depth) { return SubGraphConfig{1, false, max_depth}; }

namespace detail {

/// composite(l_i, pattern(l_i, p_i)) for every entry of `table`, in table order.
template <class G>
std::vector<PartitionRule<G>> composite_patterns(const PatternTable<G>& table) {
  std::vector<PartitionRule<G>> rules;
  rules.reserve(table.size());
  for (const auto& [label, p] : table) rules.push_back(composite(label, pattern<G>(label, p)));
  return rules;
}

/// The native-fusion tree over the seed rule `seeds`.
template <class G>
PartitionRule<G> native_fusion_over(PartitionRule<G> seeds, CombineLimits limits) {
  const SubGraphConfig config = kernel_config(limits.max_depth);
  return primitive(only_valid(combine(std::move(seeds), fuse_ops_combiners<G>(), std::move(limits), "fuse"), config),
                   /*external=*/false);
}

template <class G>
PartitionRule<G> native_fusion_over(PartitionRule<G> seeds, std::size_t max_depth) {
  CombineLimits limits;
  limits.max_depth = max_depth;
  return native_fusion_over(std::move(seeds), std::move(limits));
}

}  // namespace detail

/// Native fusion in the style of TVM's FuseOps:
///
///     primitive[native](only_valid(combine(op_kind(opaque),
///         [by_kind(anchor,broadcast), by_kind(broadcast,reduce), by_kind(injective,injective),
///          tuple_arg, tuple_proj], max_depth), {1 exit, no taps, max_depth}))
///
/// The seeds are every operator, up to opaque ones (the tree says op_kind(anchor)): as in
/// FuseOps, an opaque operator (softmax, layer_norm) gets a kernel of its own, so a native target
/// alone covers any graph. The by_kind combiners never join an opaque operator with anything.
///
/// Candidates are marked Primitive without a Compiler attribute (the native code generator runs
/// them). Unlike TVM, which leaves native candidates unwrapped so that FuseOps decides later, the
/// Primitive group is added here so every ready-made rule yields kernels of the same shape.
template <class G>
PartitionRule<G> native_fusion_rule(std::size_t max_depth) {
  return detail::native_fusion_over(op_kind<G>(OpKind::opaque), max_depth);
}

/// native_fusion_rule(limits.max_depth) whose combine step runs under `limits` (a candidate
/// budget, a report of each run).
template <class G>
PartitionRule<G> native_fusion_rule(CombineLimits limits) {
  return detail::native_fusion_over(op_kind<G>(OpKind::opaque), std::move(limits));
}

/// A spec for `target` whose rule is native_fusion_rule(max_depth).
template <class G>
PartitionSpec<G> native_fusion_spec(std::string target, std::size_t max_depth, double penalty = 0.0) {
  return PartitionSpec<G>{std::move(target), native_fusion_rule<G>(max_depth), penalty};
}

namespace detail {

/// `config` without its depth bound: what a greedy partitioner's regions must respect.
inline SubGraphConfig without_depth_bound(SubGraphConfig config) {
  config.max_depth = 0;
  return config;
}

/// The maximal regions over `seeds` (in priority order) that stay valid under `config` without its
/// depth bound.
template <class G>
PartitionRule<G> maximal_regions(std::vector<PartitionRule<G>> seeds, const SubGraphConfig& config) {
  const SubGraphConfig unbounded = without_depth_bound(config);
  return only_valid(max_coalesce(std::move(seeds), unbounded), unbounded);
}

/// The BYOC tree over `seeds` (in priority order): every combination of touching seeds up to
/// config.max_depth, and the maximal regions. Each seed rule appears in both branches.
template <class G>
PartitionRule<G> byoc_tree(std::vector<PartitionRule<G>> seeds, const SubGraphConfig& config) {
  CombineLimits limits;
  limits.max_depth = config.max_depth;
  PartitionRule<G> combined = combine(seeds.size() == 1 ? seeds.front() : union_of(seeds), {Combiner<G>::all()},
                                      std::move(limits), "byoc");
  return primitive(union_of<G>({only_valid(std::move(combined), config), maximal_regions(std::move(seeds), config)}));
}

/// Stands in for a seed rule in one ByocRule::candidates call: its candidates, found already.
template <class G>
class FoundSeedsRule final : public RuleImpl<G> {
 public:
  FoundSeedsRule(const std::vector<Candidate>& found, const PartitionRule<G>& seed) : found_(&found), seed_(&seed) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>&, const Name&, const RuleContext&) const override {
    return *found_;
  }
  std::string describe() const override { return seed_->describe(); }
  const std::string& name() const override { return seed_->name(); }

 private:
  const std::vector<Candidate>* found_;
  const PartitionRule<G>* seed_;
};

/// byoc_tree(seeds, config), asking each seed rule for its candidates once rather than once per
/// branch (the seeds are operator predicates or pattern matches over the whole graph).
template <class G>
class ByocRule final : public RuleImpl<G> {
 public:
  ByocRule(std::vector<PartitionRule<G>> seeds, const SubGraphConfig& config)
      : seeds_(std::move(seeds)), config_(config), tree_(byoc_tree(seeds_, config_)) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    std::vector<std::vector<Candidate>> found;
    found.reserve(seeds_.size());
    std::vector<PartitionRule<G>> stand_ins;
    for (const PartitionRule<G>& seed : seeds_) {
      found.push_back(seed.all_candidates(graph, target, ctx.for_parts()));
      stand_ins.push_back(make_rule<G, FoundSeedsRule<G>>(found.back(), seed));
    }
    return byoc_tree(std::move(stand_ins), config_).all_candidates(graph, target, ctx);
  }
  std::string describe() const override { return tree_.describe(); }
  const std::string& name() const override { return tree_.name(); }

 private:
  std::vector<PartitionRule<G>> seeds_;
  SubGraphConfig config_;
  PartitionRule<G> tree_;  // for describe() and name()
};

/// The BYOC rule over `seeds` (see byoc_tree).
template <class G>
PartitionRule<G> byoc_over(std::vector<PartitionRule<G>> seeds, const SubGraphConfig& config) {
  return make_rule<G, ByocRule<G>>(std::move(seeds), config);
}

}  // namespace detail

/// Operator-predicate BYOC (TVM's AnnotateTarget / MergeCompilerRegions / PartitionGraph for
/// backends with "target.<compiler>" operator predicates):
///
///     primitive(union(only_valid(combine(op_predicate(name, predicate), [all], config.max_depth), config),
///                     only_valid(max_coalesce(op_predicate(name, predicate), config'), config')))
///
/// where config' is `config` without its depth bound. Every operator the backend accepts is a
/// seed; `all` joins any touching pair up to the depth bound, and max_coalesce adds the largest
/// regions of accepted operators, whatever their depth: the regions the backend's own greedy
/// partitioner would offload (op_predicate_maximal_rule). So the cheapest partitioning over a spec
/// of this rule is never worse than that greedy partitioner's over the same operator support,
/// under any additive cost model. Candidates carry ("Compiler", target).
template <class G>
PartitionRule<G> op_predicate_byoc_rule(std::string name, NodePredicate<G> predicate, SubGraphConfig config) {
  std::vector<PartitionRule<G>> seeds;
  seeds.push_back(op_predicate<G>(std::move(name), std::move(predicate)));
  return detail::byoc_over(std::move(seeds), config);
}

/// The regions a greedy partitioner over the same operator support offloads (TVM's
/// partition_for_<toolchain>, torch.fx's CapabilityBasedPartitioner): the accepted operators
/// coalesced into the largest regions valid under `config` without its depth bound,
///
///     primitive(only_valid(max_coalesce(op_predicate(name, predicate), config'), config'))
///
/// As a greedy baseline to compare a search with (the same candidates are in
/// op_predicate_byoc_rule), or as a backend's whole rule.
template <class G>
PartitionRule<G> op_predicate_maximal_rule(std::string name, NodePredicate<G> predicate, SubGraphConfig config) {
  std::vector<PartitionRule<G>> seeds;
  seeds.push_back(op_predicate<G>(std::move(name), std::move(predicate)));
  return primitive(detail::maximal_regions(std::move(seeds), config));
}

/// op_predicate_byoc_rule with config kernel_config(max_depth) = {1 exit, no taps, max_depth}: the
/// config TVM's Collage uses for its BYOC rules (gather_partition_specs.cc). Graph-style backends
/// that can return several results from one partition (TensorRT) may pass a config with more
/// exits instead.
template <class G>
PartitionRule<G> op_predicate_byoc_rule(std::string name, NodePredicate<G> predicate, std::size_t max_depth) {
  return op_predicate_byoc_rule<G>(std::move(name), std::move(predicate), kernel_config(max_depth));
}

/// Pattern-table BYOC (TVM's MergeComposite followed by AnnotateTarget / MergeCompilerRegions /
/// PartitionGraph):
///
///     primitive(union(only_valid(combine(union(c_1, ..., c_n), [all], max_depth), {1 exit, no taps, max_depth}),
///                     only_valid(max_coalesce([c_1, ..., c_n], {1 exit, no taps}), {1 exit, no taps})))
///
/// with c_i = composite(l_i, pattern(l_i, p_i)). Each match becomes a Composite group named by its
/// label; touching composites are joined into one partition for the backend (Compiler = target)
/// up to the depth bound, and max_coalesce adds the largest regions of matches taken in table
/// order, whatever their depth (pattern_table_maximal_rule): so, as with op_predicate_byoc_rule,
/// the cheapest partitioning is never worse than the greedy partitioner's over the same table.
template <class G>
PartitionRule<G> pattern_table_byoc_rule(PatternTable<G> table, std::size_t max_depth) {
  return detail::byoc_over(detail::composite_patterns(table), kernel_config(max_depth));
}

/// The regions a greedy pattern-table partitioner offloads (TVM's partition_for_<toolchain> with
/// MergeComposite): the matches taken in table order where they do not overlap one taken before,
/// coalesced into the largest regions of one exit without taps,
///
///     primitive(only_valid(max_coalesce([c_1, ..., c_n], {1 exit, no taps}), {1 exit, no taps}))
///
/// (the same candidates are in pattern_table_byoc_rule).
template <class G>
PartitionRule<G> pattern_table_maximal_rule(PatternTable<G> table) {
  return primitive(detail::maximal_regions(detail::composite_patterns(table), kernel_config(0)));
}

/// Library composites inside native kernels (TVM's "extern for TVM": a cuBLAS / CUTLASS call the
/// native code generator emits inside its own kernel): native fusion whose seeds are the operator
/// calls and the library matches,
///
///     primitive[native](only_valid(combine(union(op_kind(opaque), composite(l_i, pattern(l_i, p_i))...),
///         [FuseOps combiners], max_depth), {1 exit, no taps, max_depth}))
///
/// so a library call (e.g. Composite=cutlass.dense_bias, of kind anchor) fuses with elementwise
/// epilogues like any anchor. The composite seeds stay candidates on their own too.
template <class G>
PartitionRule<G> library_in_native_rule(PatternTable<G> table, std::size_t max_depth) {
  std::vector<PartitionRule<G>> seeds;
  seeds.push_back(op_kind<G>(OpKind::opaque));
  for (PartitionRule<G>& r : detail::composite_patterns(table)) seeds.push_back(std::move(r));
  return detail::native_fusion_over(union_of(std::move(seeds)), max_depth);
}

/// "Fuse exactly these patterns": each match of each labelled pattern is one partition, nothing
/// is combined:
///
///     primitive(only_valid(union(composite(l_i, pattern(l_i, p_i))...), {1 exit, no taps}))
///
/// (only_valid also drops matches that are not convex.)
template <class G>
PartitionRule<G> exact_patterns_rule(PatternTable<G> table) {
  return primitive(only_valid(union_of(detail::composite_patterns(table)), kernel_config(0)));
}

}  // namespace collage
