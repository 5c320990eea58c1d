#include "costing/kernel_timing.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "costing/cost_unit.hpp"
#include "runtime/cpu_state.hpp"
#include "tensor/op_attrs.hpp"

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

/// A kernel ready to be timed: compiled, its inputs filled with seeded random values, its outputs
/// allocated, and run once (so that a failing kernel is not timed).
struct ReadyKernel {
  std::unique_ptr<Kernel> kernel;
  Device* device = nullptr;
  std::vector<OwnedBuffer> buffers;
  std::vector<const float*> inputs;
  std::vector<float*> outputs;
  /// The floats of each input and output.
  std::vector<std::size_t> input_floats;
  std::vector<std::size_t> output_floats;
  /// The bytes of its inputs, outputs and constants.
  std::size_t bytes = 0;
};

/// Runs `ready`'s kernel once and waits for it.
collage::Status run_once(ReadyKernel& ready) {
  if (ready.device->kind() == DeviceKind::cpu) clear_vector_upper_state();
  if (collage::Status s = ready.kernel->run(ready.inputs, ready.outputs); !s.ok()) return s;
  return ready.device->synchronize();
}

collage::Result<ReadyKernel> make_ready(const Function& function, const Backend& backend, Device& device,
                                        const KernelTimingOptions& options) {
  ReadyKernel ready;
  ready.device = &device;
  collage::Result<std::unique_ptr<Kernel>> kernel = backend.compile(function, device);
  if (!kernel.ok()) return kernel.error();
  ready.kernel = std::move(kernel).value();
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto allocate = [&](std::size_t floats) -> collage::Result<const OwnedBuffer*> {
    collage::Result<OwnedBuffer> b = allocate_owned(device, floats * sizeof(float));
    if (!b.ok()) return b.error();
    ready.buffers.push_back(std::move(b).value());
    ready.bytes += floats * sizeof(float);
    return &ready.buffers.back();
  };
  auto floats = [&](int node) { return stored_floats(function.graph.node(node).shape, backend.layout()); };
  // Indices of a gather hold rows spread over its axis, as a model's do.
  std::map<int, std::int64_t> index_bounds;
  for (const Node& node : function.graph.nodes()) {
    if (node.op != Op::gather) continue;
    const std::int64_t size = function.graph.node(node.inputs[0]).shape[axis_attr(node)];
    auto [bound, is_new] = index_bounds.emplace(node.inputs[1], size);
    if (!is_new) bound->second = std::min(bound->second, size);
  }
  for (int in : function.graph.inputs()) {
    const std::size_t n = floats(in);
    std::vector<float> values(n);
    auto bound = index_bounds.find(in);
    if (bound != index_bounds.end() && bound->second > 0) {
      std::uniform_int_distribution<std::int64_t> row(0, bound->second - 1);
      for (float& v : values) v = static_cast<float>(row(rng));
    } else {
      for (float& v : values) v = dist(rng);
    }
    collage::Result<const OwnedBuffer*> b = allocate(n);
    if (!b.ok()) return b.error();
    if (collage::Status s = device.upload((*b)->get(), 0, values.data(), n * sizeof(float)); !s.ok()) return s.error();
    ready.inputs.push_back((*b)->floats());
    ready.input_floats.push_back(n);
  }
  for (int out : function.graph.outputs()) {
    collage::Result<const OwnedBuffer*> b = allocate(floats(out));
    if (!b.ok()) return b.error();
    ready.outputs.push_back((*b)->floats());
    ready.output_floats.push_back(floats(out));
  }
  ready.bytes += constant_bytes(function.graph);
  const DenormalsFlushed denormals(options.flush_denormals);
  if (collage::Status s = run_once(ready); !s.ok()) return s.error();
  return ready;
}

/// The most kernels in turns at once (each holds its compiled code and buffers).
constexpr std::size_t kMostInTurns = 256;

/// Whether kernels on `device` are timed in turns (time_functions).
bool times_in_turns(const Device& device, const KernelTimingOptions& options) {
  return device.kind() == DeviceKind::cpu && !options.cold_caches && options.model_bytes > 0;
}

/// The costs of `kernels` (all on the CPU) timed in turns (collage::time_in_turns): a kernel is
/// compiled as it joins, while the kernels in turns hold fewer than options.model_bytes (their
/// inputs, outputs and constants) and fewer than kMostInTurns, and released as it leaves. Before
/// each round the rest of model_bytes that the round's kernels do not cover is written through
/// the caches; before each run the kernel's inputs and outputs are read, as in the model the
/// partitions before it leave them (its inputs just written, its outputs in a buffer the memory
/// plan freed lately).
std::vector<collage::Result<collage::Measurement>> time_in_turns(const std::vector<KernelToTime>& kernels,
                                                                 const KernelTimingOptions& options) {
  std::vector<collage::Result<collage::Measurement>> out(kernels.size(), collage::Measurement{});
  std::vector<std::optional<ReadyKernel>> ready(kernels.size());
  std::vector<collage::Status> failures(kernels.size());
  auto bytes_of = [&](const std::vector<std::size_t>& runs) {
    std::size_t bytes = 0;
    for (std::size_t i : runs) bytes += ready[i]->bytes;
    return bytes;
  };
  collage::TurnHooks hooks;
  hooks.start = [&](std::size_t i) {
    collage::Result<ReadyKernel> r = make_ready(*kernels[i].function, *kernels[i].backend, *kernels[i].device, options);
    if (!r.ok()) {
      failures[i] = r.error();
      return false;
    }
    ready[i] = std::move(r).value();
    return true;
  };
  hooks.finish = [&](std::size_t i) { ready[i].reset(); };
  hooks.room = [&](const std::vector<std::size_t>& live) {
    return live.size() < kMostInTurns && bytes_of(live) < options.model_bytes;
  };
  hooks.before_round = [&](const std::vector<std::size_t>& runs) {
    const std::size_t bytes = bytes_of(runs);
    if (bytes < options.model_bytes) evict_caches(options.model_bytes - bytes);
  };
  std::vector<FloatSpan> spans;
  hooks.before_run = [&](std::size_t i) {
    const ReadyKernel& r = *ready[i];
    spans.clear();
    for (std::size_t k = 0; k < r.inputs.size(); ++k) spans.push_back({r.inputs[k], r.input_floats[k]});
    for (std::size_t k = 0; k < r.outputs.size(); ++k) spans.push_back({r.outputs[k], r.output_floats[k]});
    touch_interleaved(spans, options.cpu_threads);
  };
  const DenormalsFlushed denormals(options.flush_denormals);
  const std::vector<collage::Measurement> ms = collage::time_in_turns(
      kernels.size(),
      [&](std::size_t i) {
        failures[i] = run_once(*ready[i]);
        return failures[i].ok();
      },
      options.timing, hooks);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (!failures[i].ok()) {
      out[i] = failures[i].error();
      continue;
    }
    collage::Measurement m = ms[i];
    m.cost = collage::Cost::value(cost_from_seconds(m.cost.raw()));
    out[i] = m;
  }
  return out;
}

/// `bytes` rounded up to a power of two MiB, at most `cap`.
std::size_t power_of_two_mib(std::size_t bytes, std::size_t cap) {
  std::size_t rounded = std::size_t{1} << 20;
  while (rounded < bytes && rounded < cap) rounded *= 2;
  return std::min(rounded, cap);
}

}  // namespace

std::size_t model_cache_bytes(const Graph& model) {
  const std::vector<Node>& nodes = model.nodes();
  std::vector<std::size_t> last_reader(nodes.size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (int in : nodes[i].inputs) last_reader[static_cast<std::size_t>(in)] = i;
  }
  for (int out : model.outputs()) last_reader[static_cast<std::size_t>(out)] = nodes.size();
  std::size_t live = 0;
  std::size_t peak = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    live += value_bytes(nodes[i]);
    peak = std::max(peak, live);
    for (int in : nodes[i].inputs) {
      const auto j = static_cast<std::size_t>(in);
      if (last_reader[j] == i && nodes[j].op != Op::constant) live -= value_bytes(nodes[j]);
    }
  }
  return power_of_two_mib(peak, default_eviction_bytes());
}

std::size_t weight_bytes(const Graph& model) { return constant_bytes(model); }

bool model_weights_outgrow(const Device& device, const KernelTimingOptions& options) {
  const std::size_t cache = device.cache_bytes();
  return cache > 0 && 2 * options.model_weight_bytes > cache;
}

collage::Result<collage::Measurement> time_function(const Function& function, const Backend& backend, Device& device,
                                                    const KernelTimingOptions& options) {
  if (times_in_turns(device, options)) return std::move(time_functions({{&function, &backend, &device}}, options)[0]);
  collage::Result<ReadyKernel> ready = make_ready(function, backend, device, options);
  if (!ready.ok()) return ready.error();
  const DenormalsFlushed denormals(options.flush_denormals);
  Kernel& kernel = *ready->kernel;
  const std::vector<const float*>& inputs = ready->inputs;
  const std::vector<float*>& outputs = ready->outputs;
  if (options.cold_caches && device.kind() != DeviceKind::cpu) {
    return time_cold_launches(kernel, device, inputs, outputs, options);
  }
  if (device.can_record() && options.recorded_launches > 0) {
    if (model_weights_outgrow(device, options) && constant_bytes(function.graph) > 0) {
      return time_with_cold_weights(kernel, device, function, inputs, outputs, options);
    }
    collage::Result<std::unique_ptr<Recording>> recorded =
        record_launches(device, options.recorded_launches, [&] { return kernel.run(inputs, outputs); });
    if (recorded.ok()) return time_recording(**recorded, device, options);
  }
  collage::TimingOptions timing = options.timing;
  if (options.cold_caches) timing.before_each = [&device] { (void)device.evict_caches(); };
  collage::Status failure;
  collage::Measurement m = collage::time_run(
      [&] {
        if (failure.ok()) failure = run_once(*ready);
      },
      timing);
  if (!failure.ok()) return failure.error();
  m.cost = collage::Cost::value(cost_from_seconds(m.cost.raw()));
  return m;
}

std::vector<collage::Result<collage::Measurement>> time_functions(const std::vector<KernelToTime>& kernels,
                                                                  const KernelTimingOptions& options) {
  std::vector<collage::Result<collage::Measurement>> out(kernels.size(), collage::Measurement{});
  std::vector<KernelToTime> in_turns;
  std::vector<std::size_t> in_turns_index;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const KernelToTime& t = kernels[k];
    if (times_in_turns(*t.device, options)) {
      in_turns.push_back(t);
      in_turns_index.push_back(k);
    } else {
      out[k] = time_function(*t.function, *t.backend, *t.device, options);
    }
  }
  std::vector<collage::Result<collage::Measurement>> ms = time_in_turns(in_turns, options);
  for (std::size_t j = 0; j < ms.size(); ++j) out[in_turns_index[j]] = std::move(ms[j]);
  return out;
}

}  // namespace tc
