#pragma once

/// \file
/// Typed views of an operator node's attributes, as infer_shapes() leaves them (canonical: defaults
/// filled in, axes non-negative, auto_pad resolved). Everything that reads an operator's
/// attributes reads them through these, never by name. Each view asks for a node of its operator
/// family; for another operator the result is unspecified (the callers dispatch on Node::op).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/graph.hpp"

namespace tc {

/// A list of sizes, strides or axes.
using Ints = std::vector<std::int64_t>;

/// Conv: the window's strides, dilations and pads (begins then ends) per spatial dimension, and
/// the number of groups.
struct ConvAttrs {
  Ints strides;
  Ints dilations;
  Ints pads;
  std::int64_t group = 1;
};
ConvAttrs conv_attrs(const Node& node);

/// MaxPool and AveragePool: the window and how it is applied.
struct PoolAttrs {
  Ints kernel_shape;
  Ints strides;
  Ints dilations;  ///< all 1 for AveragePool
  Ints pads;       ///< begins then ends
  bool ceil_mode = false;
  bool count_include_pad = false;  ///< AveragePool only
};
PoolAttrs pool_attrs(const Node& node);

/// Gemm: Y = alpha * op(A) * op(B) + beta * C.
struct GemmAttrs {
  double alpha = 1.0;
  double beta = 1.0;
  bool trans_a = false;
  bool trans_b = false;
};
GemmAttrs gemm_attrs(const Node& node);

/// ReduceMean, ReduceSum, ReduceMax: the axes (sorted, non-negative, non-empty).
struct ReduceAttrs {
  Ints axes;
  bool keepdims = true;
};
ReduceAttrs reduce_attrs(const Node& node);

/// The one axis of Softmax, LayerNorm (normalised over [axis, rank)), Flatten and Concat.
std::size_t axis_attr(const Node& node);
/// The epsilon of BatchNormalization and LayerNormalization.
double epsilon_attr(const Node& node);
/// Squeeze and Unsqueeze (positions in the output), Transpose (the permutation).
Ints axes_attr(const Node& node);
Ints perm_attr(const Node& node);

/// Clip's bounds (-inf / +inf when absent), LeakyRelu's and HardSigmoid's alpha and beta.
struct UnaryAttrs {
  double min = 0;
  double max = 0;
  double alpha = 0;
  double beta = 0;
};
UnaryAttrs unary_attrs(const Node& node);

/// Slice: the start and step of each dimension (the output shape gives the ends).
struct SliceAttrs {
  Ints starts;
  Ints steps;
};
SliceAttrs slice_attrs(const Node& node);

/// Pad: begins then ends (may be negative), the constant value and the mode.
struct PadAttrs {
  enum class Mode { constant = 0, reflect = 1, edge = 2 };
  Ints pads;
  double value = 0;  ///< as the reader decoded it (folding int64 constants needs more than a float)
  Mode mode = Mode::constant;
};
PadAttrs pad_attrs(const Node& node);

/// A convolution's or pooling window's geometry over the spatial dimensions of its input: what the
/// reference interpreter, the native loops, the CUDA code generator and the library planners all
/// compute with. Dimension d of `in`, `out`, ... is spatial dimension d (the input's d + 2).
struct WindowGeometry {
  std::int64_t batch = 0;
  std::int64_t channels = 0;      ///< input channels
  std::int64_t out_channels = 0;  ///< Conv: the weight's output channels; pooling: channels
  std::int64_t group = 1;         ///< Conv's groups; 1 for pooling
  Ints in, out, kernel, stride, dilation, pad_begin, pad_end;

  std::size_t rank() const { return in.size(); }
  /// The window's dilated extent along dimension d.
  std::int64_t extent(std::size_t d) const { return dilation[d] * (kernel[d] - 1) + 1; }
  /// Input channels per group, output channels per group.
  std::int64_t group_channels() const { return channels / group; }
  std::int64_t group_out_channels() const { return out_channels / group; }
  /// A 1x1 (x1) kernel, stride 1, no padding: every output point reads its own input point.
  bool pointwise() const;
  /// Conv with one input channel per group and as many groups as channels.
  bool depthwise() const { return group > 1 && group == channels && group_channels() == 1; }
  /// The same window over `rank` (>= rank()) spatial dimensions, the new ones leading and of
  /// size 1 (kernel 1, stride 1, dilation 1, no padding): how the kernels that loop over a fixed
  /// number of dimensions see a window with fewer.
  WindowGeometry expanded_to(std::size_t rank) const;
};

/// The geometry of Conv node `n` of `graph` (shapes inferred).
WindowGeometry conv_geometry(const Graph& graph, int n);
/// The geometry of MaxPool or AveragePool node `n` of `graph` (shapes inferred).
WindowGeometry pool_geometry(const Graph& graph, int n);

/// What a graph input read from an integer ONNX input holds, kept as attributes of its input node:
/// its ONNX element type, and the smallest axis a Gather indexes with its values (0: none). Its
/// values are integers of magnitude at most 2^24 (exact in float32) and, with an index bound, in
/// [-index_bound, index_bound).
struct InputDomain {
  std::int64_t elem_type = 1;  ///< ONNX's TensorProto.DataType: 1 is float32
  std::int64_t index_bound = 0;
  bool integer() const { return elem_type != 1; }
};
InputDomain input_domain(const Node& input);
void set_input_domain(Node& input, const InputDomain& domain);

/// The largest magnitude an integer input may hold (every integer up to it is exact in float32).
inline constexpr std::int64_t kMaxExactInteger = std::int64_t{1} << 24;

/// An error naming the first input of `graph` and the first element of it in `inputs` outside
/// its domain; success for float32 inputs.
collage::Status check_input_values(const Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace tc
