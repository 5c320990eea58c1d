#pragma once

/// \file
/// The epilogue reader of the library backends: a call read as an anchor (conv, matmul, gemm)
/// followed by the elementwise steps a library fuses into it (biases and other binary operands,
/// unary activations, GELU and SiLU in the decomposed forms exporters emit). Which steps a
/// library supports is for its planner to decide.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/kit/activation_forms.hpp"
#include "backends/kit/library_call.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// One step of an epilogue fused after an anchor.
struct EpilogueStep {
  enum class Kind {
    binary,    ///< `op` (add, sub, mul, div, max, min) of the running value and `operand`
    unary,     ///< the unary elementwise operator of `node` (relu, clip, sigmoid, ...)
    gelu_erf,  ///< x * 0.5 * (1 + erf(x / sqrt(2))), in one of the forms of gelu_erf_form()
    silu,      ///< x * sigmoid(x) (swish)
  };
  Kind kind = Kind::unary;
  Op op = Op::identity;
  /// The step's last node: its value is the running value after the step.
  int node = -1;
  /// binary: the other operand (outside the call).
  int operand = -1;
  /// binary: the other operand is the first argument (x - a versus a - x).
  bool operand_first = false;
};

/// A call read as an anchor followed by elementwise steps, each consuming the previous value.
struct AnchorChain {
  int anchor = -1;
  std::vector<EpilogueStep> epilogue;
};

namespace detail {

/// Reads epilogue steps; `used_` marks the call's nodes taken so far.
class EpilogueReader {
 public:
  EpilogueReader(const Graph& g, const LibraryCall& call) : g_(g), call_(call), used_(call.nodes.size(), false) {}

  /// Reads the call's nodes as steps from `start` (the anchor, taken already, or a value outside
  /// the call) to the root.
  collage::Result<std::vector<EpilogueStep>> read(int start) {
    std::vector<EpilogueStep> steps;
    if (index(start) >= 0) use(start);
    int cur = start;
    while (remaining() > 0) {
      std::optional<EpilogueStep> step = activation(cur, gelu_erf_form(), EpilogueStep::Kind::gelu_erf);
      if (!step) step = activation(cur, silu_form(), EpilogueStep::Kind::silu);
      if (!step) step = single(cur);
      if (!step) {
        return collage::Error{collage::ErrorCode::invalid_argument,
                              "cannot read the nodes after " + describe(g_, cur) + " as an epilogue"};
      }
      cur = step->node;
      steps.push_back(*step);
    }
    if (cur != call_.root()) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            "the epilogue after " + describe(g_, start) + " does not end at the root"};
    }
    return steps;
  }

 private:
  int index(int n) const {
    auto it = std::find(call_.nodes.begin(), call_.nodes.end(), n);
    return it == call_.nodes.end() ? -1 : static_cast<int>(it - call_.nodes.begin());
  }
  bool free_node(int n) const {
    const int k = index(n);
    return k >= 0 && !used_[static_cast<std::size_t>(k)];
  }
  void use(int n) { used_[static_cast<std::size_t>(index(n))] = true; }
  std::size_t remaining() const { return static_cast<std::size_t>(std::count(used_.begin(), used_.end(), false)); }

  /// `form` applied to x, ending at any unused node of the call.
  std::optional<EpilogueStep> activation(int x, const ActivationForm& form, EpilogueStep::Kind kind) {
    const auto usable = [this](int n) { return free_node(n); };
    for (int root : call_.nodes) {
      std::vector<int> nodes;
      if (free_node(root) && form.match(g_, root, x, usable, nodes)) {
        for (int n : nodes) use(n);
        return EpilogueStep{kind, Op::identity, root};
      }
    }
    return std::nullopt;
  }

  /// A unary elementwise operator of x, or a binary one of x and a value from outside the call,
  /// when it is the only unused node of the call reading x.
  std::optional<EpilogueStep> single(int x) {
    int reader = -1;
    for (int n : call_.nodes) {
      if (!free_node(n)) continue;
      const auto& ins = g_.node(n).inputs;
      if (std::find(ins.begin(), ins.end(), x) == ins.end()) continue;
      if (reader >= 0) return std::nullopt;
      reader = n;
    }
    if (reader < 0) return std::nullopt;
    const Node& node = g_.node(reader);
    if (is_unary_elementwise(node.op) && node.inputs.size() == 1) {
      use(reader);
      return EpilogueStep{EpilogueStep::Kind::unary, node.op, reader};
    }
    if (!is_binary_elementwise(node.op) || node.op == Op::pow) return std::nullopt;
    const bool first = node.inputs[1] == x;
    const int other = node.inputs[first ? 0 : 1];
    if (other == x || index(other) >= 0) return std::nullopt;
    use(reader);
    return EpilogueStep{EpilogueStep::Kind::binary, node.op, reader, other, first};
  }

  const Graph& g_;
  const LibraryCall& call_;
  std::vector<bool> used_;
};

}  // namespace detail

/// Reads `call` as its first node (the anchor) followed by epilogue steps that each consume the
/// value before them: unary elementwise operators, binary ones with an operand from outside the
/// call, GELU (gelu_erf_form) and SiLU (silu_form). Fails when the call's nodes are anything else.
inline collage::Result<AnchorChain> read_anchor_chain(const Graph& g, const LibraryCall& call) {
  collage::Result<std::vector<EpilogueStep>> steps = detail::EpilogueReader(g, call).read(call.nodes.front());
  if (!steps.ok()) return steps.error();
  return AnchorChain{call.nodes.front(), std::move(steps).value()};
}

/// Reads `call` as epilogue steps (see read_anchor_chain) applied to `start`, a value outside it.
inline collage::Result<std::vector<EpilogueStep>> read_epilogue(const Graph& g, const LibraryCall& call, int start) {
  return detail::EpilogueReader(g, call).read(start);
}

}  // namespace tc
