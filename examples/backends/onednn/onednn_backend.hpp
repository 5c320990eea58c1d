#pragma once

/// \file
/// The onednn backend: the DNNL target of the Collage paper, on Debian's oneDNN 2.6. Convolution,
/// matmul (MatMul, Gemm) with post-ops (bias, eltwise, binary sums), pooling, softmax, layer and
/// batch normalisation, reductions, transposes, eltwise and binary operators, in plain row-major
/// layouts (constant weights reordered once into the layout each primitive prefers). Its rule is a
/// pattern table in the spirit of TVM's DNNL one (python/tvm/relay/op/contrib/dnnl.py): composites
/// of one primitive + post-ops that recognise the decomposed forms exporters emit (GELU as
/// Div/Erf/Add/Mul/Mul, SiLU as Sigmoid/Mul, LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/
/// Div/Mul/Add), plus a predicate for each operator oneDNN runs alone. Kernels run on one thread
/// unless the backend is made with more.

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/kit/pattern_table.hpp"

namespace tc {

/// The onednn target.
class OnednnBackend final : public Backend {
 public:
  /// Kernels run on `threads` OpenMP threads (at least 1).
  explicit OnednnBackend(int threads = 1);
  /// Each accepted match of onednn_pattern_table() and each operator oneDNN runs alone is one
  /// partition: primitive(only_valid(union(composite(label, pattern(label, text, accepts))...,
  /// op_predicate(onednn.op, accepts)))). A match is accepted when it plans (see onednn_plan.hpp)
  /// under its own label, so each fusion is proposed once, under its canonical name.
  collage::PartitionSpec<Graph> spec() const override;
  std::string configuration() const override;

 private:
  /// Creates a primitive per call of `function` (its Composite groups and the operators outside
  /// them), with constant weights reordered once.
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override;

  int threads_;
};

/// The onednn pattern table: "onednn.conv" and "onednn.dense" (MatMul or Gemm) with post-op
/// chains "_bias", "_scale" (dense), "_sum", then an activation ("onednn.conv_bias_sum_relu",
/// "onednn.dense_bias_gelu"); "onednn.gelu" and "onednn.swish" alone; "onednn.batch_norm_relu";
/// "onednn.layer_norm" (with scale and bias), "onednn.layer_norm_scale", "onednn.layer_norm_bare".
const std::vector<LabelledPattern>& onednn_pattern_table();

/// The onednn backend's entry in the registry (built with oneDNN 2.x; made with BackendOptions::cpu_threads).
BackendRegistration onednn_registration();

}  // namespace tc
