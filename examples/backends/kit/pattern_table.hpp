#pragma once

/// \file
/// Pattern tables of library-style backends, as in TVM's BYOC pattern tables: labelled patterns in
/// the library's text syntax, each checked by the backend's own planner (TVM's per-entry check
/// function), turned into a collage rule that makes each accepted match one partition.

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <collage/rules/partition_spec.hpp>

#include "backends/kit/library_calls.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// A labelled pattern in the text syntax of collage::parse_pattern ("Relu(Conv(*, const))").
struct LabelledPattern {
  std::string label;
  std::string text;
};

/// Whether a backend can compile `call` of `graph` (a match of a table entry, or one operator).
using CallCheck = std::function<bool(const Graph& graph, const LibraryCall& call)>;

/// The call a sub-graph of `graph` would be: its operator nodes (model ids, topological) under
/// `label`.
inline LibraryCall call_of(const collage::DataflowGraph<Graph>& graph, const collage::SubGraph& sub_graph,
                           std::string label) {
  LibraryCall call{std::move(label), {}};
  for (std::size_t i : sub_graph.inside()) {
    if (graph.needs_kernel(i)) call.nodes.push_back(graph.handle(i));
  }
  std::sort(call.nodes.begin(), call.nodes.end());
  return call;
}

/// composite(label, pattern(label, text, accepted by `check`)) for each entry of `table`, or the
/// parse error of the first text that does not parse.
inline collage::Result<std::vector<collage::PartitionRule<Graph>>> checked_composites(
    const std::vector<LabelledPattern>& table, const CallCheck& check) {
  std::vector<collage::PartitionRule<Graph>> rules;
  for (const LabelledPattern& entry : table) {
    collage::SubGraphPredicate<Graph> accepts = [label = entry.label, check](const collage::DataflowGraph<Graph>& graph,
                                                                             const collage::SubGraph& sub_graph) {
      return check(graph.ir(), call_of(graph, sub_graph, label));
    };
    collage::Result<collage::PartitionRule<Graph>> rule =
        collage::pattern<Graph>(entry.label, entry.text, std::move(accepts));
    if (!rule.ok()) return rule.error();
    rules.push_back(collage::composite<Graph>(entry.label, std::move(rule).value()));
  }
  return rules;
}

/// A candidate per operator that `check` accepts as a call of its own (TVM's "target.<name>"
/// operator predicates).
inline collage::PartitionRule<Graph> checked_operators(std::string name, const CallCheck& check) {
  return collage::op_predicate<Graph>(std::move(name), [check](const collage::DataflowGraph<Graph>& graph, std::size_t i) {
    return graph.needs_kernel(i) && check(graph.ir(), LibraryCall{"", {graph.handle(i)}});
  });
}

/// Each candidate of `rules` one partition for the backend: primitive(only_valid(union(rules...),
/// {1 exit, no taps})), as collage::exact_patterns_rule builds for an unchecked table.
inline collage::PartitionRule<Graph> one_call_per_partition(std::vector<collage::PartitionRule<Graph>> rules) {
  return collage::primitive(collage::only_valid(collage::union_of(std::move(rules)), collage::kernel_config(0)));
}

/// Commutative alternatives: "op(a, b) | op(b, a)".
inline std::string either_order(const std::string& op, const std::string& a, const std::string& b) {
  return op + "(" + a + ", " + b + ") | " + op + "(" + b + ", " + a + ")";
}

/// GELU in the erf forms exporters emit around `x`: (x * (erf(x / c) + 1)) * 0.5 and
/// (x * 0.5) * (erf(x / c) + 1), operands of Add and Mul in either order. The pattern cannot say
/// that every `x` is the same node; the backend's check (read_anchor_chain) does.
inline std::string gelu_erf_pattern(const std::string& x) {
  const std::string erf_term = either_order("Add", "Erf(Div(" + x + ", const) | Mul(" + x + ", const))", "const");
  const std::string form_a = either_order("Mul", either_order("Mul", x, erf_term), "const");
  const std::string form_b = either_order("Mul", either_order("Mul", x, "const"), erf_term);
  return form_a + " | " + form_b;
}

}  // namespace tc
