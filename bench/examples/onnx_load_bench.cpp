// Loading ONNX models: the example compiler's reader (protobuf parse, initializers to float32
// tensors, load-time folding, shape inference) on the model zoo's larger models, from a file on
// disk. The target: a 50 MB model in under a second.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/model_zoo.hpp"
#include "onnx/reader.hpp"

namespace {

/// Writes the zoo model `name` to a temporary file once per process and returns its path.
std::string model_file(const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tc_onnx_load_bench_" + name + ".onnx")).string();
  if (!std::filesystem::exists(path)) {
    collage::Result<std::string> bytes = tc::make_zoo_model(name);
    if (!bytes.ok()) return {};
    std::ofstream(path, std::ios::binary).write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  }
  return path;
}

void BM_ReadOnnx(benchmark::State& state, const std::string& name) {
  const std::string path = model_file(name);
  if (path.empty()) {
    state.SkipWithError(("cannot make the zoo model " + name).c_str());
    return;
  }
  for (auto _ : state) {
    collage::Result<tc::Graph> g = tc::read_onnx(path);
    if (!g.ok()) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(g->size());
  }
  state.counters["megabytes"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
}

BENCHMARK_CAPTURE(BM_ReadOnnx, resnet18, std::string("resnet18"))->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_ReadOnnx, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_ReadOnnx, bert_base, std::string("bert-base"))->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
