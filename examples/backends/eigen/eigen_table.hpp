#pragma once

/// \file
/// The eigen backend's pattern table: what it proposes, each match checked by its planner.

#include "backends/kit/pattern_table.hpp"

namespace tc::eigen {

/// "eigen.dense" (MatMul or Gemm) and "eigen.conv" (Conv with constant weights), each alone and
/// with "_bias", then with "_relu", "_clip" or "_gelu" ("eigen.conv_bias_relu"): 16 entries, each
/// accepted when plan() plans it.
const LibraryTable& table();

}  // namespace tc::eigen
