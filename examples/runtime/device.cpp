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

collage::Status Device::evict_caches() {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot evict its caches"};
}

collage::Status Device::begin_recording() {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot record work"};
}

collage::Result<std::unique_ptr<Recording>> Device::end_recording() {
  return collage::Error{collage::ErrorCode::invalid_argument, name() + ": cannot record work"};
}

}  // namespace tc
