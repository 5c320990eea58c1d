#include "backends/reference/reference_backend.hpp"

#include <algorithm>

#include <collage/rules/partition_spec.hpp>

#include "tensor/reference.hpp"

namespace tc {

namespace {

class ReferenceKernel final : public Kernel {
 public:
  ReferenceKernel(const Function& function, Layout layout) : graph_(function.graph), layout_(layout) {}

  collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (inputs.size() != graph_.inputs().size() || outputs.size() != graph_.outputs().size()) {
      return collage::Error{collage::ErrorCode::invalid_argument, "reference kernel: wrong number of buffers"};
    }
    std::vector<Tensor> args;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      args.emplace_back(graph_.node(graph_.inputs()[k]).shape);
      reorder(inputs[k], layout_, args.back().data.data(), Layout::plain, args.back().shape);
    }
    collage::Result<std::vector<Tensor>> results = evaluate(graph_, args);
    if (!results.ok()) return results.error();
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      reorder((*results)[k].data.data(), Layout::plain, outputs[k], layout_, (*results)[k].shape);
    }
    return collage::Status::success();
  }

 private:
  Graph graph_;
  Layout layout_;
};

class ReferenceBackend final : public Backend {
 public:
  ReferenceBackend(std::string name, std::size_t max_depth, DeviceKind device, Layout layout)
      : Backend(std::move(name), device, layout), max_depth_(max_depth) {}
  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name(), max_depth_); }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device&) const override {
    return std::unique_ptr<Kernel>(std::make_unique<ReferenceKernel>(function, layout()));
  }

  std::size_t max_depth_;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend(std::string name, std::size_t max_depth, DeviceKind device,
                                                Layout layout) {
  return std::make_unique<ReferenceBackend>(std::move(name), max_depth, device, layout);
}

}  // namespace tc
