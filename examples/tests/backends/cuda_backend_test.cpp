// The cuda backend: a CUDA target with the native fusion rule, refusing to compile without a
// usable GPU; on a GPU (skipped, with the device's reason, where there is none), its kernels
// computing what the reference interpreter does.

#include "backends/cuda/cuda_backend.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <collage/cost/cost_oracle.hpp>

#include "backends/gpu_test_support.hpp"
#include "cuda_testing.hpp"
#include "driver/configurations.hpp"
#include "executor/executable.hpp"
#include "runtime/cpu_device.hpp"

namespace tc {
namespace {

using cuda_testing::ints_attr;
using testing::GraphBuilder;
using Ints = std::vector<std::int64_t>;

TEST(CudaBackend, IsACudaTarget) { testing::expect_cuda_target(*make_cuda_backend(), "cuda"); }

TEST(CudaBackend, ProposesWhatTheNativeRuleDoes) {
  for (const auto& [name, graph] : cuda_testing::model_graphs()) {
    std::vector<testing::Claim> native = testing::claims(NativeBackend().spec(), graph);
    EXPECT_EQ(testing::claims(make_cuda_backend()->spec(), graph), native) << name;
    EXPECT_GT(native.size(), 5u) << name;
  }
  // The depth bound is the native backend's.
  const Graph layer = cuda_testing::encoder_layer();
  EXPECT_EQ(testing::claims(make_cuda_backend(3)->spec(), layer), testing::claims(NativeBackend(3).spec(), layer));
}

TEST(CudaBackend, CompileSaysWhyWithoutAGpu) {
  GraphBuilder b(1);
  const Function f = whole_model_function(b.done(b.op(Op::relu, {b.input({2, 5})})));
  testing::expect_refusals_without_a_gpu(*make_cuda_backend(), f);
}

// ---- On a GPU ---------------------------------------------------------------------------------

using CudaGpu = testing::GpuTest;

/// Compiles every candidate of the rule on `graph` for the GPU (their programs prepared at once)
/// and checks it against the reference.
void expect_every_candidate_matches(const Graph& graph, std::uint64_t seed) {
  const std::unique_ptr<Backend> backend = make_cuda_backend();
  std::vector<std::pair<std::string, Function>> candidates;
  cuda_testing::for_each_candidate(
      graph, [&](const std::string& label, const Function& function) {
        candidates.emplace_back(label, whole_model_function(function.graph));
      });
  std::vector<const Function*> functions;
  for (const auto& candidate : candidates) functions.push_back(&candidate.second);
  backend->prepare(functions, testing::cuda_device());
  for (const auto& [label, function] : candidates) {
    // A candidate's function is a graph of its own: its inputs, constants and results.
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), function.graph, label, 1e-3, 1e-4, seed);
  }
}

TEST_F(CudaGpu, EveryRuleCandidateOfRandomGraphsMatchesTheReference) {
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    native_testing::RandomGraph random(seed);
    expect_every_candidate_matches(random.make(static_cast<int>(6 + seed % 8)), seed);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "seed " << seed;
      break;
    }
  }
}

TEST_F(CudaGpu, ModelGraphsMatchTheReference) {
  for (const auto& [name, graph] : cuda_testing::model_graphs()) {
    expect_every_candidate_matches(graph, 3);
    testing::expect_kernel_matches_reference(*make_cuda_backend(), testing::cuda_device(), graph, name + " (whole)");
  }
}

TEST_F(CudaGpu, LargeShapesMatchTheReference) {
  const std::unique_ptr<Backend> backend = make_cuda_backend();
  {
    // 128 x 128 tiles: enough of them for every SM.
    GraphBuilder b(1);
    const int y = cuda_testing::linear(b, b.input({2048, 256}), 256, 1152);
    const Graph g = b.done(b.op(Op::relu, {y}));
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), g, "dense 2048x256x1152 + relu");
  }
  {
    GraphBuilder b(2);
    const int w = b.weight({64, 64, 3, 3}, -0.1f, 0.1f);
    const int conv = b.op(Op::conv, {b.input({2, 64, 56, 56}), w, b.weight({64})}, ints_attr("pads", {1, 1, 1, 1}));
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), b.done(b.op(Op::relu, {conv})),
                                             "conv 64x56x56 3x3");
  }
  {
    GraphBuilder b(3);
    Attributes dw = ints_attr("pads", {1, 1, 1, 1});
    dw.set("group", std::int64_t{144});
    const int conv = b.op(Op::conv, {b.input({1, 144, 56, 56}), b.weight({144, 1, 3, 3}), b.weight({144})}, dw);
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), b.done(conv), "depthwise 144x56x56");
  }
  {
    GraphBuilder b(4);
    const Graph g = b.done(cuda_testing::layer_norm_decomposed(b, b.input({8, 128, 768}), 768));
    expect_every_candidate_matches(g, 4);
  }
  {
    GraphBuilder b(5);
    Attributes last;
    last.set("axis", std::int64_t{3});
    const Graph g = b.done(b.op(Op::softmax, {b.input({8, 12, 128, 128})}, last));
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), g, "softmax 8x12x128x128");
  }
  {
    GraphBuilder b(6);
    const Graph g = b.done(b.reduce(Op::reduce_sum, b.op(Op::exp, {b.input({3000, 1000})}), {0}));
    testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), g, "column sums 3000x1000", 1e-3, 1e-3);
  }
}

TEST_F(CudaGpu, AKernelRunsAgainWithOtherInputs) {
  const Graph g = cuda_testing::encoder_layer();
  for (std::uint64_t seed : {1, 2, 3}) {
    testing::expect_kernel_matches_reference(*make_cuda_backend(), testing::cuda_device(), g,
                                             "seed " + std::to_string(seed), 1e-3, 1e-4, seed);
  }
}

TEST_F(CudaGpu, AModelRunsAcrossTheCpuAndTheGpu) {
  const Graph model = cuda_testing::resnet_stage();
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(std::make_unique<NativeBackend>());
  backends.add(make_cuda_backend());
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  devices.add(testing::cuda_device());
  // Convolutions are cheap on the GPU, everything else on the CPU.
  auto estimate = [&model](const collage::DataflowGraph<Graph>& g, const collage::Candidate& c, const auto&) {
    bool conv = false;
    for (std::size_t i : c.sub_graph.inside()) conv = conv || model.node(g.handle(i)).op == Op::conv;
    return collage::Cost::value((conv == (c.target == "cuda")) ? 1.0 : 10.0);
  };
  auto oracle = collage::make_oracle<Graph>("convolutions on the gpu", estimate);
  const Configuration config{"collage", {"native", "cuda"}, collage::SearchAlgorithm::exact};
  auto partitioned = partition_model(*dataflow, backends, config, *oracle);
  ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  std::size_t gpu_parts = 0, cpu_parts = 0, copies = 0;
  for (const StepInfo& step : exe->steps()) {
    gpu_parts += step.target == "cuda";
    cpu_parts += step.target == "native";
    copies += step.target == "copy";
  }
  EXPECT_GE(gpu_parts, 3u);
  EXPECT_GE(cpu_parts, 2u);
  EXPECT_GE(copies, 2u);
  testing::expect_executable_matches_reference(*exe, model);
}

}  // namespace
}  // namespace tc

