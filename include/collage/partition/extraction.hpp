#pragma once

/// \file
/// ExtractionView: what a rewrite (or a cost oracle) needs to turn a sub-graph into a function.

#include <cstddef>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/sub_graph.hpp"

namespace collage {

/// A sub-graph laid out as a function: parameters, body and results, all as post-DFS indexes of
/// the DataflowGraph.
struct ExtractionView {
  /// Outside nodes the function takes, in first-use order (inside nodes in topological order,
  /// each node's inputs in argument order). Inlinable nodes are never parameters.
  std::vector<std::size_t> params;
  /// Inside nodes in topological (post-DFS) order.
  std::vector<std::size_t> body;
  /// Exit nodes in evaluation order.
  std::vector<std::size_t> results;
  /// Inlinable outside nodes the body uses (to be copied in), in first-use order.
  std::vector<std::size_t> inlined;

  struct Group {
    AttrList attrs;
    std::vector<std::size_t> body;
  };
  /// Nested attribute groups, in the sub-graph's order; each body in topological order.
  std::vector<Group> groups;
};

/// Lays out `sub_graph` of `graph` as a function.
template <class G>
ExtractionView extract(const DataflowGraph<G>& graph, const SubGraph& sub_graph) {
  ExtractionView view;
  IndexSet seen(graph.size());
  for (std::size_t i : sub_graph.inside()) {
    view.body.push_back(i);
    for (std::size_t j : graph.inputs(i)) {
      if (sub_graph.inside().contains(j) || seen.contains(j)) continue;
      seen.add(j);
      (graph.is_inlinable(j) ? view.inlined : view.params).push_back(j);
    }
  }
  view.results = sub_graph.exit().to_vector();
  for (const NestedSubGraph& n : sub_graph.nested()) {
    view.groups.push_back(ExtractionView::Group{n.attrs, n.sub_graph.inside().to_vector()});
  }
  return view;
}

}  // namespace collage
