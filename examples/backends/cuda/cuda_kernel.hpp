#pragma once

/// \file
/// The cuda backend's kernel: a generated program compiled with NVRTC, loaded on a CUDA device and
/// launched on its stream.

#include <memory>

#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_codegen.hpp"
#include "loops/program.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

/// Makes the kernel running `program` (generated from `lowered`) on `device`: compiles its source
/// with NVRTC for the device's architecture, or takes the module the device already loaded for the
/// same source; uploads the constants and index tables it reads; reserves the device's workspace
/// for its scratch buffers.
collage::Result<std::unique_ptr<Kernel>> compile_cuda_kernel(loops::LoweredFunction lowered,
                                                             cudagen::CudaProgram program, CudaDevice& device);

}  // namespace tc
