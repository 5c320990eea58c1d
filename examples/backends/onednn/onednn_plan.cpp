#include "backends/onednn/onednn_plan.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "backends/kit/epilogue.hpp"
#include "tensor/op_attrs.hpp"

namespace tc::onednn {

namespace {

using collage::Error;
using collage::ErrorCode;

/// The most post-ops one primitive gets.
constexpr std::size_t kMaxPostOps = 8;

Error unsupported(const std::string& what) { return Error{ErrorCode::invalid_argument, what}; }

/// `shape` padded with leading 1s to `rank`.
Dims aligned(const Shape& shape, std::size_t rank) {
  Dims out(rank - std::min(rank, shape.size()), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

/// Whether `shape` broadcasts to `dst` without changing it (one-directional broadcasting).
bool broadcasts_to(const Shape& shape, const Shape& dst) {
  const std::optional<Shape> b = broadcast_shapes(shape, dst);
  return b && *b == dst;
}

Operand operand(int node, Dims dims) {
  Operand o;
  o.node = node;
  o.dims = std::move(dims);
  return o;
}

/// The eltwise algorithm of a unary operator (oneDNN's alpha and beta), and its name in composite
/// labels; nothing for operators oneDNN has no eltwise for (Erf, HardSigmoid, Identity).
struct UnaryInfo {
  Eltwise alg;
  float alpha;
  float beta;
  const char* label;
};
std::optional<UnaryInfo> unary_info(const Node& node) {
  switch (node.op) {
    case Op::relu: return UnaryInfo{Eltwise::relu, 0.0f, 0.0f, "relu"};
    case Op::leaky_relu: return UnaryInfo{Eltwise::relu, static_cast<float>(unary_attrs(node).alpha), 0.0f, "leaky_relu"};
    case Op::clip: {
      const UnaryAttrs bounds = unary_attrs(node);
      return UnaryInfo{Eltwise::clip, static_cast<float>(bounds.min), static_cast<float>(bounds.max), "clip"};
    }
    case Op::sigmoid: return UnaryInfo{Eltwise::logistic, 0.0f, 0.0f, "sigmoid"};
    case Op::tanh: return UnaryInfo{Eltwise::tanh, 0.0f, 0.0f, "tanh"};
    case Op::exp: return UnaryInfo{Eltwise::exp, 0.0f, 0.0f, "exp"};
    case Op::log: return UnaryInfo{Eltwise::log, 0.0f, 0.0f, "log"};
    case Op::sqrt: return UnaryInfo{Eltwise::sqrt, 0.0f, 0.0f, "sqrt"};
    case Op::abs: return UnaryInfo{Eltwise::abs, 0.0f, 0.0f, "abs"};
    case Op::neg: return UnaryInfo{Eltwise::linear, -1.0f, 0.0f, "neg"};
    case Op::reciprocal: return UnaryInfo{Eltwise::pow, 1.0f, -1.0f, "reciprocal"};
    default: return std::nullopt;
  }
}

std::optional<Binary> binary_alg(Op op) {
  switch (op) {
    case Op::add: return Binary::add;
    case Op::sub: return Binary::sub;
    case Op::mul: return Binary::mul;
    case Op::div: return Binary::div;
    case Op::max: return Binary::max;
    case Op::min: return Binary::min;
    default: return std::nullopt;
  }
}

PostOp eltwise_post_op(Eltwise alg, float alpha, float beta) {
  PostOp p;
  p.eltwise = alg;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

/// Appends eltwise `post` to `p`'s post-ops. A linear one right after a linear one is folded into
/// it. oneDNN 2.6's matmul and convolution kernels apply the parameters of an algorithm's first
/// eltwise post-op to every later one of the same algorithm, so a second one with other
/// parameters is refused.
collage::Status add_eltwise(CallPlan& p, const PostOp& post) {
  if (!p.post_ops.empty() && !p.post_ops.back().is_binary && p.post_ops.back().eltwise == Eltwise::linear &&
      post.eltwise == Eltwise::linear) {
    PostOp& last = p.post_ops.back();  // a2 (a1 x + b1) + b2
    last.beta = post.alpha * last.beta + post.beta;
    last.alpha *= post.alpha;
    return collage::Status::success();
  }
  for (const PostOp& q : p.post_ops) {
    if (!q.is_binary && q.eltwise == post.eltwise && (q.alpha != post.alpha || q.beta != post.beta)) {
      return unsupported("two eltwise post-ops of one algorithm with different parameters (oneDNN 2.6 applies the "
                         "first one's to both)");
    }
  }
  p.post_ops.push_back(post);
  return collage::Status::success();
}

/// Sets the window of a convolution or pooling plan from `w`: kernel, strides, dilations (oneDNN's,
/// counting from 0) and pads.
void set_window(CallPlan& p, const WindowGeometry& w) {
  p.kernel = w.kernel;
  p.strides = w.stride;
  p.dilations.clear();
  for (std::int64_t d : w.dilation) p.dilations.push_back(d - 1);
  p.pad_l = w.pad_begin;
  p.pad_r = w.pad_end;
}

// ------------------------------------------------------------------------------------------------
// Anchors: Conv, MatMul, Gemm, and the epilogue as bias + post-ops.

Error check_dims(std::size_t rank, std::size_t lo, std::size_t hi, const std::string& what) {
  return unsupported(what + " of rank " + std::to_string(rank) + " (" + std::to_string(lo) + " to " +
                     std::to_string(hi) + " supported)");
}

collage::Result<CallPlan> plan_conv(const Graph& g, int n) {
  const Node& node = g.node(n);
  const Shape& x = g.node(node.inputs[0]).shape;
  const Shape& w = g.node(node.inputs[1]).shape;
  if (x.size() < 3 || x.size() > 5) return check_dims(x.size(), 3, 5, "Conv input");
  if (g.node(node.inputs[1]).op != Op::constant) return unsupported("Conv with weights that are not a constant");
  const WindowGeometry geometry = conv_geometry(g, n);
  CallPlan p;
  p.kind = CallPlan::Kind::conv;
  p.name = "onednn.conv";
  p.dst = node.shape;
  p.src = operand(node.inputs[0], x);
  Dims wd = w;
  if (geometry.group > 1) {
    wd.insert(wd.begin(), geometry.group);
    wd[1] = w[0] / geometry.group;
  }
  p.weights = operand(node.inputs[1], wd);
  if (node.inputs.size() == 3) p.bias = operand(node.inputs[2], {w[0]});
  set_window(p, geometry);
  return p;
}

collage::Result<CallPlan> plan_matmul(const Graph& g, int n) {
  const Node& node = g.node(n);
  Shape a = g.node(node.inputs[0]).shape;
  Shape b = g.node(node.inputs[1]).shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const std::size_t rank = std::max(a.size(), b.size());
  if (rank > 12) return check_dims(rank, 1, 12, "MatMul operand");
  CallPlan p;
  p.kind = CallPlan::Kind::matmul;
  p.name = "onednn.dense";
  p.src = operand(node.inputs[0], aligned(a, rank));
  p.weights = operand(node.inputs[1], aligned(b, rank));
  for (std::size_t d = 0; d + 2 < rank; ++d) {
    const std::int64_t da = p.src.dims[d];
    const std::int64_t db = p.weights.dims[d];
    if (da != db && da != 1 && db != 1) return unsupported("MatMul batch dims do not broadcast");
    p.dst.push_back(std::max(da, db));
  }
  p.dst.push_back(a[a.size() - 2]);
  p.dst.push_back(b.back());
  return p;
}

collage::Result<CallPlan> plan_gemm(const Graph& g, int n) {
  const Node& node = g.node(n);
  const Shape& a = g.node(node.inputs[0]).shape;
  const GemmAttrs attrs = gemm_attrs(node);
  const bool trans_a = attrs.trans_a;
  const bool trans_b = attrs.trans_b;
  const float alpha = static_cast<float>(attrs.alpha);
  const float beta = static_cast<float>(attrs.beta);
  const std::int64_t m = node.shape[0];
  const std::int64_t nn = node.shape[1];
  const std::int64_t k = trans_a ? a[0] : a[1];
  CallPlan p;
  p.kind = CallPlan::Kind::matmul;
  p.name = "onednn.dense";
  p.dst = {m, nn};
  p.src = operand(node.inputs[0], {m, k});
  if (trans_a) p.src.strides = {1, m};
  p.weights = operand(node.inputs[1], {k, nn});
  if (trans_b) p.weights.strides = {1, k};
  // alpha: folded into constant weights, else oneDNN's output scale (which scales the bias too).
  if (g.node(node.inputs[1]).op == Op::constant) {
    p.weights.scale = alpha;
  } else {
    p.output_scale = alpha;
  }
  if (node.inputs.size() == 3) {
    const int c = node.inputs[2];
    const bool constant_c = g.node(c).op == Op::constant;
    if (beta != 1.0f && !constant_c) return unsupported("Gemm with beta != 1 and C not a constant");
    const Dims cd = aligned(g.node(c).shape, 2);
    if (cd[0] == 1 && p.output_scale != 0.0f && (constant_c || p.output_scale == 1.0f)) {
      p.bias = operand(c, cd);
      p.bias.scale = beta / p.output_scale;
    } else {
      PostOp add;
      add.is_binary = true;
      add.binary = Binary::add;
      add.operand = operand(c, cd);
      add.operand.scale = beta;
      p.post_ops.push_back(add);
    }
  }
  return p;
}

/// Whether `shape`, broadcast to the anchor's destination, varies along its channel dim only
/// (a bias): dim 1 of a Conv's output, the last dim of a matmul's.
bool is_bias(const CallPlan& p, const Shape& shape) {
  const std::size_t rank = p.dst.size();
  if (shape.size() > rank || !broadcasts_to(shape, p.dst)) return false;
  const Dims t = aligned(shape, rank);
  const std::size_t channel = p.kind == CallPlan::Kind::conv ? 1 : rank - 1;
  for (std::size_t d = 0; d < rank; ++d) {
    if (d != channel && t[d] != 1) return false;
  }
  return true;
}

/// Adds `step` to the anchor plan `p` as a bias or post-ops, extending its canonical name.
collage::Status add_step(const Graph& g, const EpilogueStep& step, bool vector_operand, CallPlan& p) {
  switch (step.kind) {
    case EpilogueStep::Kind::gelu_erf:
      p.name += "_gelu";
      return add_eltwise(p, eltwise_post_op(Eltwise::gelu_erf, 0.0f, 0.0f));
    case EpilogueStep::Kind::silu:
      p.name += "_swish";
      return add_eltwise(p, eltwise_post_op(Eltwise::swish, 1.0f, 0.0f));
    case EpilogueStep::Kind::unary: {
      const std::optional<UnaryInfo> u = unary_info(g.node(step.node));
      if (!u) return unsupported(describe(g, step.node) + " is not a oneDNN eltwise post-op");
      p.name += std::string("_") + u->label;
      return add_eltwise(p, eltwise_post_op(u->alg, u->alpha, u->beta));
    }
    case EpilogueStep::Kind::binary: break;
  }
  const Shape& shape = g.node(step.operand).shape;
  const bool constant = g.node(step.operand).op == Op::constant;
  const std::optional<float> scalar = scalar_constant(g, step.operand);
  const Op op = step.op;
  const bool bias = op == Op::add && constant && is_bias(p, shape);
  if (bias && !p.bias.present() && p.post_ops.empty() && p.output_scale == 1.0f) {
    const std::int64_t channels = p.dst[p.kind == CallPlan::Kind::conv ? 1 : p.dst.size() - 1];
    p.bias = operand(step.operand, p.kind == CallPlan::Kind::conv ? Dims{channels} : aligned({channels}, p.dst.size()));
    p.name += "_bias";
    return collage::Status::success();
  }
  if (scalar && (op == Op::mul || (op == Op::div && !step.operand_first && *scalar != 0.0f))) {
    p.name += "_scale";
    return add_eltwise(p, eltwise_post_op(Eltwise::linear, op == Op::mul ? *scalar : 1.0f / *scalar, 0.0f));
  }
  const std::optional<Binary> alg = binary_alg(op);
  if (!alg) return unsupported(describe(g, step.node) + " is not a oneDNN binary post-op");
  if (vector_operand) return unsupported("a binary post-op after a MatMul of a vector");
  if (!broadcasts_to(shape, p.dst)) {
    return unsupported(describe(g, step.node) + ": its operand " + to_string(shape) + " does not broadcast to the output");
  }
  if (step.operand_first && op == Op::div) return unsupported(describe(g, step.node) + " divides by the running value");
  PostOp post;
  post.is_binary = true;
  post.binary = *alg;
  post.operand = operand(step.operand, aligned(shape, p.dst.size()));
  p.post_ops.push_back(post);
  // A second bias (after the anchor's own, or after other post-ops) is a per-channel binary add.
  p.name += bias ? "_bias" : op == Op::add ? (constant ? "_add" : "_sum") : "_" + std::string(op_name(op));
  if (step.operand_first && op == Op::sub) return add_eltwise(p, eltwise_post_op(Eltwise::linear, -1.0f, 0.0f));
  return collage::Status::success();
}

collage::Result<CallPlan> plan_anchor(const Graph& g, const LibraryCall& call) {
  collage::Result<AnchorChain> chain = read_anchor_chain(g, call);
  if (!chain.ok()) return chain.error();
  const Node& anchor = g.node(chain->anchor);
  collage::Result<CallPlan> plan = unsupported(describe(g, chain->anchor) + " does not take post-ops");
  if (anchor.op == Op::conv) plan = plan_conv(g, chain->anchor);
  if (anchor.op == Op::matmul) plan = plan_matmul(g, chain->anchor);
  if (anchor.op == Op::gemm) plan = plan_gemm(g, chain->anchor);
  if (!plan.ok()) return plan;
  const bool vector_operand = anchor.op == Op::matmul && (g.node(anchor.inputs[0]).shape.size() == 1 ||
                                                          g.node(anchor.inputs[1]).shape.size() == 1);
  for (const EpilogueStep& step : chain->epilogue) {
    collage::Status added = add_step(g, step, vector_operand, *plan);
    if (!added.ok()) return added.error();
  }
  if (plan->post_ops.size() > kMaxPostOps) return unsupported("more than " + std::to_string(kMaxPostOps) + " post-ops");
  plan->root = call.root();
  return plan;
}

// ------------------------------------------------------------------------------------------------
// Normalisations.

/// Normalisation parameters (LayerNorm scale/shift over [axis, rank), BatchNorm per channel):
/// operand `node`, which must broadcast to `normalized`; a value computed at run time must have
/// every element.
collage::Result<Operand> norm_param(const Graph& g, int node, const Shape& normalized, const char* what) {
  const Shape& shape = g.node(node).shape;
  if (!broadcasts_to(shape, normalized)) {
    return unsupported(std::string(what) + " " + to_string(shape) + " does not broadcast to " + to_string(normalized));
  }
  if (g.node(node).op != Op::constant && numel(shape) != numel(normalized)) {
    return unsupported(std::string(what) + " " + to_string(shape) + " computed at run time must be " +
                       to_string(normalized));
  }
  return operand(node, Dims(shape.begin(), shape.end()));
}

/// Layer normalisation of `x` over [axis, rank): the primitive's 2-D view.
collage::Result<CallPlan> layer_norm_plan(const Graph& g, int x, std::size_t axis, float epsilon, int scale, int shift,
                                          int root) {
  const Shape& shape = g.node(x).shape;
  const Shape normalized(shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
  CallPlan p;
  p.kind = CallPlan::Kind::layer_norm;
  p.name = "onednn.layer_norm";
  p.root = root;
  p.dst = {product(shape, 0, axis), product(shape, axis, shape.size())};
  p.src = operand(x, p.dst);
  p.param_shape = Dims(normalized.begin(), normalized.end());
  p.epsilon = epsilon;
  if (scale >= 0) {
    collage::Result<Operand> s = norm_param(g, scale, normalized, "scale");
    if (!s.ok()) return s.error();
    p.scale = *s;
  }
  if (shift >= 0) {
    collage::Result<Operand> b = norm_param(g, shift, normalized, "bias");
    if (!b.ok()) return b.error();
    p.shift = *b;
  }
  return p;
}

/// Reads the decomposed layer norm exporters emit:
///   m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2)); s = Sqrt(Add(v, eps));
///   y = Div(d, s) [; y = Mul(y, scale) [; y = Add(y, bias)]]
/// with both reductions over the same trailing axes, keeping dims.
class LayerNormReader {
 public:
  LayerNormReader(const Graph& g, const LibraryCall& call) : g_(g), call_(call) {}

  collage::Result<CallPlan> read() {
    int y = call_.root();
    std::vector<int> affine;  // the Add and Mul after the Div, when present
    int scale = -1;
    int shift = -1;
    if (op(y) == Op::add) {
      affine.push_back(y);
      y = other_operand(y, Op::mul, shift);
      if (y < 0) return fail("its last Add is not (normalised * scale) + bias");
    }
    if (op(y) == Op::mul) {
      affine.push_back(y);
      y = other_operand(y, Op::div, scale);
      if (y < 0) return fail("its Mul is not normalised * scale");
    }
    if (op(y) != Op::div) return fail("it does not end in Div(x - mean, sqrt(var + eps))");
    const int d = in(y, 0);
    const int s = in(y, 1);
    if (op(d) != Op::sub || op(s) != Op::sqrt) return fail("its Div is not (x - mean) / sqrt(...)");
    const int x = g_.node(d).inputs[0];
    const int m = in(d, 1);
    const int e = in(s, 0);
    if (op(m) != Op::reduce_mean || g_.node(m).inputs[0] != x) return fail("x - mean does not subtract ReduceMean(x)");
    if (op(e) != Op::add) return fail("its Sqrt does not read var + eps");
    const bool eps_first = !member(g_.node(e).inputs[0]);
    const int v = g_.node(e).inputs[eps_first ? 1 : 0];
    const std::optional<float> eps = scalar_constant(g_, g_.node(e).inputs[eps_first ? 0 : 1]);
    if (op(v) != Op::reduce_mean || !eps) return fail("var + eps is not ReduceMean(...) + a constant");
    const int pw = in(v, 0);
    if (op(pw) != Op::pow || g_.node(pw).inputs[0] != d || !is_scalar(g_, g_.node(pw).inputs[1], 2.0f)) {
      return fail("the variance is not ReduceMean(Pow(x - mean, 2))");
    }
    std::vector<int> expected = {m, d, pw, v, e, s, y};
    expected.insert(expected.end(), affine.begin(), affine.end());
    std::sort(expected.begin(), expected.end());
    std::vector<int> nodes = call_.nodes;
    std::sort(nodes.begin(), nodes.end());
    if (nodes != expected) return fail("it holds other nodes");
    const Shape& shape = g_.node(x).shape;
    const ReduceAttrs mean = reduce_attrs(g_.node(m));
    const ReduceAttrs variance = reduce_attrs(g_.node(v));
    const Ints& axes = mean.axes;
    if (axes != variance.axes) return fail("its two ReduceMeans reduce different axes");
    if (!mean.keepdims || !variance.keepdims) return fail("its ReduceMeans do not keep dims");
    const std::size_t axis = shape.size() - axes.size();
    for (std::size_t k = 0; k < axes.size(); ++k) {
      if (axes[k] != static_cast<std::int64_t>(axis + k)) return fail("it does not normalise trailing axes");
    }
    if (axis == shape.size()) return fail("it normalises no axis");
    collage::Result<CallPlan> plan = layer_norm_plan(g_, x, axis, *eps, scale, shift, call_.root());
    if (plan.ok()) plan->name = scale < 0 ? "onednn.layer_norm_bare" : shift < 0 ? "onednn.layer_norm_scale" : "onednn.layer_norm";
    return plan;
  }

 private:
  bool member(int n) const { return call_.contains(n); }
  Op op(int n) const { return member(n) ? g_.node(n).op : Op::input; }
  /// Input k of n when it is a call node, else -1.
  int in(int n, std::size_t k) const {
    const int i = g_.node(n).inputs[k];
    return member(i) ? i : -1;
  }
  /// When binary node n reads a call node of `inner_op` and a value from outside the call: that
  /// call node (the value from outside into `other`); else -1.
  int other_operand(int n, Op inner_op, int& other) const {
    const auto& ins = g_.node(n).inputs;
    for (std::size_t k = 0; k < 2; ++k) {
      if (op(ins[k]) == inner_op && !member(ins[1 - k])) {
        other = ins[1 - k];
        return ins[k];
      }
    }
    return -1;
  }
  Error fail(const std::string& why) const {
    return unsupported(describe(g_, call_.root()) + " is not a decomposed layer norm: " + why);
  }

  const Graph& g_;
  const LibraryCall& call_;
};

collage::Result<CallPlan> plan_batch_norm(const Graph& g, int n, bool fuse_relu, int root) {
  const Node& node = g.node(n);
  const Shape& x = node.shape;
  if (x.size() < 2 || x.size() > 5) return check_dims(x.size(), 2, 5, "BatchNormalization input");
  CallPlan p;
  p.kind = CallPlan::Kind::batch_norm;
  p.name = fuse_relu ? "onednn.batch_norm_relu" : "onednn.BatchNormalization";
  p.root = root;
  p.dst = x;
  p.src = operand(node.inputs[0], x);
  const Shape channel{x[1]};
  p.param_shape = channel;
  Operand* params[] = {&p.scale, &p.shift, &p.mean, &p.variance};
  const char* names[] = {"scale", "bias", "mean", "var"};
  for (std::size_t k = 0; k < 4; ++k) {
    collage::Result<Operand> o = norm_param(g, node.inputs[k + 1], channel, names[k]);
    if (!o.ok()) return o.error();
    *params[k] = *o;
  }
  p.epsilon = static_cast<float>(epsilon_attr(node));
  p.fuse_relu = fuse_relu;
  return p;
}

// ------------------------------------------------------------------------------------------------
// Single operators.

collage::Result<CallPlan> plan_pool(const Graph& g, int n) {
  const Node& node = g.node(n);
  const Shape& x = g.node(node.inputs[0]).shape;
  if (x.size() < 3 || x.size() > 5) return check_dims(x.size(), 3, 5, std::string(op_name(node.op)) + " input");
  const std::size_t k = x.size() - 2;
  CallPlan p;
  p.kind = CallPlan::Kind::pool;
  p.name = "onednn." + std::string(op_name(node.op));
  p.dst = node.shape;
  p.src = operand(node.inputs[0], x);
  if (node.op == Op::global_average_pool || node.op == Op::global_max_pool) {
    p.pooling = node.op == Op::global_max_pool ? Pooling::max : Pooling::avg_exclude_padding;
    p.kernel = Dims(x.begin() + 2, x.end());
    p.strides.assign(k, 1);
    p.dilations.assign(k, 0);
    p.pad_l.assign(k, 0);
    p.pad_r.assign(k, 0);
    return p;
  }
  const WindowGeometry w = pool_geometry(g, n);
  const bool include_pad = pool_attrs(node).count_include_pad;
  p.pooling = node.op == Op::max_pool ? Pooling::max
              : include_pad           ? Pooling::avg_include_padding
                                      : Pooling::avg_exclude_padding;
  set_window(p, w);
  for (std::size_t d = 0; d < k; ++d) {
    // ceil_mode: the last window may hang over the end padding; oneDNN sees that as more padding.
    const std::int64_t floor_out = (w.in[d] + w.pad_begin[d] + w.pad_end[d] - w.extent(d)) / w.stride[d] + 1;
    if (floor_out < w.out[d]) {
      p.pad_r[d] = (w.out[d] - 1) * w.stride[d] + w.extent(d) - w.in[d] - w.pad_begin[d];
      if (include_pad) return unsupported("AveragePool counting padding whose last window hangs over it (ceil_mode)");
    }
  }
  if (p.pooling == Pooling::max && !every_window_reads_input(p)) {
    return unsupported("MaxPool with a window wholly in the padding (oneDNN gives it the lowest float, ONNX -inf)");
  }
  return p;
}

collage::Result<CallPlan> plan_reduction(const Graph& g, int n) {
  const Node& node = g.node(n);
  const Shape& x = g.node(node.inputs[0]).shape;
  CallPlan p;
  p.kind = CallPlan::Kind::reduction;
  p.name = "onednn." + std::string(op_name(node.op));
  p.reduction = node.op == Op::reduce_mean ? Reduction::mean : node.op == Op::reduce_sum ? Reduction::sum : Reduction::max;
  p.src = operand(node.inputs[0], x);
  p.dst = x;
  bool reduces = false;
  for (std::int64_t a : reduce_attrs(node).axes) {
    reduces = reduces || x[static_cast<std::size_t>(a)] != 1;
    p.dst[static_cast<std::size_t>(a)] = 1;
  }
  if (!reduces) return unsupported(describe(g, n) + " reduces only dims of size 1 (a copy)");
  if (x.empty() || x.size() > 5) return check_dims(x.size(), 1, 5, "reduction input");
  return p;
}

collage::Result<CallPlan> plan_binary(const Graph& g, int n) {
  const Node& node = g.node(n);
  CallPlan p;
  p.kind = CallPlan::Kind::binary;
  p.name = "onednn." + std::string(op_name(node.op));
  p.binary = *binary_alg(node.op);
  p.dst = node.shape;
  int a = node.inputs[0];
  int b = node.inputs[1];
  const bool commutes = node.op != Op::sub && node.op != Op::div;
  if (g.node(a).shape != node.shape) {
    if (!commutes || g.node(b).shape != node.shape) {
      return unsupported(describe(g, n) + " broadcasts its first operand " + to_string(g.node(a).shape));
    }
    std::swap(a, b);
  }
  if (node.shape.empty() || node.shape.size() > 12) return check_dims(node.shape.size(), 1, 12, "binary output");
  p.src = operand(a, node.shape);
  p.weights = operand(b, aligned(g.node(b).shape, node.shape.size()));
  return p;
}

collage::Result<CallPlan> plan_single(const Graph& g, int n) {
  const Node& node = g.node(n);
  const Shape& x = node.inputs.empty() ? node.shape : g.node(node.inputs[0]).shape;
  CallPlan p;
  p.root = n;
  p.name = "onednn." + std::string(op_name(node.op));
  collage::Result<CallPlan> plan = p;
  switch (node.op) {
    case Op::conv: plan = plan_conv(g, n); break;
    case Op::matmul: plan = plan_matmul(g, n); break;
    case Op::gemm: plan = plan_gemm(g, n); break;
    case Op::max_pool:
    case Op::average_pool:
    case Op::global_average_pool:
    case Op::global_max_pool: plan = plan_pool(g, n); break;
    case Op::reduce_mean:
    case Op::reduce_sum:
    case Op::reduce_max: plan = plan_reduction(g, n); break;
    case Op::batch_norm: plan = plan_batch_norm(g, n, false, n); break;
    case Op::layer_norm:
      plan = layer_norm_plan(g, node.inputs[0], axis_attr(node), static_cast<float>(epsilon_attr(node)), node.inputs[1],
                             node.inputs.size() == 3 ? node.inputs[2] : -1, n);
      break;
    case Op::softmax:
      plan->kind = CallPlan::Kind::softmax;
      plan->src = operand(node.inputs[0], x);
      plan->dst = x;
      plan->axis = static_cast<int>(axis_attr(node));
      break;
    case Op::transpose: {
      // A reorder from the input seen through the permutation to the dense output.
      const Ints perm = perm_attr(node);
      const std::vector<std::int64_t> in_strides = row_major_strides(x);
      plan->kind = CallPlan::Kind::transpose;
      plan->dst = node.shape;
      plan->src = operand(node.inputs[0], node.shape);
      for (std::int64_t d : perm) plan->src.strides.push_back(in_strides[static_cast<std::size_t>(d)]);
      break;
    }
    case Op::concat: {
      if (x.empty() || x.size() > 12) return check_dims(x.size(), 1, 12, "Concat input");
      plan->kind = CallPlan::Kind::concat;
      plan->dst = node.shape;
      plan->axis = static_cast<int>(axis_attr(node));
      for (int in : node.inputs) {
        if (numel(g.node(in).shape) == 0) return unsupported(describe(g, n) + " joins an empty tensor");
        plan->sources.push_back(operand(in, g.node(in).shape));
      }
      plan->src = plan->sources.front();
      break;
    }
    case Op::pow: {
      const std::optional<float> e = scalar_constant(g, node.inputs[1]);
      if (!e || g.node(node.inputs[0]).shape != node.shape) return unsupported(describe(g, n) + " is not x ^ constant");
      plan->kind = CallPlan::Kind::eltwise;
      plan->eltwise = Eltwise::pow;
      plan->alpha = 1.0f;
      plan->beta = *e;
      plan->src = operand(node.inputs[0], x);
      plan->dst = x;
      break;
    }
    default:
      if (binary_alg(node.op)) {
        plan = plan_binary(g, n);
      } else if (const std::optional<UnaryInfo> u = unary_info(node)) {
        plan->kind = CallPlan::Kind::eltwise;
        plan->eltwise = u->alg;
        plan->alpha = u->alpha;
        plan->beta = u->beta;
        plan->src = operand(node.inputs[0], x);
        plan->dst = x;
      } else {
        return unsupported(describe(g, n) + " has no oneDNN primitive here");
      }
  }
  if (!plan.ok()) return plan;
  plan->name = p.name;
  if (plan->dst.empty()) plan->dst = {1};
  if (plan->src.dims.empty()) plan->src.dims = {1};
  plan->root = n;
  return plan;
}

/// GELU or SiLU alone: an eltwise primitive on the value they read.
collage::Result<CallPlan> plan_activation(const Graph& g, const LibraryCall& call) {
  const int first = call.nodes.front();
  // The value the pattern starts from: the first node's operand that is not a constant.
  int x = -1;
  for (int in : g.node(first).inputs) {
    if (g.node(in).op != Op::constant && !call.contains(in)) x = in;
  }
  if (x < 0) return unsupported(describe(g, first) + " reads no tensor");
  collage::Result<std::vector<EpilogueStep>> steps = read_epilogue(g, call, x);
  if (!steps.ok()) return steps.error();
  if (steps->size() != 1 || (steps->front().kind != EpilogueStep::Kind::gelu_erf &&
                             steps->front().kind != EpilogueStep::Kind::silu)) {
    return unsupported(describe(g, call.root()) + " is not one GELU or SiLU");
  }
  const bool gelu = steps->front().kind == EpilogueStep::Kind::gelu_erf;
  CallPlan p;
  p.kind = CallPlan::Kind::eltwise;
  p.name = gelu ? "onednn.gelu" : "onednn.swish";
  p.eltwise = gelu ? Eltwise::gelu_erf : Eltwise::swish;
  p.alpha = gelu ? 0.0f : 1.0f;
  p.root = call.root();
  p.dst = g.node(x).shape;
  if (p.dst.empty()) p.dst = {1};
  p.src = operand(x, p.dst);
  return p;
}

}  // namespace

bool every_window_reads_input(const CallPlan& p) {
  for (std::size_t d = 0; d < p.kernel.size(); ++d) {
    const std::int64_t in = p.src.dims[2 + d];
    for (std::int64_t o = 0; o < p.dst[2 + d]; ++o) {
      bool reads = false;
      for (std::int64_t t = 0; t < p.kernel[d] && !reads; ++t) {
        const std::int64_t i = o * p.strides[d] - p.pad_l[d] + t * (p.dilations[d] + 1);
        reads = i >= 0 && i < in;
      }
      if (!reads) return false;
    }
  }
  return true;
}

std::vector<int> operands(const CallPlan& p) {
  std::vector<int> out = {p.src.node, p.weights.node, p.bias.node, p.scale.node, p.shift.node, p.mean.node, p.variance.node};
  for (std::size_t k = 1; k < p.sources.size(); ++k) out.push_back(p.sources[k].node);
  for (const PostOp& post : p.post_ops) {
    if (post.is_binary) out.push_back(post.operand.node);
  }
  return out;
}

namespace {

/// The leading dims of `dims` (all but the last) as one, when they are all 1 (-> [1, last]) or all
/// `dst`'s (-> [rows, last]); nothing when the operand broadcasts over some of them only.
std::optional<Dims> fold_leading(const Dims& dims, const Dims& dst) {
  const std::size_t rank = dims.size();
  const bool ones = std::all_of(dims.begin(), dims.end() - 1, [](std::int64_t d) { return d == 1; });
  if (ones) return Dims{1, dims.back()};
  if (!std::equal(dims.begin(), dims.end() - 1, dst.begin())) return std::nullopt;
  return Dims{product(dims, 0, rank - 1), dims.back()};
}

/// A matmul whose weights are one matrix for every batch (a Linear layer on a [batch, rows, K]
/// input) as one 2-D product of [batch * rows, K] by [K, N]: oneDNN packs the weights of a 2-D
/// matmul into its blocked layout, a 3-D one reads them plain. Unchanged when an operand is
/// strided or broadcasts over only some of the batch dims.
void fold_batch_into_rows(CallPlan& p) {
  const std::size_t rank = p.dst.size();
  if (p.kind != CallPlan::Kind::matmul || rank <= 2 || !p.src.strides.empty() || !p.weights.strides.empty()) return;
  if (!std::all_of(p.weights.dims.begin(), p.weights.dims.end() - 2, [](std::int64_t d) { return d == 1; })) return;
  if (!std::equal(p.src.dims.begin(), p.src.dims.end() - 2, p.dst.begin())) return;
  std::vector<Operand*> folded;
  for (PostOp& post : p.post_ops) {
    if (post.is_binary) folded.push_back(&post.operand);
  }
  if (p.bias.present()) folded.push_back(&p.bias);
  std::vector<Dims> dims;
  for (const Operand* o : folded) {
    std::optional<Dims> d = fold_leading(o->dims, p.dst);
    if (!d || !o->strides.empty()) return;
    dims.push_back(std::move(*d));
  }
  for (std::size_t k = 0; k < folded.size(); ++k) folded[k]->dims = std::move(dims[k]);
  const std::int64_t rows = product(p.dst, 0, rank - 1);
  p.src.dims = {rows, p.src.dims.back()};
  p.weights.dims = {p.weights.dims[rank - 2], p.weights.dims.back()};
  p.dst = {rows, p.dst.back()};
}

collage::Result<CallPlan> plan_call(const Graph& g, const LibraryCall& call) {
  if (call.composite.empty() || call.nodes.size() == 1) {
    if (call.nodes.size() != 1) return unsupported("a call of several operators without a composite");
    return plan_single(g, call.nodes.front());
  }
  const Op first = g.node(call.nodes.front()).op;
  if (first == Op::conv || first == Op::matmul || first == Op::gemm) return plan_anchor(g, call);
  if (first == Op::batch_norm) {
    if (call.nodes.size() != 2 || g.node(call.root()).op != Op::relu) {
      return unsupported("BatchNormalization fuses a Relu only");
    }
    return plan_batch_norm(g, call.nodes.front(), true, call.root());
  }
  if (first == Op::reduce_mean) return LayerNormReader(g, call).read();
  return plan_activation(g, call);
}

}  // namespace

collage::Result<CallPlan> plan(const Graph& g, const LibraryCall& call) {
  collage::Result<CallPlan> p = plan_call(g, call);
  if (p.ok()) fold_batch_into_rows(*p);
  return p;
}

bool winograd_shape(const CallPlan& p) {
  return p.kind == CallPlan::Kind::conv && p.weights.dims.size() == 4 && p.kernel == Dims{3, 3} &&
         p.strides == Dims{1, 1} && p.dilations == Dims{0, 0};
}

}  // namespace tc::onednn
