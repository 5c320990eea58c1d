#pragma once

/// \file
/// The cublas backend: MatMul, batched MatMul and Gemm through cuBLASLt, with the epilogues it
/// fuses (scale, bias, a same-shape addend, relu, and with CublasOptions::approximate_gelu GELU)
/// as composite patterns, one cuBLASLt call per partition. Algorithms are chosen by cuBLASLt's
/// heuristic when compiling, weights are uploaded then, scratch memory is reserved then.

#include <memory>
#include <string>

#include <collage/rules/partition_spec.hpp>

#include "backends/backend.hpp"
#include "backends/cublas/cublas_plan.hpp"

namespace tc {

/// The patterns of the cublas backend: for each anchor (MatMul, Gemm), "cublas.dense" with, in
/// this order, an optional "_scale" (Div or Mul by a scalar), "_add" or "_add_add" (one or two
/// Adds: a bias vector or a same-shape tensor), and "_relu" or (with options.approximate_gelu)
/// "_gelu" (the erf forms): 12 entries, 18 with GELU.
collage::PatternTable<Graph> cublas_patterns(const CublasOptions& options = {});

/// The rule of the cublas backend: each match of cublas_patterns that plan_matmul accepts is one
/// partition for `target`.
collage::PartitionSpec<Graph> cublas_spec(const CublasOptions& options = {}, std::string target = "cublas");

/// The cublas backend. It exists in every build; in one without the CUDA toolkit its compile()
/// says so.
std::unique_ptr<Backend> make_cublas_backend(CublasOptions options = {});

/// The cublas backend's entry in the registry (built with the CUDA toolkit's cuBLASLt).
BackendRegistration cublas_registration();

}  // namespace tc
