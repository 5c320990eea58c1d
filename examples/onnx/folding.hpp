#pragma once

/// \file
/// Internal to examples/onnx/: load-time evaluation of ONNX nodes whose inputs are all constants,
/// for the shape arithmetic exporters emit (Shape, Gather, Cast, Concat, Range, Equal, Where on
/// int64 tensors ...) and for the data movement of IR operators on tensors of any element type.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include <collage/support/result.hpp>

#include "onnx/tensor_proto.hpp"
#include "tensor/graph.hpp"

namespace tc::detail {

/// The outputs of ONNX node `node`, whose definition is the one introduced in opset `version`,
/// computed from its constant `inputs` (nullptr for an omitted optional input), or nothing when the op is one the reader maps to the IR instead (float
/// arithmetic the reference interpreter computes, convolutions, ...). Results above
/// `max_elements` elements are errors. Errors name the problem; the caller names the node.
collage::Result<std::optional<std::vector<OnnxTensor>>> fold_onnx_node(const ::onnx::NodeProto& node, int version,
                                                                       const std::vector<const OnnxTensor*>& inputs,
                                                                       std::int64_t max_elements);

/// `x` converted to element type `to` (as ONNX's Cast: floats to integers truncate and saturate,
/// integers wrap to narrower types).
collage::Result<OnnxTensor> cast_tensor(const OnnxTensor& x, ElemType to);

/// Whether fold_onnx_node() computes ONNX operator `op_type` (for some operands).
bool folds(std::string_view op_type);

/// Whether `op` only moves data (its output elements are copies of input elements or a pad
/// value), so move_data() can apply it to tensors of any element type.
bool moves_data(Op op);

/// IR data-movement node `node` (see moves_data(); attributes as the reader builds them, not yet
/// canonical; node.shape is the target of a canonical Reshape) applied to `inputs` of one element
/// type. Each element's source comes from running the reference interpreter on the inputs'
/// element indexes, so the semantics are the IR's own. Inputs above 2^24 elements in all are
/// errors (the indexes must be exact in float).
collage::Result<OnnxTensor> move_data(const Node& node, const std::vector<const OnnxTensor*>& inputs);

}  // namespace tc::detail
