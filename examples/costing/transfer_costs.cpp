#include "costing/transfer_costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/threaded_reorder.hpp"
#include "runtime/cpu_state.hpp"

namespace tc {
namespace {

/// Seconds per upload and per download of `bytes` (from the front of `buffer`), as time_run gives
/// them; a failed copy is an error.
collage::Result<std::pair<double, double>> time_copies(Device& device, const Buffer& buffer, std::vector<char>& host,
                                                       std::size_t bytes, const collage::TimingOptions& timing) {
  collage::Status failure;
  auto timed = [&](auto copy) {
    return collage::time_run(
               [&] {
                 if (!failure.ok()) return;
                 failure = copy();
                 if (failure.ok()) failure = device.synchronize();
               },
               timing)
        .cost.raw();
  };
  const double up = timed([&] { return device.upload(buffer, 0, host.data(), bytes); });
  const double down = timed([&] { return device.download(host.data(), buffer, 0, bytes); });
  if (!failure.ok()) return failure.error();
  return std::make_pair(up, down);
}

}  // namespace

collage::Result<LinkSpeed> measure_link(Device& device, const collage::TimingOptions& timing) {
  constexpr std::size_t kSmall = 4 << 10;
  constexpr std::size_t kLarge = 16 << 20;
  collage::Result<OwnedBuffer> buffer = allocate_owned(device, kLarge);
  if (!buffer.ok()) return buffer.error();
  std::vector<char> host(kLarge, 1);
  auto small = time_copies(device, buffer->get(), host, kSmall, timing);
  if (!small.ok()) return small.error();
  auto large = time_copies(device, buffer->get(), host, kLarge, timing);
  if (!large.ok()) return large.error();
  const double small_s = 0.5 * (small->first + small->second);
  const double large_s = 0.5 * (large->first + large->second);
  LinkSpeed link;
  // A large copy no slower than a small one (a noisy clock) would give no rate: take the large
  // copy's average rate instead.
  const double extra = large_s - small_s;
  link.bytes_per_second = extra > 0 ? static_cast<double>(kLarge - kSmall) / extra : static_cast<double>(kLarge) / large_s;
  link.seconds_per_copy = std::max(0.0, small_s - static_cast<double>(kSmall) / link.bytes_per_second);
  if (!std::isfinite(link.bytes_per_second) || link.bytes_per_second <= 0) {
    return collage::Error{collage::ErrorCode::internal, device.name() + ": copies took no measurable time"};
  }
  return link;
}

collage::Result<double> measure_segment_launch(Device& device, const collage::TimingOptions& timing) {
  collage::Result<OwnedBuffer> buffer = allocate_owned(device, 256);
  if (!buffer.ok()) return buffer.error();
  if (collage::Status st = device.begin_recording(); !st.ok()) return st.error();
  const collage::Status copied = device.copy(buffer->get(), 128, buffer->get(), 0, 4);
  collage::Result<std::unique_ptr<Recording>> recording = device.end_recording();
  if (!copied.ok()) return copied.error();
  if (!recording.ok()) return recording.error();
  collage::Status failure;
  const double seconds = collage::time_run(
                             [&] {
                               if (failure.ok()) failure = (*recording)->replay();
                               if (failure.ok()) failure = device.synchronize();
                             },
                             timing)
                             .cost.raw();
  if (!failure.ok()) return failure.error();
  return seconds;
}

ReorderTable measure_reorders(const collage::DataflowGraph<Graph>& dataflow, const BackendSet& backends,
                              const collage::TimingOptions& timing, std::size_t model_bytes, int threads) {
  /// One reorder to time: a shape from `from` to `to`, and its buffers.
  struct Reorder {
    Shape shape;
    Layout from = Layout::plain;
    Layout to = Layout::plain;
    std::vector<float> source, target;
  };
  std::vector<Reorder> reorders;
  auto index_of = [&](const Shape& shape, Layout from, Layout to) {
    for (std::size_t k = 0; k < reorders.size(); ++k) {
      if (reorders[k].shape == shape && reorders[k].from == from && reorders[k].to == to) return k;
    }
    reorders.push_back(Reorder{shape, from, to, std::vector<float>(stored_floats(shape, from), 1.0f),
                               std::vector<float>(stored_floats(shape, to))});
    return reorders.size() - 1;
  };
  const Graph& graph = dataflow.ir();
  ReorderTable table;
  std::map<Layout, std::vector<std::pair<std::size_t, std::size_t>>> by_node;  // (into, out of) per node
  for (const auto& backend : backends.all()) {
    const Layout layout = backend->layout();
    if (layout == Layout::plain || by_node.count(layout) != 0) continue;
    auto& indexes = by_node[layout];
    for (std::size_t i = 0; i < dataflow.size(); ++i) {
      const Shape& shape = graph.node(dataflow.handle(i)).shape;
      if (!is_blocked(shape, layout)) {
        indexes.emplace_back(SIZE_MAX, SIZE_MAX);
        continue;
      }
      const std::size_t into = index_of(shape, Layout::plain, layout);
      indexes.emplace_back(into, index_of(shape, layout, Layout::plain));
    }
  }
  auto run = [&](std::size_t k) {
    Reorder& r = reorders[k];
    reorder_on_threads(r.source.data(), r.from, r.target.data(), r.to, r.shape, threads);
    return true;
  };
  std::vector<collage::Measurement> measured(reorders.size(), collage::Measurement{collage::Cost::unknown(), 0.0, 0});
  if (model_bytes > 0) {
    auto bytes_of = [&](const std::vector<std::size_t>& runs) {
      std::size_t bytes = 0;
      for (std::size_t k : runs) bytes += (reorders[k].source.size() + reorders[k].target.size()) * sizeof(float);
      return bytes;
    };
    collage::TurnHooks hooks;
    hooks.before_round = [&](const std::vector<std::size_t>& runs) {
      if (const std::size_t bytes = bytes_of(runs); bytes < model_bytes) evict_caches(model_bytes - bytes);
    };
    hooks.before_run = [&](std::size_t k) {
      const Reorder& r = reorders[k];
      touch_interleaved({{r.source.data(), r.source.size()}, {r.target.data(), r.target.size()}}, threads);
    };
    measured = collage::time_in_turns(reorders.size(), run, timing, hooks);
  }
  for (std::size_t k = 0; k < reorders.size(); ++k) {
    // Warm, over and over: without the model's bytes, or where the turns left a reorder no samples.
    if (!measured[k].cost.is_known()) measured[k] = collage::time_run([&] { run(k); }, timing);
  }
  for (const auto& [layout, indexes] : by_node) {
    ReorderSeconds& seconds = table[layout];
    for (const auto& [into, out_of] : indexes) {
      seconds.into.push_back(into == SIZE_MAX ? 0.0 : measured[into].cost.raw());
      seconds.out_of.push_back(out_of == SIZE_MAX ? 0.0 : measured[out_of].cost.raw());
    }
  }
  return table;
}

namespace {

/// Where a backend's kernels read and write their values.
struct Placement {
  DeviceKind device = DeviceKind::cpu;
  Layout layout = Layout::plain;
  friend bool operator==(const Placement& a, const Placement& b) { return a.device == b.device && a.layout == b.layout; }
};

/// The placement of `backend` (a GPU's values are plain).
Placement placement_of(const Backend& backend) {
  return backend.device() == DeviceKind::cpu ? Placement{DeviceKind::cpu, backend.layout()}
                                             : Placement{backend.device(), Layout::plain};
}

/// The placements of `backends`, the host with plain tensors first, then the GPU, then the host's
/// blocked layouts; and each backend's index among them, where it is not 0.
struct Placements {
  std::vector<Placement> list{Placement{}};
  std::map<std::string, std::size_t, std::less<>> of_backend;

  explicit Placements(const BackendSet& backends) {
    for (bool gpu : {true, false}) {
      for (const auto& backend : backends.all()) {
        const Placement p = placement_of(*backend);
        if ((p.device != DeviceKind::cpu) != gpu) continue;
        auto it = std::find(list.begin(), list.end(), p);
        if (it == list.end()) it = list.insert(list.end(), p);
        const auto index = static_cast<std::size_t>(it - list.begin());
        if (index != 0) of_backend[backend->name()] = index;
      }
    }
  }
  bool has_gpu() const {
    return std::any_of(list.begin(), list.end(), [](const Placement& p) { return p.device != DeviceKind::cpu; });
  }
};

}  // namespace

collage::Result<collage::TransferModel> transfer_model(const collage::DataflowGraph<Graph>& dataflow,
                                                       const BackendSet& backends, const LinkSpeed& link,
                                                       const ReorderTable& reorders) {
  const Placements placements(backends);
  for (const Placement& p : placements.list) {
    if (p.layout != Layout::plain && reorders.count(p.layout) == 0) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            "transfer model: no reorder costs for the " + to_string(p.layout) + " layout"};
    }
  }
  collage::TransferModel model;
  model.device = placements.of_backend;
  const Graph& graph = dataflow.ir();
  std::vector<double> copy(dataflow.size());
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const double bytes = 4.0 * static_cast<double>(numel(graph.node(dataflow.handle(i)).shape));
    copy[i] = cost_from_seconds(link.seconds(bytes));
  }
  model.cost = [copy = std::move(copy), launch = cost_from_seconds(link.segment_seconds), list = placements.list,
                reorders](std::size_t node, std::size_t from, std::size_t to) {
    const Placement& a = list[from];
    const Placement& b = list[to];
    double cost = 0;
    if (a.layout != Layout::plain) cost += cost_from_seconds(reorders.at(a.layout).out_of[node]);
    if (a.device != b.device) cost += copy[node] + (b.device != DeviceKind::cpu ? launch : 0.0);
    if (b.layout != Layout::plain) cost += cost_from_seconds(reorders.at(b.layout).into[node]);
    return cost;
  };
  model.unit = kCostUnit;
  model.inputs_start_on_host = !placements.has_gpu();
  model.outputs_end_on_host = !placements.has_gpu();
  return model;
}

bool uses_a_gpu(const BackendSet& backends) { return Placements(backends).has_gpu(); }

bool keeps_blocked_values(const BackendSet& backends) {
  return std::any_of(backends.all().begin(), backends.all().end(),
                     [](const auto& backend) { return placement_of(*backend).layout != Layout::plain; });
}

}  // namespace tc
