#include "runtime/device_set.hpp"

#include "runtime/cpu_device.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

Device* DeviceSet::find(DeviceKind kind) const {
  auto it = devices_.find(kind);
  return it == devices_.end() ? nullptr : it->second;
}

DefaultDevices make_default_devices() {
  DefaultDevices d;
  d.owned.push_back(std::make_unique<CpuDevice>());
  d.owned.push_back(make_cuda_device());
  for (const auto& device : d.owned) {
    if (device->available()) {
      d.set.add(*device);
    } else {
      d.unavailable.push_back(device->unavailable_reason());
    }
  }
  return d;
}

}  // namespace tc
