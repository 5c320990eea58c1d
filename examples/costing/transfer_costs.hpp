#pragma once

/// \file
/// What moving a tensor between the host and a GPU costs, for the search: the link to each device
/// measured once, and the collage::TransferModel that places each backend on its device.

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

/// The transfer model of `backends` over `dataflow`: each backend runs on device 1 when its kernels
/// run on the CUDA device and on the host (0) otherwise; moving a node's value (float32, its shape)
/// costs `link`'s time for it, plus a segment launch when it moves onto the device, in kCostUnit
/// (the unit the model says, as the example's oracles do). Graph inputs and outputs are not charged: Executable binds each input to
/// every device that reads it before a run and reads the outputs after it, and a run is timed
/// without them.
collage::TransferModel transfer_model(const collage::DataflowGraph<Graph>& dataflow, const BackendSet& backends,
                                      const LinkSpeed& link);

/// Whether some backend of `backends` runs off the host.
bool uses_a_gpu(const BackendSet& backends);

}  // namespace tc
