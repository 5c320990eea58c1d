#pragma once

/// \file
/// Lowering a partition (a Function) to stages and tile programs, the loop IR that the native
/// (C++ loops) and cuda (NVRTC kernels) backends render; and the bound on the depth of the
/// partitions both propose (collage's native fusion rule).

#include <cstddef>

#include <collage/support/result.hpp>

#include "loops/program.hpp"
#include "tensor/function.hpp"

namespace tc::loops {

/// The native fusion rule's bound on a partition's depth. 8 keeps the decomposed forms exporters
/// emit whole (layer norm: Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add; matmul, bias and GELU:
/// 7) while bounding the candidates of long elementwise chains.
inline constexpr std::size_t kFusionMaxDepth = 8;

/// Compiles `function` into stages: every anchor, reduction or opaque operator is the core of a
/// stage; elementwise, broadcast and injective operators are inlined into the tile programs that
/// read them (a reduction's prologue, a stage's epilogue), with no intermediate buffer. A core
/// read only by one elementwise consumer runs fused with it (the consumer's program is applied to
/// each block the core finishes). A partition of the native fusion rule always lowers to one
/// stage; anything else (a whole model, several anchors) lowers to several, with scratch buffers
/// between them. Fails, naming the node, only where the backend has no kernel for the case.
collage::Result<LoweredFunction> lower(const Function& function);

}  // namespace tc::loops
