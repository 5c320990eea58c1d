#include "costing/transfer_costs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

namespace {

/// Device 1 for each backend of `backends` whose kernels run on the CUDA device.
std::map<std::string, std::size_t, std::less<>> gpu_placed(const BackendSet& backends) {
  std::map<std::string, std::size_t, std::less<>> device;
  for (const std::string& name : backends.names()) {
    if (backends.find(name)->device() != DeviceKind::cpu) device[name] = 1;
  }
  return device;
}

}  // namespace

collage::TransferModel transfer_model(const collage::DataflowGraph<Graph>& dataflow, const BackendSet& backends,
                                      const LinkSpeed& link) {
  collage::TransferModel model;
  model.device = gpu_placed(backends);
  const Graph& graph = dataflow.ir();
  std::vector<double> copy(dataflow.size());
  for (std::size_t i = 0; i < dataflow.size(); ++i) {
    const double bytes = 4.0 * static_cast<double>(numel(graph.node(dataflow.handle(i)).shape));
    copy[i] = cost_from_seconds(link.seconds(bytes));
  }
  model.cost = [copy = std::move(copy), launch = cost_from_seconds(link.segment_seconds)](std::size_t node, std::size_t,
                                                                                           std::size_t to) {
    return copy[node] + (to != 0 ? launch : 0.0);
  };
  model.unit = kCostUnit;
  model.inputs_start_on_host = false;
  model.outputs_end_on_host = false;
  return model;
}

bool uses_a_gpu(const BackendSet& backends) { return !gpu_placed(backends).empty(); }

}  // namespace tc
