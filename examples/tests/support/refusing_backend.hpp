#pragma once

/// \file
/// RefusingBackend: a backend that proposes native's fusions and compiles none of them, for tests
/// of how a failing backend's candidates become Invalid while the model still runs.

#include <memory>
#include <string>
#include <utility>

#include <collage/rules/partition_spec.hpp>

#include "backends/backend.hpp"

namespace tc::testing {

class RefusingBackend final : public Backend {
 public:
  explicit RefusingBackend(std::string name = "refusing", std::size_t max_depth = 2)
      : Backend(std::move(name), DeviceKind::cpu), max_depth_(max_depth) {}
  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name(), max_depth_); }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function&, Device&) const override {
    return collage::Error{collage::ErrorCode::invalid_argument, "injected failure, cannot compile anything"};
  }

  std::size_t max_depth_;
};

}  // namespace tc::testing
