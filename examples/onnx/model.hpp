#pragma once

/// \file
/// OnnxModel: a plain description of an ONNX model (inputs, initializers, nodes, outputs) and its
/// serialisation, so writers and tests build models without the protobuf definitions.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <collage/support/result.hpp>

#include "onnx/tensor_proto.hpp"

namespace tc {

/// An attribute value: int, float, string, int list, float list or tensor.
using OnnxAttr = std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>, std::vector<float>, OnnxTensor>;

/// One node of an OnnxModel.
struct OnnxNode {
  std::string op_type;
  std::vector<std::string> inputs;   ///< "" for an omitted optional input
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, OnnxAttr>> attrs;
  std::string name;
  std::string domain;
};

/// A dimension of a graph input or output: a size, or a symbolic name (dim_param).
using OnnxDim = std::variant<std::int64_t, std::string>;

/// A graph input or output.
struct OnnxValueInfo {
  std::string name;
  ElemType type = ElemType::float32;  ///< undefined when not a tensor
  std::vector<OnnxDim> dims;
  bool has_shape = true;   ///< false: the type carries no shape at all
  bool is_tensor = true;   ///< false: a sequence, map or optional
};

/// A model-local function (FunctionProto): a node whose domain and op_type are the function's runs
/// its body.
struct OnnxFunction {
  /// An attribute of a body node that takes the calling node's attribute `ref` (ref_attr_name).
  struct AttrRef {
    std::size_t node;  ///< index into `nodes`
    std::string name;
    std::string ref;
  };

  std::string domain;
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attributes;  ///< the calling node's attributes the body may take
  std::vector<OnnxNode> nodes;
  std::vector<AttrRef> attr_refs;
  int opset = 0;  ///< the default domain's opset its body is written for (0: the model's)
};

/// The IR version of the ONNX release that introduced `opset` (8 for opsets up to 18): 9 for 19-20,
/// 10 for 21-22, 11 for 23, 12 for 24, 13 from 25.
int ir_version_for_opset(int opset);

/// A whole model: one graph in the default domain at `opset`.
struct OnnxModel {
  int opset = 17;
  /// The IR version serialize() writes (ir_version_for_opset: 8 is what opset 17 shipped with).
  int ir_version = 8;
  std::string graph_name = "graph";
  std::vector<OnnxValueInfo> inputs;
  std::vector<std::pair<std::string, OnnxTensor>> initializers;
  std::vector<OnnxNode> nodes;
  std::vector<OnnxValueInfo> outputs;
  /// Its local functions (serialize() imports each one's domain at version 1).
  std::vector<OnnxFunction> functions;
  /// When set, save() writes the initializers' bytes to this file beside the model, which refers
  /// to them as external data (the form of models over protobuf's 2 GiB); serialize() needs the
  /// file's bytes back then.
  std::string external_data;
  /// What parse_model() left out, one "node 'NAME' (OP): attribute 'A'" each, so that a tool
  /// rewriting a parsed model can refuse one it would corrupt.
  std::vector<std::string> left_out;
};

/// The value info of a float32 tensor `name` of static `shape`.
OnnxValueInfo float_value_info(const std::string& name, const Shape& shape);

/// `model` serialised as a ModelProto (IR version model.ir_version); an error for a tensor it
/// cannot encode. With model.external_data set, the initializers' bytes go to `external_bytes`
/// (an error without it).
collage::Result<std::string> serialize(const OnnxModel& model, std::string* external_bytes = nullptr);

/// The model serialised in `bytes`, with its IR version. Attributes of kinds OnnxAttr lacks
/// (graphs, string and tensor lists, tensors it cannot hold) and local functions are left out and
/// named in `left_out`; an initializer OnnxTensor cannot hold (strings, external data) is an error.
collage::Result<OnnxModel> parse_model(std::string_view bytes);

/// serialize() written to `path` (and model.external_data beside it).
collage::Status save(const OnnxModel& model, const std::string& path);

}  // namespace tc
