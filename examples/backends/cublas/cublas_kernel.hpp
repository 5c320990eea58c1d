#pragma once

/// \file
/// The cuBLASLt kernel of the cublas backend.

#include <memory>

#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/cublas/cublas_plan.hpp"
#include "backends/kit/library_call.hpp"
#include "runtime/cuda_device.hpp"

namespace tc::cublas {

/// Opens cuBLASLt and finds the functions the kernels call (done once per process, when the first
/// kernel is compiled; this needs no GPU). An error names the library or the missing functions.
collage::Status load_cublaslt();

/// The kernel of `plan`, the one call of `function`, on `device` (a CUDA device): uploads the constants it reads,
/// picks cuBLASLt's best algorithm by heuristic for the plan's shapes and epilogue (operands
/// assumed 16-byte aligned, which run() checks), and reserves the device's workspace for it.
collage::Result<std::unique_ptr<Kernel>> kernel(const Function& function, const LibraryCall& call, const CallPlan& plan,
                                                Device& device, const Options& options);

}  // namespace tc::cublas
