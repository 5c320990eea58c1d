#pragma once

/// \file
/// What the tests of the library-style backends (eigen, onednn) share: building small graphs with
/// random weights, running a backend's kernel for a partition against the reference interpreter,
/// finding the candidates its rule proposes, and real-ish graphs (a conv / batch-norm / relu
/// block, a transformer layer with decomposed layer norm and GELU).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/compare.hpp"
#include "tensor/function.hpp"
#include "tensor/reference.hpp"
#include "tensor/shape_inference.hpp"

namespace tc::testing {

/// A tensor of `shape` with values uniform in [lo, hi] from `rng`.
inline Tensor uniform(const Shape& shape, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.data) v = dist(rng);
  return t;
}

/// Builds a graph with random constants; ops are added unchecked (the tests build valid graphs;
/// infer() reports any mistake).
class GraphBuilder {
 public:
  explicit GraphBuilder(std::uint64_t seed) : rng_(seed) {}

  int input(const std::string& name, const Shape& shape) { return g_.add_input(name, shape); }
  int constant(const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
    return g_.add_constant("c" + std::to_string(g_.size()), uniform(shape, rng_, lo, hi));
  }
  int scalar(float value) { return g_.add_constant("s" + std::to_string(g_.size()), Tensor(Shape{}, std::vector<float>{value})); }
  int op(Op op, std::vector<int> inputs, Attributes attrs = {}) {
    collage::Result<int> n = g_.add_op(op, std::move(inputs), std::move(attrs));
    if (!n.ok()) {
      ADD_FAILURE() << n.error().message;
      return 0;
    }
    return *n;
  }
  /// x * 0.5 * (1 + erf(x / sqrt 2)) as PyTorch exports it: Div, Erf, Add, Mul(x, .), Mul(., 0.5).
  int gelu(int x) {
    const int e = op(Op::erf, {op(Op::div, {x, scalar(1.4142135f)})});
    return op(Op::mul, {op(Op::mul, {x, op(Op::add, {e, scalar(1.0f)})}), scalar(0.5f)});
  }
  /// LayerNorm over the last `axes` dims as exporters decompose it, with scale and bias when given.
  int layer_norm(int x, std::size_t axes, int scale = -1, int bias = -1, float eps = 1e-5f) {
    const std::size_t rank = g_.node(x).shape.size();
    std::vector<std::int64_t> reduce;
    for (std::size_t d = rank - axes; d < rank; ++d) reduce.push_back(static_cast<std::int64_t>(d));
    Attributes a;
    a.set("axes", reduce);
    a.set("keepdims", 1);
    const int mean = op(Op::reduce_mean, {x}, a);
    const int diff = op(Op::sub, {x, mean});
    const int var = op(Op::reduce_mean, {op(Op::pow, {diff, scalar(2.0f)})}, a);
    int y = op(Op::div, {diff, op(Op::sqrt, {op(Op::add, {var, scalar(eps)})})});
    if (scale >= 0) y = op(Op::mul, {y, scale});
    if (bias >= 0) y = op(Op::add, {y, bias});
    return y;
  }
  void output(int n) { g_.add_output(n); }
  const Shape& shape(int n) const { return g_.node(n).shape; }
  std::mt19937_64& rng() { return rng_; }

  /// The graph with shapes inferred (a failure is reported).
  Graph infer() {
    collage::Status s = infer_shapes(g_);
    EXPECT_TRUE(s.ok()) << s.message();
    return g_;
  }
  /// Infers shapes now (so that shape() reads them while building).
  void infer_now() { (void)infer_shapes(g_); }

 private:
  Graph g_;
  std::mt19937_64 rng_;
};

/// Attributes from (name, int list) pairs and (name, int) pairs.
inline Attributes ints(std::initializer_list<std::pair<const char*, std::vector<std::int64_t>>> lists,
                       std::initializer_list<std::pair<const char*, std::int64_t>> scalars = {}) {
  Attributes a;
  for (const auto& [k, v] : lists) a.set(k, v);
  for (const auto& [k, v] : scalars) a.set(k, v);
  return a;
}

/// Seeded random inputs for a graph's inputs, uniform in [-1, 1].
inline std::vector<Tensor> random_inputs_for(const Graph& g, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> out;
  for (int in : g.inputs()) out.push_back(uniform(g.node(in).shape, rng));
  return out;
}

/// The Composite labels of `function`'s groups, outermost first.
inline std::vector<std::string> composite_labels(const Function& function) {
  std::vector<std::string> out;
  std::vector<const FunctionGroup*> stack;
  for (const FunctionGroup& g : function.groups) stack.push_back(&g);
  while (!stack.empty()) {
    const FunctionGroup* g = stack.back();
    stack.pop_back();
    if (!g->attr("Composite").empty()) out.push_back(g->attr("Composite"));
    for (const FunctionGroup& n : g->nested) stack.push_back(&n);
  }
  return out;
}

/// Compiles `function` with `backend` for the CPU and runs it on seeded random inputs; success
/// when every output is within (rtol, atol) of the reference interpreter's.
inline ::testing::AssertionResult runs_like_reference(const Backend& backend, const Function& function,
                                                      std::uint64_t seed, double rtol = 1e-4, double atol = 1e-4) {
  CpuDevice cpu;
  collage::Result<std::unique_ptr<Kernel>> kernel = backend.compile(function, cpu);
  if (!kernel.ok()) return ::testing::AssertionFailure() << "compile: " << kernel.error().message;
  const std::vector<Tensor> inputs = random_inputs_for(function.graph, seed);
  collage::Result<std::vector<Tensor>> expected = evaluate(function.graph, inputs);
  if (!expected.ok()) return ::testing::AssertionFailure() << "reference: " << expected.error().message;
  std::vector<Tensor> outputs;
  for (int out : function.graph.outputs()) outputs.emplace_back(function.graph.node(out).shape, std::nanf(""));
  std::vector<const float*> in_ptrs;
  for (const Tensor& t : inputs) in_ptrs.push_back(t.data.data());
  std::vector<float*> out_ptrs;
  for (Tensor& t : outputs) out_ptrs.push_back(t.data.data());
  // Twice: a second run must not depend on anything the first left behind.
  for (int run = 0; run < 2; ++run) {
    collage::Status ran = (*kernel)->run(in_ptrs, out_ptrs);
    if (!ran.ok()) return ::testing::AssertionFailure() << "run: " << ran.message();
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    std::string worst;
    if (!all_close(outputs[k], (*expected)[k], rtol, atol, &worst)) {
      return ::testing::AssertionFailure() << "output " << k << ": " << worst;
    }
  }
  return ::testing::AssertionSuccess();
}

/// Each candidate the rule of `backend` proposes for `model`, as a Function.
inline std::vector<Function> candidate_functions(const Backend& backend, const Graph& model) {
  std::vector<Function> out;
  collage::Result<collage::DataflowGraph<Graph>> dataflow = collage::DataflowGraph<Graph>::build(model);
  if (!dataflow.ok()) {
    ADD_FAILURE() << dataflow.error().message;
    return out;
  }
  for (const collage::Candidate& c : backend.spec().all_candidates(*dataflow)) {
    out.push_back(extract_function(*dataflow, c.sub_graph));
  }
  return out;
}

/// The candidate of `backend` for `model` whose composite is `label` (none for "") and that holds
/// every operator of the model; fails the test when there is none.
inline Function whole_candidate(const Backend& backend, const Graph& model, const std::string& label) {
  std::size_t operators = 0;
  for (const Node& n : model.nodes()) operators += n.op != Op::input && n.op != Op::constant;
  for (Function& f : candidate_functions(backend, model)) {
    const std::vector<std::string> labels = composite_labels(f);
    const bool labelled = label.empty() ? labels.empty() : labels.size() == 1 && labels[0] == label;
    if (f.body().size() == operators && labelled) return f;
  }
  std::string proposed;
  for (const Function& f : candidate_functions(backend, model)) {
    for (const std::string& l : composite_labels(f)) proposed += " " + l;
  }
  ADD_FAILURE() << "no candidate " << label << " over the whole model; proposed:" << proposed;
  return whole_model_function(model);
}

/// What happened to each candidate of a backend's rule on a model.
struct CandidateReport {
  std::size_t candidates = 0;
  std::size_t matched = 0;
  /// "label: message" of each candidate that failed to compile, run or match.
  std::vector<std::string> failures;
  /// The composite labels proposed (with repeats), or "op:<Op>" for single operators.
  std::vector<std::string> labels;
};

/// Compiles and runs every candidate `backend` proposes for `model` against the reference.
inline CandidateReport check_every_candidate(const Backend& backend, const Graph& model, std::uint64_t seed,
                                             double rtol = 1e-4, double atol = 1e-4) {
  CandidateReport report;
  for (const Function& f : candidate_functions(backend, model)) {
    ++report.candidates;
    std::vector<std::string> labels = composite_labels(f);
    std::string label = labels.empty() ? "op:" + std::string(op_name(f.graph.node(f.body().front()).op)) : labels[0];
    report.labels.push_back(label);
    ::testing::AssertionResult ok = runs_like_reference(backend, f, seed, rtol, atol);
    if (ok) {
      ++report.matched;
    } else {
      report.failures.push_back(label + ": " + ok.message());
    }
  }
  return report;
}

/// How many times `label` was proposed.
inline std::size_t count_label(const CandidateReport& r, const std::string& label) {
  return static_cast<std::size_t>(std::count(r.labels.begin(), r.labels.end(), label));
}

/// A conv / batch-norm / relu / max-pool block with a residual conv + add + relu and a classifier:
/// the ResNet stem and basic block as an exporter writes them without folding batch norm.
inline Graph conv_bn_relu_block(std::uint64_t seed) {
  GraphBuilder b(seed);
  const int x = b.input("x", {1, 3, 17, 17});
  const int c1 = b.op(Op::conv, {x, b.constant({8, 3, 3, 3}), b.constant({8})},
                      ints({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}));
  const int bn = b.op(Op::batch_norm, {c1, b.constant({8}), b.constant({8}), b.constant({8}), b.constant({8}, 0.5f, 1.5f)});
  const int r1 = b.op(Op::relu, {bn});
  const int pool = b.op(Op::max_pool, {r1}, ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}));
  const int c2 = b.op(Op::conv, {pool, b.constant({8, 8, 3, 3}), b.constant({8})}, ints({{"pads", {1, 1, 1, 1}}}));
  const int r2 = b.op(Op::relu, {c2});
  const int c3 = b.op(Op::conv, {r2, b.constant({8, 8, 3, 3})}, ints({{"pads", {1, 1, 1, 1}}}));
  const int bias = b.op(Op::add, {c3, b.constant({8, 1, 1})});
  const int sum = b.op(Op::add, {bias, pool});
  const int r3 = b.op(Op::relu, {sum});
  const int dw = b.op(Op::conv, {r3, b.constant({8, 1, 3, 3})}, ints({{"pads", {1, 1, 1, 1}}}, {{"group", 8}}));
  Attributes relu6;
  relu6.set("min", 0.0);
  relu6.set("max", 6.0);
  const int r6 = b.op(Op::clip, {dw}, relu6);
  const int gap = b.op(Op::global_average_pool, {r6});
  const int flat = b.op(Op::flatten, {gap});
  Attributes tb;
  tb.set("trans_b", 1);
  const int fc = b.op(Op::gemm, {flat, b.constant({5, 8}), b.constant({5})}, tb);
  b.output(fc);
  return b.infer();
}

/// One BERT encoder layer over [1, seq, hidden] with an additive mask [1, 1, 1, seq], as PyTorch
/// exports it: MatMul + Add projections, heads by Reshape/Transpose, scaled scores plus mask,
/// Softmax, decomposed LayerNorm after each residual, and a feed-forward block with decomposed
/// GELU.
inline Graph transformer_layer(std::uint64_t seed, std::int64_t seq = 7, std::int64_t hidden = 16,
                               std::int64_t heads = 2, std::int64_t ffn = 24) {
  GraphBuilder b(seed);
  const std::int64_t dh = hidden / heads;
  const int x = b.input("x", {1, seq, hidden});
  const int mask = b.input("mask", {1, 1, 1, seq});
  auto linear = [&](int in, std::int64_t from, std::int64_t to) {
    return b.op(Op::add, {b.op(Op::matmul, {in, b.constant({from, to})}), b.constant({to})});
  };
  auto split_heads = [&](int in, bool transpose_last) {
    Attributes shape;
    shape.set("shape", std::vector<std::int64_t>{1, seq, heads, dh});
    const int r = b.op(Op::reshape, {in}, shape);
    Attributes perm;
    perm.set("perm", transpose_last ? std::vector<std::int64_t>{0, 2, 3, 1} : std::vector<std::int64_t>{0, 2, 1, 3});
    return b.op(Op::transpose, {r}, perm);
  };
  const int q = split_heads(linear(x, hidden, hidden), false);
  const int k = split_heads(linear(x, hidden, hidden), true);
  const int v = split_heads(linear(x, hidden, hidden), false);
  const int scores = b.op(Op::div, {b.op(Op::matmul, {q, k}), b.scalar(std::sqrt(static_cast<float>(dh)))});
  Attributes last;
  last.set("axis", 3);
  const int probs = b.op(Op::softmax, {b.op(Op::add, {scores, mask})}, last);
  const int context = b.op(Op::matmul, {probs, v});
  Attributes back;
  back.set("perm", std::vector<std::int64_t>{0, 2, 1, 3});
  Attributes merged;
  merged.set("shape", std::vector<std::int64_t>{1, seq, hidden});
  const int joined = b.op(Op::reshape, {b.op(Op::transpose, {context}, back)}, merged);
  const int attn = b.op(Op::add, {linear(joined, hidden, hidden), x});
  const int ln1 = b.layer_norm(attn, 1, b.constant({hidden}), b.constant({hidden}));
  const int up = b.gelu(linear(ln1, hidden, ffn));
  const int down = b.op(Op::add, {linear(up, ffn, hidden), ln1});
  b.output(b.layer_norm(down, 1, b.constant({hidden}), b.constant({hidden})));
  return b.infer();
}

}  // namespace tc::testing
