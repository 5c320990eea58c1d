// Recorded runs on a GPU (skipped, with the device's reason, where there is none): every GPU test
// model, split among the host's native backend and cuda, cublas and cudnn so that its run has
// several segments, computes the same outputs replayed from CUDA graphs as launched step by step,
// run after run with new inputs, and what the reference interpreter computes.

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <collage/cost/cost_oracle.hpp>

#include "backends/cublas/cublas_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cudnn/cudnn_backend.hpp"
#include "backends/gpu_test_support.hpp"
#include "backends/cuda_testing.hpp"
#include "backends/native/native_backend.hpp"
#include "driver/configurations.hpp"
#include "executor/executable.hpp"
#include "runtime/cpu_device.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

using GpuRecording = testing::GpuTest;

/// A cost that scatters the parts among the targets: the same for a candidate every time it is
/// asked, different between targets and between neighbouring candidates.
collage::Cost scattered_cost(const collage::DataflowGraph<Graph>& graph, const collage::Candidate& c) {
  std::size_t kernels = 0, first = graph.size();
  for (std::size_t i : c.sub_graph.inside()) {
    if (!graph.needs_kernel(i)) continue;
    ++kernels;
    first = std::min(first, i);
  }
  const std::size_t mix = (first * 7 + std::hash<std::string>{}(std::string(c.target))) % 5;
  return collage::Cost::value(1.0 + static_cast<double>(mix) + 0.5 * static_cast<double>(kernels));
}

TEST_F(GpuRecording, ReplayedGraphsMatchStepByStepLaunches) {
  std::vector<std::pair<std::string, Graph>> models = cuda_testing::model_graphs();
  models.emplace_back("residual block", testing::residual_block());
  BackendSet backends;
  backends.add(std::make_unique<NativeBackend>());
  backends.add(make_cuda_backend());
  backends.add(make_cublas_backend());
  backends.add(make_cudnn_backend());
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  devices.add(testing::cuda_device());
  auto oracle = collage::make_oracle<Graph>(
      "scattered", [](const collage::DataflowGraph<Graph>& g, const collage::Candidate& c, const auto&) {
        return scattered_cost(g, c);
      });
  const Configuration config{"collage", {"native", "cuda", "cublas", "cudnn"}, collage::SearchAlgorithm::exact};
  std::size_t recorded_segments = 0, host_steps = 0;
  for (const auto& [name, model] : models) {
    SCOPED_TRACE(name);
    auto dataflow = collage::DataflowGraph<Graph>::build(model);
    ASSERT_TRUE(dataflow.ok()) << dataflow.error().message;
    auto partitioned = partition_model(*dataflow, backends, config, *oracle);
    ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
    ExecutableOptions launched_options;
    launched_options.record = false;
    auto replayed = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
    auto launched = Executable::compile(*dataflow, partitioned->partitioning, backends, devices, launched_options);
    ASSERT_TRUE(replayed.ok()) << replayed.error().message;
    ASSERT_TRUE(launched.ok()) << launched.error().message;
    for (std::uint64_t seed : {1, 2, 3}) {
      const std::vector<Tensor> inputs = testing::random_inputs(model, seed);
      auto expected = evaluate(model, inputs);
      auto from_graphs = replayed->run(inputs);
      auto one_by_one = launched->run(inputs);
      ASSERT_TRUE(expected.ok()) << expected.error().message;
      ASSERT_TRUE(from_graphs.ok()) << from_graphs.error().message;
      ASSERT_TRUE(one_by_one.ok()) << one_by_one.error().message;
      ASSERT_EQ(from_graphs->size(), expected->size());
      ASSERT_EQ(one_by_one->size(), expected->size());
      for (std::size_t k = 0; k < expected->size(); ++k) {
        std::string worst;
        EXPECT_TRUE(all_close((*from_graphs)[k], (*one_by_one)[k], 1e-6, 1e-7, &worst))
            << "seed " << seed << ", output " << k << ": replayed against launched: " << worst;
        EXPECT_TRUE(all_close((*from_graphs)[k], (*expected)[k], 1e-3, 1e-4, &worst))
            << "seed " << seed << ", output " << k << ": replayed against the reference: " << worst;
      }
    }
    EXPECT_TRUE(replayed->notes().empty()) << replayed->notes().front();
    const std::vector<StepInfo> steps = replayed->steps();
    for (const SegmentInfo& segment : replayed->segments()) {
      recorded_segments += segment.recorded;
      // Every kernel on the GPU is replayed from a recording; what is not recorded stands alone.
      for (std::size_t k = segment.first_step; k < segment.end_step; ++k) {
        const bool gpu_kernel = steps[k].device == DeviceKind::cuda && steps[k].target != "copy";
        EXPECT_TRUE(segment.recorded || !gpu_kernel) << "step " << k + 1 << " (" << steps[k].target << ")";
      }
      if (!segment.recorded) {
        EXPECT_EQ(segment.end_step - segment.first_step, 1u);
      }
    }
    for (const SegmentInfo& segment : launched->segments()) EXPECT_FALSE(segment.recorded);
    for (const StepInfo& step : steps) host_steps += step.target == "native";
  }
  // The scattered costs put parts on the host and on the GPU, so runs have several segments.
  EXPECT_GE(recorded_segments, models.size());
  EXPECT_GE(host_steps, 1u);
}

}  // namespace
}  // namespace tc
