#pragma once

// A small expression IR: variables, tensor constants, scalar constants, operator calls, tuples,
// tuple projections and operator references, held in a deque and addressed by pointer. Its traits
// implement every optional member.

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "collage/graph/dataflow_traits.hpp"
#include "collage/graph/op_kind.hpp"

namespace testing_ir {

enum class ExprType { var, constant, scalar, call, tuple, get_item, op_ref };

struct Expr {
  ExprType type;
  std::string name;  // variable / operator / reference name
  std::vector<const Expr*> args;
  collage::OpKind kind = collage::OpKind::opaque;
  std::size_t field = 0;  // for get_item
  int scope = 0;
};

/// The op kinds of common operators, as TVM's TOpPattern assigns them.
inline collage::OpKind default_kind(const std::string& op) {
  static const std::map<std::string, collage::OpKind> table = {
      {"add", collage::OpKind::broadcast},      {"subtract", collage::OpKind::broadcast},
      {"multiply", collage::OpKind::broadcast}, {"mul", collage::OpKind::broadcast},
      {"divide", collage::OpKind::broadcast},   {"power", collage::OpKind::broadcast},
      {"bias_add", collage::OpKind::broadcast}, {"relu", collage::OpKind::elemwise},
      {"abs", collage::OpKind::elemwise},       {"tanh", collage::OpKind::elemwise},
      {"exp", collage::OpKind::elemwise},       {"sqrt", collage::OpKind::elemwise},
      {"reshape", collage::OpKind::injective},  {"transpose", collage::OpKind::injective},
      {"concat", collage::OpKind::injective},   {"split", collage::OpKind::injective},
      {"pad", collage::OpKind::injective},      {"sum", collage::OpKind::reduce},
      {"mean", collage::OpKind::reduce},        {"max", collage::OpKind::reduce},
      {"softmax", collage::OpKind::opaque},     {"conv2d", collage::OpKind::anchor},
      {"dense", collage::OpKind::anchor},       {"matmul", collage::OpKind::anchor},
      {"batch_matmul", collage::OpKind::anchor}, {"max_pool2d", collage::OpKind::anchor},
      {"layer_norm", collage::OpKind::opaque},
  };
  auto it = table.find(op);
  return it == table.end() ? collage::OpKind::opaque : it->second;
}

struct ExprGraph {
  std::deque<Expr> nodes;
  std::vector<const Expr*> outputs;
  int current_scope = 0;

  const Expr* make(Expr e) {
    e.scope = current_scope;
    nodes.push_back(std::move(e));
    return &nodes.back();
  }
  const Expr* var(std::string name) { return make({ExprType::var, std::move(name), {}, collage::OpKind::opaque}); }
  const Expr* constant(std::string name = "const") {
    return make({ExprType::constant, std::move(name), {}, collage::OpKind::elemwise});
  }
  const Expr* scalar(std::string name = "scalar") {
    return make({ExprType::scalar, std::move(name), {}, collage::OpKind::elemwise});
  }
  const Expr* op_ref(std::string name) { return make({ExprType::op_ref, std::move(name), {}, collage::OpKind::opaque}); }
  const Expr* call(const std::string& op, std::vector<const Expr*> args) {
    return make({ExprType::call, op, std::move(args), default_kind(op)});
  }
  const Expr* call(const std::string& op, std::vector<const Expr*> args, collage::OpKind kind) {
    return make({ExprType::call, op, std::move(args), kind});
  }
  const Expr* tuple(std::vector<const Expr*> fields) {
    return make({ExprType::tuple, "tuple", std::move(fields), collage::OpKind::tuple});
  }
  const Expr* get_item(const Expr* t, std::size_t field) {
    Expr e{ExprType::get_item, "get_item", {t}, collage::OpKind::injective};
    e.field = field;
    return make(std::move(e));
  }
  void output(const Expr* e) { outputs.push_back(e); }
};

}  // namespace testing_ir

template <>
struct collage::dataflow_traits<testing_ir::ExprGraph> {
  using node_handle = const testing_ir::Expr*;
  using G = testing_ir::ExprGraph;
  using T = testing_ir::ExprType;

  static const std::vector<node_handle>& roots(const G& g) { return g.outputs; }
  static const std::vector<node_handle>& inputs(const G&, node_handle n) { return n->args; }
  static collage::OpKind kind(const G&, node_handle n) { return n->kind; }
  static const std::string& op_name(const G&, node_handle n) { return n->name; }
  static bool is_inlinable(const G&, node_handle n) { return n->type == T::scalar || n->type == T::op_ref; }
  static bool is_tuple(const G&, node_handle n) { return n->type == T::tuple; }
  static bool is_projection(const G&, node_handle n) { return n->type == T::get_item; }
  static std::size_t projection_index(const G&, node_handle n) { return n->field; }
  static bool is_constant(const G&, node_handle n) { return n->type == T::constant; }
  static bool needs_kernel(const G&, node_handle n) { return n->type == T::call; }
  static int scope(const G&, node_handle n) { return n->scope; }
  /// Operators by name; leaves by what they are (this IR has no shapes to tell them apart).
  static std::string signature(const G&, node_handle n) {
    switch (n->type) {
      case T::call: return n->name;
      case T::var: return "var";
      case T::constant: return "const";
      case T::scalar: return "scalar:" + n->name;
      case T::tuple: return "tuple";
      case T::get_item: return "get_item:" + std::to_string(n->field);
      case T::op_ref: return "ref:" + n->name;
    }
    return n->name;
  }
};
