#include "costing/kernel_timing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/reference/reference_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "runtime/cpu_state.hpp"
#include "runtime/cpu_threads.hpp"
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

/// The reference backend on the CPU whose kernels note each of their runs in `log` by the order in
/// which they were compiled; kernel `failing` fails on its `failing_run`-th run.
class LoggingBackend final : public Backend {
 public:
  explicit LoggingBackend(std::vector<std::size_t>& log)
      : Backend("logged", DeviceKind::cpu), inner_(make_reference_backend("logged")), log_(log) {}
  collage::PartitionSpec<Graph> spec() const override { return inner_->spec(); }

  std::size_t failing = SIZE_MAX;
  std::size_t failing_run = 0;

 private:
  class LoggingKernel final : public Kernel {
   public:
    LoggingKernel(std::unique_ptr<Kernel> inner, const LoggingBackend& backend, std::size_t id)
        : inner_(std::move(inner)), backend_(backend), id_(id) {}
    collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
      backend_.log_.push_back(id_);
      if (id_ == backend_.failing && ++runs_ == backend_.failing_run) {
        return collage::Error{collage::ErrorCode::oracle, "kernel " + std::to_string(id_) + " broke"};
      }
      return inner_->run(inputs, outputs);
    }

   private:
    std::unique_ptr<Kernel> inner_;
    const LoggingBackend& backend_;
    std::size_t id_;
    std::size_t runs_ = 0;
  };
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    auto inner = inner_->compile(function, device);
    if (!inner.ok()) return inner.error();
    return std::unique_ptr<Kernel>(std::make_unique<LoggingKernel>(std::move(inner).value(), *this, compiled_++));
  }

  std::unique_ptr<Backend> inner_;
  std::vector<std::size_t>& log_;
  mutable std::size_t compiled_ = 0;
};

/// A MatMul of a [2, k] input by a [k, k] constant (k * k floats of weights).
Function linear_layer(std::int64_t k) {
  testing::GraphBuilder b(5);
  b.output(b.op(Op::matmul, {b.input({2, k}, "x"), b.weight({k, k})}));
  return whole_model_function(b.done());
}

/// `functions`, each compiled by `backend` for `cpu`.
std::vector<KernelToTime> on(const std::vector<Function>& functions, const Backend& backend, CpuDevice& cpu) {
  std::vector<KernelToTime> kernels;
  for (const Function& f : functions) kernels.push_back({&f, &backend, &cpu});
  return kernels;
}

/// How many times kernel `id` appears in `log`.
std::size_t runs_of(const std::vector<std::size_t>& log, std::size_t id) {
  return static_cast<std::size_t>(std::count(log.begin(), log.end(), id));
}

TEST(KernelTiming, OnTheCpuKernelsAreTimedInTurnsWithTheRestOfTheModelsBytesWrittenBeforeEachRound) {
  std::vector<std::size_t> log;
  LoggingBackend backend(log);
  CpuDevice cpu;
  const std::vector<Function> functions{linear_layer(8), linear_layer(16), linear_layer(32)};
  std::vector<KernelToTime> kernels = on(functions, backend, cpu);
  KernelTimingOptions options = quick();
  options.model_bytes = std::size_t{1} << 20;  // far more than the three kernels' bytes
  const std::size_t before = evictions_on_this_thread();
  std::vector<collage::Result<collage::Measurement>> ms = time_functions(kernels, options);
  const std::size_t rounds = evictions_on_this_thread() - before;
  ASSERT_EQ(ms.size(), 3u);
  for (const auto& m : ms) {
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_GE(m->samples, options.timing.min_repeats);
  }
  // Each kernel's check run, then rounds of every kernel that wants more samples, in order: all
  // three until each has its warm-up and least samples.
  const std::size_t full_rounds = options.timing.warmups + options.timing.min_repeats;
  ASSERT_GE(log.size(), 3 * (1 + full_rounds));
  for (std::size_t k = 0; k < 3 * (1 + full_rounds); ++k) EXPECT_EQ(log[k], k % 3) << "run " << k;
  EXPECT_GE(rounds, full_rounds);
  EXPECT_LE(rounds, options.timing.warmups + options.timing.max_repeats);
  std::size_t most = 0;
  for (std::size_t id = 0; id < 3; ++id) most = std::max(most, runs_of(log, id));
  EXPECT_EQ(rounds + 1, most);  // one write before each round, none before the check runs

  // Without the model's bytes, each kernel is timed alone, over and over, and nothing is written.
  log.clear();
  options.model_bytes = 0;
  const std::size_t unwritten = evictions_on_this_thread();
  ms = time_functions(kernels, options);
  EXPECT_EQ(evictions_on_this_thread(), unwritten);
  ASSERT_TRUE(std::is_sorted(log.begin(), log.end()));
  EXPECT_EQ(log.front(), 3u);
}

TEST(KernelTiming, InTurnsOnSeveralThreadsEachRunsInputsAndOutputsAreReadBackOnThem) {
  if (!cpu_threads_available()) GTEST_SKIP() << "this build runs no parts on threads (it has no libgomp)";
  std::vector<std::size_t> log;
  LoggingBackend backend(log);  // the reference backend's kernels run on the calling thread
  CpuDevice cpu;
  const std::vector<Function> functions{linear_layer(8), linear_layer(16)};
  std::vector<KernelToTime> kernels = on(functions, backend, cpu);
  KernelTimingOptions options = quick();
  options.model_bytes = std::size_t{1} << 20;
  for (int threads : {1, 2}) {
    options.cpu_threads = threads;
    log.clear();
    const std::size_t before = parallel_runs();
    for (const auto& m : time_functions(kernels, options)) ASSERT_TRUE(m.ok()) << m.error().message;
    // Every run in turns but the check run each kernel gets as it joins.
    const std::size_t timed_runs = log.size() - kernels.size();
    EXPECT_EQ(parallel_runs() - before, threads == 1 ? 0 : timed_runs) << threads << " threads";
  }
}

/// The position of the last of `id`'s runs in `log`.
std::size_t last_run(const std::vector<std::size_t>& log, std::size_t id) {
  return static_cast<std::size_t>(log.rend() - std::find(log.rbegin(), log.rend(), id)) - 1;
}

TEST(KernelTiming, AKernelJoinsTheTurnsWhenThoseInTurnsHoldLessThanTheModelsBytes) {
  std::vector<std::size_t> log;
  LoggingBackend backend(log);
  CpuDevice cpu;
  // 64 KiB of weights each: the first two reach the 96 KiB given as the model's bytes.
  const std::vector<Function> functions{linear_layer(128), linear_layer(128), linear_layer(128)};
  std::vector<KernelToTime> kernels = on(functions, backend, cpu);
  KernelTimingOptions options = quick();
  options.model_bytes = 96 << 10;
  for (const auto& m : time_functions(kernels, options)) ASSERT_TRUE(m.ok()) << m.error().message;
  // The first two in turns; the third compiled (and run once) only once one of them has left.
  const auto joined = static_cast<std::size_t>(std::find(log.begin(), log.end(), 2u) - log.begin());
  EXPECT_GT(joined, std::min(last_run(log, 0), last_run(log, 1)));
  EXPECT_GE(joined, 2 * (1 + options.timing.warmups + options.timing.min_repeats));
  EXPECT_EQ((std::vector<std::size_t>(log.begin(), log.begin() + 4)), (std::vector<std::size_t>{0, 1, 0, 1}));
}

TEST(KernelTiming, InTurnsAKernelThatFailsGetsItsErrorAndTheOthersTheirCosts) {
  std::vector<std::size_t> log;
  LoggingBackend backend(log);
  backend.failing = 1;
  backend.failing_run = 3;  // after its check run and its warm-up
  CpuDevice cpu;
  const std::vector<Function> functions{linear_layer(8), linear_layer(8), linear_layer(8)};
  std::vector<KernelToTime> kernels = on(functions, backend, cpu);
  KernelTimingOptions options = quick();
  options.model_bytes = std::size_t{1} << 20;
  std::vector<collage::Result<collage::Measurement>> ms = time_functions(kernels, options);
  ASSERT_TRUE(ms[0].ok());
  ASSERT_FALSE(ms[1].ok());
  EXPECT_EQ(ms[1].error().message, "kernel 1 broke");
  ASSERT_TRUE(ms[2].ok());
  EXPECT_EQ(runs_of(log, 1), 3u);
  EXPECT_GE(ms[2]->samples, options.timing.min_repeats);

  // A kernel that fails its check run is never timed.
  log.clear();
  LoggingBackend first_fails(log);
  first_fails.failing = 0;
  first_fails.failing_run = 1;
  for (KernelToTime& k : kernels) k.backend = &first_fails;
  ms = time_functions(kernels, options);
  ASSERT_FALSE(ms[0].ok());
  EXPECT_EQ(runs_of(log, 0), 1u);
  EXPECT_TRUE(ms[1].ok());
}

/// The smallest power of two MiB at least `bytes`.
std::size_t mib_power_of_two(std::size_t bytes) {
  std::size_t p = std::size_t{1} << 20;
  while (p < bytes) p *= 2;
  return p;
}

TEST(KernelTiming, TheModelsBytesArePowersOfTwoMebibytesAtMostTheDefaultEviction) {
  // Its values' and constants' bytes (more than 6 MiB), whatever the last-level cache holds.
  testing::GraphBuilder b(6);
  b.output(b.op(Op::matmul, {b.input({1500, 1000}, "x"), b.weight({1000, 1000})}));
  const Graph large = b.done();
  std::size_t large_bytes = 0;
  for (const Node& n : large.nodes()) large_bytes += static_cast<std::size_t>(numel(n.shape)) * sizeof(float);
  EXPECT_EQ(model_cache_bytes(large), std::min(mib_power_of_two(large_bytes), default_eviction_bytes()));
  EXPECT_EQ(model_cache_bytes(linear_layer(4).graph), std::size_t{1} << 20);
  // A chain keeps two of its values at a time: a value's buffer is reused once it is read for the
  // last time. Six values of 3 MiB each peak at 6 MiB: 8 MiB.
  testing::GraphBuilder chain(7);
  int v = chain.input({3 << 18}, "x");
  for (int k = 0; k < 5; ++k) v = chain.op(Op::relu, {v});
  chain.output(v);
  EXPECT_EQ(model_cache_bytes(chain.done()), std::min<std::size_t>(std::size_t{8} << 20, default_eviction_bytes()));
}

}  // namespace
}  // namespace tc
