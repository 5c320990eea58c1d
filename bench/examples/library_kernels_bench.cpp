// Kernel benchmarks of the example compiler's library backends: our eigen and onednn kernels
// (compiled from the candidate their rule proposes, run through Kernel::run) against calling
// Eigen and oneDNN directly on the same shapes with the same fusion, all on one thread. Shapes:
// ResNet-18 and ResNet-50 convolutions (conv + bias + relu, batch 1, 224x224 input), BERT-base
// matmuls (sequence 128) and EfficientNet-B0's swish activations (x * sigmoid(x), which onednn
// runs as its own step). Counters: FLOP/s of the convolution or product, values/s of a swish.
//
//   taskset -c 1 build/rel/bench/examples/library_kernels_bench --benchmark_repetitions=5
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <oneapi/dnnl/dnnl.hpp>
#include <unsupported/Eigen/SpecialFunctions>

#include "backends/eigen/eigen_backend.hpp"
#include "backends/kit/library_call.hpp"
#include "backends/onednn/onednn_backend.hpp"
#include "backends/onednn/onednn_kernel.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/function.hpp"
#include "tensor/shape_inference.hpp"

namespace {

using tc::Graph;
using tc::Op;
using tc::Shape;
using tc::Tensor;

Tensor random_tensor(const Shape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(shape);
  for (float& v : t.data) v = dist(rng);
  return t;
}

/// Activations (inputs and outputs) live in 64-byte aligned buffers of the CPU device, as the
/// executor allocates them, on both sides of every comparison: oneDNN's reorders run up to 13%
/// apart depending on where a tensor starts.
class Activation {
 public:
  Activation(const Shape& shape, std::uint64_t seed) : floats_(static_cast<std::size_t>(tc::numel(shape))) {
    static tc::CpuDevice device;
    buffer_ = std::move(tc::allocate_owned(device, floats_ * sizeof(float))).value();
    const Tensor values = random_tensor(shape, seed);
    std::copy(values.data.begin(), values.data.end(), data());
  }
  float* data() const { return buffer_.floats(); }

 private:
  std::size_t floats_;
  tc::OwnedBuffer buffer_;
};

// ------------------------------------------------------------------------------------------------
// Shapes.

struct ConvCase {
  const char* name;
  std::int64_t channels, size, out_channels, kernel, stride, pad;
  std::int64_t out() const { return (size + 2 * pad - kernel) / stride + 1; }
  double flops() const {
    return 2.0 * static_cast<double>(out_channels * out() * out() * channels * kernel * kernel);
  }
};

const ConvCase kConvs[] = {
    {"resnet18.conv1.7x7s2", 3, 224, 64, 7, 2, 3},
    {"resnet18.layer1.3x3", 64, 56, 64, 3, 1, 1},
    {"resnet18.layer2.3x3s2", 64, 56, 128, 3, 2, 1},
    {"resnet18.layer2.3x3", 128, 28, 128, 3, 1, 1},
    {"resnet18.layer3.3x3", 256, 14, 256, 3, 1, 1},
    {"resnet18.layer4.3x3", 512, 7, 512, 3, 1, 1},
    {"resnet50.1x1.64-256", 64, 56, 256, 1, 1, 0},
    {"resnet50.1x1.256-64", 256, 56, 64, 1, 1, 0},
    {"resnet50.1x1.1024-256", 1024, 14, 256, 1, 1, 0},
};

struct DenseCase {
  const char* name;
  std::int64_t batch, m, k, n;
  bool weights;  ///< B is a constant weight [k, n] with a bias (x W + b); else both run-time batched
  bool gelu;
  double flops() const { return 2.0 * static_cast<double>(batch * m * k * n); }
};

const DenseCase kDense[] = {
    {"bert.proj.768x768", 1, 128, 768, 768, true, false},
    {"bert.ffn_up.768x3072.gelu", 1, 128, 768, 3072, true, true},
    {"bert.ffn_down.3072x768", 1, 128, 3072, 768, true, false},
    {"bert.scores.12x128x64x128", 12, 128, 64, 128, false, false},
    {"bert.context.12x128x128x64", 12, 128, 128, 64, false, false},
};

/// A swish over a [1, channels, size, size] value, as EfficientNet-B0 has them.
struct SwishCase {
  const char* name;
  std::int64_t channels, size;
  double values() const { return static_cast<double>(channels * size * size); }
};

const SwishCase kSwishes[] = {
    {"efficientnet.32x112x112", 32, 112}, {"efficientnet.96x112x112", 96, 112}, {"efficientnet.144x56x56", 144, 56},
    {"efficientnet.240x28x28", 240, 28},  {"efficientnet.480x14x14", 480, 14},  {"efficientnet.1152x7x7", 1152, 7},
};

// ------------------------------------------------------------------------------------------------
// Our kernels: the candidate the backend's rule proposes for the whole model, compiled.

Graph conv_model(const ConvCase& c) {
  Graph g;
  const int x = g.add_input("x", {1, c.channels, c.size, c.size});
  const int w = g.add_constant("w", random_tensor({c.out_channels, c.channels, c.kernel, c.kernel}, 1));
  const int b = g.add_constant("b", random_tensor({c.out_channels}, 2));
  tc::Attributes a;
  a.set("strides", std::vector<std::int64_t>{c.stride, c.stride});
  a.set("pads", std::vector<std::int64_t>{c.pad, c.pad, c.pad, c.pad});
  g.add_output(*g.add_op(Op::relu, {*g.add_op(Op::conv, {x, w, b}, a)}));
  (void)tc::infer_shapes(g);
  return g;
}

/// x W + b (+ GELU as exporters write it), or a batched product of two run-time tensors.
Graph dense_model(const DenseCase& d) {
  Graph g;
  if (!d.weights) {
    const int a = g.add_input("a", {1, d.batch, d.m, d.k});
    const int b = g.add_input("b", {1, d.batch, d.k, d.n});
    g.add_output(*g.add_op(Op::matmul, {a, b}));
  } else {
    const int x = g.add_input("x", {1, d.m, d.k});
    const int w = g.add_constant("w", random_tensor({d.k, d.n}, 1));
    const int b = g.add_constant("b", random_tensor({d.n}, 2));
    int y = *g.add_op(Op::add, {*g.add_op(Op::matmul, {x, w}), b});
    if (d.gelu) {
      auto scalar = [&](float v) { return g.add_constant("s" + std::to_string(g.size()), Tensor(Shape{}, std::vector<float>{v})); };
      const int e = *g.add_op(Op::erf, {*g.add_op(Op::div, {y, scalar(1.4142135f)})});
      y = *g.add_op(Op::mul, {*g.add_op(Op::mul, {y, *g.add_op(Op::add, {e, scalar(1.0f)})}), scalar(0.5f)});
    }
    g.add_output(y);
  }
  (void)tc::infer_shapes(g);
  return g;
}

/// The candidate of `backend` over every operator of `model` in the fewest library calls (a
/// composite rather than its operators joined, each a call of its own).
tc::Function whole_candidate(const tc::Backend& backend, const Graph& model) {
  std::size_t operators = 0;
  for (const tc::Node& n : model.nodes()) operators += n.op != Op::input && n.op != Op::constant;
  auto dataflow = collage::DataflowGraph<Graph>::build(model);
  std::optional<tc::Function> best;
  std::size_t fewest = 0;
  for (const collage::Candidate& c : backend.spec().all_candidates(*dataflow)) {
    tc::Function f = tc::extract_function(*dataflow, c.sub_graph);
    if (f.body().size() != operators) continue;
    const collage::Result<std::vector<tc::LibraryCall>> calls = tc::library_calls(f);
    if (!calls.ok() || (best && calls->size() >= fewest)) continue;
    fewest = calls->size();
    best = std::move(f);
  }
  return best ? *std::move(best) : tc::whole_model_function(model);
}

/// x * sigmoid(x), as exporters write SiLU.
Graph swish_model(const SwishCase& c) {
  Graph g;
  const int x = g.add_input("x", {1, c.channels, c.size, c.size});
  g.add_output(*g.add_op(Op::mul, {x, *g.add_op(Op::sigmoid, {x})}));
  (void)tc::infer_shapes(g);
  return g;
}

/// `counter` of the counters run_ours reports: FLOP/s, or values/s of an elementwise model.
void run_ours(benchmark::State& state, const tc::Backend& backend, const Graph& model, double flops,
              const char* counter = "FLOP/s") {
  tc::CpuDevice cpu;
  const tc::Function f = whole_candidate(backend, model);
  auto kernel = backend.compile(f, cpu);
  if (!kernel.ok()) {
    state.SkipWithError(kernel.error().message.c_str());
    return;
  }
  std::vector<Activation> inputs;
  std::vector<const float*> in;
  for (int n : f.graph.inputs()) inputs.emplace_back(f.graph.node(n).shape, 3);
  for (const Activation& t : inputs) in.push_back(t.data());
  const Activation out(f.graph.node(f.graph.outputs()[0]).shape, 4);
  const std::vector<float*> outs{out.data()};
  for (auto _ : state) {
    if (!(*kernel)->run(in, outs).ok()) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.counters[counter] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------------------------------------------
// Eigen called directly: im2col and a product per image, then bias and activation with Eigen
// expressions, as a user of Eigen would write them.

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMatrix>;
using Map = Eigen::Map<RowMatrix>;

void eigen_conv(benchmark::State& state, const ConvCase& c) {
  const std::int64_t out = c.out(), pixels = out * out, k = c.channels * c.kernel * c.kernel;
  const Activation x({c.channels, c.size, c.size}, 3);
  const Tensor w = random_tensor({c.out_channels, k}, 1);
  const Tensor b = random_tensor({c.out_channels}, 2);
  std::vector<float> col(c.kernel == 1 && c.stride == 1 ? 0 : static_cast<std::size_t>(k * pixels));
  const Activation y({c.out_channels, out, out}, 4);
  const Eigen::Map<const Eigen::VectorXf> bias(b.data.data(), c.out_channels);
  for (auto _ : state) {
    const float* cols = x.data();
    if (!col.empty()) {
      for (std::int64_t ch = 0; ch < c.channels; ++ch) {
        for (std::int64_t kh = 0; kh < c.kernel; ++kh) {
          for (std::int64_t kw = 0; kw < c.kernel; ++kw) {
            float* row = col.data() + ((ch * c.kernel + kh) * c.kernel + kw) * pixels;
            // Output columns whose input column is inside the image: [lo, hi).
            const std::int64_t shift = kw - c.pad;
            const std::int64_t lo = std::min(out, shift >= 0 ? 0 : (-shift + c.stride - 1) / c.stride);
            const std::int64_t hi = std::max(lo, std::min(out, c.size - shift <= 0 ? 0 : (c.size - shift - 1) / c.stride + 1));
            for (std::int64_t oh = 0; oh < out; ++oh, row += out) {
              const std::int64_t ih = oh * c.stride - c.pad + kh;
              std::fill(row, row + out, 0.0f);
              if (ih < 0 || ih >= c.size) continue;
              const float* in = x.data() + (ch * c.size + ih) * c.size + shift;
              for (std::int64_t ow = lo; ow < hi; ++ow) row[ow] = in[ow * c.stride];
            }
          }
        }
      }
      cols = col.data();
    }
    Map result(y.data(), c.out_channels, pixels);
    result.noalias() = ConstMap(w.data.data(), c.out_channels, k) * ConstMap(cols, k, pixels);
    result = (result.colwise() + bias).cwiseMax(0.0f);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(c.flops(), benchmark::Counter::kIsIterationInvariantRate);
}

void eigen_dense(benchmark::State& state, const DenseCase& d) {
  const Activation a({d.batch, d.m, d.k}, 3);
  const Activation b({d.batch, d.k, d.n}, 1);
  const Tensor bias = random_tensor({d.n}, 2);
  const Activation y({d.batch, d.m, d.n}, 4);
  const Eigen::Map<const Eigen::RowVectorXf> bias_row(bias.data.data(), d.n);
  for (auto _ : state) {
    for (std::int64_t i = 0; i < d.batch; ++i) {
      Map result(y.data() + i * d.m * d.n, d.m, d.n);
      result.noalias() = ConstMap(a.data() + i * d.m * d.k, d.m, d.k) * ConstMap(b.data() + i * d.k * d.n, d.k, d.n);
      if (d.weights) result.rowwise() += bias_row;
      if (d.gelu) result = (0.5f * result.array() * (1.0f + (result.array() * 0.70710678f).erf())).matrix();
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(d.flops(), benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------------------------------------------
// oneDNN called directly: one primitive with the same post-ops, memory objects made once, weights
// reordered once.

using dnnl::memory;

memory::desc plain(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (std::size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc any(const memory::dims& dims) { return memory::desc(dims, memory::data_type::f32, memory::format_tag::any); }

/// `user` data reordered into `want` (or bound as is when the layouts agree).
memory prepared(const dnnl::engine& engine, dnnl::stream& stream, const memory::desc& user_md, float* data,
                const memory::desc& want) {
  memory user(user_md, engine, data);
  if (want == user_md) return user;
  memory packed(want, engine);
  dnnl::reorder(user, packed).execute(stream, user, packed);
  stream.wait();
  return packed;
}

/// How the direct convolution sees its activations.
enum class Layout {
  plain,    ///< plain NCHW source and destination (oneDNN picks a kernel for those)
  reorder,  ///< the layouts oneDNN prefers, reordered from and to plain NCHW tensors at each run,
            ///< as oneDNN's memory-format-propagation example does for user data
  blocked,  ///< the layouts oneDNN prefers, kept between runs (a whole-network oneDNN pipeline):
            ///< the convolution alone
};

void onednn_conv(benchmark::State& state, const ConvCase& c, Layout layout) {
  const tc::onednn::ThreadLimit one_thread(1);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::dims src_dims{1, c.channels, c.size, c.size}, w_dims{c.out_channels, c.channels, c.kernel, c.kernel},
      dst_dims{1, c.out_channels, c.out(), c.out()};
  const Activation x({1, c.channels, c.size, c.size}, 3);
  Tensor w = random_tensor({c.out_channels, c.channels, c.kernel, c.kernel}, 1);
  Tensor b = random_tensor({c.out_channels}, 2);
  const Activation y(Shape(dst_dims.begin(), dst_dims.end()), 4);
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const bool plain_layout = layout == Layout::plain;
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                       plain_layout ? plain(src_dims) : any(src_dims), any(w_dims),
                                       plain({c.out_channels}), plain_layout ? plain(dst_dims) : any(dst_dims),
                                       {c.stride, c.stride}, {0, 0}, {c.pad, c.pad}, {c.pad, c.pad});
  dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
  memory user_src(plain(src_dims), engine, x.data());
  memory user_dst(plain(dst_dims), engine, y.data());
  memory src = pd.src_desc() == plain(src_dims) ? user_src : memory(pd.src_desc(), engine);
  memory dst = pd.dst_desc() == plain(dst_dims) ? user_dst : memory(pd.dst_desc(), engine);
  const memory weights = prepared(engine, stream, plain(w_dims), w.data.data(), pd.weights_desc());
  const dnnl::convolution_forward conv(pd);
  const std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                             {DNNL_ARG_WEIGHTS, weights},
                                             {DNNL_ARG_BIAS, memory(plain({c.out_channels}), engine, b.data.data())},
                                             {DNNL_ARG_DST, dst}};
  const bool reorder = layout == Layout::reorder;
  const dnnl::reorder reorder_in = src == user_src ? dnnl::reorder() : dnnl::reorder(user_src, src);
  const dnnl::reorder reorder_out = dst == user_dst ? dnnl::reorder() : dnnl::reorder(dst, user_dst);
  if (reorder_in) reorder_in.execute(stream, user_src, src);
  for (auto _ : state) {
    if (reorder && reorder_in) reorder_in.execute(stream, user_src, src);
    conv.execute(stream, args);
    if (reorder && reorder_out) reorder_out.execute(stream, dst, user_dst);
    stream.wait();
  }
  state.SetLabel(pd.impl_info_str());
  state.counters["FLOP/s"] = benchmark::Counter(c.flops(), benchmark::Counter::kIsIterationInvariantRate);
}

void onednn_dense(benchmark::State& state, const DenseCase& d) {
  const tc::onednn::ThreadLimit one_thread(1);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::dims a_dims{d.batch, d.m, d.k}, b_dims{d.weights ? 1 : d.batch, d.k, d.n}, c_dims{d.batch, d.m, d.n};
  const Activation a({d.batch, d.m, d.k}, 3);
  Tensor b = random_tensor({d.batch, d.k, d.n}, 1);
  Tensor bias = random_tensor({1, 1, d.n}, 2);
  const Activation y({d.batch, d.m, d.n}, 4);
  dnnl::post_ops ops;
  if (d.gelu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const memory::desc bias_md = d.weights ? plain({1, 1, d.n}) : memory::desc();
  dnnl::matmul::desc desc(plain(a_dims), d.weights ? any(b_dims) : plain(b_dims), bias_md, plain(c_dims));
  dnnl::matmul::primitive_desc pd(desc, attr, engine);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(plain(a_dims), engine, a.data())},
      {DNNL_ARG_WEIGHTS, prepared(engine, stream, plain(b_dims), b.data.data(), pd.weights_desc())},
      {DNNL_ARG_DST, memory(plain(c_dims), engine, y.data())}};
  if (d.weights) args[DNNL_ARG_BIAS] = memory(bias_md, engine, bias.data.data());
  const dnnl::matmul mm(pd);
  for (auto _ : state) {
    mm.execute(stream, args);
    stream.wait();
  }
  state.SetLabel(pd.impl_info_str());
  state.counters["FLOP/s"] = benchmark::Counter(d.flops(), benchmark::Counter::kIsIterationInvariantRate);
}

/// oneDNN's swish eltwise primitive on a plain tensor.
void onednn_swish(benchmark::State& state, const SwishCase& c) {
  const tc::onednn::ThreadLimit one_thread(1);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::dims dims{1, c.channels, c.size, c.size};
  const Activation x(Shape(dims.begin(), dims.end()), 3);
  const Activation y(Shape(dims.begin(), dims.end()), 4);
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_swish, plain(dims), 1.0f, 0.0f);
  dnnl::eltwise_forward::primitive_desc pd(desc, engine);
  const dnnl::eltwise_forward swish(pd);
  const std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(plain(dims), engine, x.data())},
                                             {DNNL_ARG_DST, memory(plain(dims), engine, y.data())}};
  for (auto _ : state) {
    swish.execute(stream, args);
    stream.wait();
  }
  state.SetLabel(pd.impl_info_str());
  state.counters["values/s"] = benchmark::Counter(c.values(), benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------------------------------------------

const tc::Backend& eigen_backend() {
  static const std::unique_ptr<tc::Backend> backend = tc::make_eigen_backend();
  return *backend;
}

const tc::Backend& onednn_backend() {
  static const std::unique_ptr<tc::Backend> backend = tc::make_onednn_backend();
  return *backend;
}

const tc::Backend& onednn_winograd_backend() {
  static const std::unique_ptr<tc::Backend> backend = tc::make_onednn_winograd_backend();
  return *backend;
}

int register_all() {
  for (const ConvCase& c : kConvs) {
    const std::string n = c.name;
    benchmark::RegisterBenchmark(("conv/" + n + "/eigen/ours").c_str(),
                                 [c](benchmark::State& s) { run_ours(s, eigen_backend(), conv_model(c), c.flops()); });
    benchmark::RegisterBenchmark(("conv/" + n + "/eigen/direct").c_str(), [c](benchmark::State& s) { eigen_conv(s, c); });
    benchmark::RegisterBenchmark(("conv/" + n + "/onednn/ours").c_str(),
                                 [c](benchmark::State& s) { run_ours(s, onednn_backend(), conv_model(c), c.flops()); });
    if (c.kernel == 3 && c.stride == 1) {
      benchmark::RegisterBenchmark(("conv/" + n + "/onednn_winograd/ours").c_str(), [c](benchmark::State& s) {
        run_ours(s, onednn_winograd_backend(), conv_model(c), c.flops());
      });
    }
    benchmark::RegisterBenchmark(("conv/" + n + "/onednn/direct").c_str(),
                                 [c](benchmark::State& s) { onednn_conv(s, c, Layout::reorder); });
    benchmark::RegisterBenchmark(("conv/" + n + "/onednn/direct_plain").c_str(),
                                 [c](benchmark::State& s) { onednn_conv(s, c, Layout::plain); });
    benchmark::RegisterBenchmark(("conv/" + n + "/onednn/direct_blocked").c_str(),
                                 [c](benchmark::State& s) { onednn_conv(s, c, Layout::blocked); });
  }
  for (const DenseCase& d : kDense) {
    const std::string n = d.name;
    benchmark::RegisterBenchmark(("dense/" + n + "/eigen/ours").c_str(),
                                 [d](benchmark::State& s) { run_ours(s, eigen_backend(), dense_model(d), d.flops()); });
    benchmark::RegisterBenchmark(("dense/" + n + "/eigen/direct").c_str(), [d](benchmark::State& s) { eigen_dense(s, d); });
    benchmark::RegisterBenchmark(("dense/" + n + "/onednn/ours").c_str(),
                                 [d](benchmark::State& s) { run_ours(s, onednn_backend(), dense_model(d), d.flops()); });
    benchmark::RegisterBenchmark(("dense/" + n + "/onednn/direct").c_str(), [d](benchmark::State& s) { onednn_dense(s, d); });
  }
  for (const SwishCase& c : kSwishes) {
    const std::string n = c.name;
    benchmark::RegisterBenchmark(("swish/" + n + "/onednn/ours").c_str(), [c](benchmark::State& s) {
      run_ours(s, onednn_backend(), swish_model(c), c.values(), "values/s");
    });
    benchmark::RegisterBenchmark(("swish/" + n + "/onednn/direct").c_str(), [c](benchmark::State& s) { onednn_swish(s, c); });
  }
  return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace
