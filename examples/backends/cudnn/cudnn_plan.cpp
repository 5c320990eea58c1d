#include "backends/cudnn/cudnn_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace tc {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using Ints = std::vector<std::int64_t>;

namespace {

Error refuse(const std::string& why) { return Error{ErrorCode::invalid_argument, "cudnn: " + why}; }

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

/// A per-spatial-dimension attribute list made 2-D for a 1-D problem (`unit` for the new height).
std::vector<int> spatial(const Ints& values, std::size_t k, int unit) {
  std::vector<int> out(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k));
  if (k == 1) out.insert(out.begin(), unit);
  return out;
}

/// The begin pads of a pads list (begins then ends), or an error when they differ from the ends.
Result<Ints> symmetric_pads(const Graph& g, int n, std::size_t k) {
  const Ints pads = g.node(n).attrs.get_ints("pads", Ints(2 * k, 0));
  if (pads.size() != 2 * k) return refuse(describe(g, n) + " has no canonical pads");
  for (std::size_t d = 0; d < k; ++d) {
    if (pads[d] != pads[d + k]) {
      return refuse(describe(g, n) + " pads " + std::to_string(pads[d]) + " before and " + std::to_string(pads[d + k]) +
                    " after spatial dim " + std::to_string(d) + "; cuDNN pads both sides alike");
    }
  }
  return Ints(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(k));
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

Result<CudnnPlan> plan_conv(const Graph& g, const std::vector<int>& nodes) {
  const int conv = nodes.front();
  const Node& node = g.node(conv);
  ConvPlan p;
  p.x = node.inputs[0];
  p.w = node.inputs[1];
  if (node.inputs.size() == 3) p.bias = node.inputs[2];
  const Shape& xs = g.node(p.x).shape;
  const Shape& ys = node.shape;
  const std::size_t k = xs.size() - 2;
  Result<std::vector<int>> x_dims = cudnn_dims(g, p.x);
  if (!x_dims.ok()) return x_dims.error();
  Result<std::vector<int>> w_dims = cudnn_dims(g, p.w);
  if (!w_dims.ok()) return w_dims.error();
  Result<std::vector<int>> y_dims = cudnn_dims(g, conv);
  if (!y_dims.ok()) return y_dims.error();
  Result<Ints> pads = symmetric_pads(g, conv, k);
  if (!pads.ok()) return pads.error();
  p.x_dims = *x_dims;
  p.w_dims = *w_dims;
  p.y_dims = *y_dims;
  p.pads = spatial(*pads, k, 0);
  p.strides = spatial(node.attrs.get_ints("strides", Ints(k, 1)), k, 1);
  p.dilations = spatial(node.attrs.get_ints("dilations", Ints(k, 1)), k, 1);
  p.groups = static_cast<int>(node.attrs.get_int("group", 1));
  // The output size by cuDNN's formula must be the graph's.
  for (std::size_t d = 0; d < p.pads.size(); ++d) {
    const std::int64_t in = p.x_dims[d + 2];
    const std::int64_t extent = std::int64_t{p.dilations[d]} * (p.w_dims[d + 2] - 1) + 1;
    const std::int64_t out = (in + 2 * std::int64_t{p.pads[d]} - extent) / p.strides[d] + 1;
    if (out != p.y_dims[d + 2]) return refuse(describe(g, conv) + " output size differs from cuDNN's formula");
  }

  auto inside = [&](int n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
  int cur = conv;
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const int n = nodes[i];
    const Node& step = g.node(n);
    const bool reads_cur = std::find(step.inputs.begin(), step.inputs.end(), cur) != step.inputs.end();
    if (step.op == Op::relu && reads_cur && i + 1 == nodes.size()) {
      p.relu = true;
    } else if (step.op == Op::add && reads_cur && step.inputs[0] != step.inputs[1]) {
      const int other = step.inputs[0] == cur ? step.inputs[1] : step.inputs[0];
      const Shape& s = g.node(other).shape;
      if (inside(other)) return refuse(describe(g, n) + " adds two values of the call");
      if (s == ys && p.z < 0) {
        p.z = other;
      } else if (is_channel_vector(s, ys) && p.bias < 0) {
        p.bias = other;
      } else {
        return refuse("cannot add " + describe(g, other) + " of shape " + to_string(s) + " to a " + to_string(ys) +
                      " convolution (one per-channel bias and one tensor of its shape)");
      }
      if (step.shape != ys) return refuse(describe(g, n) + " broadcasts the convolution to " + to_string(step.shape));
    } else {
      return refuse("cannot fuse " + describe(g, n) + " after " + describe(g, cur));
    }
    cur = n;
  }
  p.result = cur;
  return CudnnPlan{p};
}

Result<CudnnPlan> plan_pool(const Graph& g, int n) {
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
  const std::size_t k = g.node(p.x).shape.size() - 2;
  if (node.op == Op::global_average_pool || node.op == Op::global_max_pool) {
    p.mode = node.op == Op::global_max_pool ? PoolMode::max : PoolMode::average_include_pad;
    p.window.assign(p.x_dims.begin() + 2, p.x_dims.end());
    p.pads.assign(p.window.size(), 0);
    p.strides.assign(p.window.size(), 1);
    return CudnnPlan{p};
  }
  if (node.op == Op::max_pool) {
    const Ints dilations = node.attrs.get_ints("dilations", Ints(k, 1));
    if (std::any_of(dilations.begin(), dilations.end(), [](std::int64_t d) { return d != 1; })) {
      return refuse(describe(g, n) + " is dilated; cuDNN pooling is not");
    }
    p.mode = PoolMode::max;
  } else {
    p.mode = node.attrs.get_int("count_include_pad") != 0 ? PoolMode::average_include_pad : PoolMode::average_exclude_pad;
  }
  Result<Ints> pads = symmetric_pads(g, n, k);
  if (!pads.ok()) return pads.error();
  p.pads = spatial(*pads, k, 0);
  p.window = spatial(node.attrs.get_ints("kernel_shape"), k, 1);
  p.strides = spatial(node.attrs.get_ints("strides", Ints(k, 1)), k, 1);
  if (p.window.size() != p.pads.size() || p.strides.size() != p.pads.size()) {
    return refuse(describe(g, n) + " has no canonical kernel_shape and strides");
  }
  // cuDNN's windows end inside the padded input (floor); a ceil-mode extra window is refused.
  for (std::size_t d = 0; d < p.pads.size(); ++d) {
    const std::int64_t out = (std::int64_t{p.x_dims[d + 2]} + 2 * p.pads[d] - p.window[d]) / p.strides[d] + 1;
    if (out != p.y_dims[d + 2]) return refuse(describe(g, n) + " output size needs ceil_mode, which cuDNN lacks");
  }
  return CudnnPlan{p};
}

Result<CudnnPlan> plan_softmax(const Graph& g, int n) {
  const Node& node = g.node(n);
  SoftmaxPlan p;
  p.x = node.inputs[0];
  p.result = n;
  const Shape& s = node.shape;
  const std::int64_t axis = node.attrs.get_int("axis", -1);
  if (s.empty() || axis < 0 || axis >= static_cast<std::int64_t>(s.size())) {
    return refuse(describe(g, n) + " has no canonical axis");
  }
  if (numel(s) > kIntMax) return refuse(describe(g, n) + " has more than 2^31-1 elements");
  const auto a = static_cast<std::size_t>(axis);
  p.dims = {static_cast<int>(product(s, 0, a)), static_cast<int>(s[a]), static_cast<int>(product(s, a + 1, s.size())), 1};
  return CudnnPlan{p};
}

}  // namespace

std::vector<int> plan_operands(const CudnnPlan& plan) {
  if (const auto* c = std::get_if<ConvPlan>(&plan)) return {c->x, c->w, c->bias, c->z};
  if (const auto* p = std::get_if<PoolPlan>(&plan)) return {p->x};
  return {std::get<SoftmaxPlan>(plan).x};
}

Result<CudnnPlan> plan_cudnn(const Graph& g, const std::vector<int>& nodes) {
  if (nodes.empty()) return refuse("an empty call");
  const int first = nodes.front();
  const Op op = g.node(first).op;
  if (op == Op::conv) return plan_conv(g, nodes);
  if (nodes.size() != 1) return refuse("cannot fuse anything with " + describe(g, first));
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

}  // namespace tc
