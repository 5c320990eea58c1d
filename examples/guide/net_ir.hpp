#pragma once

// The small IR the guide's programs share (all but ir_adapter.cpp, which adapts a pointer-handle
// IR): nodes in a vector, named ops, constants. Includes the programs' check().

#include <collage/collage.hpp>

#include "check.hpp"

#include <string>
#include <vector>

struct Node {
  std::string op;
  std::vector<int> args;
};
struct Net {
  std::vector<Node> nodes;
  std::vector<int> results;
};

template <>
struct collage::dataflow_traits<Net> {
  using node_handle = int;
  static const std::vector<int>& roots(const Net& g) { return g.results; }
  static const std::vector<int>& inputs(const Net& g, int n) { return g.nodes[static_cast<std::size_t>(n)].args; }
  static const std::string& op_name(const Net& g, int n) { return g.nodes[static_cast<std::size_t>(n)].op; }
  static collage::OpKind kind(const Net& g, int n) {
    const std::string& op = op_name(g, n);
    if (op == "conv2d" || op == "dense") return collage::OpKind::anchor;
    if (op == "add" || op == "multiply") return collage::OpKind::broadcast;
    if (op == "relu" || op == "tanh") return collage::OpKind::elemwise;
    return collage::OpKind::opaque;
  }
  static bool is_constant(const Net& g, int n) { return op_name(g, n) == "const"; }
  static bool needs_kernel(const Net& g, int n) { return op_name(g, n) != "input" && op_name(g, n) != "const"; }
};

using Graph = collage::DataflowGraph<Net>;

/// Two identical layers sharing their weights: x -> dense(., w) -> add(., b) -> relu -> dense(., w)
/// -> add(., b) -> relu.
inline Net two_dense_layers() {
  return Net{{{"input", {}},
              {"const", {}},
              {"dense", {0, 1}},
              {"const", {}},
              {"add", {2, 3}},
              {"relu", {4}},
              {"dense", {5, 1}},
              {"add", {6, 3}},
              {"relu", {7}}},
             {8}};
}
