// A consumer translation unit built with -fno-exceptions -fno-rtti. Returns 0 when everything works.
#include <collage/collage.hpp>

#include <cstdio>
#include <vector>

namespace {

/// A bare adjacency-list IR: node i's inputs are inputs[i]; the results are roots.
struct AdjacencyGraph {
  std::vector<std::vector<int>> inputs;
  std::vector<int> roots;
};

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer check failed: %s\n", what);
    ++failures;
  }
}

}  // namespace

template <>
struct collage::dataflow_traits<AdjacencyGraph> {
  using node_handle = int;
  static const std::vector<int>& roots(const AdjacencyGraph& g) { return g.roots; }
  static const std::vector<int>& inputs(const AdjacencyGraph& g, int n) {
    return g.inputs[static_cast<std::size_t>(n)];
  }
};

int main() {
  collage::IndexSet s(100);
  s.add(3);
  s.add(4);
  s.add(5);
  s.add(70);
  check(s.count() == 4, "IndexSet::count");
  check(s.to_string() == "{3..5,70}", "IndexSet::to_string");

  // 0 -> 1 -> 3, 0 -> 2 -> 3: a diamond with result 3.
  AdjacencyGraph ir{{{}, {0}, {0}, {1, 2}}, {3}};
  auto graph = collage::DataflowGraph<AdjacencyGraph>::build(ir);
  check(graph.ok(), "DataflowGraph::build");
  if (graph.ok()) {
    check(graph->size() == 4, "DataflowGraph::size");
    // TODO(core author): extend with SubGraph / partition checks as those layers settle.
  }

  if (failures == 0) std::puts("collage consumer: OK");
  return failures == 0 ? 0 : 1;
}
