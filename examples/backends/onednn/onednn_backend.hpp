#pragma once

/// \file
/// The onednn backend: the DNNL target of the Collage paper, on Debian's oneDNN 2.6. Convolution,
/// matmul (MatMul, Gemm) with post-ops (bias, eltwise, binary sums), pooling, softmax, layer and
/// batch normalisation, reductions, transposes, eltwise and binary operators, in plain row-major
/// layouts (constant weights reordered once into the layout each primitive prefers). Its rule is
/// its pattern table (onednn_table.hpp): composites of one primitive + post-ops that recognise the
/// decomposed forms exporters emit (GELU as Div/Erf/Add/Mul/Mul, SiLU as Sigmoid/Mul, LayerNorm as
/// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add), plus a predicate for each operator oneDNN
/// runs alone. Kernels run on one thread unless the backend is made with more. Each comes in two
/// layouts: "onednn" and "onednn_winograd" take and return plain tensors, "onednn_blocked" and
/// "onednn_winograd_blocked" take and return rank-4 values in the CPU's blocked layout
/// (native_blocked_layout), so that chains of their partitions convert nothing between them; the
/// search charges the reorders where a value passes between layouts. The blocked ones propose only
/// calls that read or write a rank-4 value (on others they would be the plain ones again).

#include <memory>

#include "backends/backend.hpp"

namespace tc {

/// The onednn backend (a LibraryBackend of onednn::table, onednn::plan and onednn::kernel), its
/// kernels on `threads` OpenMP threads (at least 1). It exists in every build; in one without
/// oneDNN its compile() says so. Named "onednn" in the plain layout, "onednn_blocked" in another.
std::unique_ptr<Backend> make_onednn_backend(int threads = 1, Layout layout = Layout::plain);

/// The onednn backend's entry in the registry (built with oneDNN 2.x; made with BackendOptions::cpu_threads).
BackendRegistration onednn_registration();

/// The onednn_winograd backend: onednn's convolutions of 3x3 windows and stride 1, with their
/// fused bias, sum and activation, each its own partition, run as oneDNN's Winograd convolutions
/// (F(2x2, 3x3) on AVX-512 CPUs; on others it proposes nothing). Winograd trades multiplications
/// for transforms: faster than the direct kernel on wide activations and slower on narrow ones
/// (docs/kernels-libraries.md), so the search measures both. Joining touching ones, which keeps their
/// values blocked between them, made ResNet-18 and ResNet-50 no faster. Its kernels run on
/// `threads` OpenMP threads. Named "onednn_winograd" in the plain layout, "onednn_winograd_blocked"
/// in another.
std::unique_ptr<Backend> make_onednn_winograd_backend(int threads = 1, Layout layout = Layout::plain);

/// The onednn_winograd backend's entry in the registry.
BackendRegistration onednn_winograd_registration();

/// The entries of onednn and onednn_winograd in the CPU's blocked layout (native_blocked_layout),
/// made only when asked (BackendOptions::blocked_layouts).
BackendRegistration onednn_blocked_registration();
BackendRegistration onednn_winograd_blocked_registration();

}  // namespace tc
