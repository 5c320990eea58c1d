#pragma once

/// \file
/// The eigen backend's kernel: runs planned calls with Eigen (the only file that includes it).

#include <memory>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/eigen/eigen_plan.hpp"
#include "backends/kit/library_call.hpp"

namespace tc::eigen {

/// A kernel running `plans` (one per call of `function`, in execution order) on `device`, a CPU
/// device, on `threads` threads (runtime/cpu_threads.hpp), with scratch buffers for the values
/// passed between calls and for im2col.
collage::Result<std::unique_ptr<Kernel>> kernel(const Function& function, const std::vector<LibraryCall>& calls,
                                                std::vector<CallPlan> plans, Device& device, int threads = 1);

}  // namespace tc::eigen
