// Loading ONNX models: the example compiler's reader (protobuf parse, initializers to float32
// tensors, load-time folding, shape inference) on the model zoo's larger models, from a file on
// disk. Targets: a 50 MB model in under a second, a 500 MB one (VGG-19's classifier, from
// initializers or with its largest weight made by ConstantOfShape) in under two.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "models/model_zoo.hpp"
#include "onnx/model.hpp"
#include "onnx/reader.hpp"

namespace {

/// VGG-19's classifier (fc6 [4096, 25088], fc7 [4096, 4096], fc8 [1000, 4096]: 494 MB of weights)
/// over a [1, 25088] input. With `fc6_by_constant_of_shape`, fc6's weight is made at load time by
/// ConstantOfShape, as in published zoo files, so the file holds only fc7 and fc8.
std::string vgg19_classifier(bool fc6_by_constant_of_shape) {
  tc::OnnxModel m;
  m.opset = 9;
  m.inputs.push_back(tc::float_value_info("x", {1, 25088}));
  const auto weight = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    tc::OnnxTensor w;
    w.shape = {rows, cols};
    w.reals.assign(static_cast<std::size_t>(rows * cols), 0.001f);
    m.initializers.emplace_back(name, std::move(w));
  };
  if (fc6_by_constant_of_shape) {
    tc::OnnxTensor fill;
    fill.shape = {1};
    fill.reals = {0.001f};
    m.initializers.emplace_back("fc6_shape", tc::int64_vector({4096, 25088}));
    m.nodes.push_back({"ConstantOfShape", {"fc6_shape"}, {"fc6_w"}, {{"value", fill}}, "fc6_w_0", ""});
  } else {
    weight("fc6_w", 4096, 25088);
  }
  weight("fc7_w", 4096, 4096);
  weight("fc8_w", 1000, 4096);
  const std::vector<std::pair<std::string, std::string>> layers = {{"x", "fc6_w"}, {"fc6", "fc7_w"}, {"fc7", "fc8_w"}};
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const std::string out = k + 1 == layers.size() ? "y" : "fc" + std::to_string(k + 6);
    m.nodes.push_back({"Gemm", {layers[k].first, layers[k].second}, {out}, {{"transB", std::int64_t{1}}}, out, ""});
  }
  m.outputs.push_back(tc::float_value_info("y", {1, 1000}));
  collage::Result<std::string> bytes = tc::serialize(m);
  return bytes.ok() ? *bytes : std::string();
}

/// Writes model `name` (a zoo model or a VGG-19 classifier) to a temporary file once per process
/// and returns its path.
std::string model_file(const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tc_onnx_load_bench_" + name + ".onnx")).string();
  if (!std::filesystem::exists(path)) {
    std::string bytes;
    if (name.rfind("vgg19-classifier", 0) == 0) {
      bytes = vgg19_classifier(name == "vgg19-classifier-folded");
    } else if (collage::Result<std::string> zoo = tc::make_zoo_model(name); zoo.ok()) {
      bytes = std::move(zoo).value();
    }
    if (bytes.empty()) return {};
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
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
BENCHMARK_CAPTURE(BM_ReadOnnx, vgg19_classifier, std::string("vgg19-classifier"))->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_ReadOnnx, vgg19_classifier_folded, std::string("vgg19-classifier-folded"))->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
