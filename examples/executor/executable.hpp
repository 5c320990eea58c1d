#pragma once

/// \file
/// Executable: a partitioned model compiled by its backends, with planned memory, ready to run
/// many times. Partitions run in the partitioning's (topological) order; tensors crossing
/// partitions live in one arena per device, placed by liveness; a tensor needed on another device
/// is copied there just before its first use there.

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

/// One step of an Executable: a kernel launch or a copy between devices.
struct StepInfo {
  /// The backend's name for a kernel; "copy" for a transfer.
  std::string target;
  /// The partition's operator nodes (model node ids), or the copied node.
  std::vector<int> nodes;
  DeviceKind device = DeviceKind::cpu;
};

/// A model compiled for a partitioning.
class Executable {
 public:
  /// Compiles every part of `partitioning` (over `dataflow`, the model's collage graph) with the
  /// backend named by its target, and plans memory. Fails naming the part when its backend is
  /// missing, its device is missing or unavailable, or it does not compile.
  static collage::Result<Executable> compile(const collage::DataflowGraph<Graph>& dataflow,
                                             const collage::Partitioning& partitioning, const BackendSet& backends,
                                             const DeviceSet& devices);

  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  ~Executable();

  /// Uploads the model inputs (graph.inputs() order, shapes checked) into the arenas.
  collage::Status set_inputs(const std::vector<Tensor>& inputs);
  /// Runs every step once and waits for the devices. Inputs must have been set. With
  /// `step_seconds`, each step is followed by a device synchronisation and its wall-clock time is
  /// added to (*step_seconds)[step] (resized to steps().size()): a per-partition profile of the
  /// model as it really runs, to set against the costs measured in isolation.
  collage::Status execute(std::vector<double>* step_seconds = nullptr);
  /// Downloads the model outputs (graph.outputs() order).
  collage::Result<std::vector<Tensor>> outputs() const;
  /// set_inputs, execute, outputs.
  collage::Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);

  const std::vector<StepInfo>& steps() const;
  const std::vector<ArenaStats>& memory() const;

 private:
  struct State;
  explicit Executable(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tc
