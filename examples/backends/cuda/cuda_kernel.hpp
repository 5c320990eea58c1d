#pragma once

/// \file
/// The cuda backend's kernel: a generated program compiled with NVRTC, loaded on a CUDA device and
/// launched on its stream.

#include <memory>
#include <string>
#include <vector>

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

/// Compiles the programs among `sources` that `device` has not loaded or compiled yet, on the
/// host's cores at once, so that compile_cuda_kernel finds them compiled. A program that does not
/// compile is left for compile_cuda_kernel, which reports why.
void precompile_cuda_programs(CudaDevice& device, const std::vector<std::string>& sources);

}  // namespace tc
