#pragma once

/// \file
/// The cublas backend's pattern table: what it proposes, each match checked by its planner.

#include "backends/cublas/cublas_plan.hpp"
#include "backends/kit/pattern_table.hpp"

namespace tc::cublas {

/// "cublas.dense" (MatMul or Gemm) with, in this order, an optional "_scale" (Div or Mul by a
/// scalar), "_add" or "_add_add" (one or two Adds: a bias vector or a same-shape tensor), and
/// "_relu" or (with options.approximate_gelu) "_gelu" (the erf forms): 12 entries, 18 with GELU,
/// each accepted when plan() plans it under `options`.
LibraryTable table(const Options& options = {});

}  // namespace tc::cublas
