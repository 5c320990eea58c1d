#include "backends/eigen/eigen_backend.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "backends/eigen/eigen_kernel.hpp"
#include "backends/eigen/eigen_plan.hpp"
#include "backends/eigen/eigen_table.hpp"
#include "backends/kit/library_backend.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_EIGEN ? "" : "Eigen3 was not found when this build was configured";

}  // namespace

std::unique_ptr<Backend> make_eigen_backend(int threads) {
  Library<eigen::CallPlan> library("eigen", DeviceKind::cpu, kNotBuilt, eigen::table(), library_calls, eigen::plan);
  threads = cpu_threads_available() ? std::max(threads, 1) : 1;
  library.configuration = threads_configuration(threads);
#if TC_HAVE_EIGEN
  library.kernel = [threads](const Function& function, const std::vector<LibraryCall>& calls,
                             std::vector<eigen::CallPlan> plans, Device& device) {
    return eigen::kernel(function, calls, std::move(plans), device, threads);
  };
#endif
  return make_library_backend(std::move(library));
}

BackendRegistration eigen_registration() {
  return {"eigen", DeviceKind::cpu, kNotBuilt, [](const BackendOptions& options) { return make_eigen_backend(options.cpu_threads); }};
}

}  // namespace tc
