#pragma once

/// \file
/// OpKind: the fusion category of an operator, ordered as TVM's TOpPattern.

#include <cstdint>
#include <optional>
#include <string_view>

namespace collage {

/// How an operator may fuse with its neighbours; a larger kind fuses less. The order is part of
/// the contract (rules compare kinds with <=).
enum class OpKind : std::uint8_t {
  elemwise = 0,   ///< one output element from the same input element (add, relu)
  broadcast = 1,  ///< elementwise with broadcasting (bias_add)
  injective = 2,  ///< each output element from one input element (reshape, transpose)
  reduce = 3,     ///< reductions (sum, max)
  anchor = 4,     ///< complex ops whose elementwise consumers can fuse in (conv2d, dense, matmul)
  tuple = 5,      ///< tuple construction
  opaque = 6,     ///< cannot fuse
};

/// "elemwise", "broadcast", ...: the names used in specs and reports.
constexpr std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::elemwise: return "elemwise";
    case OpKind::broadcast: return "broadcast";
    case OpKind::injective: return "injective";
    case OpKind::reduce: return "reduce";
    case OpKind::anchor: return "anchor";
    case OpKind::tuple: return "tuple";
    case OpKind::opaque: return "opaque";
  }
  return "opaque";
}

/// The kind named `name` (as printed by to_string), or nothing.
constexpr std::optional<OpKind> parse_op_kind(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(OpKind::opaque); ++k) {
    if (to_string(static_cast<OpKind>(k)) == name) return static_cast<OpKind>(k);
  }
  return std::nullopt;
}

}  // namespace collage
