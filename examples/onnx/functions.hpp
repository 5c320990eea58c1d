#pragma once

/// \file
/// Internal to examples/onnx/: model-local functions (ModelProto.functions, IR 8) expanded in
/// place, as exporters emit them (PyTorch's for its own modules, ONNX Script's for composite
/// operators), so the reader sees only operators of the default domain.

#include <onnx/onnx_pb.h>

#include <collage/support/result.hpp>

namespace tc::detail {

/// Replaces every node of `model`'s graph that calls one of its local functions (a node whose
/// domain and op_type are a function's) by the function's body: the call's inputs and outputs
/// take the places of the function's, every other value of the body gets a name new to the graph,
/// and attributes the body takes by reference (ref_attr_name) are the call's (left out where the
/// call gives none, as ONNX specifies). Calls inside a body are expanded too. Errors, one line
/// naming the function: a recursive call, a body reading a value it does not define, a body
/// operator whose definition differs between the function's opset and the model's, two functions
/// of one name, a missing attribute that has a default (IR 9's attribute_proto, which this
/// reader does not read), an expansion past 2^22 nodes (counted before anything is expanded).
collage::Status inline_local_functions(::onnx::ModelProto& model);

}  // namespace tc::detail
