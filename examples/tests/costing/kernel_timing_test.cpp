#include "costing/kernel_timing.hpp"

#include <gtest/gtest.h>

#include "tensor/function.hpp"
#include "tests/support/tape_device.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

KernelTimingOptions quick() {
  KernelTimingOptions options;
  options.timing.warmups = 1;
  options.timing.min_repeats = 3;
  options.timing.max_repeats = 5;
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

}  // namespace
}  // namespace tc
