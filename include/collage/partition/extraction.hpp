#pragma once

/// \file
/// ExtractedFunction: a sub-graph laid out as a function, what a rewrite (or a cost oracle) needs
/// to turn it into code; and the one layout of a function's operands, shared with the structural
/// key of the cost cache.

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/support/index_set.hpp"

namespace collage {

/// A sub-graph laid out as a function: parameters, body and results, all as post-DFS indexes of
/// the DataflowGraph, and its nested attribute groups at every depth. Owns its lists.
struct ExtractedFunction {
  /// Outside nodes the function takes, in first-use order (inside nodes in topological order,
  /// each node's inputs in argument order). Inlinable nodes are never parameters.
  std::vector<std::size_t> params;
  /// Inside nodes in topological (post-DFS) order.
  std::vector<std::size_t> body;
  /// Exit nodes in evaluation order.
  std::vector<std::size_t> results;
  /// Inlinable outside nodes the body uses (to be copied in), in first-use order.
  std::vector<std::size_t> inlined;

  /// A nested attribute group (a composite, a primitive and its compiler) with its own nested
  /// groups, e.g. the Composite group inside a Primitive one.
  struct Group {
    AttrList attrs;
    /// The group's inside nodes in topological order.
    std::vector<std::size_t> body;
    /// The groups nested in this one, in the sub-graph's order.
    std::vector<Group> groups;
  };
  /// The sub-graph's nested attribute groups, in its order.
  std::vector<Group> groups;
};

/// The former name of ExtractedFunction (it owns its data; it is no view). Kept for one release
/// so code written against it keeps compiling; use ExtractedFunction.
using ExtractionView = ExtractedFunction;

namespace detail {

/// Marks that a caller does not want the inlined operands of lay_out_operands().
struct NoInlined {};

/// Appends nodes to a list once each, in the order first added: repeats are found by a linear
/// scan while the list is short, through an IndexSet over `universe` beyond.
template <class List>
class FirstUseList {
 public:
  FirstUseList(List& list, std::size_t universe) : list_(list), universe_(universe) {}

  void add(std::size_t node) {
    if (list_.size() < kLinear) {
      if (std::find(list_.begin(), list_.end(), node) != list_.end()) return;
    } else {
      if (seen_.universe() == 0) {
        seen_ = IndexSet(universe_);
        for (std::size_t p : list_) seen_.add(p);
      }
      if (seen_.contains(node)) return;
      seen_.add(node);
    }
    list_.push_back(node);
  }

 private:
  static constexpr std::size_t kLinear = 16;
  List& list_;
  std::size_t universe_;
  IndexSet seen_;
};

/// The operands of the function over `inside` (whose members `body` lists in ascending order):
/// appends to `params` the outside, non-inlinable inputs and to `*inlined` the inlinable ones,
/// each once, in first-use order (body nodes in order, each node's inputs in argument order).
/// `Params` and `Inlined` are vector-like (push_back, size, begin, end); pass a NoInlined* to
/// skip the inlined operands. The function layout of extract() and of structural_key().
template <class G, class Body, class Params, class Inlined>
void lay_out_operands(const DataflowGraph<G>& graph, const IndexSet& inside, const Body& body, Params& params,
                      Inlined* inlined) {
  FirstUseList<Params> param_list(params, graph.size());
  if constexpr (std::is_same_v<Inlined, NoInlined>) {
    (void)inlined;
    for (std::size_t i : body) {
      for (std::size_t j : graph.inputs(i)) {
        if (!graph.is_inlinable(j) && !inside.contains(j)) param_list.add(j);
      }
    }
  } else {
    FirstUseList<Inlined> inlined_list(*inlined, graph.size());
    for (std::size_t i : body) {
      for (std::size_t j : graph.inputs(i)) {
        if (inside.contains(j)) continue;
        if (graph.is_inlinable(j)) {
          inlined_list.add(j);
        } else {
          param_list.add(j);
        }
      }
    }
  }
}

/// The groups of `nested`, each with its own nested groups, appended to `out`.
inline void extract_groups(const NestedGroups& nested, std::vector<ExtractedFunction::Group>& out) {
  out.reserve(nested.size());
  for (const NestedSubGraph& n : nested) {
    ExtractedFunction::Group group{n.attrs, n.sub_graph.inside().to_vector(), {}};
    extract_groups(n.sub_graph.nested(), group.groups);
    out.push_back(std::move(group));
  }
}

}  // namespace detail

/// Lays out `sub_graph` of `graph` as a function: body = the inside nodes ascending, results = the
/// exit nodes ascending, parameters and inlined nodes by detail::lay_out_operands(), and the
/// nested groups at every depth.
template <class G>
ExtractedFunction extract(const DataflowGraph<G>& graph, const SubGraph& sub_graph) {
  ExtractedFunction function;
  function.body = sub_graph.inside().to_vector();
  detail::lay_out_operands(graph, sub_graph.inside(), function.body, function.params, &function.inlined);
  function.results = sub_graph.exit().to_vector();
  detail::extract_groups(sub_graph.nested(), function.groups);
  return function;
}

}  // namespace collage
