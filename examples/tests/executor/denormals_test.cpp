#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "backends/native/native_backend.hpp"
#include "backends/registry.hpp"
#include "driver/configurations.hpp"
#include "executor/executable.hpp"
#include "runtime/cpu_device.hpp"
#include "runtime/cpu_state.hpp"
#include "tensor/compare.hpp"
#include "tensor/reference.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc {
namespace {

/// A backend whose kernels copy their input and note whether they ran with denormals flushed.
class ProbeBackend final : public Backend {
 public:
  explicit ProbeBackend(std::vector<bool>& seen) : Backend("probe", DeviceKind::cpu), seen_(seen) {}
  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name(), 1); }

 private:
  class Probe final : public Kernel {
   public:
    Probe(std::vector<bool>& seen, std::size_t floats) : seen_(seen), floats_(floats) {}
    collage::Status run(const std::vector<const float*>& in, const std::vector<float*>& out) override {
      seen_.push_back(denormals_flushed());
      std::transform(in[0], in[0] + floats_, out[0], [](float v) { return v < 0 ? 0.0f : v; });
      return collage::Status::success();
    }

   private:
    std::vector<bool>& seen_;
    std::size_t floats_;
  };
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device&) const override {
    const auto floats = static_cast<std::size_t>(numel(function.graph.node(function.graph.outputs()[0]).shape));
    return std::unique_ptr<Kernel>(std::make_unique<Probe>(seen_, floats));
  }
  std::vector<bool>& seen_;
};

/// A relu on a [2, 8] input, run once by `backend` alone.
collage::Result<std::vector<Tensor>> run_relu(Backend& backend, bool flush) {
  testing::GraphBuilder b;
  const Graph model = b.done(b.op(Op::relu, {b.input({2, 8})}));
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  auto oracle = collage::make_oracle<Graph>("unit", [](const auto&, const auto&, const auto&) { return collage::Cost::value(1); });
  BackendSet backends;
  const std::string name = backend.name();
  auto partitioned = collage::partition(*dataflow, {backend.spec()}, *oracle);
  if (!partitioned.ok()) return partitioned.error();
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  backends.add(std::unique_ptr<Backend>(&backend));
  ExecutableOptions options;
  options.flush_denormals = flush;
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices, options);
  backends.take(name).release();  // borrowed
  if (!exe.ok()) return exe.error();
  return exe->run(testing::random_inputs(model, 1));
}

TEST(Denormals, KernelsRunWithDenormalsFlushedUnlessIeeeIsAskedFor) {
  std::vector<bool> seen;
  ProbeBackend probe(seen);
  ASSERT_TRUE(run_relu(probe, true).ok());
  ASSERT_TRUE(run_relu(probe, false).ok());
  EXPECT_EQ(seen, (std::vector<bool>{true, false}));
  EXPECT_FALSE(denormals_flushed());  // the caller's mode is back
}

/// Three 3x3 convolutions over [1, 16, 24, 24] with weights scaled by `scale`: with 1e-13 the
/// products are denormal.
Graph scaled_convolutions(float scale) {
  testing::GraphBuilder b;
  int y = b.input({1, 16, 24, 24});
  for (int k = 0; k < 3; ++k) {
    const int w = b.constant([&] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(k));
      Tensor t = testing::random_tensor({16, 16, 3, 3}, rng);
      for (float& v : t.data) v *= scale;
      return t;
    }());
    y = b.op(Op::conv, {y, w}, testing::conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  }
  return b.done(y);
}

/// Median seconds of `runs` runs of `model` on the native backend, whose outputs are checked
/// against the reference interpreter's with `atol`.
double native_seconds(const Graph& model, int runs, double atol) {
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  BackendSet backends;
  backends.add(std::make_unique<NativeBackend>());
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  auto oracle = collage::make_oracle<Graph>("unit", [](const auto&, const auto&, const auto&) { return collage::Cost::value(1); });
  auto partitioned = partition_model(*dataflow, backends, single_backend_configuration("native", backends), *oracle);
  EXPECT_TRUE(partitioned.ok());
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  EXPECT_TRUE(exe.ok());
  const std::vector<Tensor> inputs = testing::random_inputs(model, 3);
  auto outputs = exe->run(inputs);
  EXPECT_TRUE(outputs.ok());
  auto expected = evaluate(model, inputs);  // IEEE denormals
  std::string worst;
  EXPECT_TRUE(all_close((*outputs)[0], (*expected)[0], 1e-3, atol, &worst)) << worst;
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(exe->execute().ok());
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

TEST(Denormals, AModelFullOfDenormalsRunsAboutAsFastAsOneWithNormalValues) {
  const double normal = native_seconds(scaled_convolutions(1.0f), 7, 1e-4);
  // Sums of flushed products lose what the denormals added: differences far below any tolerance
  // a model's outputs are checked with (collage-run's atol is 1e-4).
  const double denormal = native_seconds(scaled_convolutions(1e-13f), 7, 1e-30);
  // Under IEEE rules a CPU that handles denormals in microcode runs the denormal model 10-100x
  // slower; flushed, about as fast.
  EXPECT_LT(denormal, 3 * normal) << "normal " << normal << " s, denormal " << denormal << " s";
}

}  // namespace
}  // namespace tc
