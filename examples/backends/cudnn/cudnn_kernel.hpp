#pragma once

/// \file
/// The cuDNN kernels of the cudnn backend.

#include <memory>

#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/cudnn/cudnn_plan.hpp"
#include "backends/kit/library_call.hpp"
#include "runtime/cuda_device.hpp"

namespace tc::cudnn {

/// The kernel of `plan`, the one call of `function`, on `device` (a CUDA device): uploads the constants it reads,
/// sets up cuDNN's descriptors, picks a convolution algorithm by cuDNN's heuristic, and reserves
/// the device's workspace for it.
collage::Result<std::unique_ptr<Kernel>> kernel(const Function& function, const LibraryCall& call, const CallPlan& plan,
                                                Device& device, const Options& options);

}  // namespace tc::cudnn
