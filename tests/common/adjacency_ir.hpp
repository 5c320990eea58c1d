#pragma once

// A bare adjacency-list IR: node i's inputs are inputs[i]; results are `roots`. Nothing but the
// required traits members, so it exercises every default.

#include <cstddef>
#include <vector>

#include "collage/graph/dataflow_traits.hpp"

namespace testing_ir {

struct AdjacencyGraph {
  std::vector<std::vector<int>> inputs;
  std::vector<int> roots;

  int add(std::vector<int> in = {}) {
    inputs.push_back(std::move(in));
    return static_cast<int>(inputs.size()) - 1;
  }
};

}  // namespace testing_ir

template <>
struct collage::dataflow_traits<testing_ir::AdjacencyGraph> {
  using node_handle = int;
  static const std::vector<int>& roots(const testing_ir::AdjacencyGraph& g) { return g.roots; }
  static const std::vector<int>& inputs(const testing_ir::AdjacencyGraph& g, int n) {
    return g.inputs[static_cast<std::size_t>(n)];
  }
};
