#include "backends/cublas/cublas_backend.hpp"

#include <utility>
#include <vector>

#include "backends/cublas/cublas_kernel.hpp"
#include "backends/cublas/cublas_table.hpp"
#include "backends/kit/library_backend.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_CUBLASLT ? "" : "the CUDA toolkit with cuBLASLt was not found when this build was configured";

}  // namespace

std::unique_ptr<Backend> make_cublas_backend(cublas::Options options) {
  Library<cublas::CallPlan> library("cublas", DeviceKind::cuda, kNotBuilt, cublas::table(options), one_call,
                                    [options](const Graph& graph, const LibraryCall& call) {
                                      return cublas::plan(graph, call, options);
                                    });
#if TC_HAVE_CUBLASLT
  library.kernel = [options](const Function& function, const std::vector<LibraryCall>& calls,
                             std::vector<cublas::CallPlan> plans, Device& device) {
    return cublas::kernel(function, calls.front(), plans.front(), device, options);
  };
#endif
  return make_library_backend(std::move(library));
}

BackendRegistration cublas_registration() {
  return {"cublas", DeviceKind::cuda, kNotBuilt, [](const BackendOptions&) { return make_cublas_backend(); }};
}

}  // namespace tc
