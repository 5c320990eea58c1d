#include "costing/transfer_costs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include <collage/cost/cost_oracle.hpp>

#include "driver/configurations.hpp"
#include "backends/registry.hpp"
#include "tests/support/tape_device.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

/// A backend placed on the CUDA device that proposes each convolution alone and is never compiled:
/// only its place matters to the transfer model.
class GpuPlacedBackend final : public Backend {
 public:
  GpuPlacedBackend() : Backend("gpu", DeviceKind::cuda) {}
  collage::PartitionSpec<Graph> spec() const override {
    return {name(), collage::op_predicate<Graph>(
                        name(), [](const collage::DataflowGraph<Graph>& g, std::size_t i) { return g.op_name(i) == "Conv"; })};
  }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function&, Device&) const override {
    return collage::Error{collage::ErrorCode::invalid_argument, "placed only, never compiled"};
  }
};

struct TransferCostsTest : ::testing::Test {
  Graph model = testing::residual_block();
  collage::DataflowGraph<Graph> dataflow = std::move(collage::DataflowGraph<Graph>::build(model)).value();
  DefaultDevices devices = make_default_devices();
  BackendSet backends;

  TransferCostsTest() {
    backends = make_default_backends(devices.set);
    backends.add(std::make_unique<GpuPlacedBackend>());
  }

  /// The collage configuration over native and gpu (convolutions only), with every kernel ten
  /// times faster on gpu.
  collage::Result<collage::PartitionResult> partition_with(const LinkSpeed& link) {
    auto oracle = collage::make_oracle<Graph>(
        "ten-times", [](const collage::DataflowGraph<Graph>& g, const collage::Candidate& c,
                        const collage::ExtractedFunction&) {
          double kernels = 0;
          for (std::size_t i : c.sub_graph.inside()) kernels += g.needs_kernel(i) ? 1 : 0;
          return (c.target == "gpu" ? 1e-5 : 1e-4) * kernels;
        });
    collage::PartitionerOptions options;
    options.transfers = transfer_model(dataflow, backends, link);
    return partition_model(dataflow, backends, Configuration{"collage", {"native", "gpu"}}, *oracle, options);
  }
};

TEST_F(TransferCostsTest, PlacesGpuBackendsOnDeviceOneAndChargesBytesOverTheLink) {
  const LinkSpeed link{1e-5, 1e10};
  collage::TransferModel transfers = transfer_model(dataflow, backends, link);
  EXPECT_EQ(transfers.device.size(), 1u);
  EXPECT_EQ(transfers.device.at("gpu"), 1u);
  EXPECT_FALSE(transfers.inputs_start_on_host);
  EXPECT_FALSE(transfers.outputs_end_on_host);
  EXPECT_TRUE(uses_a_gpu(backends));
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const double bytes = 4.0 * static_cast<double>(numel(model.node(dataflow.handle(i)).shape));
    EXPECT_DOUBLE_EQ(transfers.cost(i, 0, 1), 1e-5 + bytes / 1e10);
    EXPECT_DOUBLE_EQ(transfers.cost(i, 1, 0), transfers.cost(i, 0, 1));
  }
  BackendSet cpu_only = make_default_backends(devices.set);
  EXPECT_FALSE(uses_a_gpu(cpu_only));
  EXPECT_FALSE(transfer_model(dataflow, cpu_only, link).places_off_host());
}

TEST_F(TransferCostsTest, EveryMoveOntoTheDeviceStartsASegmentAndPaysItsLaunch) {
  LinkSpeed link{1e-5, 1e10};
  link.segment_seconds = 3e-5;
  collage::TransferModel transfers = transfer_model(dataflow, backends, link);
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const double bytes = 4.0 * static_cast<double>(numel(model.node(dataflow.handle(i)).shape));
    EXPECT_DOUBLE_EQ(transfers.cost(i, 0, 1), 1e-5 + bytes / 1e10 + 3e-5);
    EXPECT_DOUBLE_EQ(transfers.cost(i, 1, 0), 1e-5 + bytes / 1e10);
  }
}

TEST_F(TransferCostsTest, MeasuresTheLaunchOfARecordedSegment) {
  collage::TimingOptions timing;
  timing.warmups = 1;
  timing.min_repeats = 3;
  timing.max_repeats = 5;
  testing::TapeDevice tape;
  collage::Result<double> launch = measure_segment_launch(tape, timing);
  ASSERT_TRUE(launch.ok()) << launch.error().message;
  EXPECT_GE(*launch, 0.0);
  EXPECT_GE(tape.replays, 4);
  EXPECT_FALSE(measure_segment_launch(*devices.set.find(DeviceKind::cpu), timing).ok());  // the CPU does not record
}

TEST_F(TransferCostsTest, TheSearchKeepsWorkOnTheHostWhenTheLinkIsSlow) {
  auto on_gpu = [](const collage::PartitionResult& r) {
    int convolutions = 0;
    for (const collage::Candidate& part : r.partitioning.parts) convolutions += part.target == "gpu" ? 1 : 0;
    return convolutions;
  };
  auto fast = partition_with(LinkSpeed{1e-9, 1e15});
  ASSERT_TRUE(fast.ok()) << fast.error().message;
  EXPECT_EQ(on_gpu(*fast), 2);
  EXPECT_TRUE(fast->transfers.enabled());

  // A copy costs more than running a convolution on the host: nothing moves.
  auto slow = partition_with(LinkSpeed{1.0, 1e9});
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_EQ(on_gpu(*slow), 0);
  for (double moved : slow->partitioning.transfers) EXPECT_EQ(moved, 0.0);
}

TEST_F(TransferCostsTest, MeasuresTheLinkOfADevice) {
  // On the CPU device a copy is a memcpy: the fit still gives a finite cost per copy and rate.
  collage::TimingOptions timing;
  timing.warmups = 1;
  timing.min_repeats = 3;
  timing.max_repeats = 5;
  auto link = measure_link(*devices.set.find(DeviceKind::cpu), timing);
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_TRUE(std::isfinite(link->seconds_per_copy));
  EXPECT_GE(link->seconds_per_copy, 0.0);
  EXPECT_GT(link->bytes_per_second, 0.0);
  EXPECT_TRUE(std::isfinite(link->bytes_per_second));
}

}  // namespace
}  // namespace tc
