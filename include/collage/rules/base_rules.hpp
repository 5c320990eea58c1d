#pragma once

/// \file
/// Base partition rules: candidates per node by predicate, by op kind, and host singletons.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "collage/rules/partition_rule.hpp"

namespace collage {

/// A predicate on one node of a graph (the node's post-DFS index).
template <class G>
using NodePredicate = std::function<bool(const DataflowGraph<G>&, std::size_t)>;

namespace detail {

/// Stamps a candidate for `inside` over `graph`.
template <class G>
Candidate make_candidate(const DataflowGraph<G>& graph, IndexSet inside, const Name& target,
                         const Name& rule_name) {
  return Candidate{SubGraph(graph, std::move(inside)), target, rule_name};
}

template <class G>
class OpPredicateRule final : public RuleImpl<G> {
 public:
  OpPredicateRule(std::string name, NodePredicate<G> predicate, bool pull_constants)
      : name_(std::move(name)), predicate_(std::move(predicate)), pull_constants_(pull_constants) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext&) const override {
    std::vector<Candidate> result;
    for (std::size_t i = 0; i < graph.size(); ++i) {
      if (!predicate_(graph, i)) continue;
      IndexSet inside(graph.size(), {i});
      if (pull_constants_) {
        for (std::size_t j : graph.inputs(i)) {
          if (graph.is_constant(j)) inside.add(j);
        }
      }
      result.push_back(make_candidate(graph, std::move(inside), target, name_));
    }
    canonicalize(result);
    return result;
  }
  std::string describe() const override {
    return "op_predicate(" + name_ + (pull_constants_ ? ", with constants)" : ")");
  }
  const std::string& name() const override { return name_; }

 private:
  Name name_;
  NodePredicate<G> predicate_;
  bool pull_constants_;
};

template <class G>
class OpKindRule final : public RuleImpl<G> {
 public:
  explicit OpKindRule(OpKind max_kind) : max_kind_(max_kind), name_("op_kind") {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext&) const override {
    auto seeds = [&](std::size_t i) { return graph.needs_kernel(i) && graph.kind(i) <= max_kind_; };
    std::size_t count = 0;
    for (std::size_t i = 0; i < graph.size(); ++i) count += seeds(i) ? 1 : 0;
    std::vector<Candidate> result;
    result.reserve(count);
    for (std::size_t i = 0; i < graph.size(); ++i) {
      if (seeds(i)) result.push_back(make_candidate(graph, IndexSet(graph.size(), {i}), target, name_));
    }
    return result;  // ascending singletons: already canonical
  }
  std::string describe() const override { return "op_kind(" + std::string(to_string(max_kind_)) + ")"; }
  const std::string& name() const override { return name_; }

 private:
  OpKind max_kind_;
  Name name_;
};

template <class G>
class HostRule final : public RuleImpl<G> {
 public:
  HostRule() : name_("host") {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext&) const override {
    std::vector<Candidate> result;
    for (std::size_t i = 0; i < graph.size(); ++i) {
      if (graph.needs_kernel(i)) continue;
      Candidate c = make_candidate(graph, IndexSet(graph.size(), {i}), target, name_);
      c.cost = Cost::zero();
      result.push_back(std::move(c));
    }
    return result;
  }
  std::string describe() const override { return "host()"; }
  const std::string& name() const override { return name_; }

 private:
  Name name_;
};

}  // namespace detail

/// A candidate per node that satisfies `predicate` (a backend's "can I run this operator?"). With `pull_constants`, each candidate also holds the node's tensor-constant
/// arguments.
template <class G>
PartitionRule<G> op_predicate(std::string name, NodePredicate<G> predicate, bool pull_constants = false) {
  return make_rule<G, detail::OpPredicateRule<G>>(std::move(name), std::move(predicate), pull_constants);
}

/// A candidate per operator node (a node that needs a kernel) whose kind is at most `max_kind`:
/// the seeds of native fusion.
template <class G>
PartitionRule<G> op_kind(OpKind max_kind) {
  return make_rule<G, detail::OpKindRule<G>>(max_kind);
}

/// A zero-cost singleton per node that needs no kernel (inputs, constants, tuples, projections,
/// op references), so the search may leave such nodes to the host.
template <class G>
PartitionRule<G> host() {
  return make_rule<G, detail::HostRule<G>>();
}

}  // namespace collage
