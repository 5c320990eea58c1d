// Kernel benchmarks of the native backend, each against a baseline measured in the same run:
// fused elementwise chains against memcpy of the same bytes (GB/s), GEMM and convolution against
// Eigen's GEMM (GFLOP/s), on shapes from ResNet-18/50, MobileNet-v2 and BERT-base. Everything is
// single-threaded. Run pinned: taskset -c 1 tc_native_bench --benchmark_repetitions=5 ...

#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(COLLAGE_BENCH_HAVE_EIGEN)
#include <Eigen/Core>
#endif

#include "backends/native/native_backend.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/function.hpp"
#include "tensor/shape_inference.hpp"

namespace {

using tc::Attributes;
using tc::Graph;
using tc::Op;
using tc::Shape;
using tc::Tensor;
using Ints = std::vector<std::int64_t>;

Tensor random_tensor(const Shape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(shape);
  for (float& v : t.data) v = dist(rng);
  return t;
}

/// A graph compiled by the native backend with its inputs and outputs allocated.
struct Compiled {
  std::unique_ptr<tc::Kernel> kernel;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::vector<const float*> in;
  std::vector<float*> out;
  std::int64_t bytes = 0;  // inputs read and outputs written once

  bool run() { return kernel->run(in, out).ok(); }
};

std::unique_ptr<Compiled> compile(Graph g, benchmark::State& state) {
  if (!tc::infer_shapes(g).ok()) {
    state.SkipWithError("shape inference failed");
    return nullptr;
  }
  tc::CpuDevice cpu;
  auto kernel = tc::NativeBackend().compile(tc::whole_model_function(g), cpu);
  if (!kernel.ok()) {
    state.SkipWithError(kernel.error().message.c_str());
    return nullptr;
  }
  auto c = std::make_unique<Compiled>();
  c->kernel = std::move(*kernel);
  for (int in : g.inputs()) {
    c->inputs.push_back(random_tensor(g.node(in).shape, 7 + c->inputs.size()));
    c->bytes += static_cast<std::int64_t>(c->inputs.back().bytes());
  }
  for (int out : g.outputs()) {
    c->outputs.emplace_back(g.node(out).shape);
    c->bytes += static_cast<std::int64_t>(c->outputs.back().bytes());
  }
  for (const Tensor& t : c->inputs) c->in.push_back(t.data.data());
  for (Tensor& t : c->outputs) c->out.push_back(t.data.data());
  return c;
}

void set_bytes(benchmark::State& state, std::int64_t bytes) {
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void set_flops(benchmark::State& state, double flops) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void run_compiled(benchmark::State& state, Graph g, double flops = 0) {
  auto c = compile(std::move(g), state);
  if (!c) return;
  for (auto _ : state) {
    if (!c->run()) state.SkipWithError("run failed");
    benchmark::ClobberMemory();
  }
  set_bytes(state, c->bytes);
  if (flops > 0) set_flops(state, flops);
}

// ---------------------------------------------------------------------------------------------
// Elementwise chains against memcpy. Sizes: 1 = ResNet's first activation [1,64,112,112] (3.2 MB,
// in L3), 2 = 16 Mi floats (64 MB, DRAM).

Shape activation(std::int64_t size) { return size == 1 ? Shape{1, 64, 112, 112} : Shape{16, 64, 128, 128}; }

/// memcpy of an activation: the baseline (bytes read + written).
void BM_Memcpy(benchmark::State& state) {
  const Shape s = activation(state.range(0));
  std::vector<float> a(static_cast<std::size_t>(tc::numel(s)), 1.0f), b(a.size());
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  set_bytes(state, static_cast<std::int64_t>(2 * a.size() * sizeof(float)));
}

/// Bias (per channel) + ReLU: one input, one output.
void BM_NativeBiasRelu(benchmark::State& state) {
  Graph g;
  const Shape s = activation(state.range(0));
  const int x = g.add_input("x", s);
  const int b = g.add_constant("b", random_tensor({s[1], 1, 1}, 1));
  g.add_output(*g.add_op(Op::relu, {*g.add_op(Op::add, {x, b})}));
  run_compiled(state, std::move(g));
}

/// Residual: relu(x + y) * 0.5 (two inputs, one output).
void BM_NativeResidual(benchmark::State& state) {
  Graph g;
  const Shape s = activation(state.range(0));
  const int x = g.add_input("x", s);
  const int y = g.add_input("y", s);
  const int half = g.add_constant("h", Tensor(Shape{}, 0.5f));
  g.add_output(*g.add_op(Op::mul, {*g.add_op(Op::relu, {*g.add_op(Op::add, {x, y})}), half}));
  run_compiled(state, std::move(g));
}

/// GELU decomposed (x/sqrt2, erf, +1, *x, *0.5) on BERT-base's FFN activation [128, 3072] x 8.
void BM_NativeGelu(benchmark::State& state) {
  Graph g;
  const int x = g.add_input("x", {8, 128, 3072});
  const int d = *g.add_op(Op::div, {x, g.add_constant("s", Tensor(Shape{}, 1.41421356f))});
  const int a = *g.add_op(Op::add, {*g.add_op(Op::erf, {d}), g.add_constant("one", Tensor(Shape{}, 1.0f))});
  g.add_output(*g.add_op(Op::mul, {*g.add_op(Op::mul, {x, a}), g.add_constant("h", Tensor(Shape{}, 0.5f))}));
  run_compiled(state, std::move(g));
}

/// BERT's head merge: [1,12,128,64] -> transpose(0,2,1,3) -> reshape [1,128,768] + bias.
void BM_NativeTransposeReshapeAdd(benchmark::State& state) {
  Graph g;
  const int x = g.add_input("x", {8, 12, 128, 64});
  Attributes perm;
  perm.set("perm", Ints{0, 2, 1, 3});
  Attributes shape;
  shape.set("shape", Ints{8, 128, 768});
  const int r = *g.add_op(Op::reshape, {*g.add_op(Op::transpose, {x}, perm)}, shape);
  g.add_output(*g.add_op(Op::add, {r, g.add_constant("b", random_tensor({768}, 2))}));
  run_compiled(state, std::move(g));
}

/// Softmax decomposed over BERT-base's attention scores [1,12,128,128] x 8: max, sub, exp, sum, div.
void BM_NativeSoftmaxDecomposed(benchmark::State& state) {
  Graph g;
  const int x = g.add_input("x", {8, 12, 128, 128});
  Attributes last;
  last.set("axes", Ints{-1});
  const int m = *g.add_op(Op::reduce_max, {x}, last);
  const int e = *g.add_op(Op::exp, {*g.add_op(Op::sub, {x, m})});
  g.add_output(*g.add_op(Op::div, {e, *g.add_op(Op::reduce_sum, {e}, last)}));
  run_compiled(state, std::move(g));
}

/// The Softmax operator itself (an opaque kernel: max, exp and sum per row in cache).
void BM_NativeSoftmax(benchmark::State& state) {
  Graph g;
  Attributes last;
  last.set("axis", std::int64_t{-1});
  g.add_output(*g.add_op(Op::softmax, {g.add_input("x", {8, 12, 128, 128})}, last));
  run_compiled(state, std::move(g));
}

/// Layer norm decomposed as exporters write it, over BERT-base's hidden states [8,128,768]: two
/// partitions' worth (mean; then centre, square, mean, rsqrt, scale, shift) in one whole-graph kernel.
void BM_NativeLayerNormDecomposed(benchmark::State& state) {
  Graph g;
  const int x = g.add_input("x", {8, 128, 768});
  Attributes last;
  last.set("axes", Ints{-1});
  const int d = *g.add_op(Op::sub, {x, *g.add_op(Op::reduce_mean, {x}, last)});
  const int v = *g.add_op(Op::reduce_mean, {*g.add_op(Op::pow, {d, g.add_constant("two", Tensor(Shape{}, 2.0f))})}, last);
  const int s = *g.add_op(Op::sqrt, {*g.add_op(Op::add, {v, g.add_constant("eps", Tensor(Shape{}, 1e-5f))})});
  const int n = *g.add_op(Op::div, {d, s});
  g.add_output(*g.add_op(Op::add, {*g.add_op(Op::mul, {n, g.add_constant("gamma", random_tensor({768}, 3))}),
                                   g.add_constant("beta", random_tensor({768}, 4))}));
  run_compiled(state, std::move(g));
}

/// The LayerNormalization operator itself.
void BM_NativeLayerNorm(benchmark::State& state) {
  Graph g;
  Attributes last;
  last.set("axis", std::int64_t{-1});
  g.add_output(*g.add_op(Op::layer_norm, {g.add_input("x", {8, 128, 768}), g.add_constant("gamma", random_tensor({768}, 3)),
                                          g.add_constant("beta", random_tensor({768}, 4))},
                         last));
  run_compiled(state, std::move(g));
}

BENCHMARK(BM_Memcpy)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeBiasRelu)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeResidual)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeGelu)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeTransposeReshapeAdd)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeSoftmaxDecomposed)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeSoftmax)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeLayerNormDecomposed)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeLayerNorm)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// GEMM: BERT-base (128 tokens) and ResNet-50's classifier.

struct GemmShape {
  const char* name;
  std::int64_t m, n, k;
};

const GemmShape kGemms[] = {
    {"bert_qkv_768x768", 128, 768, 768},    {"bert_ffn1_768x3072", 128, 3072, 768},
    {"bert_ffn2_3072x768", 128, 768, 3072}, {"bert_scores_64", 128, 128, 64},
    {"resnet50_fc", 1, 1000, 2048},         {"square_512", 512, 512, 512},
};

void BM_NativeGemm(benchmark::State& state) {
  const GemmShape& s = kGemms[state.range(0)];
  state.SetLabel(s.name);
  Graph g;
  const int a = g.add_input("a", {s.m, s.k});
  g.add_output(*g.add_op(Op::matmul, {a, g.add_constant("b", random_tensor({s.k, s.n}, 3))}));
  run_compiled(state, std::move(g), 2.0 * static_cast<double>(s.m * s.n * s.k));
}

#if defined(COLLAGE_BENCH_HAVE_EIGEN)
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void BM_EigenGemm(benchmark::State& state) {
  const GemmShape& s = kGemms[state.range(0)];
  state.SetLabel(s.name);
  const Tensor a = random_tensor({s.m, s.k}, 4);
  const Tensor b = random_tensor({s.k, s.n}, 5);
  Tensor c({s.m, s.n});
  Eigen::Map<const RowMajor> ea(a.data.data(), s.m, s.k);
  Eigen::Map<const RowMajor> eb(b.data.data(), s.k, s.n);
  Eigen::Map<RowMajor> ec(c.data.data(), s.m, s.n);
  for (auto _ : state) {
    ec.noalias() = ea * eb;
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * static_cast<double>(s.m * s.n * s.k));
}
#endif

// ---------------------------------------------------------------------------------------------
// Convolutions: ResNet-18/50 and MobileNet-v2 layers (batch 1).

struct ConvShape {
  const char* name;
  std::int64_t c, h, w, m, k, stride, pad, group;
};

const ConvShape kConvs[] = {
    {"resnet18_conv1_7x7s2", 3, 224, 224, 64, 7, 2, 3, 1},
    {"resnet18_l1_3x3", 64, 56, 56, 64, 3, 1, 1, 1},
    {"resnet18_l3_3x3", 256, 14, 14, 256, 3, 1, 1, 1},
    {"resnet18_l2_3x3s2", 64, 56, 56, 128, 3, 2, 1, 1},
    {"resnet50_1x1_reduce", 256, 56, 56, 64, 1, 1, 0, 1},
    {"resnet50_1x1_expand", 64, 56, 56, 256, 1, 1, 0, 1},
    {"resnet50_1x1s2_down", 512, 28, 28, 1024, 1, 2, 0, 1},
    {"mobilenet_1x1_expand", 24, 56, 56, 144, 1, 1, 0, 1},
    {"mobilenet_dw_3x3", 144, 56, 56, 144, 3, 1, 1, 144},
    {"mobilenet_dw_3x3s2", 96, 112, 112, 96, 3, 2, 1, 96},
};

std::int64_t conv_out(std::int64_t size, const ConvShape& s) { return (size + 2 * s.pad - s.k) / s.stride + 1; }

double conv_flops(const ConvShape& s) {
  return 2.0 * static_cast<double>(s.m * conv_out(s.h, s) * conv_out(s.w, s) * (s.c / s.group) * s.k * s.k);
}

Graph conv_graph(const ConvShape& s, bool bias_relu) {
  Graph g;
  const int x = g.add_input("x", {1, s.c, s.h, s.w});
  Attributes a;
  a.set("strides", Ints{s.stride, s.stride});
  a.set("pads", Ints{s.pad, s.pad, s.pad, s.pad});
  a.set("group", s.group);
  std::vector<int> in{x, g.add_constant("w", random_tensor({s.m, s.c / s.group, s.k, s.k}, 6))};
  if (bias_relu) in.push_back(g.add_constant("b", random_tensor({s.m}, 7)));
  const int conv = *g.add_op(Op::conv, in, a);
  g.add_output(bias_relu ? *g.add_op(Op::relu, {conv}) : conv);
  return g;
}

void BM_NativeConv(benchmark::State& state) {
  const ConvShape& s = kConvs[state.range(0)];
  state.SetLabel(s.name);
  run_compiled(state, conv_graph(s, false), conv_flops(s));
}

/// The same convolution with its bias and ReLU fused as an epilogue.
void BM_NativeConvBiasRelu(benchmark::State& state) {
  const ConvShape& s = kConvs[state.range(0)];
  state.SetLabel(s.name);
  run_compiled(state, conv_graph(s, true), conv_flops(s));
}

#if defined(COLLAGE_BENCH_HAVE_EIGEN)
/// im2col into a buffer, then Eigen's GEMM per group: the library-style convolution (for 1x1
/// stride-1 convolutions the image is the GEMM's operand as it is).
void BM_EigenConv(benchmark::State& state) {
  const ConvShape& s = kConvs[state.range(0)];
  state.SetLabel(s.name);
  const std::int64_t oh = conv_out(s.h, s), ow = conv_out(s.w, s);
  const std::int64_t cg = s.c / s.group, mg = s.m / s.group;
  const std::int64_t kdim = cg * s.k * s.k;
  const Tensor x = random_tensor({1, s.c, s.h, s.w}, 8);
  const Tensor w = random_tensor({s.m, cg, s.k, s.k}, 9);
  Tensor y({1, s.m, oh, ow});
  std::vector<float> col(static_cast<std::size_t>(kdim * oh * ow));
  const bool pointwise = s.k == 1 && s.stride == 1 && s.pad == 0;
  for (auto _ : state) {
    for (std::int64_t g = 0; g < s.group; ++g) {
      const float* image = x.data.data() + g * cg * s.h * s.w;
      const float* b = image;
      if (!pointwise) {
        for (std::int64_t c = 0; c < cg; ++c) {
          for (std::int64_t ky = 0; ky < s.k; ++ky) {
            for (std::int64_t kx = 0; kx < s.k; ++kx) {
              float* row = col.data() + ((c * s.k + ky) * s.k + kx) * oh * ow;
              for (std::int64_t yo = 0; yo < oh; ++yo) {
                const std::int64_t iy = yo * s.stride - s.pad + ky;
                for (std::int64_t xo = 0; xo < ow; ++xo) {
                  const std::int64_t ix = xo * s.stride - s.pad + kx;
                  row[yo * ow + xo] = iy >= 0 && iy < s.h && ix >= 0 && ix < s.w ? image[(c * s.h + iy) * s.w + ix] : 0.0f;
                }
              }
            }
          }
        }
        b = col.data();
      }
      Eigen::Map<const RowMajor> ew(w.data.data() + g * mg * kdim, mg, kdim);
      Eigen::Map<const RowMajor> eb(b, kdim, oh * ow);
      Eigen::Map<RowMajor> ey(y.data.data() + g * mg * oh * ow, mg, oh * ow);
      ey.noalias() = ew * eb;
    }
    benchmark::ClobberMemory();
  }
  set_flops(state, conv_flops(s));
}
#endif

void conv_args(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(sizeof(kConvs) / sizeof(kConvs[0])); ++i) b->Arg(i);
  b->Unit(benchmark::kMicrosecond);
}

void gemm_args(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(sizeof(kGemms) / sizeof(kGemms[0])); ++i) b->Arg(i);
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_NativeGemm)->Apply(gemm_args);
BENCHMARK(BM_NativeConv)->Apply(conv_args);
BENCHMARK(BM_NativeConvBiasRelu)->Apply(conv_args);
#if defined(COLLAGE_BENCH_HAVE_EIGEN)
BENCHMARK(BM_EigenGemm)->Apply(gemm_args);
BENCHMARK(BM_EigenConv)->Apply(conv_args);
#endif

}  // namespace

BENCHMARK_MAIN();
