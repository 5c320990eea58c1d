#pragma once

/// \file
/// Function: one partition of a model laid out as a graph of its own, the unit a backend
/// compiles. Built from the library's extraction of a collage sub-graph.

#include <string>
#include <utility>
#include <vector>

#include <collage/graph/dataflow_graph.hpp>
#include <collage/partition/sub_graph.hpp>
#include <collage/support/result.hpp>

#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// A nested attribute group of a partition (a composite such as "onednn.conv_bias_relu"), with
/// its nodes as indexes into Function::graph, topological, and the groups nested inside it.
struct FunctionGroup {
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<int> nodes;
  std::vector<FunctionGroup> nested;

  /// The value of attribute `key`, or "".
  std::string attr(const std::string& key) const;
};

/// A partition as a standalone graph. Its Input nodes are the runtime parameters (activations from
/// other partitions or the model's inputs), in the extraction's parameter order; constants of the
/// model are bound into it (shared, not copied), so backends can prepare weights at compile time;
/// its outputs are the partition's results in evaluation order. Shapes and attributes are the
/// model's (already inferred).
struct Function {
  Graph graph;
  /// The model node behind each of graph.inputs(), in order.
  std::vector<int> params;
  /// The model node behind each of graph.outputs(), in order.
  std::vector<int> results;
  /// Nested groups, outermost first.
  std::vector<FunctionGroup> groups;

  /// The body: operator nodes of `graph` (not inputs or constants), in topological order.
  std::vector<int> body() const;
};

/// Lays out `sub_graph` of `model` (indexed by `dataflow`) as a Function.
Function extract_function(const collage::DataflowGraph<Graph>& dataflow, const collage::SubGraph& sub_graph);

/// A Function of a whole model: every operator inside, the model's inputs as parameters and its
/// outputs as results (for running a model on one kernel, as the reference does).
Function whole_model_function(const Graph& model);

}  // namespace tc
