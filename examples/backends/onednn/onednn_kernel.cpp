#include "backends/onednn/onednn_kernel.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/kit/fast_math.hpp"
#include "backends/kit/kernel_operands.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc::onednn {

namespace {

using OmpGet = int (*)();
using OmpSet = void (*)(int);

/// omp_get_max_threads / omp_set_num_threads of the OpenMP runtime loaded in the process (the one
/// libdnnl uses), or null when there is none.
struct OmpFunctions {
  OmpGet get = nullptr;
  OmpSet set = nullptr;
};

const OmpFunctions& omp() {
  static const OmpFunctions f = [] {
    OmpFunctions out;
    out.get = reinterpret_cast<OmpGet>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    out.set = reinterpret_cast<OmpSet>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    return out;
  }();
  return f;
}

}  // namespace

ThreadLimit::ThreadLimit(int threads) {
  const OmpFunctions& f = omp();
  if (f.get == nullptr || f.set == nullptr) return;
  saved_ = f.get();
  if (saved_ != threads) f.set(threads);
}

ThreadLimit::~ThreadLimit() {
  if (saved_ > 0) omp().set(saved_);
}

namespace {

using dnnl::memory;
using Md = dnnl::memory::desc;

memory::dims row_major(const Dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (std::size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * std::max<std::int64_t>(dims[k], 1);
  return strides;
}

/// A plain f32 descriptor: dense row-major, or with the given strides.
Md plain(const Dims& dims, const Dims& strides = {}) {
  return Md(dims, memory::data_type::f32, strides.empty() ? row_major(dims) : strides);
}

Md any(const Dims& dims) { return Md(dims, memory::data_type::f32, memory::format_tag::any); }

dnnl::algorithm eltwise_algorithm(Eltwise e) {
  switch (e) {
    case Eltwise::relu: return dnnl::algorithm::eltwise_relu;
    case Eltwise::clip: return dnnl::algorithm::eltwise_clip;
    case Eltwise::logistic: return dnnl::algorithm::eltwise_logistic;
    case Eltwise::tanh: return dnnl::algorithm::eltwise_tanh;
    case Eltwise::gelu_erf: return dnnl::algorithm::eltwise_gelu_erf;
    case Eltwise::swish: return dnnl::algorithm::eltwise_swish;
    case Eltwise::exp: return dnnl::algorithm::eltwise_exp;
    case Eltwise::log: return dnnl::algorithm::eltwise_log;
    case Eltwise::sqrt: return dnnl::algorithm::eltwise_sqrt;
    case Eltwise::abs: return dnnl::algorithm::eltwise_abs;
    case Eltwise::linear: return dnnl::algorithm::eltwise_linear;
    case Eltwise::pow: return dnnl::algorithm::eltwise_pow;
  }
  return dnnl::algorithm::eltwise_relu;
}

dnnl::algorithm binary_algorithm(Binary b) {
  switch (b) {
    case Binary::add: return dnnl::algorithm::binary_add;
    case Binary::sub: return dnnl::algorithm::binary_sub;
    case Binary::mul: return dnnl::algorithm::binary_mul;
    case Binary::div: return dnnl::algorithm::binary_div;
    case Binary::max: return dnnl::algorithm::binary_max;
    case Binary::min: return dnnl::algorithm::binary_min;
  }
  return dnnl::algorithm::binary_add;
}

dnnl::algorithm pooling_algorithm(Pooling p) {
  switch (p) {
    case Pooling::max: return dnnl::algorithm::pooling_max;
    case Pooling::avg_include_padding: return dnnl::algorithm::pooling_avg_include_padding;
    case Pooling::avg_exclude_padding: return dnnl::algorithm::pooling_avg_exclude_padding;
  }
  return dnnl::algorithm::pooling_max;
}

dnnl::algorithm reduction_algorithm(Reduction r) {
  switch (r) {
    case Reduction::sum: return dnnl::algorithm::reduction_sum;
    case Reduction::mean: return dnnl::algorithm::reduction_mean;
    case Reduction::max: return dnnl::algorithm::reduction_max;
  }
  return dnnl::algorithm::reduction_sum;
}

/// The primitive descriptor of convolution `p` from `src` to `dst` (their layouts given or `any`),
/// Winograd where `p` asks for it; throws dnnl::error where oneDNN has no such kernel.
dnnl::convolution_forward::primitive_desc conv_primitive_desc(const CallPlan& p, const Md& src, const Md& dst,
                                                              const dnnl::primitive_attr& attr,
                                                              const dnnl::engine& engine) {
  const dnnl::algorithm algorithm = p.winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
  const Md bias = p.bias.present() ? plain(p.bias.dims) : Md();
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, src, any(p.weights.dims), bias,
                                       dst, p.strides, p.dilations, p.pad_l, p.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
}

/// `value` (of `from`) broadcast numpy-style to `to`, times `scale`.
std::vector<float> broadcast_copy(const Tensor& value, const Shape& to, float scale) {
  const std::size_t rank = to.size();
  Shape from(rank - std::min(rank, value.shape.size()), 1);
  from.insert(from.end(), value.shape.begin(), value.shape.end());
  const std::vector<std::int64_t> in_strides = row_major_strides(from);
  std::vector<float> out(static_cast<std::size_t>(numel(to)));
  std::vector<std::int64_t> index(rank, 0);
  for (float& v : out) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < rank; ++d) at += from[d] == 1 ? 0 : index[d] * in_strides[d];
    v = value.data[static_cast<std::size_t>(at)] * scale;
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < to[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

/// A memory whose address is set from a node's value, `offset` bytes into it, at each run (when it
/// moved: oneDNN's set_data_handle is not free).
struct Binding {
  memory mem;
  int node;
  void* bound = nullptr;
  std::size_t offset = 0;
};

/// Where a value is written: `offset` bytes into the shared scratch (node < 0) or into the kernel's
/// result `node`.
struct Place {
  int node = -1;
  std::size_t offset = 0;
  bool operator==(const Place& other) const { return node == other.node && offset == other.offset; }
};

/// The post-op of convolution `p` that becomes oneDNN's sum post-op (an added tensor of the
/// output's shape), or -1. oneDNN 2.6's brgconv crashes running a sum post-op when some window reads
/// only padding (a pad as large as the kernel, or taps a dilation spreads over it); those keep the
/// binary post-op.
int sum_post_op(const CallPlan& p) {
  if (!every_window_reads_input(p)) return -1;
  for (std::size_t k = 0; k < p.post_ops.size(); ++k) {
    const PostOp& po = p.post_ops[k];
    if (po.is_binary && po.binary == Binary::add && po.operand.dims == p.dst) return static_cast<int>(k);
  }
  return -1;
}

/// By node of `graph`: whether it is a result the kernel returns as a plain tensor (not blocked in
/// `layout`).
std::vector<bool> returned_plain(const Graph& graph, Layout layout) {
  std::vector<bool> plain(graph.size(), false);
  for (int n : graph.outputs()) plain[static_cast<std::size_t>(n)] = !is_blocked(graph.node(n).shape, layout);
  return plain;
}

/// The primitive descriptor `make` returns, or none where oneDNN has no kernel for it or only its
/// reference code (any layout, far slower than its vectorised kernels, which refuse some layouts).
template <class Make>
auto vectorised(Make make) -> std::optional<decltype(make())> {
  try {
    auto pd = make();
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return std::nullopt;
    return pd;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

constexpr std::size_t kScratchAlignment = 64;

/// At least `bytes` of scratch for the onednn kernels run by this thread, which use it one at a
/// time for the values they keep in blocked layouts during a run: one buffer that stays in cache
/// from kernel to kernel, as the model's own arena does, where a buffer of each kernel's own would
/// come from memory at every call. Moves only when it grows.
char* shared_scratch(std::size_t bytes) {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<char, Free> buffer;
  thread_local std::size_t capacity = 0;
  if (bytes > capacity) {
    const std::size_t page = 4096;
    capacity = (bytes + page - 1) / page * page;
    buffer.reset(static_cast<char*>(std::aligned_alloc(page, capacity)));
    if (!buffer) throw dnnl::error(dnnl_out_of_memory, "no memory for the onednn kernels' scratch");
  }
  return buffer.get();
}

/// One primitive and everything it is executed with; or, with `swish`, swish_of from the memory
/// at DNNL_ARG_SRC to the one at DNNL_ARG_DST (the same memory or one of the same layout): oneDNN
/// 2.6 evaluates swish by its exponential, alone or as a post-op, at about two thirds the speed.
struct Step {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::vector<Binding> bindings;
  bool swish = false;
};

/// Whether `p`'s last post-op is a swish (x * logistic(x)) that its own step applies after the
/// primitive instead (see Step), leaving the primitive's other post-ops to oneDNN.
bool swish_after(const CallPlan& p) {
  if (p.kind != CallPlan::Kind::conv && p.kind != CallPlan::Kind::matmul) return false;
  if (p.post_ops.empty()) return false;
  const PostOp& last = p.post_ops.back();
  return !last.is_binary && last.eltwise == Eltwise::swish && last.alpha == 1.0f;
}

/// Whether `p` is a swish alone, which its own step runs (see Step).
bool own_swish(const CallPlan& p) {
  return p.kind == CallPlan::Kind::eltwise && p.eltwise == Eltwise::swish && p.alpha == 1.0f;
}

/// Elements per thread below which swish_of runs on fewer threads.
constexpr std::int64_t kSwishPerThread = 16384;

class OnednnKernel final : public Kernel {
 public:
  OnednnKernel(KernelOperands operands, int threads, Layout layout)
      : engine_(dnnl::engine::kind::cpu, 0),
        stream_(engine_),
        operands_(std::move(operands)),
        threads_(threads),
        layout_(layout) {}

  collage::Status build(const Graph& graph, const std::vector<CallPlan>& plans) {
    const ThreadLimit limit(threads_);
    needs_plain_ = returned_plain(graph, layout_);
    kept_blocked_.assign(graph.size(), false);
    for (int n : graph.inputs()) kept_blocked_[static_cast<std::size_t>(n)] = is_blocked(graph.node(n).shape, layout_);
    for (int n : graph.outputs()) kept_blocked_[static_cast<std::size_t>(n)] = is_blocked(graph.node(n).shape, layout_);
    place_concats(plans);
    try {
      for (int n : graph.inputs()) {
        if (kept_blocked_[static_cast<std::size_t>(n)]) take_blocked_parameter(n, graph.node(n).shape);
      }
    } catch (const dnnl::error& e) {
      return collage::Error{collage::ErrorCode::invalid_argument, std::string("onednn: a blocked parameter: ") + e.what()};
    }
    for (const CallPlan& plan : plans) {
      try {
        add_steps(plan);
        if (kept_blocked_[static_cast<std::size_t>(plan.root)]) return_blocked(plan);
      } catch (const dnnl::error& e) {
        return collage::Error{collage::ErrorCode::invalid_argument,
                              "onednn: " + plan.name + " at " + describe(graph, plan.root) + ": " + e.what()};
      }
    }
    return collage::Status::success();
  }

  collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (collage::Status st = operands_.check_buffers(inputs, outputs, "onednn"); !st.ok()) return st;
    const ThreadLimit limit(threads_);
    try {
      if (char* base = shared_scratch(scratch_bytes_); base != scratch_base_) {
        for (const auto& [m, offset] : scratch_) m.set_data_handle(base + offset);
        scratch_base_ = base;
      }
      for (Binding& b : blocked_io_) rebind(b, inputs, outputs);
      for (Step& step : steps_) {
        for (Binding& b : step.bindings) rebind(b, inputs, outputs);
        if (step.swish) {
          run_swish(step);
        } else {
          step.primitive.execute(stream_, step.args);
        }
      }
      stream_.wait();
    } catch (const dnnl::error& e) {
      return collage::Error{collage::ErrorCode::invalid_argument, std::string("onednn: ") + e.what()};
    }
    operands_.copy_outputs(inputs, outputs);
    return collage::Status::success();
  }

 private:
  /// Runs swish step `step` (see Step), in parts on up to threads_ threads. Its memories' sizes
  /// include a blocked layout's padding, zeros that stay zero.
  void run_swish(const Step& step) const {
    const memory& src = step.args.at(DNNL_ARG_SRC);
    const auto* x = static_cast<const float*>(src.get_data_handle());
    auto* y = static_cast<float*>(step.args.at(DNNL_ARG_DST).get_data_handle());
    const auto n = static_cast<std::int64_t>(src.get_desc().get_size() / sizeof(float));
    const int parts = parts_for(n, kSwishPerThread, threads_);
    parallel_parts(parts, [&](int part) {
      const auto [begin, end] = share(n, 64, part, parts);
      swish_of(x + begin, y + begin, end - begin);
    });
  }

  /// Adds `step`, a convolution or matmul of `p`, and after it the swish step on its destination
  /// in place where `p` ends in a swish (see swish_after).
  void add_with_swish(Step step, const CallPlan& p) {
    const memory written = step.args.at(DNNL_ARG_DST);
    steps_.push_back(std::move(step));
    if (!swish_after(p)) return;
    Step swish;
    swish.swish = true;
    swish.args[DNNL_ARG_SRC] = written;
    swish.args[DNNL_ARG_DST] = written;
    steps_.push_back(std::move(swish));
  }

  /// Points `b` at its node's value in this run.
  void rebind(Binding& b, const std::vector<const float*>& inputs, const std::vector<float*>& outputs) {
    void* address = reinterpret_cast<char*>(operands_.address(b.node, inputs, outputs)) + b.offset;
    if (address != b.bound) b.mem.set_data_handle(address);
    b.bound = address;
  }

  /// The data of constant `o` as the primitive reads it: as is, or broadcast to `to` and scaled
  /// (a copy the kernel keeps).
  float* constant_data(const Operand& o, const Shape* to = nullptr) {
    const Tensor& value = operands_.constant(o.node);
    if (o.scale == 1.0f && (to == nullptr || numel(*to) == value.size())) return const_cast<float*>(value.data.data());
    prepared_.push_back(broadcast_copy(value, to != nullptr ? *to : value.shape, o.scale));
    return prepared_.back().data();
  }

  /// Binds `o` as argument `arg` of `step` with descriptor `md`: constants now, other values at
  /// each run. Normalisation parameters are broadcast to `to`.
  void bind(Step& step, int arg, const Operand& o, const Md& md, const Shape* to = nullptr) {
    if (operands_.is_constant(o.node)) {
      step.args[arg] = memory(md, engine_, constant_data(o, to));
      return;
    }
    if (const memory* held = held_value(o.node); held != nullptr && plain_written_.count(o.node) == 0) {
      write_plain(*held, o.node, held->get_desc().dims());  // (o.dims may be a transposed view)
    }
    if (kept_blocked_[static_cast<std::size_t>(o.node)]) {
      step.args[arg] = plain_tensor(o.node, md);
      return;
    }
    memory m(md, engine_, DNNL_MEMORY_NONE);
    step.args[arg] = m;
    step.bindings.push_back({m, o.node});
  }

  void bind_dst(Step& step, const CallPlan& plan) { bind(step, DNNL_ARG_DST, Operand{plan.root, plan.dst, {}, 1.0f}, plain(plan.dst)); }

  /// Binds constant weights reordered once into `want` (the layout the primitive chose), or binds
  /// `o` as is when it is not a constant or already in that layout.
  void bind_weights(Step& step, const Operand& o, const Md& want) {
    const Md user = plain(o.dims, o.strides);
    if (!operands_.is_constant(o.node) || want == user) {
      bind(step, DNNL_ARG_WEIGHTS, o, user);
      return;
    }
    memory source(user, engine_, constant_data(o));
    memory packed(want, engine_);
    dnnl::reorder(source, packed).execute(stream_, source, packed);
    stream_.wait();
    step.args[DNNL_ARG_WEIGHTS] = packed;
  }

  /// Adds memories the primitive needs that the plan does not name (statistics, workspace).
  void add_internal_memories(Step& step, const dnnl::primitive_desc_base& pd) {
    for (int arg : {DNNL_ARG_MEAN, DNNL_ARG_VARIANCE, DNNL_ARG_WORKSPACE}) {
      const Md md = pd.query_md(dnnl::query::exec_arg_md, arg);
      if (md.get_size() != 0 && step.args.count(arg) == 0) step.args[arg] = memory(md, engine_);
    }
  }

  /// The post-ops of `plan` but a swish its own step applies (swish_after), their operands bound in
  /// `step`; the one at `sum` (when >= 0) becomes oneDNN's sum post-op, which adds what the
  /// destination holds before the primitive runs.
  dnnl::primitive_attr post_op_attr(Step& step, const CallPlan& plan, int sum = -1) {
    dnnl::post_ops ops;
    const std::size_t count = plan.post_ops.size() - (swish_after(plan) ? 1 : 0);
    for (std::size_t k = 0; k < count; ++k) {
      const PostOp& po = plan.post_ops[k];
      if (static_cast<int>(k) == sum) {
        ops.append_sum(1.0f);
      } else if (po.is_binary) {
        const Md md = plain(po.operand.dims);
        ops.append_binary(binary_algorithm(po.binary), md);
        bind(step, DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(k)) | DNNL_ARG_SRC_1, po.operand, md);
      } else {
        ops.append_eltwise(1.0f, eltwise_algorithm(po.eltwise), po.alpha, po.beta);
      }
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    return attr;
  }

  /// A step reordering `o`'s value, in the layout it has (see source), into `to`.
  Step reorder_into(const Operand& o, const memory& to) {
    Step step;
    const Md from = source(step, DNNL_ARG_FROM, o);
    step.args[DNNL_ARG_TO] = to;
    step.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, from, engine_, to.get_desc()));
    return step;
  }

  /// A memory of `md` for a value that lives only while the kernel runs, in the scratch every
  /// onednn kernel of the thread shares.
  memory scratch(const Md& md) { return at(Place{-1, reserve_scratch(md)}, md); }

  /// The offset of room for `md` in the shared scratch.
  std::size_t reserve_scratch(const Md& md) {
    const std::size_t offset = scratch_bytes_;
    scratch_bytes_ += (md.get_size() + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
    return offset;
  }

  /// Node `n`'s value in the layout a call of this kernel wrote it in, or null when it has only
  /// its plain tensor.
  const memory* held_value(int n) const {
    auto it = held_.find(n);
    return it == held_.end() ? nullptr : &it->second;
  }

  /// A convolution in the activation layouts oneDNN picks for it (its blocked kernels run far
  /// faster than its plain-layout ones), with reorders from and to the plain tensors around it
  /// when it picks others. A residual sum (an added tensor of the output's shape) becomes the sum
  /// post-op, as in TVM's DNNL conv2d_bias_sum: the residual is first reordered into the
  /// destination, in its layout (a binary post-op would need the residual in that layout too, and
  /// oneDNN's blocked kernels refuse a plain one).
  void add_conv(const CallPlan& p) {
    const int sum = sum_post_op(p);
    Step step;
    const dnnl::primitive_attr attr = post_op_attr(step, p, sum);
    const Md bias = p.bias.present() ? plain(p.bias.dims) : Md();
    const Md src = plain(p.src.dims);
    const Md dst = plain(p.dst);
    auto make_pd = [&](const Md& s, const Md& d) { return conv_primitive_desc(p, s, d, attr, engine_); };
    std::optional<dnnl::convolution_forward::primitive_desc> own;
    if (!p.winograd && layout_ != Layout::plain && p.src.dims.size() == 4) {
      own = vectorised([&] { return make_pd(in_own_layout(p.src.dims), in_own_layout(p.dst)); });
    }
    dnnl::convolution_forward::primitive_desc pd;
    try {
      pd = own ? *own : make_pd(any(p.src.dims), any(p.dst));
    } catch (const dnnl::error&) {
      if (p.winograd) throw;  // Winograd kernels take blocked layouts only
      pd = make_pd(src, dst);
    }
    if (const memory* held = held_value(p.src.node); held != nullptr && held->get_desc() == pd.src_desc()) {
      step.args[DNNL_ARG_SRC] = *held;
    } else if (held != nullptr || pd.src_desc() != src) {
      memory blocked = scratch(pd.src_desc());
      steps_.push_back(reorder_into(p.src, blocked));
      step.args[DNNL_ARG_SRC] = blocked;
    } else {
      bind(step, DNNL_ARG_SRC, p.src, src);
    }
    bind_weights(step, p.weights, pd.weights_desc());
    if (p.bias.present()) bind(step, DNNL_ARG_BIAS, p.bias, bias);
    step.primitive = dnnl::convolution_forward(pd);
    const bool plain_dst = pd.dst_desc() == dst;
    if (plain_dst && sum < 0) {
      bind_dst(step, p);
      return add_with_swish(std::move(step), p);
    }
    // The destination: the result itself when plain (its address set by the residual's reorder,
    // the first step that writes it), else a buffer in the convolution's layout.
    const bool plain_bound = plain_dst && !kept_blocked_[static_cast<std::size_t>(p.root)];
    memory out = plain_bound ? memory(pd.dst_desc(), engine_, DNNL_MEMORY_NONE)
                 : plain_dst  ? plain_tensor(p.root, pd.dst_desc())
                              : blocked_destination(pd.dst_desc(), p);
    if (sum >= 0) {
      Step residual = reorder_into(p.post_ops[static_cast<std::size_t>(sum)].operand, out);
      if (plain_bound) residual.bindings.push_back({out, p.root});
      steps_.push_back(std::move(residual));
    }
    step.args[DNNL_ARG_DST] = out;
    add_with_swish(std::move(step), p);
    if (!plain_dst) hand_on(out, p);
  }

  /// A direct convolution's source or destination of `dims` in the kernel's blocked layout where
  /// it has a block of channels at least, else in any layout oneDNN picks. A blocked kernel asks
  /// for its convolutions in its own layout first, so that a chain of blocked kernels converts
  /// nothing: left to choose, oneDNN picks channels-last for fp32 on AVX-512 CPUs, whose reorders
  /// to and from a blocked layout cost as much as those to and from plain tensors. Where oneDNN has
  /// only its reference kernel for that (a stem's 3 channels, some grouped convolutions), the
  /// convolution takes the layouts oneDNN picks.
  Md in_own_layout(const Dims& dims) const {
    return dims[1] < static_cast<std::int64_t>(channel_block(layout_)) ? any(dims) : blocked(dims);
  }

  /// Pooling in the layout its source is in.
  void add_pool(const CallPlan& p) {
    Step step;
    const Md src = source(step, DNNL_ARG_SRC, p.src);
    dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, pooling_algorithm(p.pooling), src, any(p.dst),
                                     p.strides, p.kernel, p.dilations, p.pad_l, p.pad_r);
    dnnl::pooling_v2_forward::primitive_desc pd(d, engine_);
    add_internal_memories(step, pd);
    step.primitive = dnnl::pooling_v2_forward(pd);
    write_result(std::move(step), pd.dst_desc(), p);
  }

  /// Whether concat `p` is written in place: along the channels of one image in the kernel's
  /// blocked layout, every source but the last a whole number of channel blocks, so that each
  /// source's slice of the result is a dense tensor of the source's shape in that layout.
  bool concat_in_place(const CallPlan& p) const {
    if (p.kind != CallPlan::Kind::concat || layout_ == Layout::plain || p.dst.size() != 4 || p.dst[0] != 1 ||
        p.axis != 1) {
      return false;
    }
    const auto block = static_cast<std::int64_t>(channel_block(layout_));
    for (std::size_t k = 0; k + 1 < p.sources.size(); ++k) {
      if (p.sources[k].dims[1] % block != 0) return false;
    }
    return true;
  }

  /// Places the results of the concats written in place, and each source's slice of them, so that
  /// the calls computing the sources write them there (see blocked_destination) and the concat
  /// copies nothing: oneDNN 2.6's concat of blocked tensors runs several times slower than its
  /// concat of channels-last ones. From the last call back, so that a concat that is itself a
  /// source is placed in its slice.
  void place_concats(const std::vector<CallPlan>& plans) {
    for (auto p = plans.rbegin(); p != plans.rend(); ++p) {
      if (!concat_in_place(*p)) continue;
      auto placed = in_place_.find(p->root);
      if (placed == in_place_.end()) {
        Place place;
        if (kept_blocked_[static_cast<std::size_t>(p->root)]) {
          place.node = p->root;
          returned_.insert(p->root);
        } else {
          place.offset = reserve_scratch(blocked(p->dst));
        }
        placed = in_place_.emplace(p->root, place).first;
      }
      Place slice = placed->second;
      for (const Operand& source : p->sources) {
        if (!kept_blocked_[static_cast<std::size_t>(source.node)]) in_place_.emplace(source.node, slice);
        slice.offset += blocked(source.dims).get_size();
      }
    }
  }

  /// A memory of `md` at `place`, bound at each run.
  memory at(const Place& place, const Md& md) {
    memory m(md, engine_, DNNL_MEMORY_NONE);
    if (place.node < 0) {
      scratch_.emplace_back(m, place.offset);
    } else {
      blocked_io_.push_back({m, place.node, nullptr, place.offset});
    }
    return m;
  }

  /// Concat `p` written in place: the sources their calls did not write into their slices are
  /// copied there.
  void add_concat_in_place(const CallPlan& p) {
    const Place place = in_place_.at(p.root);
    Place slice = place;
    for (const Operand& source : p.sources) {
      const Md md = blocked(source.dims);
      auto placed = in_place_.find(source.node);
      const bool written = written_in_place_.count(source.node) != 0 && placed->second == slice;
      if (!written) steps_.push_back(reorder_into(source, at(slice, md)));
      slice.offset += md.get_size();
    }
    written_in_place_.insert(p.root);
    hand_on(at(place, blocked(p.dst)), p);
  }

  /// Concat of its sources in the layouts they are in.
  void add_concat(const CallPlan& p) {
    if (concat_in_place(p)) return add_concat_in_place(p);
    Step step;
    std::vector<Md> sources;
    for (std::size_t k = 0; k < p.sources.size(); ++k) {
      sources.push_back(source(step, DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k), p.sources[k]));
    }
    dnnl::concat::primitive_desc pd(any(p.dst), p.axis, sources, engine_);
    step.primitive = dnnl::concat(pd);
    write_result(std::move(step), pd.dst_desc(), p);
  }

  /// Binds `o`'s value as argument `arg` of `step` in the layout it has (see held_value) and
  /// returns that layout.
  Md source(Step& step, int arg, const Operand& o) {
    if (const memory* held = held_value(o.node)) {
      step.args[arg] = *held;
      return held->get_desc();
    }
    const Md md = plain(o.dims);
    bind(step, arg, o, md);
    return md;
  }

  /// Adds `step`, which writes `p`'s result in layout `dst`: into the plain tensor when that is
  /// the layout, else into scratch handed on to later calls.
  void write_result(Step step, const Md& dst, const CallPlan& p) {
    if (dst == plain(p.dst)) {
      bind_dst(step, p);
      steps_.push_back(std::move(step));
      return;
    }
    memory out = blocked_destination(dst, p);
    step.args[DNNL_ARG_DST] = out;
    steps_.push_back(std::move(step));
    hand_on(out, p);
  }

  /// The memory of `layout` (oneDNN's tag for it) for a rank-4 value of `dims`.
  Md blocked(const Dims& dims) const {
    return Md(dims, memory::data_type::f32,
              layout_ == Layout::nChw8c ? memory::format_tag::aBcd8b : memory::format_tag::aBcd16b);
  }

  /// Where a call writes `p`'s result in blocked layout `md`: its slice of a concat written in
  /// place, the kernel's result itself when it is returned in that layout, else scratch.
  memory blocked_destination(const Md& md, const CallPlan& p) {
    if (auto placed = in_place_.find(p.root); placed != in_place_.end() && md == blocked(p.dst)) {
      written_in_place_.insert(p.root);
      return at(placed->second, md);
    }
    if (!kept_blocked_[static_cast<std::size_t>(p.root)] || md != blocked(p.dst)) return scratch(md);
    memory out(md, engine_, DNNL_MEMORY_NONE);
    blocked_io_.push_back({out, p.root});
    returned_.insert(p.root);
    return out;
  }

  /// A parameter given in the kernel's blocked layout: held in it (its plain tensor written in
  /// scratch when a call first reads that, see bind).
  void take_blocked_parameter(int n, const Shape& shape) {
    memory given(blocked(shape), engine_, DNNL_MEMORY_NONE);
    blocked_io_.push_back({given, n});
    held_.emplace(n, given);
  }

  /// The plain tensor, in scratch, of `n`, a parameter or result the kernel takes or returns in its
  /// blocked layout, viewed as `md`.
  memory plain_tensor(int n, const Md& md) {
    auto it = plain_offset_.find(n);
    if (it == plain_offset_.end()) it = plain_offset_.emplace(n, reserve_scratch(md)).first;
    memory m(md, engine_, DNNL_MEMORY_NONE);
    scratch_.emplace_back(m, it->second);
    return m;
  }

  /// Writes `p`'s result, returned in the kernel's blocked layout, into the kernel's output unless
  /// its call wrote it there: from the layout a call left it in, or from its plain tensor.
  void return_blocked(const CallPlan& p) {
    if (returned_.count(p.root) != 0) return;
    returned_.insert(p.root);
    memory out(blocked(p.dst), engine_, DNNL_MEMORY_NONE);
    blocked_io_.push_back({out, p.root});
    Step step;
    const memory* held = held_value(p.root);
    const memory from = held != nullptr ? *held : plain_tensor(p.root, plain(p.dst));
    step.args[DNNL_ARG_FROM] = from;
    step.args[DNNL_ARG_TO] = out;
    step.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, from.get_desc(), engine_, out.get_desc()));
    steps_.push_back(std::move(step));
  }

  /// Keeps `out`, `p`'s result in a layout of its own, for the calls after it; converts it to the
  /// plain tensor now when it is returned plain, else when a call first reads that (see bind).
  void hand_on(const memory& out, const CallPlan& p) {
    held_.emplace(p.root, out);
    if (needs_plain_[static_cast<std::size_t>(p.root)]) write_plain(out, p.root, p.dst);
  }

  /// Adds a step reordering `held`, node `n`'s value of `dims` in a layout of its own, into its
  /// plain tensor.
  void write_plain(const memory& held, int n, const Dims& dims) {
    plain_written_.insert(n);
    Step back;
    back.args[DNNL_ARG_FROM] = held;
    const Md dst = plain(dims);
    bind(back, DNNL_ARG_TO, Operand{n, dims, {}, 1.0f}, dst);
    back.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, held.get_desc(), engine_, dst));
    steps_.push_back(std::move(back));
  }

  /// Binds `o` as argument `arg` of `step` in layout `md`: as held when it is, a constant reordered
  /// once, a plain tensor as is, anything else reordered into scratch by a step before.
  void bind_in(Step& step, int arg, const Operand& o, const Md& md) {
    if (const memory* held = held_value(o.node); held != nullptr && held->get_desc() == md) {
      step.args[arg] = *held;
    } else if (operands_.is_constant(o.node) && md != plain(o.dims)) {
      memory source(plain(o.dims), engine_, constant_data(o));
      memory packed(md, engine_);
      dnnl::reorder(source, packed).execute(stream_, source, packed);
      stream_.wait();
      step.args[arg] = packed;
    } else if (held == nullptr && md == plain(o.dims)) {
      bind(step, arg, o, md);
    } else {
      memory converted = scratch(md);
      steps_.push_back(reorder_into(o, converted));
      step.args[arg] = converted;
    }
  }

  /// The blocked layout `value`'s is (aBcd8b or aBcd16b) given to a rank-4 tensor of `dims`, or
  /// none when it is another.
  std::optional<Md> same_blocking(const memory& value, const Dims& dims) const {
    const Dims& held = value.get_desc().dims();
    for (memory::format_tag tag : {memory::format_tag::aBcd8b, memory::format_tag::aBcd16b}) {
      if (dims.size() == 4 && value.get_desc() == Md(held, memory::data_type::f32, tag)) {
        return Md(dims, memory::data_type::f32, tag);
      }
    }
    return std::nullopt;
  }

  /// An eltwise operator in the layout its source is held in: a swish by its own step (see Step),
  /// others where oneDNN has a vectorised kernel for them (not for a padded block); else on the
  /// plain tensor.
  bool add_blocked_eltwise(const CallPlan& p) {
    const memory* held = held_value(p.src.node);
    if (held == nullptr) return false;
    if (own_swish(p)) {
      Step step;
      step.swish = true;
      step.args[DNNL_ARG_SRC] = *held;
      write_result(std::move(step), held->get_desc(), p);
      return true;
    }
    const auto pd = vectorised([&] {
      return dnnl::eltwise_forward::primitive_desc(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, eltwise_algorithm(p.eltwise),
                                      held->get_desc(), p.alpha, p.beta),
          engine_);
    });
    if (!pd) return false;
    Step step;
    step.args[DNNL_ARG_SRC] = *held;
    step.primitive = dnnl::eltwise_forward(*pd);
    write_result(std::move(step), pd->dst_desc(), p);
    return true;
  }

  /// A binary operator whose first operand has the result's shape, in the blocked layout that
  /// operand is held in, the second operand (the same shape or broadcast) in the same blocking,
  /// where oneDNN has a vectorised kernel for it; else on the plain tensors.
  bool add_blocked_binary(const CallPlan& p) {
    const memory* held = held_value(p.src.node);
    if (held == nullptr || p.src.dims != p.dst) return false;
    const std::optional<Md> second = same_blocking(*held, p.weights.dims);
    if (!second) return false;
    const auto pd = vectorised([&] {
      return dnnl::binary::primitive_desc(
          dnnl::binary::desc(binary_algorithm(p.binary), held->get_desc(), *second, any(p.dst)), engine_);
    });
    if (!pd) return false;
    Step step;
    step.args[DNNL_ARG_SRC_0] = *held;
    bind_in(step, DNNL_ARG_SRC_1, p.weights, *second);
    step.primitive = dnnl::binary(*pd);
    write_result(std::move(step), pd->dst_desc(), p);
    return true;
  }

  /// Adds the steps of call `p`.
  void add_steps(const CallPlan& p) {
    Step step;
    const dnnl::prop_kind inference = dnnl::prop_kind::forward_inference;
    switch (p.kind) {
      case CallPlan::Kind::conv: return add_conv(p);
      case CallPlan::Kind::pool: return add_pool(p);
      case CallPlan::Kind::concat: return add_concat(p);
      case CallPlan::Kind::matmul: {
        dnnl::primitive_attr attr = post_op_attr(step, p);
        if (p.output_scale != 1.0f) attr.set_output_scales(0, {p.output_scale});
        const Md bias = p.bias.present() ? plain(p.bias.dims) : Md();
        const Md weights = operands_.is_constant(p.weights.node) ? any(p.weights.dims) : plain(p.weights.dims, p.weights.strides);
        dnnl::matmul::desc d(plain(p.src.dims, p.src.strides), weights, bias, plain(p.dst));
        dnnl::matmul::primitive_desc pd(d, attr, engine_);
        bind(step, DNNL_ARG_SRC, p.src, plain(p.src.dims, p.src.strides));
        bind_weights(step, p.weights, pd.weights_desc());
        if (p.bias.present()) bind(step, DNNL_ARG_BIAS, p.bias, bias);
        bind_dst(step, p);
        step.primitive = dnnl::matmul(pd);
        return add_with_swish(std::move(step), p);
      }
      case CallPlan::Kind::softmax: {
        dnnl::softmax_forward::desc d(inference, plain(p.src.dims), p.axis);
        dnnl::softmax_forward::primitive_desc pd(d, engine_);
        bind(step, DNNL_ARG_SRC, p.src, plain(p.src.dims));
        bind_dst(step, p);
        step.primitive = dnnl::softmax_forward(pd);
        break;
      }
      case CallPlan::Kind::layer_norm:
      case CallPlan::Kind::batch_norm: {
        const bool batch = p.kind == CallPlan::Kind::batch_norm;
        dnnl::normalization_flags flags = dnnl::normalization_flags::none;
        if (p.scale.present()) flags |= dnnl::normalization_flags::use_scale;
        if (p.shift.present()) flags |= dnnl::normalization_flags::use_shift;
        if (batch) flags |= dnnl::normalization_flags::use_global_stats;
        if (p.fuse_relu) flags |= dnnl::normalization_flags::fuse_norm_relu;
        const Md param = plain({numel(p.param_shape)});
        const Shape& to = p.param_shape;
        if (p.scale.present()) bind(step, DNNL_ARG_SCALE, p.scale, param, &to);
        if (p.shift.present()) bind(step, DNNL_ARG_SHIFT, p.shift, param, &to);
        if (batch) {
          bind(step, DNNL_ARG_MEAN, p.mean, param, &to);
          bind(step, DNNL_ARG_VARIANCE, p.variance, param, &to);
        }
        bind(step, DNNL_ARG_SRC, p.src, plain(p.src.dims));
        bind_dst(step, p);
        if (batch) {
          dnnl::batch_normalization_forward::desc d(inference, plain(p.src.dims), p.epsilon, flags);
          dnnl::batch_normalization_forward::primitive_desc pd(d, engine_);
          add_internal_memories(step, pd);
          step.primitive = dnnl::batch_normalization_forward(pd);
        } else {
          dnnl::layer_normalization_forward::desc d(inference, plain(p.src.dims), p.epsilon, flags);
          dnnl::layer_normalization_forward::primitive_desc pd(d, engine_);
          add_internal_memories(step, pd);
          step.primitive = dnnl::layer_normalization_forward(pd);
        }
        break;
      }
      case CallPlan::Kind::eltwise: {
        if (add_blocked_eltwise(p)) return;
        if (own_swish(p)) {
          step.swish = true;
          bind(step, DNNL_ARG_SRC, p.src, plain(p.src.dims));
          bind_dst(step, p);
          break;
        }
        dnnl::eltwise_forward::desc d(inference, eltwise_algorithm(p.eltwise), plain(p.src.dims), p.alpha, p.beta);
        dnnl::eltwise_forward::primitive_desc pd(d, engine_);
        bind(step, DNNL_ARG_SRC, p.src, plain(p.src.dims));
        bind_dst(step, p);
        step.primitive = dnnl::eltwise_forward(pd);
        break;
      }
      case CallPlan::Kind::binary: {
        if (add_blocked_binary(p)) return;
        dnnl::binary::desc d(binary_algorithm(p.binary), plain(p.src.dims), plain(p.weights.dims), plain(p.dst));
        dnnl::binary::primitive_desc pd(d, engine_);
        bind(step, DNNL_ARG_SRC_0, p.src, plain(p.src.dims));
        bind(step, DNNL_ARG_SRC_1, p.weights, plain(p.weights.dims));
        bind_dst(step, p);
        step.primitive = dnnl::binary(pd);
        break;
      }
      case CallPlan::Kind::reduction: {
        dnnl::reduction::desc d(reduction_algorithm(p.reduction), plain(p.src.dims), plain(p.dst), 0.0f, 0.0f);
        dnnl::reduction::primitive_desc pd(d, engine_);
        bind(step, DNNL_ARG_SRC, p.src, plain(p.src.dims));
        bind_dst(step, p);
        step.primitive = dnnl::reduction(pd);
        break;
      }
      case CallPlan::Kind::transpose: {
        dnnl::reorder::primitive_desc pd(engine_, plain(p.src.dims, p.src.strides), engine_, plain(p.dst));
        bind(step, DNNL_ARG_FROM, p.src, plain(p.src.dims, p.src.strides));
        bind(step, DNNL_ARG_TO, Operand{p.root, p.dst, {}, 1.0f}, plain(p.dst));
        step.primitive = dnnl::reorder(pd);
        break;
      }
    }
    steps_.push_back(std::move(step));
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  KernelOperands operands_;
  int threads_;
  Layout layout_;
  std::vector<Step> steps_;
  /// By node: whether it is a parameter or result the kernel takes or returns in layout_.
  std::vector<bool> kept_blocked_;
  /// The memories of those parameters and results, bound to their addresses at each run.
  std::vector<Binding> blocked_io_;
  /// Results written in layout_ already.
  std::unordered_set<int> returned_;
  /// Offsets in scratch of the plain tensors of parameters and results kept blocked.
  std::unordered_map<int, std::size_t> plain_offset_;
  /// Values calls left in their own (blocked) layouts, by node: the calls after them that read any
  /// layout read them as they are, so a chain converts from and to plain tensors only at its ends.
  std::unordered_map<int, memory> held_;
  /// The memories in the shared scratch and their offsets in it, its size for this kernel, and
  /// where it was when they were last bound.
  std::vector<std::pair<memory, std::size_t>> scratch_;
  std::size_t scratch_bytes_ = 0;
  char* scratch_base_ = nullptr;
  /// By node: whether it is a result returned as a plain tensor.
  std::vector<bool> needs_plain_;
  /// Values held in a layout of their own whose plain tensor is written.
  std::unordered_set<int> plain_written_;
  /// The places of the results of the concats written in place (see place_concats) and of their
  /// sources' slices, and the values their calls wrote there.
  std::unordered_map<int, Place> in_place_;
  std::unordered_set<int> written_in_place_;
  /// Constants broadcast or scaled at compile time; a deque keeps their addresses.
  std::deque<std::vector<float>> prepared_;
};

}  // namespace

bool winograd_available(const CallPlan& conv) {
  if (!winograd_shape(conv)) return false;
  CallPlan p = conv;
  p.winograd = true;
  try {
    // One engine for every query: they come once per convolution the rule matches.
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    conv_primitive_desc(p, any(p.src.dims), any(p.dst), dnnl::primitive_attr(), engine);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

collage::Result<std::unique_ptr<Kernel>> kernel(const Function& function, const std::vector<LibraryCall>& calls,
                                                const std::vector<CallPlan>& plans, Device& device, int threads,
                                                Layout layout) {
  collage::Result<KernelOperands> bound = KernelOperands::bind(function, calls, operands_of(plans), device);
  if (!bound.ok()) return bound.error();
  std::unique_ptr<OnednnKernel> kernel;
  try {
    kernel = std::make_unique<OnednnKernel>(std::move(bound).value(), threads, layout);
  } catch (const dnnl::error& e) {
    return collage::Error{collage::ErrorCode::invalid_argument, std::string("onednn: no CPU engine: ") + e.what()};
  }
  collage::Status built = kernel->build(function.graph, plans);
  if (!built.ok()) return built.error();
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace tc::onednn
