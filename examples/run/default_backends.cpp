#include "run/default_backends.hpp"

#include "backends/gpu_backends.hpp"
#include "backends/native/native_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "runtime/cuda_device.hpp"
#if defined(TC_HAVE_EIGEN)
#include "backends/eigen/eigen_backend.hpp"
#endif
#if defined(TC_HAVE_ONEDNN)
#include "backends/onednn/onednn_backend.hpp"
#endif

namespace tc {

DefaultDevices make_default_devices() {
  DefaultDevices d;
  d.owned.push_back(std::make_unique<CpuDevice>());
  if (cuda_toolkit_built()) d.owned.push_back(make_cuda_device());
  for (const auto& device : d.owned) {
    if (device->available()) {
      d.set.add(*device);
    } else {
      d.unavailable.push_back(device->unavailable_reason());
    }
  }
  return d;
}

BackendSet make_default_backends(const DeviceSet& devices, std::vector<std::string>* skipped, int cpu_threads) {
  std::vector<std::unique_ptr<Backend>> candidates = make_cuda_backends();
#if defined(TC_HAVE_ONEDNN)
  candidates.push_back(std::make_unique<OnednnBackend>(cpu_threads));
#endif
#if defined(TC_HAVE_EIGEN)
  candidates.push_back(std::make_unique<EigenBackend>());
#endif
  candidates.push_back(std::make_unique<NativeBackend>());
  BackendSet set;
  for (auto& backend : candidates) {
    if (devices.find(backend->device()) == nullptr) {
      if (skipped) skipped->push_back(backend->name() + ": left out, its " + to_string(backend->device()) + " device is not available");
      continue;
    }
    set.add(std::move(backend));
  }
  return set;
}

}  // namespace tc
