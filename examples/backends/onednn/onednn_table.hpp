#pragma once

/// \file
/// The onednn backend's pattern table, after TVM's DNNL one (python/tvm/relay/op/contrib/dnnl.py),
/// and the operators it runs alone: what it proposes, each checked by its planner.

#include "backends/kit/pattern_table.hpp"

namespace tc::onednn {

/// "onednn.conv" and "onednn.dense" (MatMul or Gemm) with post-op chains "_bias", "_scale"
/// (dense), "_sum", then an activation ("onednn.conv_bias_sum_relu", "onednn.dense_bias_gelu");
/// "onednn.gelu" and "onednn.swish" alone; "onednn.batch_norm_relu"; "onednn.layer_norm" (with
/// scale and bias), "onednn.layer_norm_scale", "onednn.layer_norm_bare". A match is accepted when
/// it plans (see onednn_plan.hpp) under its own label, so each fusion is proposed once, under its
/// canonical name.
const LibraryTable& table();

/// Whether onednn runs `call` (one operator, or a match of table() under its label): it plans, and
/// under the call's label when it has one.
bool accepts(const Graph& graph, const LibraryCall& call);

}  // namespace tc::onednn
