#pragma once

/// \file
/// The eigen backend: a library-style target (like a BLAS backend in TVM's Collage). GEMM, MatMul
/// (batched, broadcasting) and Gemm run as Eigen matrix products; Conv (1-D and 2-D, any group) as
/// im2col + an Eigen product per image and group. Its rule is its pattern table (eigen_table.hpp)
/// of composites, each one library call with a fused epilogue: dense/conv, + bias, + Relu / Clip /
/// GELU (the erf form exporters emit), named "eigen.dense_bias_gelu" and so on. Kernels run on
/// one thread or more: Eigen's products over shares of the output (runtime/cpu_threads.hpp), not
/// Eigen's own OpenMP.

#include <memory>

#include "backends/backend.hpp"

namespace tc {

/// The eigen backend (a LibraryBackend of eigen::table, eigen::plan and eigen::kernel). It exists
/// in every build; in one without Eigen its compile() says so. Its kernels run on `threads` threads
/// (at least 1; 1 in a build without them, cpu_threads_available).
std::unique_ptr<Backend> make_eigen_backend(int threads = 1);

/// The eigen backend's entry in the registry (built with Eigen3; made with BackendOptions::cpu_threads).
BackendRegistration eigen_registration();

}  // namespace tc
