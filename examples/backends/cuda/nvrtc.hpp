#pragma once

/// \file
/// NVRTC, the CUDA toolkit's run-time compiler, opened when the first kernel is compiled (loading
/// it costs every process that links it, whether or not it compiles a kernel). Compiling needs no
/// GPU.

#include <cstddef>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

namespace tc::cudagen {

/// Opens NVRTC and finds the functions the backend calls (once per process). An error names the
/// library or the missing functions.
collage::Status load_nvrtc();

/// "13.0": the version of the NVRTC loaded, or an error.
collage::Result<std::string> nvrtc_version();

/// A compiled program: a CUBIN for the architecture asked for, or PTX for the newest virtual
/// architecture NVRTC has when it does not know that one (the driver finishes it).
struct CompiledCuda {
  std::string image;
  bool ptx = false;
  /// "sm_90" or "compute_90".
  std::string target;
};

/// Compiles `source` (with the generator's kernel_headers()) for the GPU of compute capability
/// `capability` (major * 10 + minor, 90 for an H100). Fails with NVRTC's log when the source does
/// not compile.
collage::Result<CompiledCuda> compile_cuda(const std::string& source, int capability);

/// compile_cuda() of every source, on up to `threads` threads at once (NVRTC compiles programs in
/// parallel; 0: the host's hardware threads); one result per source, in order.
std::vector<collage::Result<CompiledCuda>> compile_cuda_all(const std::vector<std::string>& sources, int capability,
                                                            std::size_t threads = 0);

}  // namespace tc::cudagen
