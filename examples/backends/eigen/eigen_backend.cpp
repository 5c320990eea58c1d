#include "backends/eigen/eigen_backend.hpp"

#include <utility>
#include <vector>

#include "backends/eigen/eigen_kernel.hpp"
#include "backends/eigen/eigen_plan.hpp"
#include "backends/eigen/eigen_table.hpp"
#include "backends/kit/library_backend.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_EIGEN ? "" : "Eigen3 was not found when this build was configured";

}  // namespace

std::unique_ptr<Backend> make_eigen_backend() {
  Library<eigen::CallPlan> library("eigen", DeviceKind::cpu, kNotBuilt, eigen::table(), library_calls, eigen::plan);
#if TC_HAVE_EIGEN
  library.kernel = eigen::kernel;
#endif
  return make_library_backend(std::move(library));
}

BackendRegistration eigen_registration() {
  return {"eigen", DeviceKind::cpu, kNotBuilt, [](const BackendOptions&) { return make_eigen_backend(); }};
}

}  // namespace tc
