#pragma once

/// \file
/// Lowering a partition (a Function) to the native backend's stages and tile programs.

#include <collage/support/result.hpp>

#include "backends/native/program.hpp"
#include "tensor/function.hpp"

namespace tc::native {

/// Compiles `function` into stages: every anchor, reduction or opaque operator is the core of a
/// stage; elementwise, broadcast and injective operators are inlined into the tile programs that
/// read them (a reduction's prologue, a stage's epilogue), with no intermediate buffer. A core
/// read only by one elementwise consumer runs fused with it (the consumer's program is applied to
/// each block the core finishes). A partition of the native fusion rule always lowers to one
/// stage; anything else (a whole model, several anchors) lowers to several, with scratch buffers
/// between them. Fails, naming the node, only where the backend has no kernel for the case.
collage::Result<LoweredFunction> lower(const Function& function);

}  // namespace tc::native
