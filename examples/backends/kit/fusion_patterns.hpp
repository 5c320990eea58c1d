#pragma once

/// \file
/// The pattern vocabulary of the library backends: an anchor (a matrix product or a convolution)
/// followed, in this order, by an optional bias, an optional scale, Adds of any value (residuals,
/// masks) and an optional activation (GELU and SiLU in the forms exporters emit). A backend says
/// which of these it fuses after each anchor (a Fusion) and gets its pattern table, labelled
/// "<prefix><anchor>[_bias][_scale][<add>...][_<activation>]", in that order, as TVM's DNNL and
/// cuBLAS tables are enumerated.

#include <string>
#include <utility>
#include <vector>

#include <collage/rules/pattern.hpp>

#include "backends/kit/activation_forms.hpp"
#include "backends/kit/pattern_table.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// `op(a, b) | op(b, a)`.
inline collage::Pattern<Graph> either_order(const std::string& op, const collage::Pattern<Graph>& a,
                                            const collage::Pattern<Graph>& b) {
  using P = collage::Pattern<Graph>;
  return P::alt({P::op(op, {a, b}), P::op(op, {b, a})});
}

/// `MatMul(*, *) | Gemm(*, *) | Gemm(*, *, *)`.
inline collage::Pattern<Graph> dense_anchor() {
  using P = collage::Pattern<Graph>;
  const P any = P::wildcard();
  return P::alt({P::op("MatMul", {any, any}), P::op("Gemm", {any, any}), P::op("Gemm", {any, any, any})});
}

/// `Conv(*, const) | Conv(*, const, const)`, or with `constant_weights` false
/// `Conv(*, *) | Conv(*, *, *)`.
inline collage::Pattern<Graph> conv_anchor(bool constant_weights) {
  using P = collage::Pattern<Graph>;
  const P any = P::wildcard();
  const P w = constant_weights ? P::constant() : any;
  return P::alt({P::op("Conv", {any, w}), P::op("Conv", {any, w, w})});
}

/// An activation a library fuses last.
enum class FusedActivation { relu, clip, sigmoid, tanh, gelu, silu };

/// Its label suffix: "_relu", "_clip", "_sigmoid", "_tanh", "_gelu", "_swish" (TVM's name for SiLU).
inline const char* label_of(FusedActivation a) {
  switch (a) {
    case FusedActivation::relu: return "_relu";
    case FusedActivation::clip: return "_clip";
    case FusedActivation::sigmoid: return "_sigmoid";
    case FusedActivation::tanh: return "_tanh";
    case FusedActivation::gelu: return "_gelu";
    case FusedActivation::silu: return "_swish";
  }
  return "";
}

/// Activation `a` applied to `x`: `Relu(x)`, ..., GELU and SiLU as their ActivationForm patterns.
inline collage::Pattern<Graph> activation_pattern(FusedActivation a, const collage::Pattern<Graph>& x) {
  using P = collage::Pattern<Graph>;
  switch (a) {
    case FusedActivation::relu: return P::op("Relu", {x});
    case FusedActivation::clip: return P::op("Clip", {x});
    case FusedActivation::sigmoid: return P::op("Sigmoid", {x});
    case FusedActivation::tanh: return P::op("Tanh", {x});
    case FusedActivation::gelu: return gelu_erf_form().pattern(x);
    case FusedActivation::silu: return silu_form().pattern(x);
  }
  return x;
}

/// `x` plus a constant, in either order (a bias).
inline collage::Pattern<Graph> bias_pattern(const collage::Pattern<Graph>& x) {
  return either_order("Add", x, collage::Pattern<Graph>::constant());
}

/// `x` divided or multiplied (in either order) by a constant.
inline collage::Pattern<Graph> scale_pattern(const collage::Pattern<Graph>& x) {
  using P = collage::Pattern<Graph>;
  return P::alt({P::op("Div", {x, P::constant()}), either_order("Mul", x, P::constant())});
}

/// `x` plus any value, in either order (a residual, a mask, a bias computed at run time).
inline collage::Pattern<Graph> add_pattern(const collage::Pattern<Graph>& x) {
  return either_order("Add", x, collage::Pattern<Graph>::wildcard());
}

/// What a library fuses after one anchor.
struct Fusion {
  /// The anchor's name in labels ("dense", "conv").
  std::string name;
  /// The anchor's pattern.
  collage::Pattern<Graph> anchor;
  /// Whether an entry may add a bias ("_bias").
  bool bias = false;
  /// Whether an entry may scale ("_scale").
  bool scale = false;
  /// The most Adds of any value an entry may have, each labelled `add_label`.
  int adds = 0;
  /// The label suffix of one Add.
  std::string add_label = "_add";
  /// The activations an entry may end with.
  std::vector<FusedActivation> activations;
  /// Whether the anchor alone is an entry (otherwise a library runs it as a single operator).
  bool alone = true;
};

/// The pattern table of `fusions`, each entry checked by `check`: for each fusion, every choice
/// of bias (none first), scale, number of Adds and activation (none first), labelled
/// `prefix` + name + suffixes ("eigen.conv_bias_relu").
inline LibraryTable fusion_table(const std::string& prefix, const std::vector<Fusion>& fusions, const CallCheck& check) {
  LibraryTable table;
  for (const Fusion& f : fusions) {
    for (const bool bias : {false, true}) {
      if (bias && !f.bias) continue;
      for (const bool scale : {false, true}) {
        if (scale && !f.scale) continue;
        std::string label = prefix + f.name + (bias ? "_bias" : "") + (scale ? "_scale" : "");
        collage::Pattern<Graph> p = f.anchor;
        if (bias) p = bias_pattern(p);
        if (scale) p = scale_pattern(p);
        for (int adds = 0; adds <= f.adds; ++adds) {
          if (adds > 0) {
            label += f.add_label;
            p = add_pattern(p);
          }
          if (f.alone || bias || scale || adds > 0) table.push_back({label, p, check});
          for (FusedActivation a : f.activations) table.push_back({label + label_of(a), activation_pattern(a, p), check});
        }
      }
    }
  }
  return table;
}

}  // namespace tc
