#include "costing/kernel_timing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "backends/reference/reference_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "runtime/cpu_state.hpp"
#include "tensor/function.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/tape_device.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

KernelTimingOptions quick() {
  KernelTimingOptions options;
  options.timing.warmups = 1;
  options.timing.min_repeats = 3;
  options.timing.max_repeats = 5;
  // No wall-clock cap: the counts of runs the tests expect hold on a slow or loaded machine too.
  options.timing.max_seconds = 0;
  return options;
}

TEST(KernelTiming, OnADeviceThatRecordsAKernelCostsItsDeviceTimePerLaunchInsideAReplay) {
  const Function function = whole_model_function(testing::residual_block());
  testing::TapeBackend backend("taped");
  testing::TapeDevice device;
  device.replay_seconds = 1.6e-3;  // one replay of the 16 recorded launches: 0.1 ms each
  collage::Result<collage::Measurement> m = time_function(function, backend, device, quick());
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(m->cost.raw(), 1.6e-3 / 16 * 1e3);
  EXPECT_EQ(device.begun, 1);
  EXPECT_GE(device.replays, 4);  // the warm-up and at least three timed replays
}

TEST(KernelTiming, WhereTheModelsWeightsOutgrowTheDevicesCacheEachRecordedLaunchFindsItsWeightsCold) {
  const Function function = whole_model_function(testing::residual_block());
  ASSERT_GT(weight_bytes(function.graph), 0u);
  testing::TapeBackend backend("taped");
  testing::TapeDevice device;
  device.cache = std::size_t{1} << 20;
  device.replay_seconds = 1e-4;
  device.launch_seconds = 2e-3;
  KernelTimingOptions options = quick();
  options.model_weight_bytes = device.cache;  // more than half the cache
  ASSERT_TRUE(model_weights_outgrow(device, options));
  collage::Result<collage::Measurement> cold = time_function(function, backend, device, options);
  ASSERT_TRUE(cold.ok()) << cold.error().message;
  // The recording of evictions and input reads alone is taken off: 2 ms a launch.
  EXPECT_NEAR(cold->cost.raw(), 2.0, 1e-9);
  EXPECT_EQ(device.begun, 2);
  EXPECT_GT(device.evictions, 0);
  EXPECT_EQ(device.touches, device.evictions * static_cast<int>(function.graph.inputs().size()));

  // Weights the cache holds: launches back to back, warm.
  testing::TapeDevice warm_device;
  warm_device.cache = device.cache;
  warm_device.replay_seconds = 1e-4;
  warm_device.launch_seconds = 2e-3;
  options.model_weight_bytes = device.cache / 2;
  ASSERT_FALSE(model_weights_outgrow(warm_device, options));
  collage::Result<collage::Measurement> warm = time_function(function, backend, warm_device, options);
  ASSERT_TRUE(warm.ok()) << warm.error().message;
  EXPECT_NEAR(warm->cost.raw(), (1e-4 / 16 + 2e-3) * 1e3, 1e-9);
  EXPECT_EQ(warm_device.begun, 1);
  EXPECT_EQ(warm_device.evictions, 0);

  // A device that cannot read the inputs in fails the measurement, saying why.
  testing::TapeDevice refusing;
  refusing.cache = device.cache;
  refusing.refuse_touch = true;
  options.model_weight_bytes = device.cache;
  collage::Result<collage::Measurement> failed = time_function(function, backend, refusing, options);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "tape: cannot touch");
}

TEST(KernelTiming, WithoutRecordedLaunchesAKernelIsTimedOnTheHostClock) {
  const Function function = whole_model_function(testing::residual_block());
  testing::TapeBackend backend("taped");
  testing::TapeDevice device;
  device.replay_seconds = 1.0;
  KernelTimingOptions options = quick();
  options.recorded_launches = 0;
  collage::Result<collage::Measurement> m = time_function(function, backend, device, options);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(device.begun, 0);
  EXPECT_GT(m->cost.raw(), 0.0);
  EXPECT_LT(m->cost.raw(), 1e3);  // not the stand-in's device time
}

TEST(KernelTiming, WithColdCachesEachLaunchIsTimedAloneAfterAnEviction) {
  const Function function = whole_model_function(testing::residual_block());
  testing::TapeBackend backend("taped");
  testing::TapeDevice device;
  KernelTimingOptions options = quick();
  options.cold_caches = true;
  collage::Result<collage::Measurement> m = time_function(function, backend, device, options);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(device.begun, 0);
  EXPECT_GE(device.timed, 4);  // the warm-up and at least three timed launches
  EXPECT_EQ(device.evictions, device.timed);
  EXPECT_GT(m->cost.raw(), 0.0);
}

TEST(KernelTiming, WhereRecordingFailsTheKernelIsTimedOnTheHostClock) {
  const Function function = whole_model_function(testing::residual_block());
  testing::TapeBackend backend("taped");
  testing::TapeDevice device;
  device.replay_seconds = 1.0;
  device.refuse = true;
  collage::Result<collage::Measurement> m = time_function(function, backend, device, quick());
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(device.begun, 1);
  EXPECT_EQ(device.replays, 0);
  EXPECT_LT(m->cost.raw(), 1e3);
}

/// A MatMul of a [2, k] input by a [k, k] constant (k * k floats of weights).
Function linear_layer(std::int64_t k) {
  testing::GraphBuilder b(5);
  b.output(b.op(Op::matmul, {b.input({2, k}, "x"), b.weight({k, k})}));
  return whole_model_function(b.done());
}

TEST(KernelTiming, OnTheCpuTheModelsBytesGoThroughTheCachesBeforeEachRunOfAKernelWithLargeWeights) {
  const std::unique_ptr<Backend> backend = make_reference_backend();
  CpuDevice cpu;
  KernelTimingOptions options = quick();
  options.model_bytes = std::size_t{1} << 20;
  // Weights larger than the L2 cache: the model's bytes pass before the warm-up and every timed run.
  const auto large = static_cast<std::int64_t>(std::sqrt(static_cast<double>(std::max<std::size_t>(cpu_cache_bytes(2), 1 << 20)) / 4)) + 8;
  std::size_t before = evictions_on_this_thread();
  collage::Result<collage::Measurement> m = time_function(linear_layer(large), *backend, cpu, options);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const std::size_t evictions = evictions_on_this_thread() - before;
  EXPECT_GE(evictions, options.timing.warmups + options.timing.min_repeats);
  EXPECT_LE(evictions, options.timing.warmups + options.timing.max_repeats);
  // Weights that stay in the caches, or no model's bytes: timed warm.
  before = evictions_on_this_thread();
  ASSERT_TRUE(time_function(linear_layer(8), *backend, cpu, options).ok());
  options.model_bytes = 0;
  ASSERT_TRUE(time_function(linear_layer(large), *backend, cpu, options).ok());
  EXPECT_EQ(evictions_on_this_thread(), before);
}

/// The smallest power of two MiB at least `bytes`.
std::size_t mib_power_of_two(std::size_t bytes) {
  std::size_t p = std::size_t{1} << 20;
  while (p < bytes) p *= 2;
  return p;
}

TEST(KernelTiming, TheModelsBytesArePowersOfTwoMebibytesAtMostTheDefaultEviction) {
  const std::size_t llc = cpu_cache_bytes(3);
  // Larger than the last-level cache: its own bytes (with more than 6 MiB of values), at most the
  // default eviction.
  const std::int64_t rows = static_cast<std::int64_t>(std::max<std::size_t>(llc, 64 << 20) / 4000) + 1;
  testing::GraphBuilder b(6);
  b.output(b.op(Op::matmul, {b.input({rows, 1000}, "x"), b.weight({1000, 1000})}));
  const Graph large = b.done();
  std::size_t large_bytes = 0;
  for (const Node& n : large.nodes()) large_bytes += static_cast<std::size_t>(numel(n.shape)) * sizeof(float);
  EXPECT_EQ(model_cache_bytes(large), std::min(mib_power_of_two(large_bytes), default_eviction_bytes()));
  // Held by the last-level cache: twice the L2, where the system reports the caches.
  const std::size_t small = model_cache_bytes(linear_layer(4).graph);
  if (llc != 0) {
    EXPECT_EQ(small, std::min(mib_power_of_two(2 * cpu_cache_bytes(2)), default_eviction_bytes()));
  } else {
    EXPECT_EQ(small, std::size_t{1} << 20);
  }
}

}  // namespace
}  // namespace tc
