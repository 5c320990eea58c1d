#pragma once

/// \file
/// What moving a tensor between placements costs, for the search: a placement is a device and a
/// layout (the host in plain tensors, the host in a blocked layout, the GPU). The link to the GPU
/// and the host's reorders between layouts are measured once, and the collage::TransferModel places
/// each backend on its device and layout.

#include <map>
#include <vector>

#include <collage/cost/robust_timer.hpp>
#include <collage/graph/dataflow_graph.hpp>
#include <collage/search/transfers.hpp>
#include <collage/support/result.hpp>

#include "backends/registry.hpp"
#include "costing/cost_unit.hpp"
#include "runtime/device.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// How fast a device's link to the host moves data: a fixed cost per copy plus bytes over a rate;
/// and what launching a recorded segment of work on the device costs the host.
struct LinkSpeed {
  double seconds_per_copy = 0;
  double bytes_per_second = 0;
  /// Seconds to launch one recorded segment and wait for it (0 where the device does not record).
  /// A run is split into segments where it crosses between the host and the device, so the
  /// transfer model charges it on every move onto the device.
  double segment_seconds = 0;

  /// Seconds to move `bytes` one way.
  double seconds(double bytes) const { return seconds_per_copy + bytes / bytes_per_second; }
};

/// Measures `device`'s link to the host: timed uploads and downloads (each followed by a
/// synchronisation) of a small and a large buffer, fitted as a fixed cost per copy plus a rate,
/// uploads and downloads averaged. Fails when the device fails an allocation or a copy.
collage::Result<LinkSpeed> measure_link(Device& device, const collage::TimingOptions& timing);

/// Seconds the host spends launching a recorded segment on `device` and waiting for it: a
/// recording of one small copy on the device, replayed and synchronised, timed under `timing`.
/// Fails when the device cannot record or a copy fails.
collage::Result<double> measure_segment_launch(Device& device, const collage::TimingOptions& timing);

/// Seconds to reorder each node's value (by DataflowGraph index) from plain tensors into a blocked
/// layout and back; 0 for values that layout keeps plain.
struct ReorderSeconds {
  std::vector<double> into;
  std::vector<double> out_of;
};

/// The reorders of each blocked layout some backend keeps values in.
using ReorderTable = std::map<Layout, ReorderSeconds>;

/// Times the host's reorders (reorder_on_threads on `threads` threads, as Executable runs them) of
/// every rank-4 value of `dataflow` between plain tensors and each blocked layout of `backends`,
/// each distinct shape and direction once under `timing`: with `model_bytes`, in turns as the
/// measuring oracle times CPU kernels (collage::time_in_turns, the rest of the model's bytes written
/// through the caches before each round, a reorder's source and target read back on the threads
/// before it runs); with 0, warm, over and over.
ReorderTable measure_reorders(const collage::DataflowGraph<Graph>& dataflow, const BackendSet& backends,
                              const collage::TimingOptions& timing, std::size_t model_bytes = 0, int threads = 1);

/// The transfer model of `backends` over `dataflow`. Each placement (a device and a layout) is one
/// of the model's devices: the host with plain tensors is 0, the GPU 1 (when a backend runs there),
/// the host in each blocked layout the next; each backend is placed by its device and layout.
/// Moving a node's value costs, in kCostUnit (the unit the model says, as the example's oracles do):
/// a reorder to plain when it leaves a blocked layout, `link`'s time for it plus a segment launch
/// when it moves onto the GPU, and a reorder when it enters a blocked layout (`reorders`, which
/// holds for each blocked layout of `backends`). Without a GPU, graph inputs start plain on the
/// host and outputs end there, as Executable binds and returns them, the reorders within the run.
/// With one, graph inputs and outputs are not charged: Executable binds each input to every device
/// that reads it before a run and reads the outputs after it, and a run is timed without them.
/// Fails naming a blocked layout of `backends` that `reorders` lacks.
collage::Result<collage::TransferModel> transfer_model(const collage::DataflowGraph<Graph>& dataflow,
                                                       const BackendSet& backends, const LinkSpeed& link,
                                                       const ReorderTable& reorders = {});

/// Whether some backend of `backends` runs off the host.
bool uses_a_gpu(const BackendSet& backends);

/// Whether some backend of `backends` keeps values in a blocked layout.
bool keeps_blocked_values(const BackendSet& backends);

}  // namespace tc
