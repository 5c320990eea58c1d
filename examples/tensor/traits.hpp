#pragma once

/// \file
/// The tensor IR as a collage dataflow graph: collage::dataflow_traits<tc::Graph>.

#include <string>

#include <collage/graph/dataflow_traits.hpp>

#include "tensor/graph.hpp"

namespace tc {

/// What makes two nodes interchangeable for costing: operator, canonical attributes, operand
/// shapes and output shape ("Conv{group=1,...}([1,3,224,224],[64,3,7,7])->[1,64,112,112]");
/// a scalar constant adds its value, which the body computes with.
std::string signature(const Graph& graph, int n);

}  // namespace tc

/// Nodes are indexes into Graph::nodes(); graph inputs and constants need no kernel, scalar
/// constants are copied into the partitions that use them.
template <>
struct collage::dataflow_traits<tc::Graph> {
  using node_handle = int;
  static const std::vector<int>& roots(const tc::Graph& g) { return g.outputs(); }
  static const std::vector<int>& inputs(const tc::Graph& g, int n) { return g.node(n).inputs; }
  static collage::OpKind kind(const tc::Graph& g, int n) { return tc::info(g.node(n).op).kind; }
  static std::string_view op_name(const tc::Graph& g, int n) { return tc::op_name(g.node(n).op); }
  static const std::string& label(const tc::Graph& g, int n) { return g.node(n).name; }
  static bool is_constant(const tc::Graph& g, int n) { return g.node(n).op == tc::Op::constant; }
  static bool is_inlinable(const tc::Graph& g, int n) {
    return g.node(n).op == tc::Op::constant && tc::numel(g.node(n).shape) == 1;
  }
  static bool needs_kernel(const tc::Graph& g, int n) {
    return g.node(n).op != tc::Op::input && g.node(n).op != tc::Op::constant;
  }
  static std::string signature(const tc::Graph& g, int n) { return tc::signature(g, n); }
};
