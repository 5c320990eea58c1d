#pragma once

/// \file
/// PartitionRule<G>: a composable producer of candidate partitions, as a value type over a small
/// virtual interface.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/rules/rule_context.hpp"

namespace collage {

/// Sorts candidates into the library's deterministic order and drops duplicates (same sub-graph
/// and nesting, same target); of duplicates the one with the smallest rule name stays.
inline void canonicalize(std::vector<Candidate>& candidates) {
  // Lists are often canonical already (a wrapper keeps its sub-rule's order): check in one pass.
  const auto out_of_order = [](const Candidate& a, const Candidate& b) { return !(a < b); };  // or equal
  if (std::adjacent_find(candidates.begin(), candidates.end(), out_of_order) == candidates.end()) return;
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
}

/// Joins lists of candidates into one canonical list (duplicates dropped as by canonicalize()).
/// The candidates are grouped by first inside node with one sort of integer pairs, and only each
/// node's group is sorted in full: on large lists, merging list after list would compare (and
/// chase the sub-graphs of) every candidate once per list.
inline std::vector<Candidate> merge_canonical(std::vector<std::vector<Candidate>> lists) {
  std::vector<std::pair<std::size_t, Candidate*>> by_first;  // (first inside node, candidate)
  for (std::vector<Candidate>& list : lists) {
    for (Candidate& c : list) by_first.emplace_back(c.sub_graph.first_inside(), &c);
  }
  // Stable, so that the group sort below sees each group in an order that does not depend on
  // where the candidates lie in memory (its result, the survivor of equal candidates included, is
  // then deterministic). The candidates themselves move once, into `out`.
  std::stable_sort(by_first.begin(), by_first.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Candidate> out;
  out.reserve(by_first.size());
  std::vector<Candidate*> group;
  for (std::size_t a = 0; a < by_first.size();) {
    std::size_t b = a;
    group.clear();
    for (; b < by_first.size() && by_first[b].first == by_first[a].first; ++b) group.push_back(by_first[b].second);
    std::sort(group.begin(), group.end(), [](const Candidate* x, const Candidate* y) { return *x < *y; });
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (k == 0 || !(*group[k] == out.back())) out.push_back(std::move(*group[k]));
    }
    a = b;
  }
  return out;
}

namespace detail {

/// What every rule implements. Implementations are immutable once built, so rules share them.
template <class G>
class RuleImpl {
 public:
  virtual ~RuleImpl() = default;
  /// Every candidate this rule proposes for `target` over `graph`, canonical (see canonicalize),
  /// within the budget of `ctx` (a rule that stops early says so through ctx.run->warn()). May
  /// leave out candidates deeper than ctx.max_depth, and those that no sub-graph valid under
  /// ctx.valid_under contains. A rule whose candidates are not unions of its sub-rule's (parts of
  /// them, or regions chosen among them) asks its sub-rule within ctx.for_parts().
  virtual std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                            const RuleContext& ctx) const = 0;
  /// The rule written out as a tree, e.g. "only_valid(combine(op_kind(anchor), [all], 3), ...)".
  virtual std::string describe() const = 0;
  /// The name stamped on the candidates this rule creates.
  virtual const std::string& name() const = 0;
};

}  // namespace detail

/// A rule that proposes candidate partitions (sub-graph + target + rule name). Rules compose: base
/// rules find nodes or matches, combinators wrap, join, filter and grow the candidates of their
/// sub-rules. Copying a rule is cheap (it shares the immutable implementation).
template <class G>
class PartitionRule {
 public:
  explicit PartitionRule(std::shared_ptr<const detail::RuleImpl<G>> impl) : impl_(std::move(impl)) {}

  /// Every candidate for `target` over `graph`: sorted by first inside index (then sub-graph,
  /// target, rule name), without duplicates. Under the default CandidateBudget, whose warnings are
  /// dropped: collect_candidates() (collage/partitioner.hpp) keeps them.
  std::vector<Candidate> all_candidates(const DataflowGraph<G>& graph, const Name& target) const {
    CandidateRun run;
    return impl_->candidates(graph, target, RuleContext{&run});
  }
  /// all_candidates() within `ctx` (its budget, warnings, depth bound and config).
  std::vector<Candidate> all_candidates(const DataflowGraph<G>& graph, const Name& target,
                                        const RuleContext& ctx) const {
    return impl_->candidates(graph, target, ctx);
  }
  std::string describe() const { return impl_->describe(); }
  const std::string& name() const { return impl_->name(); }

 private:
  std::shared_ptr<const detail::RuleImpl<G>> impl_;
};

/// Builds a rule from an implementation type and its constructor arguments.
template <class G, class Impl, class... Args>
PartitionRule<G> make_rule(Args&&... args) {
  return PartitionRule<G>(std::make_shared<const Impl>(std::forward<Args>(args)...));
}

}  // namespace collage
