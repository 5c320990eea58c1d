#pragma once

/// \file
/// The rule of a library backend that runs one library call per partition: a pattern table in
/// which every match is also checked by the backend's planner (TVM's per-pattern check
/// functions), so that the rule claims only what the backend compiles; and the call of a Function
/// such a rule proposed.

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <collage/rules/partition_spec.hpp>

#include "tensor/function.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// Whether a backend can compile the call made of `nodes` of `graph` (operator nodes, topological).
using CallCheck = std::function<bool(const Graph& graph, const std::vector<int>& nodes)>;

/// The operator nodes of `sub_graph` (model node ids, ascending: topological).
inline std::vector<int> call_nodes(const collage::DataflowGraph<Graph>& graph, const collage::SubGraph& sub_graph) {
  std::vector<int> nodes;
  for (std::size_t i : sub_graph.inside()) {
    if (graph.needs_kernel(i)) nodes.push_back(graph.handle(i));
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

/// The operator nodes of `function` as one call (topological), or an error naming `who` when it
/// has none or returns anything but the value of its last one.
inline collage::Result<std::vector<int>> function_call(const Function& function, const std::string& who) {
  std::vector<int> nodes = function.body();
  const std::vector<int>& outputs = function.graph.outputs();
  if (nodes.empty() || outputs.size() != 1 || outputs.front() != nodes.back()) {
    return collage::Error{collage::ErrorCode::invalid_argument,
                          who + ": a partition must be one call returning the value of its last operator"};
  }
  return nodes;
}

/// Each match of each entry of `table` that `check` accepts, as one partition with a Composite
/// group named by the entry's label:
///
///     primitive(only_valid(union(composite(l_i, pattern(l_i, p_i, check))...), {1 exit, no taps}))
///
/// (collage::exact_patterns_rule with the check).
inline collage::PartitionRule<Graph> checked_patterns_rule(const collage::PatternTable<Graph>& table, CallCheck check) {
  std::vector<collage::PartitionRule<Graph>> rules;
  collage::SubGraphPredicate<Graph> accepts = [check = std::move(check)](const collage::DataflowGraph<Graph>& graph,
                                                                         const collage::SubGraph& sub_graph) {
    return check(graph.ir(), call_nodes(graph, sub_graph));
  };
  for (const auto& [label, p] : table) {
    rules.push_back(collage::composite<Graph>(label, collage::pattern<Graph>(label, p, accepts)));
  }
  return collage::primitive(collage::only_valid(collage::union_of(std::move(rules)), collage::kernel_config(0)));
}

/// `op(a, b) | op(b, a)`.
inline collage::Pattern<Graph> either_order(const std::string& op, const collage::Pattern<Graph>& a,
                                            const collage::Pattern<Graph>& b) {
  using P = collage::Pattern<Graph>;
  return P::alt({P::op(op, {a, b}), P::op(op, {b, a})});
}

}  // namespace tc
