#include "backends/registry.hpp"

#include <utility>

#include "backends/cublas/cublas_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cudnn/cudnn_backend.hpp"
#include "backends/eigen/eigen_backend.hpp"
#include "backends/native/native_backend.hpp"
#include "backends/onednn/onednn_backend.hpp"

namespace tc {

const std::vector<BackendRegistration>& registered_backends() {
  static const std::vector<BackendRegistration> all = {cublas_registration(),
                                                       cudnn_registration(),
                                                       cuda_registration(),
                                                       onednn_registration(),
                                                       onednn_winograd_registration(),
                                                       onednn_blocked_registration(),
                                                       onednn_winograd_blocked_registration(),
                                                       eigen_registration(),
                                                       native_registration()};
  return all;
}

const BackendRegistration* find_registration(const std::string& name) {
  for (const BackendRegistration& r : registered_backends()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

void BackendSet::add(std::unique_ptr<Backend> backend) {
  for (auto& b : backends_) {
    if (b->name() == backend->name()) {
      b = std::move(backend);
      return;
    }
  }
  backends_.push_back(std::move(backend));
}

const Backend* BackendSet::find(const std::string& name) const {
  for (const auto& b : backends_) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

std::unique_ptr<Backend> BackendSet::take(const std::string& name) {
  for (auto it = backends_.begin(); it != backends_.end(); ++it) {
    if ((*it)->name() == name) {
      std::unique_ptr<Backend> out = std::move(*it);
      backends_.erase(it);
      return out;
    }
  }
  return nullptr;
}

std::vector<std::string> BackendSet::names() const {
  std::vector<std::string> out;
  for (const auto& b : backends_) out.push_back(b->name());
  return out;
}

void prepare_all(const BackendSet& backends, const DeviceSet& devices, const std::vector<std::string>& targets,
                 const std::vector<Function>& functions) {
  for (const auto& backend : backends.all()) {
    Device* device = devices.find(backend->device());
    if (device == nullptr) continue;
    std::vector<const Function*> mine;
    for (std::size_t k = 0; k < targets.size() && k < functions.size(); ++k) {
      if (targets[k] == backend->name()) mine.push_back(&functions[k]);
    }
    backend->prepare(mine, *device);
  }
}

BackendSet make_default_backends(const DeviceSet& devices, std::vector<std::string>* skipped,
                                 const BackendOptions& options) {
  BackendSet set;
  for (const BackendRegistration& r : registered_backends()) {
    if (!r.built() || (!r.by_default && !options.blocked_layouts)) continue;
    if (devices.find(r.device) == nullptr) {
      if (skipped) skipped->push_back(r.name + ": left out, its " + to_string(r.device) + " device is not available");
      continue;
    }
    set.add(r.make(options));
  }
  return set;
}

}  // namespace tc
