#include "backends/cudnn/cudnn_backend.hpp"

#include <utility>
#include <vector>

#include "backends/cudnn/cudnn_kernel.hpp"
#include "backends/cudnn/cudnn_table.hpp"
#include "backends/kit/library_backend.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_CUDNN ? "" : "the CUDA toolkit with cuDNN was not found when this build was configured";

}  // namespace

std::unique_ptr<Backend> make_cudnn_backend(cudnn::Options options) {
  Library<cudnn::CallPlan> library("cudnn", DeviceKind::cuda, kNotBuilt, cudnn::table(), one_call, cudnn::plan);
#if TC_HAVE_CUDNN
  library.kernel = [options](const Function& function, const std::vector<LibraryCall>& calls,
                             std::vector<cudnn::CallPlan> plans, Device& device) {
    return cudnn::kernel(function, calls.front(), plans.front(), device, options);
  };
#else
  (void)options;
#endif
  return make_library_backend(std::move(library));
}

BackendRegistration cudnn_registration() {
  return {"cudnn", DeviceKind::cuda, kNotBuilt, [](const BackendOptions&) { return make_cudnn_backend(); }};
}

}  // namespace tc
