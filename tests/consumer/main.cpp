// A consumer translation unit built with -fno-exceptions -fno-rtti. Returns 0 when everything works.
#include <collage/collage.hpp>
#include <collage/report.hpp>

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
    check(graph->ipdom(0) == 3, "DataflowGraph::ipdom");
    collage::SubGraph diamond(*graph, collage::IndexSet::full(4));
    check(diamond.is_valid(*graph, collage::SubGraphConfig{1, false, 0}), "SubGraph::is_valid");

    // The whole pipeline: two targets, a cost oracle, the exact search and a JSON report.
    using Graph = collage::DataflowGraph<AdjacencyGraph>;
    std::vector<collage::PartitionSpec<AdjacencyGraph>> specs = {
        {"fused", collage::combine(collage::op_kind<AdjacencyGraph>(collage::OpKind::opaque),
                                   {collage::Combiner<AdjacencyGraph>::all()}, {0})},
        {"single", collage::op_kind<AdjacencyGraph>(collage::OpKind::opaque)}};
    auto oracle = collage::make_oracle<AdjacencyGraph>(
        "size", [](const Graph&, const collage::Candidate& c, const collage::ExtractedFunction& view) {
          const double n = static_cast<double>(view.body.size());
          return collage::Cost::value(c.target == "fused" ? 1.0 + 0.5 * n : n);
        });
    auto result = collage::partition(*graph, specs, *oracle);
    check(result.ok(), "partition");
    if (result.ok()) {
      check(result->partitioning.parts.size() == 1, "one fused part");
      check(result->partitioning.total == collage::Cost::value(3.0), "total cost");
      auto json = collage::to_json(*graph, *result);
      check(json.ok() && json->find("\"total_cost\": 3") != std::string::npos, "JSON report");
      auto replayed = collage::replay(*graph, collage::save_trace(*result));
      check(replayed.ok() && replayed->total == result->partitioning.total, "save_trace / replay");
    }
    auto cyclic = collage::DataflowGraph<AdjacencyGraph>::build(AdjacencyGraph{{{1}, {0}}, {0}});
    check(!cyclic.ok(), "a cycle is an error value");
  }

  if (failures == 0) std::puts("collage consumer: OK");
  return failures == 0 ? 0 : 1;
}
