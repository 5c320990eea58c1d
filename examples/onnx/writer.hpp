#pragma once

/// \file
/// The ONNX writer: a tensor-IR graph as an ONNX model (opset 17) that read_onnx() reads back to
/// the same graph.

#include <string>

#include <collage/support/result.hpp>

#include "onnx/model.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// `graph` as an OnnxModel at opset 17: inputs and outputs with their shapes, constants as
/// initializers, one node per operator named after it, canonical attributes as ONNX attributes
/// or constant operands (Reshape's shape, Slice's bounds, Pad's pads, Clip's bounds, axes).
/// An output that is an input, a constant or repeated goes through an Identity. Errors when the
/// graph does not pass infer_shapes().
collage::Result<OnnxModel> to_onnx_model(const Graph& graph);

/// to_onnx_model() serialised.
collage::Result<std::string> write_onnx_bytes(const Graph& graph);

/// to_onnx_model() written to `path`.
collage::Status write_onnx(const Graph& graph, const std::string& path);

}  // namespace tc
