#include "backends/cudnn/cudnn_backend.hpp"

#include <utility>
#include <vector>

#include "backends/kit/checked_patterns.hpp"
#include "backends/cudnn/cudnn_kernel.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_CUDNN ? "" : "the CUDA toolkit with cuDNN was not found when this build was configured";

using P = collage::Pattern<Graph>;

class CudnnBackend final : public Backend {
 public:
  explicit CudnnBackend(CudnnOptions options) : Backend("cudnn", DeviceKind::cuda), options_(options) {}
  collage::PartitionSpec<Graph> spec() const override { return cudnn_spec(name()); }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    collage::Result<CudaDevice*> cuda = usable_cuda_device(device, name());
    if (!cuda.ok()) return cuda.error();
    collage::Result<std::vector<int>> call = function_call(function, name());
    if (!call.ok()) return call.error();
    collage::Result<CudnnPlan> plan = plan_cudnn(function.graph, *call);
    if (!plan.ok()) return plan.error();
#if TC_HAVE_CUDNN
    return compile_cudnn_kernel(function, *plan, **cuda, options_);
#else
    return collage::Error{collage::ErrorCode::invalid_argument, kNotBuilt};
#endif
  }

  CudnnOptions options_;
};

}  // namespace

collage::PatternTable<Graph> cudnn_patterns() {
  const P any = P::wildcard();
  P conv = P::alt({P::op("Conv", {any, any}), P::op("Conv", {any, any, any})});
  collage::PatternTable<Graph> table;
  for (const char* label : {"cudnn.conv", "cudnn.conv_add", "cudnn.conv_add_add"}) {
    table.emplace_back(label, conv);
    table.emplace_back(std::string(label) + "_relu", P::op("Relu", {conv}));
    conv = either_order("Add", conv, any);
  }
  table.emplace_back("cudnn.max_pool", P::op("MaxPool", {any}));
  table.emplace_back("cudnn.avg_pool", P::op("AveragePool", {any}));
  table.emplace_back("cudnn.global_avg_pool", P::op("GlobalAveragePool", {any}));
  table.emplace_back("cudnn.global_max_pool", P::op("GlobalMaxPool", {any}));
  table.emplace_back("cudnn.softmax", P::op("Softmax", {any}));
  return table;
}

collage::PartitionSpec<Graph> cudnn_spec(std::string target) {
  CallCheck check = [](const Graph& graph, const std::vector<int>& nodes) { return plan_cudnn(graph, nodes).ok(); };
  return collage::PartitionSpec<Graph>{std::move(target), checked_patterns_rule(cudnn_patterns(), std::move(check))};
}

std::unique_ptr<Backend> make_cudnn_backend(CudnnOptions options) { return std::make_unique<CudnnBackend>(options); }

BackendRegistration cudnn_registration() {
  return {"cudnn", DeviceKind::cuda, kNotBuilt, [](const BackendOptions&) { return make_cudnn_backend(); }};
}

}  // namespace tc
