#include "run/reference_backend.hpp"

#include <algorithm>

#include <collage/rules/partition_spec.hpp>

#include "tensor/reference.hpp"

namespace tc {

namespace {

class ReferenceKernel final : public Kernel {
 public:
  explicit ReferenceKernel(const Function& function) : graph_(function.graph) {}

  collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (inputs.size() != graph_.inputs().size() || outputs.size() != graph_.outputs().size()) {
      return collage::Error{collage::ErrorCode::invalid_argument, "reference kernel: wrong number of buffers"};
    }
    std::vector<Tensor> args;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const Shape& shape = graph_.node(graph_.inputs()[k]).shape;
      args.emplace_back(shape, std::vector<float>(inputs[k], inputs[k] + numel(shape)));
    }
    collage::Result<std::vector<Tensor>> results = evaluate(graph_, args);
    if (!results.ok()) return results.error();
    for (std::size_t k = 0; k < outputs.size(); ++k) std::copy((*results)[k].data.begin(), (*results)[k].data.end(), outputs[k]);
    return collage::Status::success();
  }

 private:
  Graph graph_;
};

class ReferenceBackend final : public Backend {
 public:
  ReferenceBackend(std::string name, std::size_t max_depth, DeviceKind device)
      : name_(std::move(name)), max_depth_(max_depth), device_(device) {}
  const std::string& name() const override { return name_; }
  DeviceKind device() const override { return device_; }
  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name_, max_depth_); }
  collage::Result<std::unique_ptr<Kernel>> compile(const Function& function, Device& device) const override {
    if (device.kind() != device_) {
      return collage::Error{collage::ErrorCode::invalid_argument, name_ + ": runs on " + to_string(device_) + " devices only"};
    }
    return std::unique_ptr<Kernel>(std::make_unique<ReferenceKernel>(function));
  }

 private:
  std::string name_;
  std::size_t max_depth_;
  DeviceKind device_;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend(std::string name, std::size_t max_depth, DeviceKind device) {
  return std::make_unique<ReferenceBackend>(std::move(name), max_depth, device);
}

}  // namespace tc
