#pragma once

/// \file
/// Executable: a partitioned model compiled by its backends, with planned memory, ready to run
/// many times. Partitions run in the partitioning's (topological) order; tensors crossing
/// partitions live in one arena per device, placed by liveness. A tensor's placement is a device
/// and a layout (its backend's): a tensor needed on another device is copied there, and one needed
/// in another layout reordered (on the host), just before its first use there; model inputs are
/// bound plain and outputs are reordered to plain at the end of a run.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <collage/graph/dataflow_graph.hpp>
#include <collage/search/partitioning.hpp>
#include <collage/support/result.hpp>

#include "backends/registry.hpp"
#include "tensor/function.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// Memory use of an Executable on one device.
struct ArenaStats {
  DeviceKind device = DeviceKind::cpu;
  std::size_t arena_bytes = 0;
  /// The liveness lower bound of the same buffers (no plan can use less).
  std::size_t lower_bound = 0;
  std::size_t buffers = 0;
};

/// One step of an Executable: a kernel launch, a copy between devices or a reorder between layouts.
struct StepInfo {
  /// The backend's name for a kernel; "copy" for a copy, "reorder" for a reorder.
  std::string target;
  /// The partition's operator nodes (model node ids), or the copied or reordered node.
  std::vector<int> nodes;
  DeviceKind device = DeviceKind::cpu;
  /// A Concat whose inputs the steps before it wrote straight into its output
  /// (ExecutableOptions::concat_in_place): it launches nothing.
  bool in_place = false;

  /// Whether it moves a value (a copy or a reorder) rather than running a partition.
  bool moves_a_value() const { return target == "copy" || target == "reorder"; }
};

/// Consecutive steps that run on one device and can be recorded there (a CUDA graph): launched
/// as one replay. Steps on the host and copies between devices each stand alone.
struct SegmentInfo {
  std::size_t first_step = 0;
  /// One past the last step.
  std::size_t end_step = 0;
  DeviceKind device = DeviceKind::cpu;
  /// Whether its steps are recorded and replayed (else launched one by one).
  bool recorded = false;
};

/// How an Executable runs.
struct ExecutableOptions {
  /// Record each segment of steps on a device that can record (the CUDA device) the first time it
  /// runs and replay the recording after that; where recording fails, say why (notes()) and
  /// launch the steps one by one, as without it.
  bool record = true;
  /// Run with denormal floats flushed to zero on the calling thread (DenormalsFlushed); false
  /// keeps IEEE denormals.
  bool flush_denormals = true;
  /// Concatenate in place: where a part is a lone Concat whose result's dimensions before the axis
  /// are all 1 (so each input is a contiguous slice of it), and each input is computed on the same
  /// device by an earlier part, read by nothing else and not a model output, each producer writes
  /// its slice of the result directly (where every slice starts at a multiple of 64 bytes, as
  /// aligned as any buffer of the memory plan) and the Concat runs nothing.
  bool concat_in_place = true;
  /// Threads of the shared CPU pool that the executor's own reorders between layouts run on (as
  /// the CPU backends' kernels are given theirs: BackendOptions::cpu_threads).
  int cpu_threads = 1;
};

/// A model compiled for a partitioning.
class Executable {
 public:
  /// Compiles every part of `partitioning` (over `dataflow`, the model's collage graph) with the
  /// backend named by its target, and plans memory. Fails naming the part when its backend is
  /// missing, its device is missing or unavailable, or it does not compile.
  static collage::Result<Executable> compile(const collage::DataflowGraph<Graph>& dataflow,
                                             const collage::Partitioning& partitioning, const BackendSet& backends,
                                             const DeviceSet& devices, const ExecutableOptions& options = {});

  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  ~Executable();

  /// Uploads the model inputs (graph.inputs() order, shapes checked) into the arenas.
  collage::Status set_inputs(const std::vector<Tensor>& inputs);
  /// Runs every step once and waits for the devices. Inputs must have been set. Segments that can
  /// be recorded are recorded on their first run and replayed after that. With `step_seconds`,
  /// each step runs alone and its time is added to (*step_seconds)[step] (resized to
  /// steps().size()): a per-partition profile of the model, to set against the costs measured in
  /// isolation. The steps of a segment its device records are timed together in device time
  /// (Device::time_regions: on a GPU, timers between them inside the replayed recording), so each
  /// gets what it adds to the run; any other step is launched and followed by a device
  /// synchronisation, in wall-clock time.
  collage::Status execute(std::vector<double>* step_seconds = nullptr);
  /// Downloads the model outputs (graph.outputs() order).
  collage::Result<std::vector<Tensor>> outputs() const;
  /// set_inputs, execute, outputs.
  collage::Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);

  const std::vector<StepInfo>& steps() const;
  const std::vector<ArenaStats>& memory() const;
  /// The run split into segments, in order.
  std::vector<SegmentInfo> segments() const;
  /// One line per segment whose recording failed, saying why ("recording steps 2-5 on cuda: ...;
  /// launching them one by one").
  const std::vector<std::string>& notes() const;

 private:
  struct State;
  explicit Executable(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tc
