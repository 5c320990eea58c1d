#include "executor/executable.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <collage/cost/cost_oracle.hpp>

#include "driver/configurations.hpp"
#include "backends/reference/reference_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/compare.hpp"
#include "tensor/reference.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/tape_device.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

using DataflowGraph = collage::DataflowGraph<Graph>;
using testing::GraphBuilder;

/// A device of kind cuda backed by host memory: exercises the executor's transfers on any machine.
class HostBackedDevice final : public Device {
 public:
  DeviceKind kind() const override { return DeviceKind::cuda; }
  std::string name() const override { return "host-backed stand-in"; }
  bool available() const override { return true; }
  collage::Result<Buffer> allocate(std::size_t bytes) override {
    auto b = host_.allocate(bytes);
    if (b.ok()) b->device = DeviceKind::cuda;
    ++allocations;
    return b;
  }
  void release(Buffer b) override { host_.release(b); }
  collage::Status upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override {
    ++uploads;
    return host_.upload(dst, offset, src, bytes);
  }
  collage::Status download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override {
    ++downloads;
    return host_.download(dst, src, offset, bytes);
  }
  collage::Status copy(const Buffer& dst, std::size_t d, const Buffer& src, std::size_t s, std::size_t bytes) override {
    return host_.copy(dst, d, src, s, bytes);
  }
  collage::Status synchronize() override { return collage::Status::success(); }
  int allocations = 0, uploads = 0, downloads = 0;

 private:
  CpuDevice host_;
};

/// The host and a HostBackedDevice, both in `set`.
struct HostAndAccelerator {
  HostAndAccelerator() {
    set.add(cpu);
    set.add(accelerator);
  }
  HostAndAccelerator(const HostAndAccelerator&) = delete;
  HostAndAccelerator& operator=(const HostAndAccelerator&) = delete;
  CpuDevice cpu;
  HostBackedDevice accelerator;
  DeviceSet set;
};

/// Costs per op: target "fast_conv" is cheap for convolutions, "general" for the rest.
std::unique_ptr<collage::CostOracle<Graph>> op_cost_oracle() {
  return collage::make_oracle<Graph>("op cost", [](const DataflowGraph& g, const collage::Candidate& c, const auto&) {
    double cost = 0.1;
    for (std::size_t i : c.sub_graph.inside()) {
      if (!g.needs_kernel(i)) continue;
      const bool conv = g.op_name(i) == "Conv";
      cost += (c.target == "fast_conv") == conv ? 1.0 : 5.0;
    }
    return collage::Cost::value(cost);
  });
}

void expect_matches_reference(const Graph& model, Executable& exe, std::uint64_t seed) {
  testing::expect_run_matches_reference(exe, model, seed, 1e-5, 1e-6);
}

TEST(Executable, MixedPartitioningMatchesTheReference) {
  const Graph model = testing::residual_block();
  auto dataflow = DataflowGraph::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(make_reference_backend("fast_conv"));
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  auto oracle = op_cost_oracle();
  Configuration config{"collage", {"general", "fast_conv"}, collage::SearchAlgorithm::exact};
  auto partitioned = partition_model(*dataflow, backends, config, *oracle);
  ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  std::size_t conv_parts = 0;
  for (const StepInfo& step : exe->steps()) conv_parts += step.target == "fast_conv";
  EXPECT_EQ(conv_parts, 2u);
  expect_matches_reference(model, *exe, 11);
  // Run again with other inputs: nothing is left over from the first run.
  expect_matches_reference(model, *exe, 12);
  ASSERT_EQ(exe->memory().size(), 1u);
  EXPECT_GE(exe->memory()[0].arena_bytes, exe->memory()[0].lower_bound);
  EXPECT_LE(static_cast<double>(exe->memory()[0].arena_bytes), 1.2 * static_cast<double>(exe->memory()[0].lower_bound));
}

/// `model`'s collage partitioning over `targets` (of `backends`) under op_cost_oracle, compiled.
collage::Result<Executable> compile_collage(const DataflowGraph& dataflow, const BackendSet& backends,
                                            const DeviceSet& devices, const std::vector<std::string>& targets) {
  auto oracle = op_cost_oracle();
  auto partitioned = partition_model(dataflow, backends, {"collage", targets, collage::SearchAlgorithm::exact}, *oracle);
  if (!partitioned.ok()) return partitioned.error();
  return Executable::compile(dataflow, partitioned->partitioning, backends, devices);
}

/// How many of `exe`'s steps have `target` ("copy", "reorder" or a backend's name).
std::size_t steps_named(const Executable& exe, const std::string& target) {
  std::size_t n = 0;
  for (const StepInfo& step : exe.steps()) n += step.target == target;
  return n;
}

TEST(Executable, TensorsCrossDevicesThroughCopies) {
  const Graph model = testing::residual_block();
  auto dataflow = DataflowGraph::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(make_reference_backend("fast_conv", 4, DeviceKind::cuda));
  HostAndAccelerator devices;
  auto exe = compile_collage(*dataflow, backends, devices.set, {"general", "fast_conv"});
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  // relu1 and the input x go to the accelerator's conv2 / are read back for the residual add.
  EXPECT_GE(steps_named(*exe, "copy"), 2u);
  EXPECT_EQ(exe->memory().size(), 2u);
  expect_matches_reference(model, *exe, 5);
  EXPECT_GT(devices.accelerator.uploads, 0);
  EXPECT_GT(devices.accelerator.downloads, 0);
}

// A placement is a device and a layout: convolutions on a backend that keeps its values blocked
// (12 channels padded to two blocks of 8), the rest plain. Values are reordered where they pass
// between the two, the model input as it is read and the outputs before they are returned. With
// fewer channels than a block (4) values are plain in both placements: nothing is reordered.
TEST(Executable, TensorsChangeLayoutsThroughReorders) {
  for (std::int64_t channels : {12, 4}) {
    const Graph model = testing::residual_block(3, channels);
    auto dataflow = DataflowGraph::build(model);
    ASSERT_TRUE(dataflow.ok());
    BackendSet backends;
    backends.add(make_reference_backend("general"));
    backends.add(make_reference_backend("fast_conv", 4, DeviceKind::cpu, Layout::nChw8c));
    CpuDevice cpu;
    DeviceSet devices;
    devices.add(cpu);
    for (const std::vector<std::string>& targets : {std::vector<std::string>{"general", "fast_conv"},
                                                    std::vector<std::string>{"fast_conv"}}) {
      auto exe = compile_collage(*dataflow, backends, devices, targets);
      ASSERT_TRUE(exe.ok()) << exe.error().message;
      // all on fast_conv: x in, relu1 out; mixed: also each convolution's result out and relu1 in
      if (channels < 8) {
        EXPECT_EQ(steps_named(*exe, "reorder"), 0u);
      } else {
        EXPECT_GE(steps_named(*exe, "reorder"), targets.size() == 1 ? 2u : 4u);
      }
      expect_matches_reference(model, *exe, 41);
      expect_matches_reference(model, *exe, 42);
    }
  }
}

// Between a device and a blocked layout on the host a value takes two steps: out of the device by a
// copy, then into the layout by a reorder; back, a reorder to plain, then a copy.
TEST(Executable, AValueMovesBetweenADeviceAndABlockedLayoutByACopyAndAReorder) {
  const Graph model = testing::residual_block(3, 12);
  auto dataflow = DataflowGraph::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general", 4, DeviceKind::cpu, Layout::nChw8c));
  backends.add(make_reference_backend("fast_conv", 4, DeviceKind::cuda));
  HostAndAccelerator devices;
  auto exe = compile_collage(*dataflow, backends, devices.set, {"general", "fast_conv"});
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  EXPECT_GE(steps_named(*exe, "copy"), 2u);
  EXPECT_GE(steps_named(*exe, "reorder"), 2u);
  expect_matches_reference(model, *exe, 43);
  expect_matches_reference(model, *exe, 44);
  EXPECT_GT(devices.accelerator.downloads, 0);
}

/// The residual block with its convolutions on a TapeDevice and the rest on the CPU.
struct RecordingFixture : ::testing::Test {
  Graph model = testing::residual_block();
  collage::DataflowGraph<Graph> dataflow = std::move(DataflowGraph::build(model)).value();
  BackendSet backends;
  CpuDevice cpu;
  testing::TapeDevice tape;
  DeviceSet devices;
  collage::Partitioning partitioning;

  void SetUp() override {
    backends.add(make_reference_backend("general"));
    backends.add(std::make_unique<testing::TapeBackend>("fast_conv"));
    devices.add(cpu);
    devices.add(tape);
    auto oracle = op_cost_oracle();
    auto partitioned = partition_model(dataflow, backends, {"collage", {"general", "fast_conv"}, collage::SearchAlgorithm::exact}, *oracle);
    ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
    partitioning = partitioned->partitioning;
  }
};

TEST_F(RecordingFixture, StepsOnARecordingDeviceRunAsSegmentsRecordedOnceAndReplayed) {
  auto exe = Executable::compile(dataflow, partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  const std::vector<StepInfo>& steps = exe->steps();
  std::size_t covered = 0, recorded = 0;
  for (const SegmentInfo& segment : exe->segments()) {
    EXPECT_EQ(segment.first_step, covered);
    covered = segment.end_step;
    for (std::size_t k = segment.first_step; k < segment.end_step; ++k) {
      EXPECT_EQ(steps[k].device, segment.device);
      // Host steps and copies from the host stand alone; steps on the tape device are recorded.
      const bool from_host = steps[k].target == "copy" && steps[k].device == DeviceKind::cuda;
      EXPECT_EQ(segment.recorded, steps[k].device == DeviceKind::cuda && !from_host) << "step " << k + 1;
      if (segment.recorded) {
        EXPECT_NE(steps[k].target, "general");
      }
    }
    if (!segment.recorded) {
      EXPECT_EQ(segment.end_step - segment.first_step, 1u);
    }
    recorded += segment.recorded;
  }
  EXPECT_EQ(covered, steps.size());
  ASSERT_GT(recorded, 0u);
  expect_matches_reference(model, *exe, 21);
  EXPECT_EQ(tape.begun, static_cast<int>(recorded));
  EXPECT_EQ(tape.replays, static_cast<int>(recorded));
  // Later runs replay what was recorded, with the new inputs in the same buffers.
  expect_matches_reference(model, *exe, 22);
  expect_matches_reference(model, *exe, 23);
  EXPECT_EQ(tape.begun, static_cast<int>(recorded));
  EXPECT_EQ(tape.replays, 3 * static_cast<int>(recorded));
  EXPECT_TRUE(exe->notes().empty());
}

TEST_F(RecordingFixture, WithoutRecordingEveryStepIsLaunchedAlone) {
  ExecutableOptions options;
  options.record = false;
  auto exe = Executable::compile(dataflow, partitioning, backends, devices, options);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  EXPECT_EQ(exe->segments().size(), exe->steps().size());
  for (const SegmentInfo& segment : exe->segments()) EXPECT_FALSE(segment.recorded);
  expect_matches_reference(model, *exe, 21);
  EXPECT_EQ(tape.begun, 0);
}

TEST_F(RecordingFixture, ARecordingThatFailsIsNotedAndTheStepsRunOneByOne) {
  tape.refuse = true;
  auto exe = Executable::compile(dataflow, partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  expect_matches_reference(model, *exe, 21);
  ASSERT_FALSE(exe->notes().empty());
  EXPECT_NE(exe->notes().front().find("tape: recording refused; launching them one by one"), std::string::npos)
      << exe->notes().front();
  const std::size_t notes = exe->notes().size();
  expect_matches_reference(model, *exe, 22);
  EXPECT_EQ(exe->notes().size(), notes);  // tried once per segment
  EXPECT_EQ(tape.replays, 0);
  for (const SegmentInfo& segment : exe->segments()) EXPECT_FALSE(segment.recorded);
}

TEST_F(RecordingFixture, AProfileTimesEachRecordedSegmentsStepsTogetherOnItsDeviceAndTheRestAlone) {
  tape.region_seconds = 0.001;
  auto exe = Executable::compile(dataflow, partitioning, backends, devices);
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  ASSERT_TRUE(exe->set_inputs(testing::random_inputs(model, 3)).ok());
  std::vector<double> seconds;
  ASSERT_TRUE(exe->execute(&seconds).ok());
  ASSERT_TRUE(exe->execute(&seconds).ok());
  ASSERT_EQ(seconds.size(), exe->steps().size());
  int recorded_segments = 0;
  for (const SegmentInfo& segment : exe->segments()) {
    recorded_segments += segment.recorded;
    for (std::size_t k = segment.first_step; k < segment.end_step; ++k) {
      if (segment.recorded) {
        EXPECT_DOUBLE_EQ(seconds[k], 2 * 0.001) << "step " << k + 1;
      } else {
        EXPECT_GT(seconds[k], 0.0) << "step " << k + 1;
        EXPECT_LT(seconds[k], 1.0) << "step " << k + 1;
      }
    }
  }
  ASSERT_GT(recorded_segments, 0);
  EXPECT_EQ(tape.timed_sequences, 2 * recorded_segments);
  expect_matches_reference(model, *exe, 24);
}

/// Costs that make every operator a part of its own.
std::unique_ptr<collage::CostOracle<Graph>> one_node_parts_oracle() {
  return collage::make_oracle<Graph>("one node each", [](const DataflowGraph& g, const collage::Candidate& c, const auto&) {
    double nodes = 0;
    for (std::size_t i : c.sub_graph.inside()) nodes += g.needs_kernel(i) ? 1.0 : 0.0;
    return collage::Cost::value(nodes * nodes);
  });
}

/// `model` compiled with every operator a part of its own on the reference backend (its values in
/// `layout`), and whether its step running node `concat` ran in place; checked against the
/// reference interpreter.
bool concat_runs_in_place(const Graph& model, int concat, bool allowed = true, Layout layout = Layout::plain) {
  auto dataflow = DataflowGraph::build(model);
  if (!dataflow.ok()) {
    ADD_FAILURE() << dataflow.error().message;
    return false;
  }
  BackendSet backends;
  backends.add(make_reference_backend("general", 4, DeviceKind::cpu, layout));
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  auto oracle = one_node_parts_oracle();
  auto partitioned = partition_model(*dataflow, backends, {"collage", {"general"}, collage::SearchAlgorithm::exact}, *oracle);
  if (!partitioned.ok()) {
    ADD_FAILURE() << partitioned.error().message;
    return false;
  }
  ExecutableOptions options;
  options.concat_in_place = allowed;
  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices, options);
  if (!exe.ok()) {
    ADD_FAILURE() << exe.error().message;
    return false;
  }
  expect_matches_reference(model, *exe, 31);
  expect_matches_reference(model, *exe, 32);
  bool in_place = false;
  for (const StepInfo& step : exe->steps()) {
    if (step.nodes == std::vector<int>{concat}) in_place = step.in_place;
  }
  return in_place;
}

Attributes concat_axis(std::int64_t axis) {
  Attributes a;
  a.set("axis", axis);
  return a;
}

TEST(Executable, AConcatOfSlicesTheStepsBeforeItWroteRunsNothing) {
  GraphBuilder b;
  const int x = b.input({1, 16, 4, 4});
  const int cat = b.op(Op::concat, {b.op(Op::relu, {x}), b.op(Op::neg, {x}), b.op(Op::exp, {x})}, concat_axis(1));
  const Graph model = b.done(b.op(Op::tanh, {cat}));
  EXPECT_TRUE(concat_runs_in_place(model, cat));
  EXPECT_FALSE(concat_runs_in_place(model, cat, /*allowed=*/false));
}

TEST(Executable, ABlockedConcatRunsInPlaceWhereEachInputIsWholeBlocksOfChannels) {
  for (const std::int64_t channels : {16, 12}) {
    GraphBuilder b;
    const int x = b.input({1, channels, 4, 4});
    const int cat = b.op(Op::concat, {b.op(Op::relu, {x}), b.op(Op::neg, {x})}, concat_axis(1));
    const Graph model = b.done(b.op(Op::tanh, {cat}));
    EXPECT_EQ(concat_runs_in_place(model, cat, true, Layout::nChw8c), channels % 8 == 0) << channels << " channels";
  }
}

TEST(Executable, AConcatCopiesWhereAnInputIsNotOnlyItsOwn) {
  {  // read by another part too
    GraphBuilder b;
    const int x = b.input({1, 16, 4, 4});
    const int a = b.op(Op::relu, {x});
    const int cat = b.op(Op::concat, {a, b.op(Op::neg, {x})}, concat_axis(1));
    const Graph model = b.done({b.op(Op::tanh, {cat}), b.op(Op::sigmoid, {a})});
    EXPECT_FALSE(concat_runs_in_place(model, cat));
  }
  {  // a model output
    GraphBuilder b;
    const int x = b.input({1, 16, 4, 4});
    const int n = b.op(Op::neg, {x});
    const int cat = b.op(Op::concat, {b.op(Op::relu, {x}), n}, concat_axis(1));
    const Graph model = b.done({b.op(Op::tanh, {cat}), n});
    EXPECT_FALSE(concat_runs_in_place(model, cat));
  }
  {  // a model input
    GraphBuilder b;
    const int x = b.input({1, 16, 4, 4});
    const int cat = b.op(Op::concat, {x, b.op(Op::relu, {x})}, concat_axis(1));
    const Graph model = b.done(b.op(Op::tanh, {cat}));
    EXPECT_FALSE(concat_runs_in_place(model, cat));
  }
  {  // not contiguous slices: a dimension before the axis is not 1
    GraphBuilder b;
    const int x = b.input({1, 16, 4, 4});
    const int cat = b.op(Op::concat, {b.op(Op::relu, {x}), b.op(Op::neg, {x})}, concat_axis(2));
    const Graph model = b.done(b.op(Op::tanh, {cat}));
    EXPECT_FALSE(concat_runs_in_place(model, cat));
  }
  {  // the same input twice
    GraphBuilder b;
    const int x = b.input({1, 16, 4, 4});
    const int r = b.op(Op::relu, {x});
    const int cat = b.op(Op::concat, {r, r}, concat_axis(1));
    const Graph model = b.done(b.op(Op::tanh, {cat}));
    EXPECT_FALSE(concat_runs_in_place(model, cat));
  }
}

TEST(Executable, ErrorsNameThePart) {
  const Graph model = testing::residual_block();
  auto dataflow = DataflowGraph::build(model);
  ASSERT_TRUE(dataflow.ok());
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(make_reference_backend("elsewhere", 4, DeviceKind::cuda));
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  auto oracle = op_cost_oracle();
  auto partitioned = partition_model(*dataflow, backends, {"general", {"general"}, collage::SearchAlgorithm::greedy}, *oracle);
  ASSERT_TRUE(partitioned.ok()) << partitioned.error().message;
  collage::Partitioning moved = partitioned->partitioning;
  moved.parts[0].target = "elsewhere";
  auto no_device = Executable::compile(*dataflow, moved, backends, devices);
  ASSERT_FALSE(no_device.ok());
  EXPECT_NE(no_device.error().message.find("part 1 (elsewhere: "), std::string::npos) << no_device.error().message;
  EXPECT_NE(no_device.error().message.find("no cuda device"), std::string::npos);
  moved.parts[0].target = "missing";
  auto no_backend = Executable::compile(*dataflow, moved, backends, devices);
  ASSERT_FALSE(no_backend.ok());
  EXPECT_NE(no_backend.error().message.find("no backend named 'missing'"), std::string::npos);

  auto exe = Executable::compile(*dataflow, partitioned->partitioning, backends, devices);
  ASSERT_TRUE(exe.ok());
  EXPECT_FALSE(exe->execute().ok());
  EXPECT_FALSE(exe->set_inputs({}).ok());
  EXPECT_FALSE(exe->set_inputs({Tensor({1, 4, 6, 5})}).ok());
}

}  // namespace
}  // namespace tc
