#pragma once

/// \file
/// The cudnn backend's pattern table: what it proposes, each match checked by its planner.

#include "backends/kit/pattern_table.hpp"

namespace tc::cudnn {

/// "cudnn.conv" (Conv with or without its bias input), "cudnn.conv_add" and "cudnn.conv_add_add"
/// (one or two Adds: a per-channel bias, a residual of the output's shape), each also with
/// "_relu"; and "cudnn.max_pool", "cudnn.avg_pool", "cudnn.global_avg_pool",
/// "cudnn.global_max_pool", "cudnn.softmax", each accepted when plan() plans it.
const LibraryTable& table();

}  // namespace tc::cudnn
