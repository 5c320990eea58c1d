#include "costing/transfer_costs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <string_view>

#include <collage/cost/cost_oracle.hpp>

#include "backends/reference/reference_backend.hpp"
#include "driver/comparison.hpp"
#include "driver/configurations.hpp"
#include "backends/registry.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/reference.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/tape_device.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

/// A backend placed on the CUDA device that proposes each convolution alone (or, with `every_op`,
/// each operator alone) and is never compiled: only its place matters to the transfer model.
class GpuPlacedBackend final : public Backend {
 public:
  explicit GpuPlacedBackend(bool every_op = false) : Backend("gpu", DeviceKind::cuda), every_op_(every_op) {}
  collage::PartitionSpec<Graph> spec() const override {
    return {name(), collage::op_predicate<Graph>(name(), [every = every_op_](const collage::DataflowGraph<Graph>& g,
                                                                             std::size_t i) {
              return every || g.op_name(i) == "Conv";
            })};
  }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function&, Device&) const override {
    return collage::Error{collage::ErrorCode::invalid_argument, "placed only, never compiled"};
  }
  bool every_op_ = false;
};

/// Reorders between plain tensors and `layout` costing `seconds` for each rank-4 value of
/// `dataflow`, the other way twice as much.
ReorderTable reorders_costing(const collage::DataflowGraph<Graph>& dataflow, double seconds,
                              Layout layout = native_blocked_layout()) {
  ReorderSeconds r;
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const bool blocked = is_blocked(dataflow.ir().node(dataflow.handle(i)).shape, layout);
    r.into.push_back(blocked ? seconds : 0.0);
    r.out_of.push_back(blocked ? 2 * seconds : 0.0);
  }
  return {{layout, r}};
}

/// The host's backends and `gpu`, the same on a machine with a GPU as on one without.
struct TransferCostsTest : ::testing::Test {
  Graph model = testing::residual_block(3, 8);  // rank-4 values of a block of 8 channels
  collage::DataflowGraph<Graph> dataflow = std::move(collage::DataflowGraph<Graph>::build(model)).value();
  CpuDevice cpu;
  DeviceSet host;
  BackendSet backends;
  ReorderTable reorders = reorders_costing(dataflow, 1e-3);

  TransferCostsTest() {
    host.add(cpu);
    backends = make_default_backends(host, nullptr, BackendOptions{1, /*blocked_layouts=*/true});
    backends.add(std::make_unique<GpuPlacedBackend>());
  }

  /// The collage configuration over native and gpu (convolutions only), with every kernel ten
  /// times faster on gpu.
  collage::Result<collage::PartitionResult> partition_with(const LinkSpeed& link) {
    auto oracle = collage::make_oracle<Graph>(
        "ten-times", kCostUnit, [](const collage::DataflowGraph<Graph>& g, const collage::Candidate& c,
                        const collage::ExtractedFunction&) {
          double kernels = 0;
          for (std::size_t i : c.sub_graph.inside()) kernels += g.needs_kernel(i) ? 1 : 0;
          return (c.target == "gpu" ? 1e-5 : 1e-4) * kernels;
        });
    collage::PartitionerOptions options;
    options.transfers = transfer_model(dataflow, backends, link, reorders).value();
    return partition_model(dataflow, backends, Configuration{"collage", {"native", "gpu"}}, *oracle, options);
  }
};

TEST_F(TransferCostsTest, PlacesGpuBackendsOnDeviceOneAndChargesBytesOverTheLink) {
  const LinkSpeed link{1e-5, 1e10};
  collage::TransferModel transfers = transfer_model(dataflow, backends, link, reorders).value();
  EXPECT_EQ(transfers.device.at("gpu"), 1u);
  EXPECT_EQ(transfers.unit, kCostUnit);
  EXPECT_FALSE(transfers.inputs_start_on_host);
  EXPECT_FALSE(transfers.outputs_end_on_host);
  EXPECT_TRUE(uses_a_gpu(backends));
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const double bytes = 4.0 * static_cast<double>(numel(model.node(dataflow.handle(i)).shape));
    EXPECT_DOUBLE_EQ(transfers.cost(i, 0, 1), cost_from_seconds(1e-5 + bytes / 1e10));
    EXPECT_DOUBLE_EQ(transfers.cost(i, 1, 0), transfers.cost(i, 0, 1));
  }
  BackendSet cpu_only = make_default_backends(host);
  EXPECT_FALSE(uses_a_gpu(cpu_only));
  EXPECT_FALSE(transfer_model(dataflow, cpu_only, link).value().places_off_host());
}

TEST_F(TransferCostsTest, EveryMoveOntoTheDeviceStartsASegmentAndPaysItsLaunch) {
  LinkSpeed link{1e-5, 1e10};
  link.segment_seconds = 3e-5;
  collage::TransferModel transfers = transfer_model(dataflow, backends, link, reorders).value();
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const double bytes = 4.0 * static_cast<double>(numel(model.node(dataflow.handle(i)).shape));
    EXPECT_DOUBLE_EQ(transfers.cost(i, 0, 1), cost_from_seconds(1e-5 + bytes / 1e10 + 3e-5));
    EXPECT_DOUBLE_EQ(transfers.cost(i, 1, 0), cost_from_seconds(1e-5 + bytes / 1e10));
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
  EXPECT_FALSE(measure_segment_launch(cpu, timing).ok());  // the CPU does not record
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

/// Partitions the residual block over native and a GPU that runs every operator in 0.010 ms,
/// where native runs each ReLU in `host_relu_ms` and anything else in 1 ms, over a link whose
/// copies take 2 us (0.002 ms) each.
collage::Result<collage::PartitionResult> partition_with_cheap_host_relus(const collage::DataflowGraph<Graph>& dataflow,
                                                                           double host_relu_ms) {
  CpuDevice cpu;
  DeviceSet host;
  host.add(cpu);
  BackendSet backends = make_default_backends(host);
  backends.add(std::make_unique<GpuPlacedBackend>(/*every_op=*/true));
  auto oracle = collage::make_oracle<Graph>(
      "relus cheap on the host", kCostUnit,
      [host_relu_ms](const collage::DataflowGraph<Graph>& g, const collage::Candidate& c, const collage::ExtractedFunction&) {
        double ms = 0;
        for (std::size_t i : c.sub_graph.inside()) {
          if (!g.needs_kernel(i)) continue;
          ms += c.target == "gpu" ? 0.010 : (g.op_name(i) == "Relu" ? host_relu_ms : 1.0);
        }
        return ms;
      });
  collage::PartitionerOptions options;
  options.transfers = transfer_model(dataflow, backends, LinkSpeed{2e-6, 1e15}).value();
  return partition_model(dataflow, backends, Configuration{"collage", {"native", "gpu"}}, *oracle, options);
}

/// The parts' costs and the moves charged between them in `r`, summed.
struct Charged {
  double parts = 0;
  double moves = 0;
};
Charged charged(const collage::PartitionResult& r) {
  Charged c;
  for (const collage::Candidate& part : r.partitioning.parts) c.parts += part.cost.raw();
  for (double moved : r.partitioning.transfers) c.moves += moved;
  return c;
}

std::size_t parts_on(const collage::PartitionResult& r, std::string_view target) {
  std::size_t n = 0;
  for (const collage::Candidate& part : r.partitioning.parts) n += part.target == target ? 1 : 0;
  return n;
}

TEST_F(TransferCostsTest, WorkStaysOnTheDeviceWhenTheHostSavesLessThanTheCopiesCost) {
  // Each ReLU is 0.001 ms cheaper on the host, but moving it there takes two copies of 0.002 ms
  // (its input to the host, its output back to the next operator on the GPU).
  auto r = partition_with_cheap_host_relus(dataflow, 0.009);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(parts_on(*r, "native"), 0u);
  EXPECT_GT(parts_on(*r, "gpu"), 0u);
  for (double moved : r->partitioning.transfers) EXPECT_EQ(moved, 0.0);
}

TEST_F(TransferCostsTest, WorkMovesWhereTheHostSavesMoreThanTheCopiesAndTheTotalIncludesThem) {
  auto r = partition_with_cheap_host_relus(dataflow, 0.001);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(parts_on(*r, "native"), 2u);
  const Charged c = charged(*r);
  EXPECT_GE(c.moves, 4 * 0.002);  // each ReLU's input to the host and its output back
  EXPECT_NEAR(r->partitioning.total.raw(), c.parts + c.moves, 1e-12);
}

TEST_F(TransferCostsTest, AnOracleInAnotherUnitThanTheTransfersIsRefused) {
  auto seconds = collage::make_oracle<Graph>(
      "in seconds", "s", [](const collage::DataflowGraph<Graph>&, const collage::Candidate&,
                            const collage::ExtractedFunction&) { return 1e-5; });
  collage::PartitionerOptions options;
  options.transfers = transfer_model(dataflow, backends, LinkSpeed{1e-5, 1e10}, reorders).value();
  auto r = partition_model(dataflow, backends, Configuration{"collage", {"native", "gpu"}}, *seconds, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, collage::ErrorCode::invalid_argument);
  EXPECT_NE(r.error().message.find("'ms' but cost oracle 'in seconds' answers in 's'"), std::string::npos)
      << r.error().message;
}

TEST_F(TransferCostsTest, APlacementIsADeviceAndALayoutAndMovesBetweenLayoutsAreReorders) {
  if (backends.find("onednn_blocked") == nullptr) GTEST_SKIP() << "this build has no onednn backend";
  const LinkSpeed link{1e-5, 1e10};
  collage::TransferModel transfers = transfer_model(dataflow, backends, link, reorders).value();
  EXPECT_EQ(transfers.device.at("gpu"), 1u);
  EXPECT_EQ(transfers.device.at("onednn_blocked"), 2u);
  EXPECT_EQ(transfers.device.at("onednn_winograd_blocked"), 2u);
  EXPECT_EQ(transfers.device.count("onednn"), 0u);  // the host with plain tensors: device 0
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const Shape& shape = model.node(dataflow.handle(i)).shape;
    const double copy = cost_from_seconds(1e-5 + 4.0 * static_cast<double>(numel(shape)) / 1e10);
    const double into = is_blocked(shape, native_blocked_layout()) ? 1.0 : 0.0;  // ms
    EXPECT_DOUBLE_EQ(transfers.cost(i, 0, 2), into) << to_string(shape);
    EXPECT_DOUBLE_EQ(transfers.cost(i, 2, 0), 2 * into);
    EXPECT_DOUBLE_EQ(transfers.cost(i, 2, 1), 2 * into + copy);  // to plain, then over the link
    EXPECT_DOUBLE_EQ(transfers.cost(i, 1, 2), copy + into);
  }
  // Without a GPU, model inputs start plain on the host and outputs end there.
  (void)backends.take("gpu");
  collage::TransferModel host_only = transfer_model(dataflow, backends, link, reorders).value();
  EXPECT_TRUE(host_only.places_off_host());
  EXPECT_EQ(host_only.device.at("onednn_blocked"), 1u);
  EXPECT_TRUE(host_only.inputs_start_on_host);
  EXPECT_TRUE(host_only.outputs_end_on_host);
  EXPECT_TRUE(keeps_blocked_values(backends));

  auto missing = transfer_model(dataflow, backends, link);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no reorder costs for the " + to_string(native_blocked_layout()) + " layout"),
            std::string::npos)
      << missing.error().message;
}

TEST_F(TransferCostsTest, TheBlockedBackendsAreMadeOnlyWhenAsked) {
  const BackendSet plain = make_default_backends(host);
  EXPECT_FALSE(keeps_blocked_values(plain));
  EXPECT_EQ(plain.find("onednn_blocked"), nullptr);
  if (plain.find("onednn") == nullptr) GTEST_SKIP() << "this build has no onednn backend";
  EXPECT_TRUE(keeps_blocked_values(backends));
  for (const char* name : {"onednn_blocked", "onednn_winograd_blocked"}) {
    ASSERT_NE(backends.find(name), nullptr) << name;
    EXPECT_EQ(backends.find(name)->layout(), native_blocked_layout());
  }
}

TEST_F(TransferCostsTest, ReordersAreTimedOncePerShapeAndOnlyForRankFourValues) {
  BackendSet blocked;
  blocked.add(make_reference_backend("blocked", 4, DeviceKind::cpu, Layout::nChw8c));
  collage::TimingOptions timing;
  timing.warmups = 1;
  timing.min_repeats = 3;
  timing.max_repeats = 5;
  for (std::size_t model_bytes : {std::size_t{0}, std::size_t{1} << 20}) {  // warm, in turns
    const ReorderTable table = measure_reorders(dataflow, blocked, timing, model_bytes);
    ASSERT_EQ(table.size(), 1u);
    const ReorderSeconds& r = table.at(Layout::nChw8c);
    ASSERT_EQ(r.into.size(), dataflow.size());
    ASSERT_EQ(r.out_of.size(), dataflow.size());
    for (std::size_t i = 0; i < dataflow.size(); ++i) {
      const Shape& shape = model.node(dataflow.handle(i)).shape;
      EXPECT_EQ(r.into[i] > 0, shape.size() == 4) << to_string(shape);
      EXPECT_EQ(r.out_of[i] > 0, shape.size() == 4) << to_string(shape);
      for (std::size_t j = 0; j < i; ++j) {
        if (model.node(dataflow.handle(j)).shape == shape) {
          EXPECT_EQ(r.into[i], r.into[j]);
        }
      }
    }
  }
}

/// Reference backends "plain" and "blocked" (nChw8c).
BackendSet plain_and_blocked() {
  BackendSet backends;
  backends.add(make_reference_backend("plain"));
  backends.add(make_reference_backend("blocked", 4, DeviceKind::cpu, Layout::nChw8c));
  return backends;
}

/// The residual block's collage partitioning over plain_and_blocked, where each operator costs
/// 1 ms plain and 1 - `saving` ms blocked, and a reorder 1 ms into the blocked layout and 2 ms out.
collage::Result<collage::PartitionResult> partition_blocked(const collage::DataflowGraph<Graph>& dataflow,
                                                            double saving) {
  const BackendSet backends = plain_and_blocked();
  auto oracle = collage::make_oracle<Graph>(
      "blocked saves", kCostUnit,
      [saving](const collage::DataflowGraph<Graph>& g, const collage::Candidate& c, const collage::ExtractedFunction&) {
        double ms = 0;
        for (std::size_t i : c.sub_graph.inside()) ms += g.needs_kernel(i) ? (c.target == "blocked" ? 1 - saving : 1.0) : 0.0;
        return ms;
      });
  collage::PartitionerOptions options;
  options.transfers =
      transfer_model(dataflow, backends, LinkSpeed{}, reorders_costing(dataflow, 1e-3, Layout::nChw8c)).value();
  return partition_model(dataflow, backends, Configuration{"collage", {"plain", "blocked"}}, *oracle, options);
}

TEST_F(TransferCostsTest, ValuesStayPlainWhereTheBlockedLayoutSavesLessThanItsReorders) {
  auto r = partition_blocked(dataflow, 0.1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (double moved : r->partitioning.transfers) EXPECT_EQ(moved, 0.0);
  // Only parts that read and write no rank-4 value (plain in every layout) run blocked.
  for (const collage::Candidate& part : r->partitioning.parts) {
    if (part.target != "blocked") continue;
    for (const collage::IndexSet* values : {&part.sub_graph.input(), &part.sub_graph.output()}) {
      for (std::size_t i : *values) EXPECT_NE(model.node(dataflow.handle(i)).shape.size(), 4u) << dataflow.label(i);
    }
  }
}

TEST_F(TransferCostsTest, ChainsStayBlockedWhereTheySaveMoreAndTheTotalIncludesTheReorders) {
  auto r = partition_blocked(dataflow, 0.9);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(parts_on(*r, "blocked"), 0u);
  const Charged c = charged(*r);
  EXPECT_GE(c.moves, 1.0 + 2.0);  // at least the input into the layout and an output out of it
  EXPECT_NEAR(r->partitioning.total.raw(), c.parts + c.moves, 1e-12);
  // The run matches the reference, and its estimate (the additive model's) counts the reorders.
  const BackendSet backends = plain_and_blocked();
  const std::vector<Tensor> inputs = testing::random_inputs(model, 5);
  collage::Result<std::vector<Tensor>> expected = evaluate(model, inputs);
  ASSERT_TRUE(expected.ok());
  DeviceSet devices;
  devices.add(cpu);
  const PreparedRun run = prepare_partitioning(dataflow, r->partitioning, inputs, *expected, backends, devices, {});
  EXPECT_TRUE(run.result.matches) << run.result.error << run.result.mismatch;
  EXPECT_NEAR(run.result.estimated_ms, c.parts + c.moves, 1e-9);
}

TEST_F(TransferCostsTest, MeasuresTheLinkOfADevice) {
  // On the CPU device a copy is a memcpy: the fit still gives a finite cost per copy and rate.
  collage::TimingOptions timing;
  timing.warmups = 1;
  timing.min_repeats = 3;
  timing.max_repeats = 5;
  auto link = measure_link(cpu, timing);
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_TRUE(std::isfinite(link->seconds_per_copy));
  EXPECT_GE(link->seconds_per_copy, 0.0);
  EXPECT_GT(link->bytes_per_second, 0.0);
  EXPECT_TRUE(std::isfinite(link->bytes_per_second));
}

}  // namespace
}  // namespace tc
