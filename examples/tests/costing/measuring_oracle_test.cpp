#include "costing/measuring_oracle.hpp"

#include <gtest/gtest.h>

#include <collage/partitioner.hpp>

#include "driver/configurations.hpp"
#include "backends/reference/reference_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "tests/support/refusing_backend.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

TEST(MeasuringOracle, TimesEveryCandidateAndRefusalsBecomeInvalid) {
  const Graph model = testing::residual_block();
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(std::make_unique<testing::RefusingBackend>());
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  KernelTimingOptions timing;
  timing.timing.warmups = 0;
  timing.timing.min_repeats = 2;
  timing.timing.max_repeats = 3;
  auto oracle = make_measuring_oracle(backends, devices, timing);
  Configuration config{"collage", {"refusing", "general"}, collage::SearchAlgorithm::exact};
  auto result = partition_model(*dataflow, backends, config, *oracle);
  ASSERT_TRUE(result.ok()) << result.error().message;
  std::size_t refused = 0;
  for (const collage::Candidate& c : result->candidates) {
    ASSERT_FALSE(c.cost.is_unknown());
    if (c.target == "refusing") {
      EXPECT_TRUE(c.cost.is_invalid());
      ++refused;
    } else {
      EXPECT_TRUE(c.cost.is_known());
      EXPECT_GT(c.cost.raw(), 0.0);
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_FALSE(result->oracle_errors.empty());
  EXPECT_NE(result->oracle_errors[0].find("cannot compile anything"), std::string::npos) << result->oracle_errors[0];
  for (const collage::Candidate& part : result->partitioning.parts) EXPECT_EQ(part.target, "general");
}

}  // namespace
}  // namespace tc
