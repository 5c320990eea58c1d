#pragma once

/// \file
/// The backend registry: every backend of the example compiler with whether this build has its
/// kernels, and BackendSet, the backends one run uses.

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "runtime/device_set.hpp"

namespace tc {

/// Every backend of the example compiler, in priority order (GPU libraries, cuda, CPU libraries,
/// `native` last): built or not, each says so.
const std::vector<BackendRegistration>& registered_backends();

/// The registration of backend `name`, or nullptr.
const BackendRegistration* find_registration(const std::string& name);

/// Backends by target name, in priority order (the order greedy partitioners prefer them).
class BackendSet {
 public:
  /// Adds `backend`; a second backend with the same name replaces the first in place.
  void add(std::unique_ptr<Backend> backend);
  /// The backend named `name`, or nullptr.
  const Backend* find(const std::string& name) const;
  /// Removes the backend named `name` and returns it (nullptr when absent).
  std::unique_ptr<Backend> take(const std::string& name);
  const std::vector<std::unique_ptr<Backend>>& all() const { return backends_; }
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

/// Backend::prepare for the functions the backends of `backends` will be asked to compile:
/// functions[k] by the backend named targets[k] on its device in `devices`, each backend given all
/// of its functions at once. A name with no backend, or a backend with no device, is skipped
/// (compile() reports it).
void prepare_all(const BackendSet& backends, const DeviceSet& devices, const std::vector<std::string>& targets,
                 const std::vector<Function>& functions);

/// Every built backend whose device is available in `devices`, made with `options`, in priority
/// order (those not made by default only when `options` asks); `skipped` receives one line per
/// backend left out and why.
BackendSet make_default_backends(const DeviceSet& devices, std::vector<std::string>* skipped = nullptr,
                                 const BackendOptions& options = {});

}  // namespace tc
