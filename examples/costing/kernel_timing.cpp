#include "costing/kernel_timing.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "costing/cost_unit.hpp"
#include "runtime/cpu_state.hpp"

namespace tc {

namespace {

/// A clock for collage::time_run that reads the device time accumulated in `*seconds`, so that
/// the timer's samples are device time rather than the host's wall clock.
struct AccumulatedClock {
  const double* seconds;
  std::chrono::time_point<std::chrono::steady_clock, std::chrono::duration<double>> now() const {
    return std::chrono::time_point<std::chrono::steady_clock, std::chrono::duration<double>>(
        std::chrono::duration<double>(*seconds));
  }
};

/// Times `sample` (which runs work on the device and returns its device seconds) under
/// options.timing, counting only the device seconds; in milliseconds.
collage::Result<collage::Measurement> time_device_samples(const std::function<collage::Result<double>()>& sample,
                                                          const KernelTimingOptions& options) {
  double device_seconds = 0;
  collage::Status failure;
  auto run = [&] {
    if (!failure.ok()) return;
    collage::Result<double> t = sample();
    if (!t.ok()) {
      failure = t.error();
      return;
    }
    device_seconds += *t;
  };
  collage::Measurement m = collage::time_run(run, options.timing, AccumulatedClock{&device_seconds});
  if (!failure.ok()) return failure.error();
  m.cost = collage::Cost::value(cost_from_seconds(m.cost.raw()));
  return m;
}

/// The device time per launch of `recording` (options.recorded_launches launches).
collage::Result<collage::Measurement> time_recording(Recording& recording, Device& device,
                                                     const KernelTimingOptions& options) {
  const auto launches = static_cast<double>(options.recorded_launches);
  return time_device_samples(
      [&]() -> collage::Result<double> {
        collage::Result<double> t = device.time_seconds([&] { return recording.replay(); });
        if (!t.ok()) return t.error();
        return *t / launches;
      },
      options);
}

/// The device time of single launches of `kernel`, each after the device's caches were evicted
/// (outside the timed region, so the host queues the launch while the eviction runs).
collage::Result<collage::Measurement> time_cold_launches(Kernel& kernel, Device& device,
                                                         const std::vector<const float*>& inputs,
                                                         const std::vector<float*>& outputs,
                                                         const KernelTimingOptions& options) {
  return time_device_samples(
      [&]() -> collage::Result<double> {
        if (collage::Status st = device.evict_caches(); !st.ok()) return st.error();
        return device.time_seconds([&] { return kernel.run(inputs, outputs); });
      },
      options);
}

/// The bytes of node `n`'s float32 value.
std::size_t value_bytes(const Node& n) { return static_cast<std::size_t>(numel(n.shape)) * sizeof(float); }

/// The bytes of `graph`'s constants.
std::size_t constant_bytes(const Graph& graph) {
  std::size_t bytes = 0;
  for (const Node& n : graph.nodes()) {
    if (n.op == Op::constant) bytes += value_bytes(n);
  }
  return bytes;
}

/// Launches per recording when timing with cold weights: each launch also replays an eviction of
/// the device's cache, which costs far more than most kernels, so fewer launches keep the
/// measurement short.
constexpr std::size_t kColdWeightLaunches = 4;
/// Timed replays of the evictions and reads alone, whose median is taken off.
constexpr int kBaselineReplays = 5;

/// The device time per launch of `kernel` with its constants out of the device's cache and its
/// inputs in it, as inside a model whose weights outgrow the cache: a recording of launches, each
/// after an eviction of the cache and a read of the inputs, less the median time of a recording
/// of the evictions and reads alone.
collage::Result<collage::Measurement> time_with_cold_weights(Kernel& kernel, Device& device, const Function& function,
                                                             const std::vector<const float*>& inputs,
                                                             const std::vector<float*>& outputs,
                                                             const KernelTimingOptions& options) {
  auto set_the_cache = [&]() -> collage::Status {
    if (collage::Status st = device.evict_caches(); !st.ok()) return st;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::size_t bytes = value_bytes(function.graph.node(function.graph.inputs()[k]));
      if (collage::Status st = device.touch(inputs[k], bytes); !st.ok()) return st;
    }
    return collage::Status::success();
  };
  // Once outside the recordings: what the device loads or allocates for it cannot be recorded.
  if (collage::Status st = set_the_cache(); !st.ok()) return st.error();
  if (collage::Status st = device.synchronize(); !st.ok()) return st.error();
  collage::Result<std::unique_ptr<Recording>> setting = record_launches(device, kColdWeightLaunches, set_the_cache);
  if (!setting.ok()) return setting.error();
  collage::Result<std::unique_ptr<Recording>> running = record_launches(device, kColdWeightLaunches, [&] {
    collage::Status st = set_the_cache();
    return st.ok() ? kernel.run(inputs, outputs) : st;
  });
  if (!running.ok()) return running.error();
  if (collage::Status st = (*setting)->replay(); !st.ok()) return st.error();  // the first replay uploads it
  std::vector<double> setting_seconds;
  for (int k = 0; k < kBaselineReplays; ++k) {
    collage::Result<double> t = device.time_seconds([&] { return (*setting)->replay(); });
    if (!t.ok()) return t.error();
    setting_seconds.push_back(*t);
  }
  std::sort(setting_seconds.begin(), setting_seconds.end());
  const double baseline = setting_seconds[setting_seconds.size() / 2];
  return time_device_samples(
      [&]() -> collage::Result<double> {
        collage::Result<double> t = device.time_seconds([&] { return (*running)->replay(); });
        if (!t.ok()) return t.error();
        return std::max(0.0, *t - baseline) / static_cast<double>(kColdWeightLaunches);
      },
      options);
}

/// The L2 cache's size as the system reports it; 1 MiB where it reports none.
std::size_t l2_bytes() {
  const std::size_t reported = cpu_cache_bytes(2);
  return reported == 0 ? std::size_t{1} << 20 : reported;
}

/// Whether `function`'s constants would have left the caches between two of its runs inside the
/// model (KernelTimingOptions::model_bytes): they outgrow half the L2 cache.
bool weights_leave_the_caches(const Function& function, const KernelTimingOptions& options) {
  return options.model_bytes > 0 && 2 * constant_bytes(function.graph) > l2_bytes();
}

/// `bytes` rounded up to a power of two MiB, at most `cap`.
std::size_t power_of_two_mib(std::size_t bytes, std::size_t cap) {
  std::size_t rounded = std::size_t{1} << 20;
  while (rounded < bytes && rounded < cap) rounded *= 2;
  return std::min(rounded, cap);
}

}  // namespace

std::size_t model_cache_bytes(const Graph& model) {
  std::size_t bytes = 0;
  for (const Node& n : model.nodes()) bytes += value_bytes(n);
  const std::size_t cap = default_eviction_bytes();
  const std::size_t llc = cpu_cache_bytes(3);
  // A model the last-level cache holds leaves a partition's weights there: only the L2 needs
  // writing over, far cheaper than the model's bytes.
  if (llc != 0 && bytes < llc) return power_of_two_mib(2 * l2_bytes(), cap);
  return power_of_two_mib(bytes, cap);
}

std::size_t weight_bytes(const Graph& model) { return constant_bytes(model); }

bool model_weights_outgrow(const Device& device, const KernelTimingOptions& options) {
  const std::size_t cache = device.cache_bytes();
  return cache > 0 && 2 * options.model_weight_bytes > cache;
}

collage::Result<collage::Measurement> time_function(const Function& function, const Backend& backend, Device& device,
                                                    const KernelTimingOptions& options) {
  collage::Result<std::unique_ptr<Kernel>> kernel = backend.compile(function, device);
  if (!kernel.ok()) return kernel.error();
  const DenormalsFlushed denormals(options.flush_denormals);
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<OwnedBuffer> buffers;
  std::vector<const float*> inputs;
  std::vector<float*> outputs;
  for (int in : function.graph.inputs()) {
    const std::size_t n = static_cast<std::size_t>(numel(function.graph.node(in).shape));
    std::vector<float> values(n);
    for (float& v : values) v = dist(rng);
    collage::Result<OwnedBuffer> b = allocate_owned(device, n * sizeof(float));
    if (!b.ok()) return b.error();
    if (collage::Status s = device.upload(b->get(), 0, values.data(), n * sizeof(float)); !s.ok()) return s.error();
    inputs.push_back(b->floats());
    buffers.push_back(std::move(b).value());
  }
  for (int out : function.graph.outputs()) {
    const std::size_t n = static_cast<std::size_t>(numel(function.graph.node(out).shape));
    collage::Result<OwnedBuffer> b = allocate_owned(device, n * sizeof(float));
    if (!b.ok()) return b.error();
    outputs.push_back(b->floats());
    buffers.push_back(std::move(b).value());
  }
  collage::Status failure;
  auto run = [&] {
    if (!failure.ok()) return;
    if (device.kind() == DeviceKind::cpu) clear_vector_upper_state();
    if (collage::Status s = (*kernel)->run(inputs, outputs); !s.ok()) {
      failure = s;
      return;
    }
    if (collage::Status s = device.synchronize(); !s.ok()) failure = s;
  };
  run();  // a first run outside the timer, so a failing kernel is not timed
  if (!failure.ok()) return failure.error();
  if (options.cold_caches && device.kind() != DeviceKind::cpu) {
    return time_cold_launches(**kernel, device, inputs, outputs, options);
  }
  if (device.can_record() && options.recorded_launches > 0) {
    if (model_weights_outgrow(device, options) && constant_bytes(function.graph) > 0) {
      return time_with_cold_weights(**kernel, device, function, inputs, outputs, options);
    }
    collage::Result<std::unique_ptr<Recording>> recorded =
        record_launches(device, options.recorded_launches, [&] { return (*kernel)->run(inputs, outputs); });
    if (recorded.ok()) return time_recording(**recorded, device, options);
  }
  collage::TimingOptions timing = options.timing;
  if (options.cold_caches && device.kind() == DeviceKind::cpu) {
    timing.before_each = [&device] { (void)device.evict_caches(); };
  } else if (device.kind() == DeviceKind::cpu && weights_leave_the_caches(function, options)) {
    timing.before_each = [&] {
      evict_caches(options.model_bytes);
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        touch(inputs[k], static_cast<std::size_t>(numel(function.graph.node(function.graph.inputs()[k]).shape)));
      }
    };
  }
  collage::Measurement m = collage::time_run(run, timing);
  if (!failure.ok()) return failure.error();
  m.cost = collage::Cost::value(cost_from_seconds(m.cost.raw()));
  return m;
}

}  // namespace tc
