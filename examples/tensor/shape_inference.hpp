#pragma once

/// \file
/// Shape inference: every operator node's output shape, and its attributes made canonical
/// (defaults filled in, axes non-negative, auto_pad resolved into pads; see Op).

#include <collage/support/result.hpp>

#include "tensor/graph.hpp"

namespace tc {

/// Infers the shape of every operator node in index order and canonicalises its attributes.
/// Idempotent. Fails at the first node whose inputs do not fit its operator, with one line naming
/// the node, its operator and the problem ("node 'conv_3' (Conv): input channels 3 do not match
/// the weight's 4 x group 1").
collage::Status infer_shapes(Graph& graph);

/// infer_shapes() for node `n` alone; its inputs' shapes must be known.
collage::Status infer_node_shape(Graph& graph, int n);

/// Codes of the attribute "auto_pad" that the ONNX reader sets and infer_shapes() resolves into
/// pads (then removes): 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID.
enum AutoPad : int { kNotSet = 0, kSameUpper = 1, kSameLower = 2, kValid = 3 };

/// Codes of Pad's "mode" attribute.
enum PadMode : int { kPadConstant = 0, kPadReflect = 1, kPadEdge = 2 };

}  // namespace tc
