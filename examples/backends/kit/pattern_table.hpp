#pragma once

/// \file
/// The pattern table of a library backend, as in TVM's BYOC pattern tables: labelled
/// collage::Patterns, each with an optional check of its matches (TVM's per-entry check function,
/// here the backend's planner), and the collage rule that makes each accepted match one
/// partition.

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <collage/rules/partition_spec.hpp>

#include "backends/kit/library_call.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// Whether a backend can compile `call` of `graph` (a match of a table entry under its label, or
/// one operator under "").
using CallCheck = std::function<bool(const Graph& graph, const LibraryCall& call)>;

/// One entry of a pattern table: a collage::PatternTable entry with the check its matches must
/// pass (none: every match is accepted).
struct LibraryPattern {
  std::string label;
  collage::Pattern<Graph> pattern;
  CallCheck check;
};

/// A library backend's pattern table, in the order its rule lists the entries.
using LibraryTable = std::vector<LibraryPattern>;

/// The rule of a library backend: each match of each entry of `table` that the entry's check
/// accepts is a call with a Composite group named by the entry's label, and, with
/// `single_operators`, each operator it accepts alone is a call too (TVM's "target.<name>"
/// operator predicates). With `max_depth` 0 each call is one partition,
///
///     primitive(only_valid(union(composite(l_i, pattern(l_i, p_i, check_i))...,
///                                op_predicate(<name>.op, single_operators)), {1 exit, no taps}))
///
/// (collage::exact_patterns_rule with the checks); otherwise, besides those, touching calls are
/// joined into partitions of several calls up to `max_depth` deep, and the largest regions of calls
/// are partitions too (collage::byoc_rule over the same seeds), for a kernel that passes values
/// between its calls better than through plain tensors.
inline collage::PartitionRule<Graph> table_rule(const LibraryTable& table, const std::string& name,
                                                const CallCheck& single_operators = {}, std::size_t max_depth = 0) {
  std::vector<collage::PartitionRule<Graph>> rules;
  for (const LibraryPattern& entry : table) {
    collage::SubGraphPredicate<Graph> accepts;
    if (entry.check) {
      accepts = [label = entry.label, check = entry.check](const collage::DataflowGraph<Graph>& graph,
                                                           const collage::SubGraph& sub_graph) {
        return check(graph.ir(), call_of(graph, sub_graph, label));
      };
    }
    rules.push_back(collage::composite<Graph>(entry.label, collage::pattern<Graph>(entry.label, entry.pattern, accepts)));
  }
  if (single_operators) {
    rules.push_back(collage::op_predicate<Graph>(
        name + ".op", [single_operators](const collage::DataflowGraph<Graph>& graph, std::size_t i) {
          return graph.needs_kernel(i) && single_operators(graph.ir(), LibraryCall{"", {graph.handle(i)}});
        }));
  }
  collage::PartitionRule<Graph> calls =
      collage::primitive(collage::only_valid(collage::union_of(rules), collage::kernel_config(0)));
  if (max_depth == 0) return calls;
  return collage::union_of<Graph>({std::move(calls), collage::byoc_rule(std::move(rules), collage::kernel_config(max_depth))});
}

}  // namespace tc
