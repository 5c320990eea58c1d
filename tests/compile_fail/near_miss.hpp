// The IR of the near-miss compile-failure tests: each test specialises collage::dataflow_traits<near_miss::Ir> with the
// required members (NEAR_MISS_REQUIRED) and one near miss, and builds a DataflowGraph over it.
#pragma once

#include <collage/graph/dataflow_graph.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace near_miss {

struct Ir {
  std::vector<int> results;
  std::vector<std::vector<int>> args;
};

/// Builds a DataflowGraph over a G, instantiating every check of its traits.
template <class G>
int build() {
  G g;
  return collage::DataflowGraph<G>::build(g).ok() ? 0 : 1;
}

}  // namespace near_miss

#define NEAR_MISS_REQUIRED                                                                               \
  using node_handle = int;                                                                               \
  static const std::vector<int>& roots(const near_miss::Ir& g) { return g.results; }                    \
  static const std::vector<int>& inputs(const near_miss::Ir& g, int n) {                                \
    return g.args[static_cast<std::size_t>(n)];                                                          \
  }
