// DataflowGraph construction (post-DFS indexing, consumer lists, annotations, post-dominators and
// their jump tables) at 1k, 10k and 100k nodes, and the queries the partitioner asks of it.
//
// Shapes: a chain; a "wide" random DAG (up to 3 inputs from any earlier node); a window-limited
// random DAG (up to 3 inputs from the 50 nodes before). The IR is built once, outside the timing.

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/convexity.hpp"
#include "collage/support/index_set.hpp"
#include "common/adjacency_ir.hpp"
#include "common/random_dag.hpp"

namespace {

using collage::DataflowGraph;
using collage::IndexSet;
using testing_ir::AdjacencyGraph;
using Graph = DataflowGraph<AdjacencyGraph>;

enum Shape : int { kChain = 0, kWide = 1, kWindowed = 2 };

AdjacencyGraph make_ir(Shape shape, std::size_t n) {
  std::mt19937_64 rng(7);
  switch (shape) {
    case kChain: return testing_ir::chain(n);
    case kWide: return testing_ir::random_dag(rng, n, 3, 0);
    case kWindowed: return testing_ir::random_dag(rng, n, 3, 50);
  }
  return {};
}

std::size_t edge_count(const AdjacencyGraph& ir) {
  std::size_t e = 0;
  for (const auto& in : ir.inputs) e += in.size();
  return e;
}

void BM_Build(benchmark::State& state, Shape shape) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const AdjacencyGraph ir = make_ir(shape, n);
  for (auto _ : state) {
    auto graph = Graph::build(ir);
    if (!graph.ok()) {
      state.SkipWithError("build failed");
      break;
    }
    benchmark::DoNotOptimize(graph.value().ipdom(0));
  }
  state.counters["nodes"] = static_cast<double>(n);
  state.counters["edges"] = static_cast<double>(edge_count(ir));
  state.counters["nodes_per_s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_BuildChain(benchmark::State& state) { BM_Build(state, kChain); }
void BM_BuildWide(benchmark::State& state) { BM_Build(state, kWide); }
void BM_BuildWindowed(benchmark::State& state) { BM_Build(state, kWindowed); }

BENCHMARK(BM_BuildChain)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BuildWide)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BuildWindowed)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

/// Small connected local subsets of `graph`: a random node plus up to `size - 1` nodes reached by a
/// short walk along its consumer and input edges (convex or not, as it happens).
std::vector<IndexSet> local_subsets(const Graph& graph, std::size_t count, std::size_t size) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, graph.size() - 1);
  std::vector<IndexSet> subsets;
  subsets.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    IndexSet s(graph.size());
    std::size_t v = pick(rng);
    s.add(v);
    for (std::size_t step = 0; step < 4 * size && s.count() < size; ++step) {
      const auto ins = graph.inputs(v);
      const auto outs = graph.outputs(v);
      const std::size_t degree = ins.size() + outs.size();
      if (degree == 0) break;
      const std::size_t e = std::uniform_int_distribution<std::size_t>(0, degree - 1)(rng);
      v = e < ins.size() ? ins[e] : outs[e - ins.size()];
      s.add(v);
    }
    subsets.push_back(std::move(s));
  }
  return subsets;
}

/// is_convex over 1,024 prepared local subsets of 8 nodes on a 100k-node graph; its cost follows
/// the index range each subset spans (small on the windowed graph, up to the whole graph on the
/// wide one).
void BM_IsConvex(benchmark::State& state, Shape shape) {
  constexpr std::size_t n = 100000;
  const AdjacencyGraph ir = make_ir(shape, n);
  auto built = Graph::build(ir);
  if (!built.ok()) {
    state.SkipWithError("build failed");
    return;
  }
  const Graph& graph = built.value();
  const std::vector<IndexSet> subsets = local_subsets(graph, 1024, 8);
  double span = 0;
  std::size_t convex = 0;
  for (const IndexSet& s : subsets) {
    span += static_cast<double>(s.last_inside() - s.first_inside() + 1);
    convex += collage::is_convex(graph, s) ? 1 : 0;
  }
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(collage::is_convex(graph, subsets[k]));
    k = (k + 1) % subsets.size();
  }
  state.counters["nodes"] = static_cast<double>(n);
  state.counters["mean_span"] = span / static_cast<double>(subsets.size());
  state.counters["convex_frac"] = static_cast<double>(convex) / static_cast<double>(subsets.size());
  state.counters["queries_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_IsConvexWindowed100k(benchmark::State& state) { BM_IsConvex(state, kWindowed); }
void BM_IsConvexWide100k(benchmark::State& state) { BM_IsConvex(state, kWide); }
void BM_IsConvexChain100k(benchmark::State& state) { BM_IsConvex(state, kChain); }

BENCHMARK(BM_IsConvexChain100k)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_IsConvexWindowed100k)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_IsConvexWide100k)->Unit(benchmark::kMicrosecond);

/// post_dominates and common_post_dominator on random pairs of a 100k-node windowed graph.
void BM_PostDominatorQueries100k(benchmark::State& state) {
  constexpr std::size_t n = 100000;
  const AdjacencyGraph ir = make_ir(kWindowed, n);
  auto built = Graph::build(ir);
  if (!built.ok()) {
    state.SkipWithError("build failed");
    return;
  }
  const Graph& graph = built.value();
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<std::size_t> nodes(4096);
  for (std::size_t& v : nodes) v = pick(rng);
  std::size_t k = 0;
  for (auto _ : state) {
    const std::size_t a = nodes[k];
    const std::size_t b = nodes[(k + 1) % nodes.size()];
    benchmark::DoNotOptimize(graph.common_post_dominator(a, b));
    benchmark::DoNotOptimize(graph.post_dominates(a, b));
    k = (k + 1) % nodes.size();
  }
  state.counters["nodes"] = static_cast<double>(n);
  state.counters["pairs_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PostDominatorQueries100k);

}  // namespace
