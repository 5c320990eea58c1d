#pragma once

/// \file
/// Reorders between layouts (tensor/layout.hpp) on the threads of the shared CPU pool.

#include "tensor/layout.hpp"

namespace tc {

/// reorder() on up to `threads` threads of the shared pool (runtime/cpu_threads.hpp), each
/// converting whole channel blocks; on one thread where the tensor is too small for a second to
/// pay for its wake-up.
void reorder_on_threads(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape,
                        int threads);

}  // namespace tc
