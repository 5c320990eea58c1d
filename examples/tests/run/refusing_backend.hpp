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
      : name_(std::move(name)), max_depth_(max_depth) {}
  const std::string& name() const override { return name_; }
  DeviceKind device() const override { return DeviceKind::cpu; }
  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name_, max_depth_); }
  collage::Result<std::unique_ptr<Kernel>> compile(const Function&, Device&) const override {
    return collage::Error{collage::ErrorCode::invalid_argument, name_ + ": injected failure, cannot compile anything"};
  }

 private:
  std::string name_;
  std::size_t max_depth_;
};

}  // namespace tc::testing
