#pragma once

/// \file
/// Softmax, layer normalisation and gather: row kernels of the native backend (each row of the input
/// read once into cache, normalised there).

#include <cstdint>
#include <vector>

#include "backends/native/function_ref.hpp"
#include "loops/program.hpp"

namespace tc::native {

/// Part `part` of `parts` of out = softmax(x) along the core's axis (a share of the outer rows);
/// done() per finished range.
void softmax(const loops::SoftmaxCore& core, const float* x, float* out, std::vector<float>& scratch, RangeDone done,
             int part = 0, int parts = 1);

/// Part `part` of `parts` of out = layer_norm(x, scale, bias) (a share of the rows; bias may be
/// null); `params` receives scale and bias expanded to the normalised shape when they are
/// broadcast. done() per finished range.
void layer_norm(const loops::LayerNormCore& core, const float* x, const float* scale, const float* bias, float* out,
                std::vector<float>& params, RangeDone done, int part = 0, int parts = 1);

/// Part `part` of `parts` of out = gather(data, indices) (a share of the output rows, one per
/// (outer, index) pair; NaN rows for an index out of range). done() per finished range.
void gather(const loops::GatherCore& core, const float* data, const float* indices, float* out, RangeDone done,
            int part = 0, int parts = 1);

}  // namespace tc::native
