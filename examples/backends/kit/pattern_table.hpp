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

/// How a library backend's rule joins its calls into partitions of several (see table_rule).
struct Joins {
  /// How deep a partition of several calls may be (0: none).
  std::size_t max_depth = 0;
  /// Single operators joined with no others, though kept in the largest regions (none when empty).
  CallCheck alone_only;
};

/// The rule of a library backend: each match of each entry of `table` that the entry's check
/// accepts and whose inner values only it reads is a call with a Composite group named by the
/// entry's label,
///
///     c_i = only_valid(composite(l_i, pattern(l_i, p_i, check_i)), {1 exit, no taps}),
///
/// and, with `single_operators`, each operator it accepts alone is a call too (TVM's
/// "target.<name>" operator predicates). With `joins.max_depth` 0 each call is one partition,
///
///     primitive(only_valid(union(c_i..., op_predicate(<name>.op, single_operators)), {1 exit, no taps}))
///
/// (collage::exact_patterns_rule with the checks). Otherwise, for a kernel that passes values
/// between its calls better than through plain tensors, touching calls are also joined into
/// partitions of several calls up to `joins.max_depth` deep, and the largest regions of calls are
/// partitions too, as collage's pattern-table BYOC rule joins composites:
///
///     primitive(union(<the calls above>,
///                     only_valid(combine(union(<the calls but joins.alone_only>), [all], max_depth),
///                                {1 exit, no taps, max_depth}),
///                     only_valid(max_coalesce([<the calls>], {1 exit, no taps}), {1 exit, no taps})))
inline collage::PartitionRule<Graph> table_rule(const LibraryTable& table, const std::string& name,
                                                const CallCheck& single_operators = {}, const Joins& joins = {}) {
  const collage::SubGraphConfig one_exit = collage::kernel_config(0);
  std::vector<collage::PartitionRule<Graph>> joinable;
  for (const LibraryPattern& entry : table) {
    collage::SubGraphPredicate<Graph> accepts;
    if (entry.check) {
      accepts = [label = entry.label, check = entry.check](const collage::DataflowGraph<Graph>& graph,
                                                           const collage::SubGraph& sub_graph) {
        return check(graph.ir(), call_of(graph, sub_graph, label));
      };
    }
    // A match one of whose inner values is read outside it is no call, joined with others or not
    // (library_calls), as TVM's pattern partitioner leaves such a match ungrouped.
    joinable.push_back(collage::only_valid(
        collage::composite<Graph>(entry.label, collage::pattern<Graph>(entry.label, entry.pattern, accepts)), one_exit));
  }
  std::vector<collage::PartitionRule<Graph>> all = joinable;
  if (single_operators) {
    // The operators single_operators accepts for which `also` holds, each alone.
    auto singles = [&](std::string rule, CallCheck also) {
      return collage::op_predicate<Graph>(
          std::move(rule), [single_operators, also](const collage::DataflowGraph<Graph>& graph, std::size_t i) {
            const LibraryCall call{"", {graph.handle(i)}};
            return graph.needs_kernel(i) && single_operators(graph.ir(), call) && (!also || also(graph.ir(), call));
          });
    };
    CallCheck joins_others;
    if (joins.alone_only) {
      joins_others = [alone_only = joins.alone_only](const Graph& g, const LibraryCall& call) {
        return !alone_only(g, call);
      };
      all.push_back(singles(name + ".op_alone", joins.alone_only));
    }
    joinable.push_back(singles(name + ".op", joins_others));
    all.push_back(joinable.back());
  }
  collage::PartitionRule<Graph> calls = collage::only_valid(collage::union_of(all), one_exit);
  if (joins.max_depth == 0) return collage::primitive(std::move(calls));
  collage::CombineLimits limits;
  limits.max_depth = joins.max_depth;
  collage::PartitionRule<Graph> joined =
      collage::combine(collage::union_of(std::move(joinable)), {collage::Combiner<Graph>::all()}, std::move(limits), "join");
  return collage::primitive(collage::union_of<Graph>(
      {std::move(calls), collage::only_valid(std::move(joined), collage::kernel_config(joins.max_depth)),
       collage::only_valid(collage::max_coalesce(std::move(all), one_exit), one_exit)}));
}

}  // namespace tc
