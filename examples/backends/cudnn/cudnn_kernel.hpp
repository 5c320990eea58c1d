#pragma once

/// \file
/// The cuDNN kernels of the cudnn backend.

#include <memory>

#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/cudnn/cudnn_plan.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

/// Compiles `plan` (the call of `function`) for `device`: uploads the constants it reads, sets up
/// cuDNN's descriptors, picks a convolution algorithm by cuDNN's heuristic, and reserves the
/// device's workspace for it.
collage::Result<std::unique_ptr<Kernel>> compile_cudnn_kernel(const Function& function, const CudnnPlan& plan,
                                                              CudaDevice& device, const CudnnOptions& options);

}  // namespace tc
