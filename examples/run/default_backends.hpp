#pragma once

/// \file
/// The backends and devices this build of the example compiler has.

#include <memory>
#include <string>
#include <vector>

#include "run/backend_set.hpp"

namespace tc {

/// The devices this build can drive, with one line each for those that are not available here
/// ("cuda: no CUDA device: ..."). The CPU is always there.
struct DefaultDevices {
  std::vector<std::unique_ptr<Device>> owned;
  DeviceSet set;
  std::vector<std::string> unavailable;
};

/// Makes the devices: the CPU, and the CUDA device when the build has CUDA support.
DefaultDevices make_default_devices();

/// Every backend of this build whose device is available in `devices`, in priority order (GPU
/// libraries, then CPU libraries, `native` last); `skipped` receives one line per backend left out
/// and why. CPU backends that can use several threads (onednn) get `cpu_threads`; the others run
/// on one.
BackendSet make_default_backends(const DeviceSet& devices, std::vector<std::string>* skipped = nullptr,
                                 int cpu_threads = 1);

}  // namespace tc
