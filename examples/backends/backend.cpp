#include "backends/backend.hpp"

namespace tc {

namespace {

/// Why a backend for `want` devices refuses `device` ("runs on the CPU, not on cuda").
std::string wrong_device(DeviceKind want, const Device& device) {
  if (want == DeviceKind::cpu) return std::string("runs on the CPU, not on ") + to_string(device.kind());
  return std::string("needs a CUDA device, got ") + device.name();
}

}  // namespace

collage::Result<std::unique_ptr<Kernel>> Backend::compile(const Function& function, Device& device) const {
  const std::string prefix = name_ + ": ";
  if (device.kind() != device_) return collage::Error{collage::ErrorCode::invalid_argument, prefix + wrong_device(device_, device)};
  if (!device.available()) return collage::Error{collage::ErrorCode::invalid_argument, prefix + device.unavailable_reason()};
  collage::Result<std::unique_ptr<Kernel>> kernel = do_compile(function, device);
  if (kernel.ok() || kernel.error().message.rfind(prefix, 0) == 0) return kernel;
  return collage::Error{kernel.error().code, prefix + kernel.error().message};
}

void Backend::prepare(const std::vector<const Function*>& functions, Device& device) const {
  if (device.kind() == device_ && device.available() && !functions.empty()) do_prepare(functions, device);
}

std::string threads_configuration(int threads) { return threads == 1 ? "" : "threads=" + std::to_string(threads); }

}  // namespace tc
