#pragma once

/// \file
/// What the library-style backends (eigen, onednn) share: reading a Function as a sequence of
/// library calls (each composite group one call, each other operator a call of its own), reading
/// a call as an anchor (conv, matmul, gemm) followed by the elementwise epilogue a library fuses
/// into it (bias, activations in the decomposed forms exporters emit, residual sums), and where
/// each value lives while the kernel runs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <collage/support/result.hpp>

#include "tensor/function.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// One library call of a partition: a composite group, or a single operator.
struct LibraryCall {
  /// The group's Composite attribute ("onednn.conv_bias_relu"); "" for a single operator.
  std::string composite;
  /// Its operator nodes in the Function's graph, topological; the last is the root.
  std::vector<int> nodes;
  /// The node whose value the call produces.
  int root() const { return nodes.back(); }
  /// Whether `n` is one of its nodes.
  bool contains(int n) const { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); }
};

namespace detail {

inline void collect_composites(const std::vector<FunctionGroup>& groups, std::vector<LibraryCall>& out) {
  for (const FunctionGroup& g : groups) {
    const std::string composite = g.attr("Composite");
    if (!composite.empty() && !g.nodes.empty()) {
      out.push_back(LibraryCall{composite, g.nodes});
    } else {
      collect_composites(g.nested, out);
    }
  }
}

}  // namespace detail

/// The calls of `function` in execution order (by root): every nested group with a Composite
/// attribute is one call, every operator outside such groups a call of its own. Fails, naming
/// `backend`, when a call's value other than its root is used outside it or when groups overlap.
inline collage::Result<std::vector<LibraryCall>> library_calls(const Function& function, const std::string& backend) {
  const Graph& g = function.graph;
  std::vector<LibraryCall> calls;
  detail::collect_composites(function.groups, calls);
  std::vector<int> owner(g.size(), -1);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    for (int n : calls[c].nodes) {
      if (owner[static_cast<std::size_t>(n)] != -1) {
        return collage::Error{collage::ErrorCode::invalid_argument,
                              backend + ": " + describe(g, n) + " is in two composites"};
      }
      owner[static_cast<std::size_t>(n)] = static_cast<int>(c);
    }
  }
  for (int n : function.body()) {
    if (owner[static_cast<std::size_t>(n)] == -1) calls.push_back(LibraryCall{"", {n}});
  }
  std::sort(calls.begin(), calls.end(), [](const LibraryCall& a, const LibraryCall& b) { return a.root() < b.root(); });
  // A call hands on its root only: an inner value read by another call or returned is an error.
  std::vector<bool> inner(g.size(), false);
  for (const LibraryCall& call : calls) {
    for (int n : call.nodes) inner[static_cast<std::size_t>(n)] = n != call.root();
  }
  auto escapes = [&](int n, const LibraryCall* reader) {
    return collage::Error{collage::ErrorCode::invalid_argument,
                          backend + ": the value of " + describe(g, n) + " inside composite " +
                              (reader == nullptr ? std::string("is a result of the partition")
                                                 : "is read by " + describe(g, reader->root()))};
  };
  for (const LibraryCall& call : calls) {
    for (int n : call.nodes) {
      for (int in : g.node(n).inputs) {
        if (inner[static_cast<std::size_t>(in)] && !call.contains(in)) return escapes(in, &call);
      }
    }
  }
  for (int out : g.outputs()) {
    if (inner[static_cast<std::size_t>(out)]) return escapes(out, nullptr);
  }
  return calls;
}

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

/// One step of an epilogue fused after an anchor.
struct EpilogueStep {
  enum class Kind {
    binary,    ///< `op` (add, sub, mul, div, max, min) of the running value and `operand`
    unary,     ///< the unary elementwise operator of `node` (relu, clip, sigmoid, ...)
    gelu_erf,  ///< x * 0.5 * (1 + erf(x / sqrt(2))), in one of the decomposed forms exporters emit
    swish,     ///< x * sigmoid(x) (SiLU)
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

/// Reads epilogue steps; `used` marks the call's nodes taken so far.
class ChainReader {
 public:
  ChainReader(const Graph& g, const LibraryCall& call) : g_(g), call_(call), used_(call.nodes.size(), false) {}

  /// Reads the call's nodes as steps from `start` (the anchor, taken already, or a value outside
  /// the call) to the root.
  collage::Result<std::vector<EpilogueStep>> read(int start, const std::string& backend) {
    std::vector<EpilogueStep> steps;
    if (index(start) >= 0) use(start);
    int cur = start;
    while (remaining() > 0) {
      std::optional<EpilogueStep> step = gelu_a(cur);
      if (!step) step = gelu_b(cur);
      if (!step) step = swish(cur);
      if (!step) step = single(cur);
      if (!step) {
        return collage::Error{collage::ErrorCode::invalid_argument,
                              backend + ": cannot read the nodes after " + describe(g_, cur) + " as an epilogue"};
      }
      cur = step->node;
      steps.push_back(*step);
    }
    if (cur != call_.root()) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            backend + ": the epilogue after " + describe(g_, start) + " does not end at the root"};
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

  /// The unused call nodes reading `v`.
  std::vector<int> consumers(int v) const {
    std::vector<int> out;
    for (int n : call_.nodes) {
      if (!free_node(n)) continue;
      const auto& ins = g_.node(n).inputs;
      if (std::find(ins.begin(), ins.end(), v) != ins.end()) out.push_back(n);
    }
    return out;
  }
  bool is(int n, Op op) const { return free_node(n) && g_.node(n).op == op; }
  /// The unused node among `candidates` that is `op`(a, b) in either order (both when `commutes`).
  int find_binary(const std::vector<int>& candidates, Op op, int a, const std::function<bool(int)>& b_ok,
                  bool commutes = true) const {
    for (int n : candidates) {
      if (!is(n, op)) continue;
      const auto& ins = g_.node(n).inputs;
      if (ins[0] == a && b_ok(ins[1])) return n;
      if (commutes && ins[1] == a && b_ok(ins[0])) return n;
    }
    return -1;
  }
  std::vector<int> all_free() const {
    std::vector<int> out;
    for (int n : call_.nodes) {
      if (free_node(n)) out.push_back(n);
    }
    return out;
  }
  std::function<bool(int)> scalar(float value) const {
    return [this, value](int n) { return is_scalar(g_, n, value); };
  }
  std::function<bool(int)> node_is(int want) const {
    return [want](int n) { return n == want; };
  }

  /// erf(x / sqrt(2)) + 1 (or 1 + erf(x * (1/sqrt(2)))): its Add node and the nodes before it.
  bool erf_term(int x, std::vector<int>& nodes) const {
    const std::vector<int> readers = consumers(x);
    int scaled = find_binary(readers, Op::div, x, scalar(1.41421356f), /*commutes=*/false);
    if (scaled < 0) scaled = find_binary(readers, Op::mul, x, scalar(0.70710678f));
    if (scaled < 0) return false;
    const std::vector<int> erfs = consumers(scaled);
    if (erfs.size() != 1 || !is(erfs[0], Op::erf)) return false;
    const int plus = find_binary(consumers(erfs[0]), Op::add, erfs[0], scalar(1.0f));
    if (plus < 0) return false;
    nodes = {scaled, erfs[0], plus};
    return true;
  }

  /// (x * (erf(x / sqrt(2)) + 1)) * 0.5
  std::optional<EpilogueStep> gelu_a(int x) {
    std::vector<int> nodes;
    if (!erf_term(x, nodes)) return std::nullopt;
    const int prod = find_binary(consumers(x), Op::mul, x, node_is(nodes.back()));
    if (prod < 0) return std::nullopt;
    const int half = find_binary(all_free(), Op::mul, prod, scalar(0.5f));
    if (half < 0) return std::nullopt;
    nodes.push_back(prod);
    nodes.push_back(half);
    return take(nodes, EpilogueStep{EpilogueStep::Kind::gelu_erf, Op::identity, half});
  }

  /// (x * 0.5) * (erf(x / sqrt(2)) + 1)
  std::optional<EpilogueStep> gelu_b(int x) {
    std::vector<int> nodes;
    if (!erf_term(x, nodes)) return std::nullopt;
    const int half = find_binary(consumers(x), Op::mul, x, scalar(0.5f));
    if (half < 0) return std::nullopt;
    const int prod = find_binary(consumers(half), Op::mul, half, node_is(nodes.back()));
    if (prod < 0) return std::nullopt;
    nodes.push_back(half);
    nodes.push_back(prod);
    return take(nodes, EpilogueStep{EpilogueStep::Kind::gelu_erf, Op::identity, prod});
  }

  /// x * sigmoid(x)
  std::optional<EpilogueStep> swish(int x) {
    const std::vector<int> readers = consumers(x);
    for (int s : readers) {
      if (!is(s, Op::sigmoid)) continue;
      const int prod = find_binary(readers, Op::mul, x, node_is(s));
      if (prod >= 0) return take({s, prod}, EpilogueStep{EpilogueStep::Kind::swish, Op::identity, prod});
    }
    return std::nullopt;
  }

  /// A unary elementwise operator of x, or a binary one of x and a value from outside the call.
  std::optional<EpilogueStep> single(int x) {
    const std::vector<int> readers = consumers(x);
    if (readers.size() != 1) return std::nullopt;
    const int n = readers[0];
    const Node& node = g_.node(n);
    if (is_unary_elementwise(node.op) && node.inputs.size() == 1) {
      return take({n}, EpilogueStep{EpilogueStep::Kind::unary, node.op, n});
    }
    if (!is_binary_elementwise(node.op) || node.op == Op::pow) return std::nullopt;
    const bool first = node.inputs[1] == x;
    const int other = node.inputs[first ? 0 : 1];
    if (other == x || index(other) >= 0) return std::nullopt;
    EpilogueStep step{EpilogueStep::Kind::binary, node.op, n, other, first};
    return take({n}, step);
  }

  std::optional<EpilogueStep> take(const std::vector<int>& nodes, EpilogueStep step) {
    for (int n : nodes) use(n);
    return step;
  }

  const Graph& g_;
  const LibraryCall& call_;
  std::vector<bool> used_;
};

}  // namespace detail

/// Reads `call` as its first node (the anchor) followed by epilogue steps that each consume the
/// value before them: unary elementwise operators, binary ones with an operand from outside the
/// call, GELU as Div/Erf/Add/Mul/Mul (either order of the two Muls; x * (1/sqrt 2) for the
/// division) and SiLU as Sigmoid/Mul. Fails, naming `backend`, when the call's nodes are anything
/// else. Whether the backend supports each step is for it to decide.
inline collage::Result<AnchorChain> read_anchor_chain(const Graph& g, const LibraryCall& call,
                                                      const std::string& backend) {
  collage::Result<std::vector<EpilogueStep>> steps = detail::ChainReader(g, call).read(call.nodes.front(), backend);
  if (!steps.ok()) return steps.error();
  return AnchorChain{call.nodes.front(), std::move(steps).value()};
}

/// Reads `call` as epilogue steps (see read_anchor_chain) applied to `start`, a value outside it.
inline collage::Result<std::vector<EpilogueStep>> read_epilogue(const Graph& g, const LibraryCall& call, int start,
                                                                const std::string& backend) {
  return detail::ChainReader(g, call).read(start, backend);
}

/// Where the values a kernel's calls read and write live while it runs: the Function's inputs and
/// outputs (given to Kernel::run), constants (bound at compile time) and scratch buffers the
/// kernel owns for values that pass between its calls.
class ValueSlots {
 public:
  /// Plans the values of `function` for `calls` (see library_calls).
  ValueSlots(const Function& function, const std::vector<LibraryCall>& calls) : slot_(function.graph.size()) {
    const Graph& g = function.graph;
    for (std::size_t k = 0; k < g.inputs().size(); ++k) slot_[static_cast<std::size_t>(g.inputs()[k])] = {Kind::param, k};
    for (std::size_t n = 0; n < g.size(); ++n) {
      if (g.node(static_cast<int>(n)).op == Op::constant) slot_[n] = {Kind::constant, n};
    }
    for (std::size_t k = 0; k < g.outputs().size(); ++k) {
      Slot& s = slot_[static_cast<std::size_t>(g.outputs()[k])];
      if (s.kind == Kind::none) {
        s = {Kind::result, k};
      } else {  // a result returned twice, or an input or constant returned, is copied after the calls
        copies_.push_back({g.outputs()[k], k, static_cast<std::size_t>(numel(g.node(g.outputs()[k]).shape))});
      }
    }
    for (const LibraryCall& call : calls) {
      Slot& s = slot_[static_cast<std::size_t>(call.root())];
      if (s.kind != Kind::none) continue;
      s = {Kind::temp, temp_floats_.size()};
      temp_floats_.push_back(static_cast<std::size_t>(numel(g.node(call.root()).shape)));
    }
    constants_.resize(g.size());
    for (std::size_t n = 0; n < g.size(); ++n) {
      if (slot_[n].kind == Kind::constant) constants_[n] = g.node(static_cast<int>(n)).value;
    }
  }

  /// Floats in each scratch buffer the kernel must own, by index.
  const std::vector<std::size_t>& temp_floats() const { return temp_floats_; }

  /// The address of node `n`'s value in this run.
  float* address(int n, const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
                 const std::vector<float*>& temps) const {
    const Slot& s = slot_[static_cast<std::size_t>(n)];
    switch (s.kind) {
      case Kind::param: return const_cast<float*>(inputs[s.index]);
      case Kind::result: return outputs[s.index];
      case Kind::temp: return temps[s.index];
      case Kind::constant: return const_cast<float*>(constants_[s.index]->data.data());
      case Kind::none: break;
    }
    return nullptr;
  }

  /// Fills the outputs no call writes: a result returned more than once (from its first output),
  /// an input or a constant returned as is.
  void copy_outputs(const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
                    const std::vector<float*>& temps) const {
    for (const Copy& c : copies_) {
      const float* from = address(c.node, inputs, outputs, temps);
      std::copy(from, from + c.floats, outputs[c.output]);
    }
  }

  /// Whether `n` is a constant of the Function (its value is known at compile time).
  bool is_constant(int n) const { return slot_[static_cast<std::size_t>(n)].kind == Kind::constant; }
  /// The value of constant `n`, which the slots keep alive (kernels may outlive their Function).
  const Tensor& constant(int n) const { return *constants_[static_cast<std::size_t>(n)]; }

 private:
  enum class Kind { none, param, result, temp, constant };
  struct Slot {
    Kind kind = Kind::none;
    std::size_t index = 0;
  };
  std::vector<Slot> slot_;
  std::vector<std::shared_ptr<const Tensor>> constants_;
  std::vector<std::size_t> temp_floats_;
  struct Copy {
    int node;
    std::size_t output;
    std::size_t floats;
  };
  std::vector<Copy> copies_;
};

}  // namespace tc
