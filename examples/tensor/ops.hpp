#pragma once

/// \file
/// The operators of the tensor IR: their names (ONNX's), fusion kinds (TVM's), arities, and the
/// canonical attributes each carries once the graph has been through shape inference.

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include <collage/graph/op_kind.hpp>

namespace tc {

/// An operator of the tensor IR. Unless noted, inputs and outputs are float32 tensors and the
/// semantics are ONNX's (opset 17). Attributes listed are the canonical ones every node has after
/// infer_shapes(): explicit, non-negative axes, full-length lists.
enum class Op {
  // Leaves.
  input,     ///< a graph input; attrs: none (the node's name is the input's name)
  constant,  ///< a constant tensor (an initializer); the node holds the value
  // Unary elementwise.
  identity, relu, sigmoid, tanh, exp, log, sqrt, erf, neg, abs, reciprocal,
  sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
  floor, ceil,
  round,  ///< to the nearest integer, halves to even
  sign,   ///< -1, 0 or 1 (NaN stays NaN)
  clip,         ///< attrs: min, max (floats; -inf/+inf when absent)
  leaky_relu,   ///< attrs: alpha
  hard_sigmoid, ///< attrs: alpha, beta
  // Binary, numpy broadcasting.
  add, sub, mul, div, pow, max, min,
  // Anchors.
  conv,    ///< X[N,C,spatial...], W[M,C/group,k...], optional B[M]; attrs: strides, pads (begins then
           ///< ends), dilations, group
  gemm,    ///< A, B, optional C (broadcast to the result); attrs: alpha, beta, trans_a, trans_b
  matmul,  ///< numpy matmul (batched, broadcasting; 1-D operands promoted and the dims dropped)
  max_pool,          ///< attrs: kernel_shape, strides, pads, dilations, ceil_mode
  average_pool,      ///< attrs: kernel_shape, strides, pads, ceil_mode, count_include_pad
  global_average_pool,
  global_max_pool,
  // Normalisations.
  batch_norm,  ///< inference: X, scale, B, mean, var (per channel, axis 1); attrs: epsilon
  layer_norm,  ///< X, Scale, optional B; attrs: axis (normalised over [axis, rank)), epsilon
  softmax,     ///< attrs: axis (one axis, opset 13 semantics)
  // Reductions.
  reduce_mean, reduce_sum, reduce_max,  ///< attrs: axes (sorted, non-negative, non-empty), keepdims
  // Injective (data movement).
  reshape,    ///< the output shape is the node's shape
  flatten,    ///< attrs: axis
  squeeze,    ///< attrs: axes
  unsqueeze,  ///< attrs: axes (positions in the output)
  transpose,  ///< attrs: perm
  concat,     ///< attrs: axis
  slice,      ///< attrs: starts, steps (one per dimension; the output shape gives the ends)
  pad,        ///< attrs: pads (begins then ends, may be negative), value, mode (0 constant, 1 reflect,
              ///< 2 edge)
  // Indexed.
  gather,  ///< data, indices (integer values; negative ones count from the end of the axis); attrs:
           ///< axis. Output shape: data's before the axis, then indices', then data's after it.
           ///< An index outside [-size, size) is an error in the reference and NaN in the kernels.
};

/// Static facts about an operator.
struct OpInfo {
  std::string_view name;  ///< ONNX's operator name ("Conv"); "Input" and "Constant" for the leaves
  collage::OpKind kind;   ///< fusion category, as TVM registers the operator
  int min_inputs;
  int max_inputs;
};

/// The facts of `op`.
const OpInfo& info(Op op);

/// info(op).name.
inline std::string_view op_name(Op op) { return info(op).name; }

/// The operator whose ONNX name is `name` (the IR's own operators only, not those the ONNX
/// reader lowers, such as Split), or nothing.
std::optional<Op> op_from_name(std::string_view name);

/// Every operator, in declaration order.
const std::vector<Op>& all_ops();

/// Unary elementwise (one input, output shape = input shape, each element from its own).
bool is_unary_elementwise(Op op);
/// Binary with numpy broadcasting.
bool is_binary_elementwise(Op op);
/// Output data is the input data in the same order under another shape (reshape, flatten,
/// squeeze, unsqueeze, identity).
bool is_reshape_like(Op op);
/// reduce_mean, reduce_sum, reduce_max.
bool is_reduction(Op op);

}  // namespace tc
