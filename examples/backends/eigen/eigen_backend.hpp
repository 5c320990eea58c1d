#pragma once

/// \file
/// The eigen backend: a library-style target (like a BLAS backend in TVM's Collage). GEMM, MatMul
/// (batched, broadcasting) and Gemm run as Eigen matrix products; Conv (1-D and 2-D, any group) as
/// im2col + an Eigen product per image and group. Its rule is a pattern table of composites, each
/// one library call with a fused epilogue: dense/conv, + bias, + Relu / Clip / GELU (the erf form
/// exporters emit), named "eigen.dense_bias_gelu" and so on. Kernels run single-threaded (Eigen
/// without OpenMP).

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/kit/pattern_table.hpp"

namespace tc {

/// The eigen target.
class EigenBackend final : public Backend {
 public:
  EigenBackend();
  /// Each match of its pattern table (see eigen_pattern_table) that the compiler accepts is one
  /// partition: primitive(only_valid(union(composite(label, pattern(label, text, accepts))...))).
  collage::PartitionSpec<Graph> spec() const override;

 private:
  /// Compiles every call of `function` (its Composite groups and any single MatMul, Gemm or Conv
  /// outside them); constant weights are packed once here.
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override;
};

/// The eigen pattern table, in the order the rule lists it: "eigen.dense" (MatMul or Gemm),
/// "eigen.conv", each with "_bias", then "_relu", "_clip" or "_gelu" ("eigen.conv_bias_relu").
const std::vector<LabelledPattern>& eigen_pattern_table();

/// The eigen backend's entry in the registry (built with Eigen3).
BackendRegistration eigen_registration();

}  // namespace tc
