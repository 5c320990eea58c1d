#pragma once

/// \file
/// What the tests of the library-style CPU backends (eigen, onednn) share: running a backend's
/// kernel for a partition against the reference interpreter, finding the candidates its rule
/// proposes, and real-ish graphs (a conv / batch-norm / relu block, a transformer layer with
/// decomposed layer norm and GELU), built with tests/support/graph_builder.hpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/kit/library_call.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/compare.hpp"
#include "tensor/function.hpp"
#include "tensor/layout.hpp"
#include "tensor/reference.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc::testing {

/// A convolution of the property tests: its input and weight shapes and its attributes.
struct RandomConv {
  std::int64_t group = 1;
  Shape x, w;
  std::vector<std::int64_t> strides, dilations, pads;

  /// Adds an input "x", the weights and, when `rng` says so, a bias input, and the convolution
  /// over them to `b`; returns the convolution.
  int add_to(GraphBuilder& b, std::mt19937_64& rng) const {
    std::vector<int> inputs = {b.input(x, "x"), b.weight(w)};
    if (pick(rng, 0, 1) == 1) inputs.push_back(b.weight({w[0]}));
    return b.op(Op::conv, inputs, conv_attributes(pads, strides, dilations, group));
  }
};

/// A random convolution over `spatial` dims: up to 3 groups (a quarter of the draws depthwise),
/// 1 to `max_group_channels` input and output channels per group, batch 1-2, and per dim a kernel
/// of 1-3, stride 1-3, dilation 1-2, pads of 0-2 at either end and an input of up to 6 (3 for 3-D)
/// more than the padded window needs.
inline RandomConv random_conv(std::mt19937_64& rng, std::size_t spatial, std::int64_t max_group_channels) {
  RandomConv c;
  c.group = pick(rng, 1, 3);
  const bool depthwise = pick(rng, 0, 3) == 0;
  const std::int64_t cg = depthwise ? 1 : pick(rng, 1, max_group_channels);
  const std::int64_t mg = depthwise ? 1 : pick(rng, 1, max_group_channels);
  c.x = {pick(rng, 1, 2), c.group * cg};
  c.w = {c.group * mg, cg};
  c.pads.assign(2 * spatial, 0);
  for (std::size_t d = 0; d < spatial; ++d) {
    const std::int64_t k = pick(rng, 1, 3);
    c.strides.push_back(pick(rng, 1, 3));
    c.dilations.push_back(pick(rng, 1, 2));
    c.pads[d] = pick(rng, 0, 2);
    c.pads[d + spatial] = pick(rng, 0, 2);
    const std::int64_t extent = c.dilations.back() * (k - 1) + 1;
    const std::int64_t lo = std::max<std::int64_t>(1, extent - c.pads[d] - c.pads[d + spatial]);
    c.x.push_back(pick(rng, lo, lo + (spatial == 3 ? 3 : 6)));
    c.w.push_back(k);
  }
  return c;
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

/// Compiles `function` with `backend` for the CPU and runs it on seeded random inputs (reordered
/// into the backend's layout, its outputs back to plain tensors); success when every output is
/// within (rtol, atol) of the reference interpreter's.
inline ::testing::AssertionResult runs_like_reference(const Backend& backend, const Function& function,
                                                      std::uint64_t seed, double rtol = 1e-4, double atol = 1e-4) {
  CpuDevice cpu;
  collage::Result<std::unique_ptr<Kernel>> kernel = backend.compile(function, cpu);
  if (!kernel.ok()) return ::testing::AssertionFailure() << "compile: " << kernel.error().message;
  const std::vector<Tensor> inputs = random_inputs(function.graph, seed);
  collage::Result<std::vector<Tensor>> expected = evaluate(function.graph, inputs);
  if (!expected.ok()) return ::testing::AssertionFailure() << "reference: " << expected.error().message;
  const Layout layout = backend.layout();
  std::vector<std::vector<float>> given, returned;
  for (const Tensor& t : inputs) {
    given.emplace_back(stored_floats(t.shape, layout));
    reorder(t.data.data(), Layout::plain, given.back().data(), layout, t.shape);
  }
  for (int out : function.graph.outputs()) returned.emplace_back(stored_floats(function.graph.node(out).shape, layout), std::nanf(""));
  std::vector<const float*> in_ptrs;
  for (const std::vector<float>& t : given) in_ptrs.push_back(t.data());
  std::vector<float*> out_ptrs;
  for (std::vector<float>& t : returned) out_ptrs.push_back(t.data());
  // Twice: a second run must not depend on anything the first left behind.
  for (int run = 0; run < 2; ++run) {
    collage::Status ran = (*kernel)->run(in_ptrs, out_ptrs);
    if (!ran.ok()) return ::testing::AssertionFailure() << "run: " << ran.message();
  }
  std::vector<Tensor> outputs;
  for (std::size_t k = 0; k < returned.size(); ++k) {
    outputs.emplace_back(function.graph.node(function.graph.outputs()[k]).shape);
    reorder(returned[k].data(), layout, outputs.back().data.data(), Layout::plain, outputs.back().shape);
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

/// Whether the candidate of `backend` over all of `model` labelled `label` (see whole_candidate)
/// runs like the reference (see runs_like_reference).
inline ::testing::AssertionResult whole_candidate_matches(const Backend& backend, const Graph& model,
                                                          const std::string& label, std::uint64_t seed,
                                                          double rtol = 1e-4, double atol = 1e-4) {
  return runs_like_reference(backend, whole_candidate(backend, model, label), seed, rtol, atol);
}

/// What happened to each candidate of a backend's rule on a model.
struct CandidateReport {
  std::size_t candidates = 0;
  std::size_t matched = 0;
  /// "label: message" of each candidate that failed to compile, run or match.
  std::vector<std::string> failures;
  /// The composite labels proposed (with repeats), "op:<Op>" for single operators, or "joined"
  /// for partitions of several library calls.
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
    if (collage::Result<std::vector<LibraryCall>> calls = library_calls(f); calls.ok() && calls->size() > 1) {
      label = "joined";
    }
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
/// the ResNet stem and basic block as an exporter writes them without folding batch norm, with
/// `c` channels after the stem.
inline Graph conv_bn_relu_block(std::uint64_t seed, std::int64_t c = 8) {
  GraphBuilder b(seed);
  const int x = b.input({1, 3, 17, 17}, "x");
  const int c1 = b.op(Op::conv, {x, b.weight({c, 3, 3, 3}), b.weight({c})}, conv_attributes({1, 1, 1, 1}, {2, 2}, {1, 1}));
  const int bn = b.op(Op::batch_norm, {c1, b.weight({c}), b.weight({c}), b.weight({c}), b.weight({c}, 0.5f, 1.5f)});
  const int r1 = b.op(Op::relu, {bn});
  const int pool = b.op(Op::max_pool, {r1}, pool_attributes({3, 3}, {2, 2}, {1, 1, 1, 1}));
  const int c2 = b.op(Op::conv, {pool, b.weight({c, c, 3, 3}), b.weight({c})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  const int r2 = b.op(Op::relu, {c2});
  const int c3 = b.op(Op::conv, {r2, b.weight({c, c, 3, 3})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}));
  const int bias = b.op(Op::add, {c3, b.weight({c, 1, 1})});
  const int sum = b.op(Op::add, {bias, pool});
  const int r3 = b.op(Op::relu, {sum});
  const int dw = b.op(Op::conv, {r3, b.weight({c, 1, 3, 3})}, conv_attributes({1, 1, 1, 1}, {1, 1}, {1, 1}, c));
  Attributes relu6;
  relu6.set("min", 0.0);
  relu6.set("max", 6.0);
  const int r6 = b.op(Op::clip, {dw}, relu6);
  const int gap = b.op(Op::global_average_pool, {r6});
  const int flat = b.op(Op::flatten, {gap});
  const int fc = b.op(Op::gemm, {flat, b.weight({5, c}), b.weight({5})}, gemm_attributes(false, true));
  return b.done(fc);
}

/// One BERT encoder layer over [1, seq, hidden] with an additive mask [1, 1, 1, seq], as PyTorch
/// exports it: MatMul + Add projections, heads by Reshape/Transpose, scaled scores plus mask,
/// Softmax, decomposed LayerNorm after each residual, and a feed-forward block with decomposed
/// GELU.
inline Graph transformer_layer(std::uint64_t seed, std::int64_t seq = 7, std::int64_t hidden = 16,
                               std::int64_t heads = 2, std::int64_t ffn = 24) {
  GraphBuilder b(seed);
  const std::int64_t dh = hidden / heads;
  const int x = b.input({1, seq, hidden}, "x");
  const int mask = b.input({1, 1, 1, seq}, "mask");
  auto linear = [&](int in, std::int64_t from, std::int64_t to) {
    return b.op(Op::add, {b.op(Op::matmul, {in, b.weight({from, to})}), b.weight({to})});
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
  const int ln1 = b.layer_norm(attn, 1, b.weight({hidden}), b.weight({hidden}));
  const int up = b.gelu(linear(ln1, hidden, ffn));
  const int down = b.op(Op::add, {linear(up, ffn, hidden), ln1});
  return b.done(b.layer_norm(down, 1, b.weight({hidden}), b.weight({hidden})));
}

}  // namespace tc::testing
