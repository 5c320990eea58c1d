// Reading collage-graph/1 files: parsing the JSON text and indexing the nodes (read_graph), then
// building the DataflowGraph (build_graph), on layered transformer-like graphs of 1k to 138k nodes.

#include <benchmark/benchmark.h>

#include <string>

#include "graph_gen.hpp"
#include "json_graph.hpp"

namespace {

using collage::cli::JsonGraph;

void BM_ReadGraph(benchmark::State& state) {
  const std::string text = collage_cli_test::layered_graph_json(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    collage::Result<JsonGraph> g = collage::cli::read_graph(text, "layered.json");
    if (!g.ok()) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(g->nodes.data());
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ReadGraph)->Arg(1000)->Arg(10000)->Arg(138000)->Unit(benchmark::kMillisecond);

void BM_ReadAndBuildGraph(benchmark::State& state) {
  const std::string text = collage_cli_test::layered_graph_json(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    collage::Result<JsonGraph> g = collage::cli::read_graph(text, "layered.json");
    if (!g.ok()) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    collage::Result<collage::DataflowGraph<JsonGraph>> built = collage::cli::build_graph(*g);
    if (!built.ok()) {
      state.SkipWithError(built.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(built->size());
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_ReadAndBuildGraph)->Arg(138000)->Unit(benchmark::kMillisecond);

}  // namespace
