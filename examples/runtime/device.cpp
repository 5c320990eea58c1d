#include "runtime/device.hpp"

#include <chrono>

namespace tc {

const char* to_string(DeviceKind kind) { return kind == DeviceKind::cpu ? "cpu" : "cuda"; }

collage::Result<OwnedBuffer> allocate_owned(Device& device, std::size_t bytes) {
  collage::Result<Buffer> b = device.allocate(bytes);
  if (!b.ok()) return b.error();
  return OwnedBuffer(device, *b);
}

collage::Result<double> Device::time_seconds(const std::function<collage::Status()>& region) {
  const auto start = std::chrono::steady_clock::now();
  if (collage::Status st = region(); !st.ok()) return st.error();
  if (collage::Status st = synchronize(); !st.ok()) return st.error();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

collage::Result<std::vector<double>> Device::time_regions(const std::vector<std::function<collage::Status()>>& regions) {
  std::vector<double> out;
  for (const auto& region : regions) {
    collage::Result<double> t = time_seconds(region);
    if (!t.ok()) return t.error();
    out.push_back(*t);
  }
  return out;
}

collage::Status Device::evict_caches() {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot evict its caches"};
}

collage::Status Device::touch(const void*, std::size_t) {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot read memory into its caches"};
}

collage::Status Device::begin_recording() {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot record work"};
}

collage::Result<std::unique_ptr<Recording>> Device::end_recording() {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot record work"};
}

collage::Result<std::unique_ptr<Recording>> record_launches(Device& device, std::size_t launches,
                                                            const std::function<collage::Status()>& launch) {
  if (collage::Status st = device.begin_recording(); !st.ok()) return st.error();
  collage::Status launched;
  for (std::size_t k = 0; k < launches && launched.ok(); ++k) launched = launch();
  collage::Result<std::unique_ptr<Recording>> recording = device.end_recording();
  if (!launched.ok()) return launched.error();
  return recording;
}

}  // namespace tc
