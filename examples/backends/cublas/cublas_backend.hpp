#pragma once

/// \file
/// The cublas backend: MatMul, batched MatMul and Gemm through cuBLASLt, with the epilogues it
/// fuses (scale, bias, a same-shape addend, relu, and with cublas::Options::approximate_gelu
/// GELU) as composite patterns (cublas_table.hpp), one cuBLASLt call per partition. Algorithms are
/// chosen by cuBLASLt's heuristic when compiling, weights are uploaded then, scratch memory is
/// reserved then.

#include <memory>

#include "backends/backend.hpp"
#include "backends/cublas/cublas_plan.hpp"

namespace tc {

/// The cublas backend (a LibraryBackend of cublas::table, cublas::plan and cublas::kernel). It
/// exists in every build; in one without the CUDA toolkit its compile() says so.
std::unique_ptr<Backend> make_cublas_backend(cublas::Options options = {});

/// The cublas backend's entry in the registry (built with the CUDA toolkit's cuBLASLt).
BackendRegistration cublas_registration();

}  // namespace tc
