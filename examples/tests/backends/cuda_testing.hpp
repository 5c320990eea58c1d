#pragma once

/// \file
/// What the cuda backend's tests share: the partitions its rule proposes on a graph, model-like
/// graphs (a residual CNN stage, an inverted-residual MobileNet block, a BERT-style encoder layer
/// with layer norm and GELU decomposed as exporters write them), and an emulation of the generated
/// launches on the CPU (each kernel's decomposition into points, rows, tiles and taps, through the
/// same kernel_math.hpp and index_math.hpp functions the kernels call), checked against the
/// reference interpreter where no GPU can run the kernels themselves.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <collage/graph/dataflow_graph.hpp>
#include <collage/rules/partition_spec.hpp>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_codegen.hpp"
#include "backends/cuda/kernel_math.hpp"
#include "loops/lower.hpp"
#include "native_random_graph.hpp"

namespace tc::cuda_testing {

using loops::Affine;
using testing::GraphBuilder;
using Ints = std::vector<std::int64_t>;

/// Calls `visit(label, function)` for every candidate of the cuda backend's rule on `graph`.
inline void for_each_candidate(const Graph& graph,
                               const std::function<void(const std::string& label, const Function& function)>& visit) {
  auto dataflow = collage::DataflowGraph<Graph>::build(graph);
  ASSERT_TRUE(dataflow.ok()) << dataflow.error().message;
  for (const collage::Candidate& c : make_cuda_backend()->spec().all_candidates(*dataflow)) {
    visit(c.sub_graph.to_string(*dataflow), extract_function(*dataflow, c.sub_graph));
  }
}

/// A Function lowered to the loop IR and generated as CUDA.
struct Generated {
  loops::LoweredFunction lowered;
  cudagen::CudaProgram program;
};

/// Lowers and generates `function`.
inline collage::Result<Generated> generate(const Function& function) {
  auto lowered = loops::lower(function);
  if (!lowered.ok()) return lowered.error();
  auto program = cudagen::generate_cuda(*lowered);
  if (!program.ok()) return program.error();
  return Generated{std::move(lowered).value(), std::move(program).value()};
}

/// An attribute list of one integer list.
inline Attributes ints_attr(const std::string& key, Ints value) {
  Attributes a;
  a.set(key, std::move(value));
  return a;
}

/// A ResNet-style stage: strided convolution with bias and ReLU, max pooling, a basic block with
/// batch norm and its residual, a 1x1 projection, the global average pool, a classifier (Gemm
/// with a transposed weight) and its softmax.
inline Graph resnet_stage(std::uint64_t seed = 21) {
  GraphBuilder b(seed);
  Attributes stem = ints_attr("pads", {1, 1, 1, 1});
  stem.set("strides", Ints{2, 2});
  const int x = b.input({2, 3, 17, 17});
  const int c1 = b.op(Op::relu, {b.op(Op::conv, {x, b.weight({16, 3, 3, 3}), b.weight({16})}, stem)});
  Attributes pool = ints_attr("kernel_shape", {3, 3});
  pool.set("strides", Ints{2, 2});
  pool.set("pads", Ints{1, 1, 1, 1});
  const int p = b.op(Op::max_pool, {c1}, pool);
  const Attributes same = ints_attr("pads", {1, 1, 1, 1});
  const int c2 = b.op(Op::relu, {b.op(Op::conv, {p, b.weight({16, 16, 3, 3}), b.weight({16})}, same)});
  const int c3 = b.op(Op::conv, {c2, b.weight({16, 16, 3, 3})}, same);
  const int bn =
      b.op(Op::batch_norm, {c3, b.weight({16}), b.weight({16}), b.weight({16}), b.weight({16}, 0.5f, 2.0f)});
  const int r = b.op(Op::relu, {b.op(Op::add, {bn, p})});
  const int proj = b.op(Op::conv, {r, b.weight({24, 16, 1, 1}), b.weight({24})});
  const int gap = b.op(Op::global_average_pool, {b.op(Op::relu, {proj})});
  const int flat = b.op(Op::flatten, {gap});
  Attributes tb;
  tb.set("trans_b", std::int64_t{1});
  const int fc = b.op(Op::gemm, {flat, b.weight({10, 24}), b.weight({10})}, tb);
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  return b.done(b.op(Op::softmax, {fc}, axis));
}

/// A MobileNet-v2 inverted-residual block: 1x1 expansion with ReLU6 (Clip), a 3x3 depthwise
/// convolution with ReLU6, a 1x1 projection and the residual, then an average pool.
inline Graph mobilenet_block(std::uint64_t seed = 22) {
  GraphBuilder b(seed);
  Attributes six;
  six.set("min", 0.0);
  six.set("max", 6.0);
  const int x = b.input({1, 8, 14, 14});
  const int e = b.op(Op::clip, {b.op(Op::conv, {x, b.weight({48, 8, 1, 1}), b.weight({48})})}, six);
  Attributes dw = ints_attr("pads", {1, 1, 1, 1});
  dw.set("group", std::int64_t{48});
  const int d = b.op(Op::clip, {b.op(Op::conv, {e, b.weight({48, 1, 3, 3}), b.weight({48})}, dw)}, six);
  const int proj = b.op(Op::conv, {d, b.weight({8, 48, 1, 1}), b.weight({8})});
  const int res = b.op(Op::add, {proj, x});
  Attributes avg = ints_attr("kernel_shape", {3, 3});
  avg.set("strides", Ints{2, 2});
  avg.set("pads", Ints{1, 1, 1, 1});
  avg.set("count_include_pad", std::int64_t{1});
  return b.done(b.op(Op::average_pool, {res}, avg));
}

/// Layer norm over the last axis as exporters write it (ReduceMean, Sub, Pow, ReduceMean, Add,
/// Sqrt, Div, Mul, Add), with random scale and bias.
inline int layer_norm_decomposed(GraphBuilder& b, int x, std::int64_t width) {
  const int scale = b.weight({width});
  const int bias = b.weight({width});
  return b.layer_norm(x, 1, scale, bias);
}

/// x W + b for a [.., k] x and a [k, n] weight.
inline int linear(GraphBuilder& b, int x, std::int64_t k, std::int64_t n) {
  return b.op(Op::add, {b.op(Op::matmul, {x, b.weight({k, n}, -0.3f, 0.3f)}), b.weight({n})});
}

/// A BERT-style encoder layer on [1, seq, hidden]: Q/K/V projections, heads split by Reshape and
/// Transpose, scaled scores with an additive mask, Softmax, heads merged, the output projection
/// and residual, layer norm (decomposed), the GELU (erf form, decomposed) feed-forward, residual,
/// layer norm.
inline Graph encoder_layer(std::int64_t seq = 12, std::int64_t hidden = 32, std::int64_t heads = 4,
                           std::int64_t ffn = 64, std::uint64_t seed = 23) {
  GraphBuilder b(seed);
  const std::int64_t d = hidden / heads;
  const int x = b.input({1, seq, hidden});
  const int mask = b.input({1, 1, 1, seq});
  auto split = [&](int t, Ints perm) {
    const int r = b.op(Op::reshape, {t}, ints_attr("shape", {1, seq, heads, d}));
    return b.op(Op::transpose, {r}, ints_attr("perm", std::move(perm)));
  };
  const int q = split(linear(b, x, hidden, hidden), {0, 2, 1, 3});
  const int k = split(linear(b, x, hidden, hidden), {0, 2, 3, 1});
  const int v = split(linear(b, x, hidden, hidden), {0, 2, 1, 3});
  const int scores = b.op(Op::div, {b.op(Op::matmul, {q, k}), b.scalar(std::sqrt(static_cast<float>(d)))});
  Attributes last;
  last.set("axis", std::int64_t{3});
  const int probs = b.op(Op::softmax, {b.op(Op::add, {scores, mask})}, last);
  const int ctx = b.op(Op::transpose, {b.op(Op::matmul, {probs, v})}, ints_attr("perm", {0, 2, 1, 3}));
  const int merged = b.op(Op::reshape, {ctx}, ints_attr("shape", {1, seq, hidden}));
  const int ln1 = layer_norm_decomposed(b, b.op(Op::add, {linear(b, merged, hidden, hidden), x}), hidden);
  const int h = linear(b, ln1, hidden, ffn);
  const int out = b.op(Op::add, {linear(b, b.gelu(h), ffn, hidden), ln1});
  return b.done(layer_norm_decomposed(b, out, hidden));
}

/// Every unary operator of the IR's elementwise math on [4, 37]: a chain of the continuous ones,
/// each fed values inside its domain (tanh first; asin, acos and atanh then see |x| < 1, acosh
/// at least 1.5), plus the rounding ones (Round, Ceil, Floor, Sign) on scaled inputs, where float
/// and double agree exactly so no value lands on the other side of a step.
inline Graph elementwise_math(std::uint64_t seed = 31) {
  GraphBuilder b(seed);
  const int x = b.input({4, 37});
  auto unary = [&](Op op, int in) { return b.op(op, {in}); };
  auto scaled = [&](int in, float by) { return b.op(Op::mul, {in, b.scalar(by)}); };
  int t = unary(Op::sin, unary(Op::asin, unary(Op::tanh, x)));
  t = unary(Op::acos, unary(Op::tan, scaled(unary(Op::atanh, scaled(t, 0.9f)), 0.5f)));
  t = unary(Op::asinh, unary(Op::sinh, unary(Op::atan, unary(Op::cos, t))));
  t = unary(Op::acosh, b.op(Op::add, {unary(Op::cosh, t), b.scalar(0.5f)}));
  const int steps = unary(Op::floor, scaled(unary(Op::ceil, scaled(unary(Op::round, scaled(x, 2.5f)), 0.3f)), 1.7f));
  return b.done(b.op(Op::add, {t, unary(Op::sign, b.op(Op::sub, {steps, b.scalar(1.0f)}))}));
}

/// Embeddings as a language model looks them up: rows of a table gathered at token ids (negative
/// ones counting from the end) and at token types along the other axis, summed with positions.
inline Graph embedding_lookup(std::uint64_t seed = 37) {
  GraphBuilder b(seed);
  const int table = b.input({50, 24});
  Tensor ids({2, 7});
  for (std::size_t i = 0; i < ids.data.size(); ++i) ids.data[i] = static_cast<float>(static_cast<int>(i * 13 % 100) - 50);
  Attributes rows_axis, columns_axis;
  rows_axis.set("axis", std::int64_t{0});
  columns_axis.set("axis", std::int64_t{1});
  const int words = b.op(Op::gather, {table, b.constant(ids)}, rows_axis);
  const int types = b.op(Op::gather, {b.weight({7, 2}), b.constant(Tensor({1}, std::vector<float>{1.0f}))}, columns_axis);
  const int summed = b.op(Op::add, {b.op(Op::add, {words, b.weight({7, 24})}), types});
  return b.done(b.op(Op::relu, {summed}));
}

/// The model-like graphs, named.
inline std::vector<std::pair<std::string, Graph>> model_graphs() {
  return {{"resnet stage", resnet_stage()}, {"mobilenet block", mobilenet_block()}, {"encoder layer", encoder_layer()},
          {"elementwise math", elementwise_math()}, {"embedding lookup", embedding_lookup()}};
}

// ---------------------------------------------------------------------------------------------
// The generated launches emulated on the CPU.

/// The value of a tile program at one point of its domain (linear index `p`): each operation as
/// the generated code computes it, each leaf read through index_math.hpp as the kernels read it.
/// Leaves of buffer `substitute` read `value` (a core's result in a register).
inline float evaluate_point(const loops::TileProgram& program, const std::vector<std::vector<float>>& buffers,
                            std::int64_t p, int substitute = -1, float value = 0.0f) {
  using loops::TileOpCode;
  const int rank = static_cast<int>(program.dims.size());
  std::int64_t c[loops::kMaxDomainRank];
  loops::unravel(p, program.dims.data(), rank, c);
  auto valid = [&](const loops::Access& a) {
    if (a.table) return (*a.table)[static_cast<std::size_t>(p)] >= 0;
    for (const loops::Check& k : a.checks) {
      const std::int64_t e = loops::affine_at(k.expr.offset, k.expr.coef.data(), c, rank);
      if (e < k.lo || e >= k.hi) return false;
    }
    return true;
  };
  std::vector<float> v(program.ops.size());
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const loops::TileOp& op = program.ops[i];
    const float a = op.a >= 0 ? v[static_cast<std::size_t>(op.a)] : 0.0f;
    const float b = op.b >= 0 ? v[static_cast<std::size_t>(op.b)] : 0.0f;
    const float p0 = op.p0;
    const float p1 = op.p1;
    float r = 0.0f;
    switch (op.code) {
      case TileOpCode::load: {
        const loops::Leaf& leaf = program.leaves[static_cast<std::size_t>(op.ref)];
        if (leaf.source == substitute) {
          r = value;
        } else if (valid(leaf.access)) {
          const loops::Access& access = leaf.access;
          const Affine& linear = access.linear;
          const std::int64_t at = access.table ? (*access.table)[static_cast<std::size_t>(p)]
                                               : loops::affine_at(linear.offset, linear.coef.data(), c, rank);
          r = buffers[static_cast<std::size_t>(leaf.source)][static_cast<std::size_t>(at)];
        }
        break;
      }
      case TileOpCode::fill: r = p0; break;
      case TileOpCode::select: r = valid(program.masks[static_cast<std::size_t>(op.ref)]) ? a : b; break;
      case TileOpCode::copy: r = a; break;
      case TileOpCode::relu: r = a < 0.0f ? 0.0f : a; break;
      case TileOpCode::sigmoid: r = 1.0f / (1.0f + std::exp(-a)); break;
      case TileOpCode::tanh: r = std::tanh(a); break;
      case TileOpCode::exp: r = std::exp(a); break;
      case TileOpCode::log: r = std::log(a); break;
      case TileOpCode::sqrt: r = std::sqrt(a); break;
      case TileOpCode::erf: r = std::erf(a); break;
      case TileOpCode::neg: r = -a; break;
      case TileOpCode::abs: r = std::fabs(a); break;
      case TileOpCode::reciprocal: r = 1.0f / a; break;
      case TileOpCode::square: r = a * a; break;
      case TileOpCode::sin: r = std::sin(a); break;
      case TileOpCode::cos: r = std::cos(a); break;
      case TileOpCode::tan: r = std::tan(a); break;
      case TileOpCode::asin: r = std::asin(a); break;
      case TileOpCode::acos: r = std::acos(a); break;
      case TileOpCode::atan: r = std::atan(a); break;
      case TileOpCode::sinh: r = std::sinh(a); break;
      case TileOpCode::cosh: r = std::cosh(a); break;
      case TileOpCode::asinh: r = std::asinh(a); break;
      case TileOpCode::acosh: r = std::acosh(a); break;
      case TileOpCode::atanh: r = std::atanh(a); break;
      case TileOpCode::floor: r = std::floor(a); break;
      case TileOpCode::ceil: r = std::ceil(a); break;
      case TileOpCode::round: r = std::nearbyint(a); break;
      case TileOpCode::sign: r = a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : a; break;
      case TileOpCode::clip: r = cudagen::clamp(a, p0, p1); break;
      case TileOpCode::leaky_relu: r = a < 0.0f ? p0 * a : a; break;
      case TileOpCode::hard_sigmoid: r = cudagen::clamp(p0 * a + p1, 0.0f, 1.0f); break;
      case TileOpCode::add: r = a + b; break;
      case TileOpCode::sub: r = a - b; break;
      case TileOpCode::mul: r = a * b; break;
      case TileOpCode::div: r = a / b; break;
      case TileOpCode::pow: r = std::pow(a, b); break;
      case TileOpCode::max: r = cudagen::nan_max(a, b); break;
      case TileOpCode::min: r = cudagen::nan_min(a, b); break;
      case TileOpCode::add_s: r = a + p0; break;
      case TileOpCode::sub_s: r = a - p0; break;
      case TileOpCode::mul_s: r = a * p0; break;
      case TileOpCode::div_s: r = a / p0; break;
      case TileOpCode::pow_s: r = std::pow(a, p0); break;
      case TileOpCode::max_s: r = cudagen::nan_max(a, p0); break;
      case TileOpCode::min_s: r = cudagen::nan_min(a, p0); break;
      case TileOpCode::rsub_s: r = p0 - a; break;
      case TileOpCode::rdiv_s: r = p0 / a; break;
      case TileOpCode::rpow_s: r = std::pow(p0, a); break;
    }
    v[i] = r;
  }
  return v.back();
}

/// Runs `program`'s launches (generated from `lowered`, the lowering of `function`) on the CPU,
/// one kernel at a time, each as its threads would: element by element, row by row, or output by
/// output through the tiled products' index functions. Outputs nothing launched writes stay NaN.
inline collage::Result<std::vector<Tensor>> emulate(const Function& function, const loops::LoweredFunction& lowered,
                                                    const cudagen::CudaProgram& program,
                                                    const std::vector<Tensor>& inputs) {
  using loops::Source;
  std::vector<std::vector<float>> buf(lowered.sources.size());
  for (std::size_t i = 0; i < lowered.sources.size(); ++i) {
    const Source& s = lowered.sources[i];
    const auto at = static_cast<std::size_t>(s.index);
    switch (s.kind) {
      case Source::Kind::param: buf[i] = inputs.at(at).data; break;
      case Source::Kind::constant: buf[i] = lowered.constants[at]->data; break;
      case Source::Kind::scratch:
        buf[i].assign(static_cast<std::size_t>(lowered.scratch_sizes[at]), std::numeric_limits<float>::quiet_NaN());
        break;
      case Source::Kind::output:
        buf[i].assign(static_cast<std::size_t>(lowered.output_sizes[at]), std::numeric_limits<float>::quiet_NaN());
        break;
    }
  }
  for (const cudagen::KernelLaunch& launch : program.launches) {
    const loops::Stage& st = lowered.stages[static_cast<std::size_t>(launch.stage)];
    auto data = [&](int source) { return buf[static_cast<std::size_t>(source)].data(); };
    auto store = [&](std::int64_t o, float v) {
      if (launch.fused_epilogue) {
        data(st.dst)[o] = evaluate_point(st.epilogue, buf, o, st.core_dst, v);
      } else {
        data(st.core_dst)[o] = v;
      }
    };
    switch (launch.kind) {
      case cudagen::KernelKind::elementwise:
        for (std::int64_t p = 0; p < st.size; ++p) data(st.dst)[p] = evaluate_point(st.epilogue, buf, p);
        break;
      case cudagen::KernelKind::gemm: {
        const auto& core = std::get<loops::GemmCore>(st.core);
        auto geom = cudagen::gemm_geometry(core);
        if (!geom.ok()) return geom.error();
        for (std::int64_t z = 0; z < cudagen::gemm_batches(*geom); ++z) {
          std::int64_t a_base = 0;
          std::int64_t b_base = 0;
          cudagen::gemm_batch_offsets(*geom, z, &a_base, &b_base);
          for (std::int64_t i = 0; i < geom->m; ++i) {
            for (std::int64_t j = 0; j < geom->n; ++j) {
              float acc = 0.0f;
              for (std::int64_t k = 0; k < geom->k; ++k) {
                const float a = data(core.a)[a_base + i * geom->a_rs + k * geom->a_cs];
                acc += a * data(core.b)[b_base + k * geom->b_rs + j * geom->b_cs];
              }
              store(cudagen::gemm_output_offset(*geom, z, i, j), acc);
            }
          }
        }
        break;
      }
      case cudagen::KernelKind::conv_gemm:
      case cudagen::KernelKind::conv_direct: {
        const auto& core = std::get<loops::ConvCore>(st.core);
        const loops::ConvGeom& geom = core.geom;
        if (launch.kind == cudagen::KernelKind::conv_direct) {
          for (std::int64_t o = 0; o < loops::conv_outputs(geom); ++o) {
            store(o, cudagen::conv_direct(geom, data(core.x), data(core.w), o));
          }
          break;
        }
        for (std::int64_t z = 0; z < geom.group; ++z) {
          for (std::int64_t i = 0; i < loops::conv_group_features(geom); ++i) {
            for (std::int64_t j = 0; j < cudagen::conv_columns(geom); ++j) {
              float acc = 0.0f;
              for (std::int64_t kk = 0; kk < loops::conv_depth(geom); ++kk) {
                const std::int64_t at = cudagen::conv_image_offset(geom, z, kk, j);
                if (at >= 0) acc += data(core.w)[cudagen::conv_weight_offset(geom, z, i, kk)] * data(core.x)[at];
              }
              store(cudagen::conv_output_offset(geom, z, i, j), acc);
            }
          }
        }
        break;
      }
      case cudagen::KernelKind::pool: {
        const auto& core = std::get<loops::PoolCore>(st.core);
        for (std::int64_t o = 0; o < loops::pool_outputs(core.geom); ++o) {
          store(o, cudagen::pool_value(core.geom, data(core.x), o));
        }
        break;
      }
      case cudagen::KernelKind::reduce_rows:
      case cudagen::KernelKind::reduce_columns: {
        const auto& core = std::get<loops::ReduceCore>(st.core);
        auto geom = cudagen::reduce_geometry(core);
        if (!geom.ok()) return geom.error();
        const bool max = core.kind == loops::ReduceKind::max;
        const std::int64_t per = launch.fused_epilogue ? st.rows_per_result : 0;
        for (std::int64_t r = 0; r < core.size; ++r) {
          float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (std::int64_t q = 0; q < core.count; ++q) {
            std::int64_t c[loops::kMaxDomainRank];
            cudagen::reduce_coords(*geom, r, q, c);
            const float v = evaluate_point(core.input, buf, loops::ravel(c, geom->dims, geom->rank));
            acc = max ? cudagen::nan_max(acc, v) : acc + v;
          }
          if (core.kind == loops::ReduceKind::mean) acc /= static_cast<float>(core.count);
          if (per == 0) store(r, acc);
          for (std::int64_t e = 0; e < per; ++e) store(r * per + e, acc);
        }
        break;
      }
      case cudagen::KernelKind::softmax_rows:
      case cudagen::KernelKind::softmax_columns: {
        const auto& core = std::get<loops::SoftmaxCore>(st.core);
        for (std::int64_t t = 0; t < core.outer * core.inner; ++t) {
          const std::int64_t base = t / core.inner * core.axis * core.inner + t % core.inner;
          const float* x = data(core.x);
          float m = -std::numeric_limits<float>::infinity();
          for (std::int64_t k = 0; k < core.axis; ++k) m = cudagen::nan_max(x[base + k * core.inner], m);
          float sum = 0.0f;
          for (std::int64_t k = 0; k < core.axis; ++k) sum += std::exp(x[base + k * core.inner] - m);
          const float inv = 1.0f / sum;
          for (std::int64_t k = 0; k < core.axis; ++k) {
            store(base + k * core.inner, std::exp(x[base + k * core.inner] - m) * inv);
          }
        }
        break;
      }
      case cudagen::KernelKind::gather: {
        const auto& core = std::get<loops::GatherCore>(st.core);
        for (std::int64_t o = 0; o < core.outer * core.count * core.inner; ++o) {
          const std::int64_t r = o / core.inner;
          const std::int64_t row = loops::gather_row(data(core.indices)[r % core.count], core.size);
          store(o, row < 0 ? std::numeric_limits<float>::quiet_NaN()
                           : data(core.data)[(r / core.count * core.size + row) * core.inner + o % core.inner]);
        }
        break;
      }
      case cudagen::KernelKind::layer_norm: {
        const auto& core = std::get<loops::LayerNormCore>(st.core);
        const int rank = static_cast<int>(core.normalized.size());
        for (std::int64_t row = 0; row < core.rows; ++row) {
          const float* in = data(core.x) + row * core.cols;
          float sum = 0.0f;
          for (std::int64_t j = 0; j < core.cols; ++j) sum += in[j];
          const float mean = sum / static_cast<float>(core.cols);
          float squares = 0.0f;
          for (std::int64_t j = 0; j < core.cols; ++j) squares += (in[j] - mean) * (in[j] - mean);
          const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(core.cols) + core.epsilon);
          for (std::int64_t j = 0; j < core.cols; ++j) {
            std::int64_t c[loops::kMaxDomainRank];
            loops::unravel(j, core.normalized.data(), rank, c);
            const auto param = [&](int source, const loops::Access& a) {
              return data(source)[loops::affine_at(a.linear.offset, a.linear.coef.data(), c, rank)];
            };
            float y = (in[j] - mean) * rstd * param(core.scale, core.scale_access);
            if (core.bias >= 0) y += param(core.bias, core.bias_access);
            store(row * core.cols + j, y);
          }
        }
        break;
      }
    }
  }
  std::vector<Tensor> outputs;
  for (int out : function.graph.outputs()) outputs.emplace_back(function.graph.node(out).shape);
  for (std::size_t i = 0; i < lowered.sources.size(); ++i) {
    const Source& s = lowered.sources[i];
    if (s.kind == Source::Kind::output) outputs[static_cast<std::size_t>(s.index)].data = buf[i];
  }
  for (const auto& [to, from] : lowered.output_copies) {
    outputs[static_cast<std::size_t>(to)].data = outputs[static_cast<std::size_t>(from)].data;
  }
  return outputs;
}

}  // namespace tc::cuda_testing
