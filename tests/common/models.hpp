#pragma once

// Model-shaped graphs over the expression IR (testing_ir::ExprGraph) for rule tests and
// benchmarks. Operators carry their Relay names and default_kind kinds; weights are tensor
// constants, small literals are scalars (inlinable). Each generator appends to the IR and adds its
// result to the IR's outputs. Node counts are exact and stated per generator (tests check them).

#include <cstddef>
#include <string>
#include <vector>

#include "common/expr_ir.hpp"

namespace testing_ir {
namespace models {

/// x, then n ops cycling relu (elemwise), add(., one) (broadcast), tanh (elemwise),
/// multiply(., half) (broadcast); the two scalar literals are shared by every use.
/// Nodes: n + 3 for n >= 4 (x, the two scalars, the n ops); a scalar is made only when used.
inline void chain(ExprGraph& ir, std::size_t n) {
  const Expr* h = ir.var("x");
  const Expr* one = nullptr;
  const Expr* half = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0:
        h = ir.call("relu", {h});
        break;
      case 1:
        if (one == nullptr) one = ir.scalar("1.0");
        h = ir.call("add", {h, one});
        break;
      case 2:
        h = ir.call("tanh", {h});
        break;
      default:
        if (half == nullptr) half = ir.scalar("0.5");
        h = ir.call("multiply", {h, half});
        break;
    }
  }
  ir.output(h);
}

/// The GPT-2-like chain of the rules issue: dense(x, W), add(., b), reshape, multiply(., c),
/// power(., 3.0), tanh. Post-DFS indexes: x=0 W=1 dense=2 b=3 add=4 reshape=5 c=6 multiply=7
/// 3.0=8 power=9 tanh=10 (11 nodes, 6 ops).
inline void gpt2_chain(ExprGraph& ir) {
  const Expr* x = ir.var("x");
  const Expr* dense = ir.call("dense", {x, ir.constant("W")});
  const Expr* add = ir.call("add", {dense, ir.constant("b")});
  const Expr* reshape = ir.call("reshape", {add});
  const Expr* mul = ir.call("multiply", {reshape, ir.constant("c")});
  const Expr* pow = ir.call("power", {mul, ir.scalar("3.0")});
  ir.output(ir.call("tanh", {pow}));
}

namespace detail {

/// dense(h, W) + bias_add(., b): 2 ops, 2 constants.
inline const Expr* linear(ExprGraph& ir, const Expr* h, const std::string& name, const std::string& shape) {
  const Expr* d = ir.call("dense", {h, ir.constant(name + ".weight" + shape)});
  return ir.call("bias_add", {d, ir.constant(name + ".bias")});
}

/// layer_norm(h, gamma, beta): 1 op, 2 constants.
inline const Expr* layer_norm(ExprGraph& ir, const Expr* h, const std::string& name) {
  return ir.call("layer_norm", {h, ir.constant(name + ".gamma"), ir.constant(name + ".beta")});
}

/// GELU, tanh approximation: 0.5*x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
/// 8 ops (multiply, power, multiply, add, multiply, tanh, add, multiply), 5 scalars.
inline const Expr* gelu(ExprGraph& ir, const Expr* x) {
  const Expr* half_x = ir.call("multiply", {x, ir.scalar("0.5")});
  const Expr* cube = ir.call("power", {x, ir.scalar("3.0")});
  const Expr* scaled = ir.call("multiply", {cube, ir.scalar("0.044715")});
  const Expr* inner = ir.call("add", {x, scaled});
  const Expr* arg = ir.call("multiply", {inner, ir.scalar("0.7978845608")});
  const Expr* t = ir.call("tanh", {arg});
  const Expr* one_plus = ir.call("add", {t, ir.scalar("1.0")});
  return ir.call("multiply", {half_x, one_plus});
}

}  // namespace detail

/// Nodes per bert_like layer: 36 ops + 16 tensor constants + 6 scalars.
constexpr std::size_t kBertLayerNodes = 58;

/// A BERT-like encoder of `layers` layers over hidden size `hidden` (which only names the weight
/// shapes: the IR has no types). Per layer, from input h:
///   layer_norm; q, k, v each dense + bias_add + reshape + transpose from the normalised input;
///   batch_matmul(q, k); multiply by a scale scalar; softmax; batch_matmul(., v); transpose;
///   reshape; output dense + bias_add; residual add with h; layer_norm; MLP dense + bias_add,
///   GELU (8 ops), dense + bias_add; residual add.
/// That is 36 ops, 16 tensor constants (2 per layer_norm, 2 per dense + bias_add) and 6 scalars
/// (the attention scale and GELU's five literals): 58 nodes per layer, plus the input x. So
/// 12 layers have 12 * 58 + 1 = 697 nodes (432 ops).
inline void bert_like(ExprGraph& ir, std::size_t layers, std::size_t hidden) {
  const std::string d = std::to_string(hidden);
  const std::string square = "[" + d + "," + d + "]";
  const std::string up = "[" + std::to_string(4 * hidden) + "," + d + "]";
  const std::string down = "[" + d + "," + std::to_string(4 * hidden) + "]";
  const Expr* h = ir.var("x");
  for (std::size_t l = 0; l < layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    const Expr* ln1 = detail::layer_norm(ir, h, p + "ln1");
    auto head = [&](const std::string& name) {
      const Expr* proj = detail::linear(ir, ln1, p + name, square);
      return ir.call("transpose", {ir.call("reshape", {proj})});
    };
    const Expr* q = head("q");
    const Expr* k = head("k");
    const Expr* v = head("v");
    const Expr* scores = ir.call("batch_matmul", {q, k});
    const Expr* scaled = ir.call("multiply", {scores, ir.scalar("0.125")});
    const Expr* probs = ir.call("softmax", {scaled});
    const Expr* context = ir.call("batch_matmul", {probs, v});
    const Expr* merged = ir.call("reshape", {ir.call("transpose", {context})});
    const Expr* attn = detail::linear(ir, merged, p + "attn_out", square);
    const Expr* res1 = ir.call("add", {h, attn});
    const Expr* ln2 = detail::layer_norm(ir, res1, p + "ln2");
    const Expr* mlp_up = detail::linear(ir, ln2, p + "mlp_up", up);
    const Expr* act = detail::gelu(ir, mlp_up);
    const Expr* mlp_down = detail::linear(ir, act, p + "mlp_down", down);
    h = ir.call("add", {res1, mlp_down});
  }
  ir.output(h);
}

/// `blocks` ResNet basic blocks from input x: conv2d + bias_add + relu + conv2d + bias_add, add
/// the block's input (skip), relu. Nodes: 1 + 11 * blocks (7 ops, 4 constants per block).
inline void residual_blocks(ExprGraph& ir, std::size_t blocks) {
  const Expr* h = ir.var("x");
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::string p = "block" + std::to_string(b) + ".";
    const Expr* c1 = ir.call("conv2d", {h, ir.constant(p + "conv1.weight")});
    const Expr* r1 = ir.call("relu", {ir.call("bias_add", {c1, ir.constant(p + "conv1.bias")})});
    const Expr* c2 = ir.call("conv2d", {r1, ir.constant(p + "conv2.weight")});
    const Expr* b2 = ir.call("bias_add", {c2, ir.constant(p + "conv2.bias")});
    h = ir.call("relu", {ir.call("add", {b2, h})});
  }
  ir.output(h);
}

/// One input x fanned out to `branches` chains of `length` ops each (cycling relu, add(., bias
/// constant), tanh, multiply(., scalar)), joined by a balanced tree of adds (branches - 1 of
/// them). Nodes: 1 + branches * (length + length/4 + (length+2)/4) + branches - 1 (each add and
/// multiply brings its own constant or scalar).
inline void wide_branches(ExprGraph& ir, std::size_t branches, std::size_t length) {
  const Expr* x = ir.var("x");
  std::vector<const Expr*> ends;
  for (std::size_t b = 0; b < branches; ++b) {
    const Expr* h = x;
    for (std::size_t i = 0; i < length; ++i) {
      switch (i % 4) {
        case 0:
          h = ir.call("relu", {h});
          break;
        case 1:
          h = ir.call("add", {h, ir.constant("branch" + std::to_string(b) + ".bias" + std::to_string(i))});
          break;
        case 2:
          h = ir.call("tanh", {h});
          break;
        default:
          h = ir.call("multiply", {h, ir.scalar("0.5")});
          break;
      }
    }
    ends.push_back(h);
  }
  while (ends.size() > 1) {
    std::vector<const Expr*> next;
    for (std::size_t i = 0; i + 1 < ends.size(); i += 2) next.push_back(ir.call("add", {ends[i], ends[i + 1]}));
    if (ends.size() % 2 == 1) next.push_back(ends.back());
    ends = std::move(next);
  }
  ir.output(ends.front());
}

/// An LSTM over `steps` steps as the ONNX reader unrolls one (hidden size named in the weights'
/// shapes only). The input projection dense(x, W) + bias_add runs once; per step, from the hidden
/// state h and cell state c (both start as vars):
///   strided_slice of the projection; dense(h, R); add; strided_slice of the i, f, o gates and
///   sigmoid; strided_slice each of i, f, o; strided_slice of the candidate gate and tanh;
///   c = add(multiply(f, c), multiply(i, g)); h = multiply(o, tanh(c)).
/// The steps' h are concatenated (one concat of `steps` operands, as the example compiler's IR
/// writes it) into the output, and the last c is an output too. The cell state runs from step to step through broadcast and elementwise
/// operators only, so every step's elementwise nodes form one fusible region with the next's.
/// Nodes: 8 (x, W, b, R, h0, c0, dense, bias_add) + 15 per step (its ops) + 1 (concat).
inline void lstm_like(ExprGraph& ir, std::size_t steps, std::size_t hidden) {
  using collage::OpKind;
  const std::string d = std::to_string(hidden);
  const Expr* x = ir.var("x");
  const Expr* projected = ir.call("bias_add", {ir.call("dense", {x, ir.constant("W[" + std::to_string(4 * hidden) + "]")}),
                                               ir.constant("b")});
  const Expr* weights = ir.constant("R[" + std::to_string(4 * hidden) + "," + d + "]");
  const Expr* h = ir.var("h0");
  const Expr* c = ir.var("c0");
  auto slice = [&](const Expr* e) { return ir.call("strided_slice", {e}, OpKind::injective); };
  std::vector<const Expr*> hs;
  for (std::size_t t = 0; t < steps; ++t) {
    const Expr* recurrent = ir.call("dense", {h, weights});
    const Expr* gates = ir.call("add", {slice(projected), recurrent});
    const Expr* ifo = ir.call("sigmoid", {slice(gates)}, OpKind::elemwise);
    const Expr* g = ir.call("tanh", {slice(gates)});
    const Expr* i = slice(ifo);
    const Expr* f = slice(ifo);
    const Expr* o = slice(ifo);
    c = ir.call("add", {ir.call("multiply", {f, c}), ir.call("multiply", {i, g})});
    h = ir.call("multiply", {o, ir.call("tanh", {c})});
    hs.push_back(h);
  }
  ir.output(ir.call("concat", hs));
  ir.output(c);
}

/// A GRU over `steps` steps as the ONNX reader unrolls one (linear_before_reset, as PyTorch
/// exports it). The input projection dense(x, W) + bias_add runs once; per step, from the hidden
/// state h (a var at first): xt = strided_slice of the projection and rt = dense(h, R) + bias_add,
/// each sliced into three gates; z = sigmoid(add(xt_z, rt_z)), r = sigmoid(add(xt_r, rt_r)),
/// n = tanh(add(xt_n, multiply(r, rt_n))), h = add(n, multiply(z, subtract(h, n))). The steps' h
/// are concatenated into the output. Every step's xt fans out to three gates, and h runs from step
/// to step through elementwise operators as well as through the dense.
/// Nodes: 8 (x, W, b, R, Rb, h0, dense, bias_add) + 19 per step (its ops) + 1 (concat).
inline void gru_like(ExprGraph& ir, std::size_t steps, std::size_t hidden) {
  using collage::OpKind;
  const std::string gates = std::to_string(3 * hidden);
  const Expr* x = ir.var("x");
  const Expr* projected = ir.call("bias_add", {ir.call("dense", {x, ir.constant("W[" + gates + "]")}), ir.constant("b")});
  const Expr* weights = ir.constant("R[" + gates + "," + std::to_string(hidden) + "]");
  const Expr* bias = ir.constant("Rb");
  const Expr* h = ir.var("h0");
  auto slice = [&](const Expr* e) { return ir.call("strided_slice", {e}, OpKind::injective); };
  std::vector<const Expr*> hs;
  for (std::size_t t = 0; t < steps; ++t) {
    const Expr* xt = slice(projected);
    const Expr* rt = ir.call("bias_add", {ir.call("dense", {h, weights}), bias});
    const Expr* z = ir.call("sigmoid", {ir.call("add", {slice(xt), slice(rt)})}, OpKind::elemwise);
    const Expr* r = ir.call("sigmoid", {ir.call("add", {slice(xt), slice(rt)})}, OpKind::elemwise);
    const Expr* n = ir.call("tanh", {ir.call("add", {slice(xt), ir.call("multiply", {r, slice(rt)})})});
    h = ir.call("add", {n, ir.call("multiply", {z, ir.call("subtract", {h, n})})});
    hs.push_back(h);
  }
  ir.output(ir.call("concat", hs));
}

/// The MNIST CNN of TVM's Collage tests: pad, conv2d, add, relu, max_pool2d, pad, conv2d, add,
/// relu, max_pool2d, reshape, dense, add. Nodes: 20 (x, 13 ops, 6 constants).
inline void mnist(ExprGraph& ir) {
  const Expr* h = ir.var("x");
  for (int i = 1; i <= 2; ++i) {
    const std::string p = "conv" + std::to_string(i) + ".";
    const Expr* conv = ir.call("conv2d", {ir.call("pad", {h}), ir.constant(p + "weight")});
    const Expr* biased = ir.call("add", {conv, ir.constant(p + "bias")});
    h = ir.call("max_pool2d", {ir.call("relu", {biased})});
  }
  const Expr* flat = ir.call("reshape", {h});
  const Expr* fc = ir.call("dense", {flat, ir.constant("fc.weight")});
  ir.output(ir.call("add", {fc, ir.constant("fc.bias")}));
}

}  // namespace models
}  // namespace testing_ir
