#pragma once

/// \file
/// The op-kind table: the OpKind of common operator names, for graph nodes that give no `kind`.

#include <optional>
#include <string_view>
#include <unordered_map>

#include "collage/graph/op_kind.hpp"

namespace collage::cli {

/// The built-in kind of common operator names (TVM's TOpPattern), or nothing. A dotted name
/// (`nn.conv2d`) is looked up by its last component when the whole name is not in the table.
inline std::optional<OpKind> builtin_op_kind(std::string_view op) {
  static const std::unordered_map<std::string_view, OpKind> table = [] {
    std::unordered_map<std::string_view, OpKind> t;
    for (std::string_view name :
         {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "negative", "clip", "cast", "erf", "round",
          "floor", "ceil", "sin", "cos", "copy", "leaky_relu", "silu", "gelu", "fast_exp", "fast_tanh", "logical_not"}) {
      t.emplace(name, OpKind::elemwise);
    }
    for (std::string_view name :
         {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "bias_add", "where", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "mod",
          "floor_divide", "floor_mod", "prelu"}) {
      t.emplace(name, OpKind::broadcast);
    }
    for (std::string_view name :
         {"reshape", "transpose", "squeeze", "expand_dims", "concatenate", "strided_slice", "pad", "layout_transform",
          "take", "split", "flatten", "batch_flatten", "broadcast_to", "tile", "repeat", "reverse", "slice", "gather",
          "upsampling", "resize2d", "get_item"}) {
      t.emplace(name, OpKind::injective);
    }
    for (std::string_view name : {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "variance", "all", "any"}) {
      t.emplace(name, OpKind::reduce);
    }
    for (std::string_view name :
         {"conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose", "dense", "matmul", "batch_matmul",
          "max_pool2d", "avg_pool2d", "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d"}) {
      t.emplace(name, OpKind::anchor);
    }
    t.emplace("tuple", OpKind::tuple);
    for (std::string_view name : {"softmax", "log_softmax", "layer_norm", "batch_norm", "group_norm", "input", "const"}) {
      t.emplace(name, OpKind::opaque);
    }
    return t;
  }();
  auto it = table.find(op);
  if (it == table.end()) {
    const std::size_t dot = op.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    it = table.find(op.substr(dot + 1));
    if (it == table.end()) return std::nullopt;
  }
  return it->second;
}

}  // namespace collage::cli
