#pragma once

/// \file
/// Timing one partition's kernel: compile it, run it on seeded random inputs on its device, and
/// time the runs robustly (warm-ups, repeats until the spread settles, a percentile).

#include <cstddef>
#include <cstdint>

#include <collage/cost/robust_timer.hpp>

#include "backends/backend.hpp"
#include "tensor/function.hpp"

namespace tc {

/// How kernels are timed.
struct KernelTimingOptions {
  collage::TimingOptions timing;
  /// Seed of the random inputs.
  std::uint64_t seed = 1;
  /// Evict the device's caches before every timed run of a kernel (Device::evict_caches), so that
  /// its cost is the cold one it has inside a model whose weights do not fit the caches, not the
  /// warm one of running it alone over and over. On a GPU each launch is then timed alone (device
  /// time, CUDA events) after an eviction, rather than inside a recording.
  bool cold_caches = false;
  /// On a device that records (a GPU), the kernel's cost is what it adds inside a replayed
  /// recording: this many back-to-back launches are recorded once, and each timed replay's device
  /// time is divided by their number. 0: time single launches on the host's clock.
  std::size_t recorded_launches = 16;
  /// Run CPU kernels with denormals flushed to zero, as the executor does (DenormalsFlushed).
  bool flush_denormals = true;
};

/// The cost in milliseconds of running `function` compiled by `backend` on `device`, with its
/// spread and sample count: host wall time around one run and a synchronisation, or on a device
/// that records, device time per launch inside a replayed recording (KernelTimingOptions). A
/// compile or run failure is an error naming it.
collage::Result<collage::Measurement> time_function(const Function& function, const Backend& backend, Device& device,
                                                    const KernelTimingOptions& options);

}  // namespace tc
