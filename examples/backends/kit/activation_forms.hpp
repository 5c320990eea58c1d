#pragma once

/// \file
/// ActivationForm: an activation as exporters decompose it into elementary operators over one
/// value x and scalar constants (GELU as Div/Erf/Add/Mul/Mul, SiLU as Sigmoid/Mul), written once
/// and read two ways: matched against a call's nodes with x and the constants' values checked
/// (the epilogue reader), and turned into the collage::Pattern that proposes such calls (the
/// pattern vocabulary).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <collage/rules/pattern.hpp>

#include "tensor/graph.hpp"
#include "tensor/ops.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// The value of node `n` when it is a one-element constant.
inline std::optional<float> scalar_constant(const Graph& g, int n) {
  const Node& node = g.node(n);
  if (node.op != Op::constant || node.value == nullptr || node.value->data.size() != 1) return std::nullopt;
  return node.value->data.front();
}

/// Whether `n` is a one-element constant within a relative 1e-4 of `value`.
inline bool is_scalar(const Graph& g, int n, float value) {
  const std::optional<float> v = scalar_constant(g, n);
  return v && std::fabs(*v - value) <= 1e-4f * std::fabs(value);
}

/// A formula over one value x: x itself, a scalar constant, an operator over formulas (Add and Mul
/// in either operand order), or any of several formulas.
class ActivationForm {
 public:
  /// The value the activation is applied to.
  static ActivationForm x() { return ActivationForm(Tag::x); }
  /// A one-element constant equal to `value` (within a relative 1e-4).
  static ActivationForm scalar(float value) {
    ActivationForm f(Tag::scalar);
    f.value_ = value;
    return f;
  }
  /// `op` over `args` in argument order (either order for Add and Mul).
  static ActivationForm op(Op op, std::vector<ActivationForm> args) {
    ActivationForm f(Tag::op);
    f.op_ = op;
    f.args_ = std::move(args);
    return f;
  }
  /// Any of `alternatives`.
  static ActivationForm any_of(std::vector<ActivationForm> alternatives) {
    ActivationForm f(Tag::any_of);
    f.args_ = std::move(alternatives);
    return f;
  }

  /// Whether the formula matches with its result at node `root` of `g`, x being node `x`: every
  /// operator of the formula is a distinct node for which `usable` holds (a node of the call not
  /// taken yet). On success `nodes` receives the operator nodes matched; otherwise it is left as
  /// it was.
  bool match(const Graph& g, int root, int x, const std::function<bool(int)>& usable, std::vector<int>& nodes) const {
    const std::size_t mark = nodes.size();
    if (match_at(g, root, x, usable, nodes)) return true;
    nodes.resize(mark);
    return false;
  }

  /// The pattern of the formula applied to `x`: constants are `const`, and `x` stands at its first
  /// place in each alternative, `*` at the others (the pattern cannot say that they are one node;
  /// match() does).
  collage::Pattern<Graph> pattern(const collage::Pattern<Graph>& x) const {
    bool placed = false;
    return to_pattern(x, placed);
  }

 private:
  enum class Tag { x, scalar, op, any_of };
  explicit ActivationForm(Tag tag) : tag_(tag) {}

  static bool commutes(Op op) { return op == Op::add || op == Op::mul; }

  bool match_at(const Graph& g, int n, int x, const std::function<bool(int)>& usable, std::vector<int>& nodes) const {
    switch (tag_) {
      case Tag::x: return n == x;
      case Tag::scalar: return is_scalar(g, n, value_);
      case Tag::any_of:
        for (const ActivationForm& alternative : args_) {
          if (alternative.match(g, n, x, usable, nodes)) return true;
        }
        return false;
      case Tag::op: break;
    }
    const Node& node = g.node(n);
    if (node.op != op_ || node.inputs.size() != args_.size() || !usable(n)) return false;
    if (std::find(nodes.begin(), nodes.end(), n) != nodes.end()) return false;
    nodes.push_back(n);
    const std::size_t mark = nodes.size();
    if (args_match(g, node.inputs, false, x, usable, nodes)) return true;
    nodes.resize(mark);
    return commutes(op_) && args_.size() == 2 && args_match(g, node.inputs, true, x, usable, nodes);
  }

  bool args_match(const Graph& g, const std::vector<int>& inputs, bool swapped, int x,
                  const std::function<bool(int)>& usable, std::vector<int>& nodes) const {
    for (std::size_t k = 0; k < args_.size(); ++k) {
      if (!args_[k].match(g, inputs[swapped ? args_.size() - 1 - k : k], x, usable, nodes)) return false;
    }
    return true;
  }

  collage::Pattern<Graph> to_pattern(const collage::Pattern<Graph>& x, bool& placed) const {
    using P = collage::Pattern<Graph>;
    switch (tag_) {
      case Tag::x:
        if (placed) return P::wildcard();
        placed = true;
        return x;
      case Tag::scalar: return P::constant();
      case Tag::any_of: {
        std::vector<P> alternatives;
        bool any_placed = placed;
        for (const ActivationForm& alternative : args_) {
          bool branch = placed;
          alternatives.push_back(alternative.to_pattern(x, branch));
          any_placed = any_placed || branch;
        }
        placed = any_placed;
        return P::alt(std::move(alternatives));
      }
      case Tag::op: break;
    }
    if (!commutes(op_) || args_.size() != 2) return in_order(x, placed);
    // Both operand orders, each converted in the order the graph reads its operands, so that x
    // stands at its first place in each.
    bool first = placed;
    bool second = placed;
    P straight = in_order(x, first);
    P swapped = swapped_first(x, second);
    placed = first || second;
    return P::alt({std::move(straight), std::move(swapped)});
  }

  /// op(a, b) with its arguments converted in order.
  collage::Pattern<Graph> in_order(const collage::Pattern<Graph>& x, bool& placed) const {
    std::vector<collage::Pattern<Graph>> args;
    for (const ActivationForm& arg : args_) args.push_back(arg.to_pattern(x, placed));
    return collage::Pattern<Graph>::op(std::string(op_name(op_)), std::move(args));
  }

  /// op(b, a) for this op(a, b), b converted first.
  collage::Pattern<Graph> swapped_first(const collage::Pattern<Graph>& x, bool& placed) const {
    using P = collage::Pattern<Graph>;
    P b = args_[1].to_pattern(x, placed);
    P a = args_[0].to_pattern(x, placed);
    return P::op(std::string(op_name(op_)), {std::move(b), std::move(a)});
  }

  Tag tag_;
  Op op_ = Op::identity;
  float value_ = 0.0f;
  std::vector<ActivationForm> args_;
};

/// GELU in the erf forms exporters emit: (x * (erf(x / sqrt 2) + 1)) * 0.5 and
/// (x * 0.5) * (erf(x / sqrt 2) + 1), x * (1 / sqrt 2) for the division, operands of Add and Mul
/// in either order.
inline const ActivationForm& gelu_erf_form() {
  using F = ActivationForm;
  static const F form = [] {
    const F scaled = F::any_of({F::op(Op::div, {F::x(), F::scalar(1.41421356f)}),
                                F::op(Op::mul, {F::x(), F::scalar(0.70710678f)})});
    const F erf_plus_one = F::op(Op::add, {F::op(Op::erf, {scaled}), F::scalar(1.0f)});
    return F::any_of({F::op(Op::mul, {F::op(Op::mul, {F::x(), erf_plus_one}), F::scalar(0.5f)}),
                      F::op(Op::mul, {F::op(Op::mul, {F::x(), F::scalar(0.5f)}), erf_plus_one})});
  }();
  return form;
}

/// SiLU (swish): x * sigmoid(x), in either order.
inline const ActivationForm& silu_form() {
  using F = ActivationForm;
  static const F form = F::op(Op::mul, {F::x(), F::op(Op::sigmoid, {F::x()})});
  return form;
}

}  // namespace tc
