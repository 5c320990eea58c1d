#include "backends/cudnn/cudnn_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "backends/kit/epilogue.hpp"
#include "tensor/op_attrs.hpp"

namespace tc::cudnn {

using collage::Error;
using collage::ErrorCode;
using collage::Result;

namespace {

Error refuse(const std::string& why) { return Error{ErrorCode::invalid_argument, why}; }

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

/// `shape` as cuDNN dimensions: a unit height inserted before a 1-D problem's width, so that the
/// legacy API (4 or 5 dimensions) takes it. Fails for more than 3 spatial dimensions or more
/// elements than an int holds.
Result<std::vector<int>> cudnn_dims(const Graph& g, int n) {
  const Shape& s = g.node(n).shape;
  if (s.size() < 3 || s.size() > 5) return refuse(describe(g, n) + " of shape " + to_string(s) + " has not 1-3 spatial dims");
  if (numel(s) > kIntMax) return refuse(describe(g, n) + " of shape " + to_string(s) + " has more than 2^31-1 elements");
  std::vector<int> dims(s.begin(), s.end());
  if (s.size() == 3) dims.insert(dims.begin() + 2, 1);
  return dims;
}

/// A per-spatial-dimension list made 2-D for a 1-D problem (`unit` for the new height).
std::vector<int> spatial(const Ints& values, int unit) {
  std::vector<int> out(values.begin(), values.end());
  if (values.size() == 1) out.insert(out.begin(), unit);
  return out;
}

/// The pads of window `w` of node `n` (the same before and after), or an error when they differ.
Result<Ints> symmetric_pads(const Graph& g, int n, const WindowGeometry& w) {
  for (std::size_t d = 0; d < w.rank(); ++d) {
    if (w.pad_begin[d] != w.pad_end[d]) {
      return refuse(describe(g, n) + " pads " + std::to_string(w.pad_begin[d]) + " before and " +
                    std::to_string(w.pad_end[d]) + " after spatial dim " + std::to_string(d) +
                    "; cuDNN pads both sides alike");
    }
  }
  return w.pad_begin;
}

/// Whether `s` broadcast against a tensor of `out`'s rank has all its values along axis 1.
bool is_channel_vector(const Shape& s, const Shape& out) {
  if (s.size() > out.size() || numel(s) != out[1]) return false;
  Shape aligned(out.size() - s.size(), 1);
  aligned.insert(aligned.end(), s.begin(), s.end());
  for (std::size_t d = 0; d < aligned.size(); ++d) {
    if (d != 1 && aligned[d] != 1) return false;
  }
  return true;
}

Result<CallPlan> plan_conv(const Graph& g, const LibraryCall& call) {
  const int conv = call.nodes.front();
  const Node& node = g.node(conv);
  ConvPlan p;
  p.x = node.inputs[0];
  p.w = node.inputs[1];
  if (node.inputs.size() == 3) p.bias = node.inputs[2];
  const Shape& ys = node.shape;
  Result<std::vector<int>> x_dims = cudnn_dims(g, p.x);
  if (!x_dims.ok()) return x_dims.error();
  Result<std::vector<int>> w_dims = cudnn_dims(g, p.w);
  if (!w_dims.ok()) return w_dims.error();
  Result<std::vector<int>> y_dims = cudnn_dims(g, conv);
  if (!y_dims.ok()) return y_dims.error();
  const WindowGeometry window = conv_geometry(g, conv);
  Result<Ints> pads = symmetric_pads(g, conv, window);
  if (!pads.ok()) return pads.error();
  p.x_dims = *x_dims;
  p.w_dims = *w_dims;
  p.y_dims = *y_dims;
  p.pads = spatial(*pads, 0);
  p.strides = spatial(window.stride, 1);
  p.dilations = spatial(window.dilation, 1);
  p.groups = static_cast<int>(window.group);
  // The output size by cuDNN's formula must be the graph's.
  for (std::size_t d = 0; d < p.pads.size(); ++d) {
    const std::int64_t in = p.x_dims[d + 2];
    const std::int64_t extent = std::int64_t{p.dilations[d]} * (p.w_dims[d + 2] - 1) + 1;
    const std::int64_t out = (in + 2 * std::int64_t{p.pads[d]} - extent) / p.strides[d] + 1;
    if (out != p.y_dims[d + 2]) return refuse(describe(g, conv) + " output size differs from cuDNN's formula");
  }

  Result<AnchorChain> chain = read_anchor_chain(g, call);
  if (!chain.ok()) return chain.error();
  int cur = conv;
  for (std::size_t i = 0; i < chain->epilogue.size(); ++i) {
    const EpilogueStep& step = chain->epilogue[i];
    if (step.kind == EpilogueStep::Kind::unary && step.op == Op::relu && i + 1 == chain->epilogue.size()) {
      p.relu = true;
    } else if (step.kind == EpilogueStep::Kind::binary && step.op == Op::add) {
      const Shape& s = g.node(step.operand).shape;
      if (s == ys && p.z < 0) {
        p.z = step.operand;
      } else if (is_channel_vector(s, ys) && p.bias < 0) {
        p.bias = step.operand;
      } else {
        return refuse("cannot add " + describe(g, step.operand) + " of shape " + to_string(s) + " to a " +
                      to_string(ys) + " convolution (one per-channel bias and one tensor of its shape)");
      }
      if (g.node(step.node).shape != ys) {
        return refuse(describe(g, step.node) + " broadcasts the convolution to " + to_string(g.node(step.node).shape));
      }
    } else {
      return refuse("cannot fuse " + describe(g, step.node) + " after " + describe(g, cur));
    }
    cur = step.node;
  }
  p.result = cur;
  return CallPlan{p};
}

Result<CallPlan> plan_pool(const Graph& g, int n) {
  const Node& node = g.node(n);
  PoolPlan p;
  p.x = node.inputs[0];
  p.result = n;
  Result<std::vector<int>> x_dims = cudnn_dims(g, p.x);
  if (!x_dims.ok()) return x_dims.error();
  Result<std::vector<int>> y_dims = cudnn_dims(g, n);
  if (!y_dims.ok()) return y_dims.error();
  p.x_dims = *x_dims;
  p.y_dims = *y_dims;
  if (node.op == Op::global_average_pool || node.op == Op::global_max_pool) {
    p.mode = node.op == Op::global_max_pool ? PoolMode::max : PoolMode::average_include_pad;
    p.window.assign(p.x_dims.begin() + 2, p.x_dims.end());
    p.pads.assign(p.window.size(), 0);
    p.strides.assign(p.window.size(), 1);
    return CallPlan{p};
  }
  const WindowGeometry window = pool_geometry(g, n);
  if (node.op == Op::max_pool) {
    if (std::any_of(window.dilation.begin(), window.dilation.end(), [](std::int64_t d) { return d != 1; })) {
      return refuse(describe(g, n) + " is dilated; cuDNN pooling is not");
    }
    p.mode = PoolMode::max;
  } else {
    p.mode = pool_attrs(node).count_include_pad ? PoolMode::average_include_pad : PoolMode::average_exclude_pad;
  }
  Result<Ints> pads = symmetric_pads(g, n, window);
  if (!pads.ok()) return pads.error();
  p.pads = spatial(*pads, 0);
  p.window = spatial(window.kernel, 1);
  p.strides = spatial(window.stride, 1);
  // cuDNN's windows end inside the padded input (floor); a ceil-mode extra window is refused.
  for (std::size_t d = 0; d < p.pads.size(); ++d) {
    const std::int64_t out = (std::int64_t{p.x_dims[d + 2]} + 2 * p.pads[d] - p.window[d]) / p.strides[d] + 1;
    if (out != p.y_dims[d + 2]) return refuse(describe(g, n) + " output size needs ceil_mode, which cuDNN lacks");
  }
  return CallPlan{p};
}

Result<CallPlan> plan_softmax(const Graph& g, int n) {
  const Node& node = g.node(n);
  SoftmaxPlan p;
  p.x = node.inputs[0];
  p.result = n;
  const Shape& s = node.shape;
  const std::size_t a = axis_attr(node);
  if (s.empty() || a >= s.size()) return refuse(describe(g, n) + " has no canonical axis");
  if (numel(s) > kIntMax) return refuse(describe(g, n) + " has more than 2^31-1 elements");
  p.dims = {static_cast<int>(product(s, 0, a)), static_cast<int>(s[a]), static_cast<int>(product(s, a + 1, s.size())), 1};
  return CallPlan{p};
}

}  // namespace

std::vector<int> operands(const CallPlan& plan) {
  if (const auto* c = std::get_if<ConvPlan>(&plan)) return {c->x, c->w, c->bias, c->z};
  if (const auto* p = std::get_if<PoolPlan>(&plan)) return {p->x};
  return {std::get<SoftmaxPlan>(plan).x};
}

Result<CallPlan> plan(const Graph& g, const LibraryCall& call) {
  if (call.nodes.empty()) return refuse("an empty call");
  const int first = call.nodes.front();
  const Op op = g.node(first).op;
  if (op == Op::conv) return plan_conv(g, call);
  if (call.nodes.size() != 1) return refuse("cannot fuse anything with " + describe(g, first));
  switch (op) {
    case Op::max_pool:
    case Op::average_pool:
    case Op::global_average_pool:
    case Op::global_max_pool:
      return plan_pool(g, first);
    case Op::softmax:
      return plan_softmax(g, first);
    default:
      return refuse(describe(g, first) + " is not a convolution, pooling or softmax");
  }
}

}  // namespace tc::cudnn
