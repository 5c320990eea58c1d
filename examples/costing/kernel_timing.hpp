#pragma once

/// \file
/// Timing one partition's kernel: compile it, run it on seeded random inputs on its device, and
/// time the runs robustly (warm-ups, repeats until the spread settles, a percentile).

#include <cstddef>
#include <cstdint>
#include <vector>

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
  /// On the CPU, the distinct bytes the rest of the model moves through the caches between two runs
  /// of one of its partitions (see model_cache_bytes), 0 for none. Kernels are then timed in turns
  /// (time_functions): between two runs of one, the others of its group run and, where their bytes
  /// fall short of these, the rest is written through the caches; each run starts with its inputs
  /// and outputs read, as the partitions before it leave them. So its weights and code come from
  /// where they would inside the model. 0: each kernel is timed run over and over, warm.
  /// cold_caches takes precedence.
  std::size_t model_bytes = 0;
  /// The bytes of the model's constants (its weights; weight_bytes), 0 for none (the default). On a
  /// device that records whose kernels share a cache of less than twice that
  /// (model_weights_outgrow), a kernel with constants is timed with its constants out of that
  /// cache and its inputs in it, as in a model whose weights the cache cannot hold: each of its
  /// recorded launches follows an eviction of the cache and a read of its inputs, whose own time
  /// is taken off; a device that cannot do either makes the measurement fail. cold_caches takes
  /// precedence.
  std::size_t model_weight_bytes = 0;
  /// On a device that records (a GPU), the kernel's cost is what it adds inside a replayed
  /// recording: this many back-to-back launches are recorded once, and each timed replay's device
  /// time is divided by their number. 0: time single launches on the host's clock.
  std::size_t recorded_launches = 16;
  /// Run CPU kernels with denormals flushed to zero, as the executor does (DenormalsFlushed).
  bool flush_denormals = true;
  /// Threads the CPU backends' kernels run on. In turns (model_bytes), each run's inputs and
  /// outputs are read back on that many threads of the shared pool, their chunks dealt out in turn
  /// (touch_interleaved), as partitions on that many threads leave them spread over every core's
  /// caches.
  int cpu_threads = 1;
};

/// KernelTimingOptions::model_bytes for `model`: the bytes it keeps in memory at its peak, run node
/// by node in order (its constants, and the values computed and not yet read for the last time):
/// the distinct bytes a run of the model moves through the caches, as its memory plan reuses the
/// buffers of values no longer read. Rounded up to a power of two MiB (so that models of about one
/// size share measurements), at most default_eviction_bytes().
std::size_t model_cache_bytes(const Graph& model);

/// The bytes of `model`'s constants (KernelTimingOptions::model_weight_bytes).
std::size_t weight_bytes(const Graph& model);

/// Whether the model's weights (options.model_weight_bytes) outgrow half the cache `device`'s
/// kernels share (Device::cache_bytes), so that each kernel finds its weights out of it.
bool model_weights_outgrow(const Device& device, const KernelTimingOptions& options);

/// The cost in milliseconds of running `function` compiled by `backend` on `device`, with its
/// spread and sample count: host wall time around one run and a synchronisation, or on a device
/// that records, device time per launch inside a replayed recording (KernelTimingOptions). A
/// compile or run failure is an error naming it.
collage::Result<collage::Measurement> time_function(const Function& function, const Backend& backend, Device& device,
                                                    const KernelTimingOptions& options);

/// One partition to time: its function, the backend that compiles it and the device it runs on.
struct KernelToTime {
  const Function* function = nullptr;
  const Backend* backend = nullptr;
  Device* device = nullptr;
};

/// Each kernel's cost as time_function gives it, except that CPU kernels, where
/// options.model_bytes is set (and not cold_caches), are timed in turns (collage::time_in_turns):
/// each round runs once every kernel in turns that wants more samples, and kernels join, in order,
/// while those in turns hold fewer than model_bytes (inputs, outputs and constants) and number
/// fewer than 256.
std::vector<collage::Result<collage::Measurement>> time_functions(const std::vector<KernelToTime>& kernels,
                                                                  const KernelTimingOptions& options);

}  // namespace tc
