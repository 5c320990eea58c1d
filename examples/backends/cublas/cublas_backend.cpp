#include "backends/cublas/cublas_backend.hpp"

#include <utility>
#include <vector>

#include "backends/kit/checked_patterns.hpp"
#include "backends/cublas/cublas_kernel.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_CUBLASLT ? "" : "the CUDA toolkit with cuBLASLt was not found when this build was configured";

using P = collage::Pattern<Graph>;

/// GELU's erf forms around `x`, with `x` written once: the other reads of its value are `*`, and
/// plan_matmul checks that they read the same node.
P gelu_erf(const P& x) {
  const P any = P::wildcard();
  const P c = P::constant();
  const P scaled = P::alt({P::op("Div", {any, c}), either_order("Mul", any, c)});
  const P erf_plus_one = either_order("Add", P::op("Erf", {scaled}), c);
  const P form_a = either_order("Mul", either_order("Mul", x, erf_plus_one), c);
  const P form_b = either_order("Mul", either_order("Mul", x, c), erf_plus_one);
  return P::alt({form_a, form_b});
}

class CublasBackend final : public Backend {
 public:
  explicit CublasBackend(CublasOptions options) : Backend("cublas", DeviceKind::cuda), options_(options) {}
  collage::PartitionSpec<Graph> spec() const override { return cublas_spec(options_, name()); }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    collage::Result<CudaDevice*> cuda = usable_cuda_device(device, name());
    if (!cuda.ok()) return cuda.error();
    collage::Result<std::vector<int>> call = function_call(function, name());
    if (!call.ok()) return call.error();
    collage::Result<MatmulPlan> plan = plan_matmul(function.graph, *call, options_);
    if (!plan.ok()) return plan.error();
#if TC_HAVE_CUBLASLT
    return compile_cublas_kernel(function, *plan, **cuda, options_);
#else
    return collage::Error{collage::ErrorCode::invalid_argument, kNotBuilt};
#endif
  }

  CublasOptions options_;
};

}  // namespace

collage::PatternTable<Graph> cublas_patterns(const CublasOptions& options) {
  const P any = P::wildcard();
  const P c = P::constant();
  const P dense = P::alt({P::op("MatMul", {any, any}), P::op("Gemm", {any, any}), P::op("Gemm", {any, any, any})});
  collage::PatternTable<Graph> table;
  for (const bool scale : {false, true}) {
    P p = scale ? P::alt({P::op("Div", {dense, c}), either_order("Mul", dense, c)}) : dense;
    std::string label = scale ? "cublas.dense_scale" : "cublas.dense";
    for (const char* adds : {"", "_add", "_add_add"}) {
      if (*adds != '\0') {
        p = either_order("Add", p, any);
        label = (scale ? "cublas.dense_scale" : "cublas.dense") + std::string(adds);
      }
      table.emplace_back(label, p);
      table.emplace_back(label + "_relu", P::op("Relu", {p}));
      if (options.approximate_gelu) table.emplace_back(label + "_gelu", gelu_erf(p));
    }
  }
  return table;
}

collage::PartitionSpec<Graph> cublas_spec(const CublasOptions& options, std::string target) {
  CallCheck check = [options](const Graph& graph, const std::vector<int>& nodes) {
    return plan_matmul(graph, nodes, options).ok();
  };
  return collage::PartitionSpec<Graph>{std::move(target), checked_patterns_rule(cublas_patterns(options), std::move(check))};
}

std::unique_ptr<Backend> make_cublas_backend(CublasOptions options) { return std::make_unique<CublasBackend>(options); }

BackendRegistration cublas_registration() {
  return {"cublas", DeviceKind::cuda, kNotBuilt, [](const BackendOptions&) { return make_cublas_backend(); }};
}

}  // namespace tc
