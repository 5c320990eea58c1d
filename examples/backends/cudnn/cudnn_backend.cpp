#include "backends/cudnn/cudnn_backend.hpp"

#include <utility>
#include <vector>

#include "backends/checked_patterns.hpp"
#include "backends/cudnn/cudnn_kernel.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

using P = collage::Pattern<Graph>;

class CudnnBackend final : public Backend {
 public:
  explicit CudnnBackend(CudnnOptions options) : options_(options) {}
  const std::string& name() const override { return name_; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  collage::PartitionSpec<Graph> spec() const override { return cudnn_spec(name_); }

  collage::Result<std::unique_ptr<Kernel>> compile(const Function& function, Device& device) const override {
    collage::Result<CudaDevice*> cuda = usable_cuda_device(device, name_);
    if (!cuda.ok()) return cuda.error();
    collage::Result<std::vector<int>> call = function_call(function, name_);
    if (!call.ok()) return call.error();
    collage::Result<CudnnPlan> plan = plan_cudnn(function.graph, *call);
    if (!plan.ok()) return plan.error();
    return compile_cudnn_kernel(function, *plan, **cuda, options_);
  }

 private:
  std::string name_ = "cudnn";
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

}  // namespace tc
