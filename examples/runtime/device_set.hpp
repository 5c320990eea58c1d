#pragma once

/// \file
/// DeviceSet: the devices one run of the example compiler uses, and the devices this machine has.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.hpp"

namespace tc {

/// The devices kernels may run on, by kind. Borrowed: the caller keeps them alive.
class DeviceSet {
 public:
  void add(Device& device) { devices_[device.kind()] = &device; }
  /// The device of `kind`, or nullptr.
  Device* find(DeviceKind kind) const;

 private:
  std::map<DeviceKind, Device*> devices_;
};

/// The devices this build can drive, with one line each for those that are not available here
/// ("cuda: no CUDA device: ..."). The CPU is always there.
struct DefaultDevices {
  std::vector<std::unique_ptr<Device>> owned;
  DeviceSet set;
  std::vector<std::string> unavailable;
};

/// Makes the devices: the CPU, and the CUDA device (which says why when it is not available).
DefaultDevices make_default_devices();

}  // namespace tc
