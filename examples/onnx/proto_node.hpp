#pragma once

/// \file
/// Internal to examples/onnx/: typed access to the attributes of an ONNX NodeProto, with errors
/// for an attribute of the wrong type.

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <collage/support/result.hpp>

namespace tc::detail {

/// The attributes of one ONNX node.
class NodeAttrs {
 public:
  explicit NodeAttrs(const ::onnx::NodeProto& node) : node_(node) {}

  bool has(const std::string& name) const { return find(name) != nullptr; }
  /// The int `name`, or `fallback` when absent; an error when it is not an int.
  collage::Result<std::int64_t> get_int(const std::string& name, std::int64_t fallback) const;
  /// The float `name`, or `fallback`.
  collage::Result<float> get_float(const std::string& name, float fallback) const;
  /// The string `name`, or `fallback`.
  collage::Result<std::string> get_string(const std::string& name, const std::string& fallback) const;
  /// The int list `name`, or `fallback`.
  collage::Result<std::vector<std::int64_t>> get_ints(const std::string& name, std::vector<std::int64_t> fallback) const;
  /// The float list `name`, or `fallback`.
  collage::Result<std::vector<float>> get_floats(const std::string& name, std::vector<float> fallback) const;
  /// The string list `name`, or `fallback`.
  collage::Result<std::vector<std::string>> get_strings(const std::string& name, std::vector<std::string> fallback) const;
  /// The tensor `name`, or nullptr when absent or not a tensor.
  const ::onnx::TensorProto* get_tensor(const std::string& name) const;
  /// The attribute `name`, or nullptr.
  const ::onnx::AttributeProto* find(const std::string& name) const;

 private:
  const ::onnx::NodeProto& node_;
};

/// How errors name `node`: its name, else its first named output's ("" when it has neither).
inline std::string node_name(const ::onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  for (const std::string& out : node.output()) {
    if (!out.empty()) return out;
  }
  return std::string();
}

}  // namespace tc::detail
