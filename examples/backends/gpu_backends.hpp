#pragma once

/// \file
/// The GPU side of the example compiler for the run/ code: the CUDA device and the GPU backends
/// this build has.

#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cublas/cublas_backend.hpp"
#include "backends/cublas/cublas_kernel.hpp"
#include "backends/cudnn/cudnn_backend.hpp"
#include "backends/cudnn/cudnn_kernel.hpp"
#if defined(TC_HAVE_CUDA_BACKEND)
#include "backends/cuda/cuda_backend.hpp"
#endif
#include "runtime/cuda_device.hpp"

namespace tc {

/// The GPU backends this build has kernels for (cublas, cudnn, cuda), with default options; none
/// in a build without the CUDA toolkit. Whether a GPU is present is the device's to say
/// (make_cuda_device()->available()).
inline std::vector<std::unique_ptr<Backend>> make_cuda_backends() {
  std::vector<std::unique_ptr<Backend>> backends;
  if (cublas_built()) backends.push_back(make_cublas_backend());
  if (cudnn_built()) backends.push_back(make_cudnn_backend());
#if defined(TC_HAVE_CUDA_BACKEND)
  backends.push_back(make_cuda_backend());
#endif
  return backends;
}

}  // namespace tc
