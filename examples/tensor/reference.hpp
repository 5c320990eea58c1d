#pragma once

/// \file
/// The reference interpreter: runs a graph with plain loops, one function per operator family,
/// accumulating in double. Every backend and the executor are checked against it, so it is
/// written to be obviously correct rather than fast.

#include <vector>

#include <collage/support/result.hpp>

#include "tensor/graph.hpp"
#include "tensor/tensor.hpp"

namespace tc {

/// The values of graph.outputs() for `inputs` given in graph.inputs() order. Each input must have
/// its input node's shape. The graph need not have been through infer_shapes(): a copy is
/// canonicalised first. Errors (code invalid_argument) name the input or node at fault.
collage::Result<std::vector<Tensor>> evaluate(const Graph& graph, const std::vector<Tensor>& inputs);

/// Like evaluate(), but the value of every node (index = node index), for debugging and for
/// comparing intermediate results.
collage::Result<std::vector<Tensor>> evaluate_all(const Graph& graph, const std::vector<Tensor>& inputs);

/// The value of `node`'s operator and attributes applied to `args` (its operands in argument
/// order; node.inputs is not read). The shapes come from `args`; node.shape is read only where it
/// is the operator's target (a canonical Reshape or Slice). For folding constants and for tests of
/// one operator. Input and constant nodes are not operators: they return an error.
collage::Result<Tensor> evaluate_node(const Node& node, const std::vector<const Tensor*>& args);

}  // namespace tc
