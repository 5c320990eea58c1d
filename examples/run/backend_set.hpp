#pragma once

/// \file
/// BackendSet and DeviceSet: the backends and devices one run of the example compiler uses.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "runtime/device.hpp"

namespace tc {

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

/// The devices kernels may run on, by kind. Borrowed: the caller keeps them alive.
class DeviceSet {
 public:
  void add(Device& device) { devices_[device.kind()] = &device; }
  /// The device of `kind`, or nullptr.
  Device* find(DeviceKind kind) const;

 private:
  std::map<DeviceKind, Device*> devices_;
};

}  // namespace tc
