#pragma once

/// \file
/// The cuda backend: the native fusion rule and the loop IR's lowering (loops/), each partition run
/// as CUDA kernels rendered from the lowered stages (the role of TVM's own CUDA code generator among the
/// GPU targets). Fused elementwise, broadcast and injective chains, reductions with their
/// prologue and epilogue, a shared-memory tiled GEMM and convolution (implicit im2col; direct for
/// depthwise), pooling, softmax and layer normalisation, each with its epilogue applied in
/// registers before the store. Kernels are compiled with NVRTC when compile() is called and cached
/// per device by source text.

#include <cstddef>
#include <memory>

#include "backends/backend.hpp"
#include "loops/lower.hpp"

namespace tc {

/// The cuda backend (target "cuda") with the native fusion rule bounded at `max_depth`.
std::unique_ptr<Backend> make_cuda_backend(std::size_t max_depth = loops::kFusionMaxDepth);

/// The cuda backend's entry in the registry (built with the CUDA toolkit and NVRTC).
BackendRegistration cuda_registration();

}  // namespace tc
