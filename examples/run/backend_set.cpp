#include "run/backend_set.hpp"

namespace tc {

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

Device* DeviceSet::find(DeviceKind kind) const {
  auto it = devices_.find(kind);
  return it == devices_.end() ? nullptr : it->second;
}

}  // namespace tc
