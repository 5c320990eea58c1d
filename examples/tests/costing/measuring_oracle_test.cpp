#include "costing/measuring_oracle.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <collage/partitioner.hpp>

#include "driver/configurations.hpp"
#include "executor/executable.hpp"
#include "backends/reference/reference_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "tests/support/refusing_backend.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

/// The reference backend, counting what it is asked to prepare and compile.
class PreparingBackend final : public Backend {
 public:
  PreparingBackend() : Backend("preparing", DeviceKind::cpu), inner_(make_reference_backend("preparing")) {}
  collage::PartitionSpec<Graph> spec() const override { return inner_->spec(); }

  mutable std::size_t prepare_calls = 0;
  mutable std::size_t prepared = 0;
  mutable std::size_t compiled = 0;
  mutable std::size_t compiled_unprepared = 0;

 private:
  void do_prepare(const std::vector<const Function*>& functions, Device&) const override {
    ++prepare_calls;
    prepared += functions.size();
  }
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    ++compiled;
    if (compiled > prepared) ++compiled_unprepared;
    return inner_->compile(function, device);
  }

  std::unique_ptr<Backend> inner_;
};

/// `dataflow` partitioned by the exact search over `targets` of `backends`, on the CPU, with the
/// measuring oracle timing each candidate a few times.
collage::Result<collage::PartitionResult> partition_measured(const collage::DataflowGraph<Graph>& dataflow,
                                                             const BackendSet& backends,
                                                             std::vector<std::string> targets) {
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  KernelTimingOptions timing;
  timing.timing.warmups = 0;
  timing.timing.min_repeats = 2;
  timing.timing.max_repeats = 3;
  auto oracle = make_measuring_oracle(backends, devices, timing);
  return partition_model(dataflow, backends, Configuration{"collage", std::move(targets), collage::SearchAlgorithm::exact},
                         *oracle);
}

TEST(MeasuringOracle, TimesEveryCandidateAndRefusalsBecomeInvalid) {
  const Graph model = testing::residual_block();
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(std::make_unique<testing::RefusingBackend>());
  auto result = partition_measured(*dataflow, backends, {"refusing", "general"});
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

TEST(MeasuringOracle, EachBackendPreparesItsCandidatesOfABatchAtOnceBeforeAnyIsCompiled) {
  const Graph model = testing::residual_block();
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(std::make_unique<PreparingBackend>());
  backends.add(std::make_unique<testing::RefusingBackend>());
  const auto& preparing = static_cast<const PreparingBackend&>(*backends.find("preparing"));
  auto partitioned = partition_measured(*dataflow, backends, {"refusing", "preparing"});
  ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
  std::size_t candidates = 0;
  for (const collage::Candidate& c : partitioned->candidates) candidates += c.target == "preparing" ? 1 : 0;
  EXPECT_EQ(preparing.prepare_calls, 1u);
  EXPECT_EQ(preparing.prepared, candidates);
  EXPECT_EQ(preparing.compiled, candidates);
  EXPECT_EQ(preparing.compiled_unprepared, 0u);

  // The executable prepares its parts at once too.
  preparing.prepare_calls = preparing.prepared = preparing.compiled = preparing.compiled_unprepared = 0;
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  EXPECT_EQ(preparing.prepare_calls, 1u);
  EXPECT_EQ(preparing.prepared, partitioned->partitioning.parts.size());
  EXPECT_EQ(preparing.compiled_unprepared, 0u);
}

}  // namespace
}  // namespace tc
