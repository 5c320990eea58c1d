#pragma once

/// \file
/// A failed CUDA runtime call as an error value naming the call, for the sources that call the
/// CUDA runtime (the CUDA device, the cuda backend's kernels). Needs the CUDA toolkit's headers.

#include <cuda_runtime_api.h>

#include <string>

#include <collage/support/result.hpp>

namespace tc {

/// The error of a failed CUDA call: "cuda: <what>: <the runtime's description of e>". A failure
/// that leaves the context usable (a failed allocation, a bad argument) is cleared, so that the
/// next call does not report it again.
inline collage::Error cuda_failure(const std::string& what, cudaError_t e) {
  (void)cudaGetLastError();
  return collage::Error{collage::ErrorCode::io, "cuda: " + what + ": " + cudaGetErrorString(e)};
}

/// Success when `e` is cudaSuccess, else cuda_failure(what, e).
inline collage::Status cuda_check(cudaError_t e, const std::string& what) {
  return e == cudaSuccess ? collage::Status::success() : collage::Status(cuda_failure(what, e));
}

}  // namespace tc
