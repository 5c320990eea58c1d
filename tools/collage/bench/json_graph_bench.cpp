// Reading collage-graph/1 files: parsing the JSON text and indexing the nodes (read_graph), and
// optionally building the DataflowGraph too (build_graph), on layered transformer-like graphs of
// 1k to 138k nodes. Arguments: {nodes, build}.

#include <benchmark/benchmark.h>

#include <string>

#include "graph_gen.hpp"
#include "graph_reader.hpp"
#include "json_graph.hpp"

namespace {

using collage::cli::JsonGraph;

void BM_ReadGraph(benchmark::State& state) {
  const std::string text = collage_cli_test::layered_graph_json(static_cast<std::size_t>(state.range(0)));
  const bool build = state.range(1) != 0;
  for (auto _ : state) {
    collage::Result<JsonGraph> g = collage::cli::read_graph(text, "layered.json");
    if (!g.ok()) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(g->nodes.data());
    if (!build) continue;
    collage::Result<collage::DataflowGraph<JsonGraph>> built = collage::cli::build_graph(*g);
    if (!built.ok()) {
      state.SkipWithError(built.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(built->size());
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}
BENCHMARK(BM_ReadGraph)->Args({1000, 0})->Args({10000, 0})->Args({138000, 0})->Args({138000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
