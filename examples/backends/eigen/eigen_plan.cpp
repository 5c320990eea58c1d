#include "backends/eigen/eigen_plan.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "backends/kit/epilogue.hpp"
#include "tensor/op_attrs.hpp"

namespace tc::eigen {

namespace {

using collage::Error;
using collage::ErrorCode;

Error unsupported(const std::string& what) { return Error{ErrorCode::invalid_argument, what}; }

/// `shape` padded with leading 1s to `rank`.
Shape aligned(const Shape& shape, std::size_t rank) {
  Shape out(rank - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

/// Offsets of each batch element of an operand whose batch dims are `dims` (aligned at the end
/// to `batch`, 1 repeating), each element `matrix` floats apart.
std::vector<std::int64_t> batch_offsets(const Shape& dims, const Shape& batch, std::int64_t matrix) {
  const Shape d = aligned(dims, batch.size());
  std::vector<std::int64_t> stride(batch.size(), 0);
  std::int64_t s = matrix;
  for (std::size_t k = batch.size(); k-- > 0;) {
    stride[k] = d[k] == 1 ? 0 : s;
    s *= d[k];
  }
  const std::int64_t count = numel(batch);
  std::vector<std::int64_t> out(static_cast<std::size_t>(count), 0);
  std::vector<std::int64_t> index(batch.size(), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < batch.size(); ++k) off += index[k] * stride[k];
    out[static_cast<std::size_t>(i)] = off;
    for (std::size_t k = batch.size(); k-- > 0;) {
      if (++index[k] < batch[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

collage::Result<GemmPlan> plan_matmul(const Graph& g, int n) {
  const Node& node = g.node(n);
  GemmPlan p;
  p.a = node.inputs[0];
  p.b = node.inputs[1];
  Shape a = g.node(p.a).shape;
  Shape b = g.node(p.b).shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  const Shape a_batch(a.begin(), a.end() - 2);
  const Shape b_batch(b.begin(), b.end() - 2);
  const std::optional<Shape> batch = broadcast_shapes(a_batch, b_batch);
  if (!batch) return unsupported("MatMul batch dims do not broadcast");
  p.a_offsets = batch_offsets(a_batch, *batch, p.m * p.k);
  p.b_offsets = batch_offsets(b_batch, *batch, p.k * p.n);
  return p;
}

collage::Result<GemmPlan> plan_gemm(const Graph& g, int n) {
  const Node& node = g.node(n);
  const GemmAttrs attrs = gemm_attrs(node);
  GemmPlan p;
  p.a = node.inputs[0];
  p.b = node.inputs[1];
  p.trans_a = attrs.trans_a;
  p.trans_b = attrs.trans_b;
  p.alpha = static_cast<float>(attrs.alpha);
  p.m = node.shape[0];
  p.n = node.shape[1];
  const Shape& a = g.node(p.a).shape;
  p.k = p.trans_a ? a[0] : a[1];
  p.a_offsets = {0};
  p.b_offsets = {0};
  return p;
}

collage::Result<ConvPlan> plan_conv(const Graph& g, int n) {
  const Node& node = g.node(n);
  ConvPlan p;
  p.x = node.inputs[0];
  p.w = node.inputs[1];
  const std::size_t spatial = g.node(p.x).shape.size() - 2;
  if (spatial != 1 && spatial != 2) return unsupported("Conv with " + std::to_string(spatial) + " spatial dims");
  if (g.node(p.w).op != Op::constant) return unsupported("Conv with weights that are not a constant");
  const WindowGeometry w = conv_geometry(g, n);
  p.batch = w.batch;
  p.channels = w.channels;
  p.out_channels = w.out_channels;
  p.group = w.group;
  // A 1-D convolution is a 2-D one of height 1: its one dimension is the width.
  const std::size_t x = spatial - 1;
  p.width = w.in[x];
  p.kernel_w = w.kernel[x];
  p.out_w = w.out[x];
  p.stride_w = w.stride[x];
  p.pad_left = w.pad_begin[x];
  p.dilation_w = w.dilation[x];
  if (spatial == 2) {
    p.height = w.in[0];
    p.kernel_h = w.kernel[0];
    p.out_h = w.out[0];
    p.stride_h = w.stride[0];
    p.pad_top = w.pad_begin[0];
    p.dilation_h = w.dilation[0];
  } else {
    p.height = p.kernel_h = p.out_h = 1;
  }
  return p;
}

/// The addend `node` of the output of `anchor` seen as GEMM blocks: for MatMul/Gemm rows are
/// (batch, m) and columns n; for Conv rows are channels and columns the output pixels.
collage::Result<AddendPlan> plan_addend(const Graph& g, const CallPlan& call, int anchor, int node, float scale) {
  const Shape& out = g.node(anchor).shape;
  const Shape& shape = g.node(node).shape;
  const std::optional<Shape> b = broadcast_shapes(shape, out);
  if (!b || *b != out) return unsupported("an addend " + to_string(shape) + " that does not broadcast to " + to_string(out));
  const Shape t = aligned(shape, out.size());
  AddendPlan a;
  a.node = node;
  a.scale = scale;
  if (call.kind == CallPlan::Kind::conv) {
    if (t[0] != 1 && out[0] != 1) return unsupported("an addend " + to_string(shape) + " that varies along the batch");
    const bool spatial_full = std::equal(t.begin() + 2, t.end(), out.begin() + 2);
    const bool spatial_one = std::all_of(t.begin() + 2, t.end(), [](std::int64_t d) { return d == 1; });
    if (!spatial_full && !spatial_one) return unsupported("an addend " + to_string(shape) + " broadcast along some pixels");
    const std::int64_t pixels = call.conv.out_h * call.conv.out_w;
    a.period = out[1];
    a.row_stride = t[1] == out[1] && out[1] != 1 ? (spatial_one ? 1 : pixels) : 0;
    a.col_stride = spatial_one ? 0 : 1;
    return a;
  }
  const std::int64_t m = call.gemm.m;
  const std::int64_t n = call.gemm.n;
  if (out.size() < 2 || out[out.size() - 2] != m || out.back() != n) {
    return unsupported("an addend after a MatMul of a vector");
  }
  for (std::size_t d = 0; d + 2 < t.size(); ++d) {
    if (t[d] != 1 && out[d] != 1) return unsupported("an addend " + to_string(shape) + " that varies along the batch");
  }
  const std::int64_t tm = t[t.size() - 2];
  const std::int64_t tn = t.back();
  a.period = m;
  a.row_stride = tm == m && m != 1 ? tn : 0;
  a.col_stride = tn == n && n != 1 ? 1 : 0;
  return a;
}

}  // namespace

std::vector<int> operands(const CallPlan& plan) {
  std::vector<int> out;
  if (plan.kind == CallPlan::Kind::gemm) {
    out = {plan.gemm.a, plan.gemm.b};
  } else {
    out = {plan.conv.x, plan.conv.w};
  }
  for (const AddendPlan& a : plan.epilogue.addends) out.push_back(a.node);
  return out;
}

collage::Result<CallPlan> plan(const Graph& g, const LibraryCall& call) {
  collage::Result<AnchorChain> chain = read_anchor_chain(g, call);
  if (!chain.ok()) return chain.error();
  const int anchor = chain->anchor;
  const Node& node = g.node(anchor);
  CallPlan plan;
  plan.root = call.root();
  switch (node.op) {
    case Op::matmul:
    case Op::gemm: {
      collage::Result<GemmPlan> gemm = node.op == Op::matmul ? plan_matmul(g, anchor) : plan_gemm(g, anchor);
      if (!gemm.ok()) return gemm.error();
      plan.kind = CallPlan::Kind::gemm;
      plan.gemm = std::move(gemm).value();
      break;
    }
    case Op::conv: {
      collage::Result<ConvPlan> conv = plan_conv(g, anchor);
      if (!conv.ok()) return conv.error();
      plan.kind = CallPlan::Kind::conv;
      plan.conv = std::move(conv).value();
      break;
    }
    default: return unsupported(describe(g, anchor) + " is not a MatMul, Gemm or Conv");
  }
  // The anchor's own bias: Conv's B (one per output channel), Gemm's beta * C (broadcast).
  if (node.op == Op::conv && node.inputs.size() == 3) {
    plan.epilogue.addends.push_back(AddendPlan{node.inputs[2], plan.conv.out_channels, 1, 0, 1.0f});
  } else if (node.inputs.size() == 3) {
    const float beta = static_cast<float>(gemm_attrs(node).beta);
    collage::Result<AddendPlan> c = plan_addend(g, plan, anchor, node.inputs[2], beta);
    if (!c.ok()) return c.error();
    plan.epilogue.addends.push_back(*c);
  }
  EpiloguePlan& epilogue = plan.epilogue;
  for (const EpilogueStep& step : chain->epilogue) {
    if (epilogue.activation != Activation::none) {
      return unsupported(describe(g, step.node) + " after the activation");
    }
    if (step.kind == EpilogueStep::Kind::binary && step.op == Op::add && g.node(step.operand).op == Op::constant) {
      collage::Result<AddendPlan> addend = plan_addend(g, plan, anchor, step.operand, 1.0f);
      if (!addend.ok()) return addend.error();
      epilogue.addends.push_back(*addend);
    } else if (step.kind == EpilogueStep::Kind::gelu_erf) {
      epilogue.activation = Activation::gelu_erf;
    } else if (step.kind == EpilogueStep::Kind::unary && step.op == Op::relu) {
      epilogue.activation = Activation::relu;
    } else if (step.kind == EpilogueStep::Kind::unary && step.op == Op::clip) {
      const UnaryAttrs bounds = unary_attrs(g.node(step.node));
      epilogue.activation = Activation::clip;
      epilogue.lo = static_cast<float>(bounds.min);
      epilogue.hi = static_cast<float>(bounds.max);
    } else {
      return unsupported(describe(g, step.node) + " is not fused (only constant adds, then Relu, Clip or GELU)");
    }
  }
  return plan;
}

}  // namespace tc::eigen
