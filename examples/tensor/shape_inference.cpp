#include "tensor/shape_inference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Status;
using Ints = std::vector<std::int64_t>;

/// Shape inference of one node: reads its inputs' shapes, writes its shape and attributes.
class NodeInference {
 public:
  NodeInference(Graph& graph, int n) : graph_(graph), n_(n), node_(graph.mutable_node(n)) {}

  Status run() {
    for (int in : node_.inputs) {
      for (std::int64_t d : graph_.node(in).shape) {
        if (d < 0) return fail("input '" + graph_.node(in).name + "' has an unknown dimension");
      }
    }
    const Op op = node_.op;
    if (op == Op::input || op == Op::constant) return Status::success();
    if (is_unary_elementwise(op)) return unary();
    if (is_binary_elementwise(op)) return binary();
    if (is_reduction(op)) return reduction();
    switch (op) {
      case Op::conv: return conv();
      case Op::gemm: return gemm();
      case Op::matmul: return matmul();
      case Op::max_pool:
      case Op::average_pool: return pool();
      case Op::global_average_pool:
      case Op::global_max_pool: return global_pool();
      case Op::batch_norm: return batch_norm();
      case Op::layer_norm: return layer_norm();
      case Op::softmax: return softmax();
      case Op::reshape: return reshape();
      case Op::flatten: return flatten();
      case Op::squeeze: return squeeze();
      case Op::unsqueeze: return unsqueeze();
      case Op::transpose: return transpose();
      case Op::concat: return concat();
      case Op::slice: return slice();
      case Op::pad: return pad();
      case Op::gather: return gather();
      default: return fail("no shape rule for this operator");
    }
  }

 private:
  const Shape& in(std::size_t k) const { return graph_.node(node_.inputs[k]).shape; }
  Attributes& attrs() { return node_.attrs; }

  Status fail(const std::string& problem) const {
    return Error{ErrorCode::invalid_argument, describe(graph_, n_) + ": " + problem};
  }
  Status done(Shape shape) {
    node_.shape = std::move(shape);
    return Status::success();
  }
  /// The list attribute `name` of `rank` entries, `fill` when absent; false when its length is off.
  bool list_attr(const std::string& name, std::size_t rank, std::int64_t fill, Ints& out) {
    out = attrs().get_ints(name, Ints(rank, fill));
    if (out.size() != rank) return false;
    attrs().set(name, out);
    return true;
  }

  Status unary() {
    switch (node_.op) {
      case Op::clip:
        attrs().set("min", attrs().get_float("min", -std::numeric_limits<double>::infinity()));
        attrs().set("max", attrs().get_float("max", std::numeric_limits<double>::infinity()));
        break;
      case Op::leaky_relu: attrs().set("alpha", attrs().get_float("alpha", 0.01)); break;
      case Op::hard_sigmoid:
        attrs().set("alpha", attrs().get_float("alpha", 0.2));
        attrs().set("beta", attrs().get_float("beta", 0.5));
        break;
      default: break;
    }
    return done(in(0));
  }

  Status binary() {
    auto out = broadcast_shapes(in(0), in(1));
    if (!out) return fail("shapes " + to_string(in(0)) + " and " + to_string(in(1)) + " do not broadcast");
    return done(*out);
  }

  /// Resolves "auto_pad" into explicit pads for a window of `kernel` (already dilated) over the
  /// spatial dims of `x`; false when auto_pad has an unknown code.
  bool resolve_auto_pad(const Shape& x, const Ints& kernel, const Ints& strides, Ints& pads) {
    const std::int64_t mode = attrs().get_int("auto_pad", kNotSet);
    attrs().erase("auto_pad");
    const std::size_t k = kernel.size();
    if (mode == kNotSet) return true;
    if (mode == kValid) {
      pads.assign(2 * k, 0);
      return true;
    }
    if (mode != kSameUpper && mode != kSameLower) return false;
    pads.assign(2 * k, 0);
    for (std::size_t d = 0; d < k; ++d) {
      const std::int64_t size = x[d + 2];
      const std::int64_t out = (size + strides[d] - 1) / strides[d];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * strides[d] + kernel[d] - size);
      const std::int64_t small = total / 2;
      pads[d] = mode == kSameUpper ? small : total - small;
      pads[d + k] = total - pads[d];
    }
    return true;
  }

  /// Output size of a window of (dilated) extent `extent` over `size` padded by `pads`.
  static std::int64_t window_out(std::int64_t size, std::int64_t pad_sum, std::int64_t extent, std::int64_t stride,
                                 bool ceil_mode) {
    const std::int64_t span = size + pad_sum - extent;
    if (span < 0) return 0;
    return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  }

  Status conv() {
    const Shape& x = in(0);
    const Shape& w = in(1);
    if (x.size() < 3) return fail("input " + to_string(x) + " must have rank >= 3 (N, C, spatial...)");
    if (w.size() != x.size()) return fail("weight " + to_string(w) + " must have the input's rank " + std::to_string(x.size()));
    const std::size_t k = x.size() - 2;
    const std::int64_t group = attrs().get_int("group", 1);
    if (group < 1) return fail("group must be >= 1");
    attrs().set("group", group);
    if (x[1] != w[1] * group) {
      return fail("input channels " + std::to_string(x[1]) + " do not match the weight's " + std::to_string(w[1]) +
                  " x group " + std::to_string(group));
    }
    if (w[0] % group != 0) return fail("output channels " + std::to_string(w[0]) + " are not a multiple of group");
    if (node_.inputs.size() == 3 && in(2) != Shape{w[0]}) {
      return fail("bias " + to_string(in(2)) + " must be [" + std::to_string(w[0]) + "]");
    }
    Ints kernel(w.begin() + 2, w.end());
    if (attrs().has("kernel_shape") && attrs().get_ints("kernel_shape") != kernel) {
      return fail("kernel_shape does not match the weight " + to_string(w));
    }
    attrs().erase("kernel_shape");
    Ints strides, dilations, pads;
    if (!list_attr("strides", k, 1, strides)) return fail("strides must have " + std::to_string(k) + " entries");
    if (!list_attr("dilations", k, 1, dilations)) return fail("dilations must have " + std::to_string(k) + " entries");
    if (!list_attr("pads", 2 * k, 0, pads)) return fail("pads must have " + std::to_string(2 * k) + " entries");
    for (std::size_t d = 0; d < k; ++d) {
      if (strides[d] < 1 || dilations[d] < 1) return fail("strides and dilations must be >= 1");
    }
    Ints extent(k);
    for (std::size_t d = 0; d < k; ++d) extent[d] = dilations[d] * (kernel[d] - 1) + 1;
    if (!resolve_auto_pad(x, extent, strides, pads)) return fail("unknown auto_pad");
    attrs().set("pads", pads);
    Shape out{x[0], w[0]};
    for (std::size_t d = 0; d < k; ++d) {
      if (pads[d] < 0 || pads[d + k] < 0) return fail("pads must not be negative");
      const std::int64_t o = window_out(x[d + 2], pads[d] + pads[d + k], extent[d], strides[d], false);
      if (o <= 0) return fail("the kernel does not fit the padded input " + to_string(x));
      out.push_back(o);
    }
    return done(out);
  }

  Status gemm() {
    const Shape& a = in(0);
    const Shape& b = in(1);
    if (a.size() != 2 || b.size() != 2) return fail("A " + to_string(a) + " and B " + to_string(b) + " must be 2-D");
    const std::int64_t trans_a = attrs().get_int("transA", attrs().get_int("trans_a", 0));
    const std::int64_t trans_b = attrs().get_int("transB", attrs().get_int("trans_b", 0));
    attrs().erase("transA");
    attrs().erase("transB");
    attrs().set("trans_a", trans_a != 0 ? 1 : 0);
    attrs().set("trans_b", trans_b != 0 ? 1 : 0);
    attrs().set("alpha", attrs().get_float("alpha", 1.0));
    attrs().set("beta", attrs().get_float("beta", 1.0));
    const std::int64_t m = trans_a ? a[1] : a[0];
    const std::int64_t ka = trans_a ? a[0] : a[1];
    const std::int64_t kb = trans_b ? b[1] : b[0];
    const std::int64_t n = trans_b ? b[0] : b[1];
    if (ka != kb) return fail("inner dimensions differ: A " + to_string(a) + ", B " + to_string(b));
    if (node_.inputs.size() == 3) {
      auto c = broadcast_shapes(in(2), {m, n});
      if (!c || *c != Shape{m, n}) return fail("C " + to_string(in(2)) + " does not broadcast to [" + std::to_string(m) + "," + std::to_string(n) + "]");
    }
    return done({m, n});
  }

  Status matmul() {
    Shape a = in(0);
    Shape b = in(1);
    if (a.empty() || b.empty()) return fail("operands must not be scalars");
    const bool a_vec = a.size() == 1;
    const bool b_vec = b.size() == 1;
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) b.push_back(1);
    if (a.back() != b[b.size() - 2]) return fail("inner dimensions differ: " + to_string(in(0)) + " x " + to_string(in(1)));
    auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
    if (!batch) return fail("batch dimensions of " + to_string(in(0)) + " and " + to_string(in(1)) + " do not broadcast");
    Shape out = *batch;
    if (!a_vec) out.push_back(a[a.size() - 2]);
    if (!b_vec) out.push_back(b.back());
    return done(out);
  }

  Status pool() {
    const Shape& x = in(0);
    if (x.size() < 3) return fail("input " + to_string(x) + " must have rank >= 3");
    const std::size_t k = x.size() - 2;
    Ints kernel = attrs().get_ints("kernel_shape");
    if (kernel.size() != k) return fail("kernel_shape must have " + std::to_string(k) + " entries");
    Ints strides, pads, dilations;
    if (!list_attr("strides", k, 1, strides)) return fail("strides must have " + std::to_string(k) + " entries");
    if (!list_attr("pads", 2 * k, 0, pads)) return fail("pads must have " + std::to_string(2 * k) + " entries");
    if (node_.op == Op::max_pool) {
      if (!list_attr("dilations", k, 1, dilations)) return fail("dilations must have " + std::to_string(k) + " entries");
    } else {
      if (attrs().has("dilations") && attrs().get_ints("dilations") != Ints(k, 1)) return fail("dilations are not supported");
      attrs().erase("dilations");
      dilations.assign(k, 1);
      attrs().set("count_include_pad", attrs().get_int("count_include_pad", 0) != 0 ? 1 : 0);
    }
    const bool ceil_mode = attrs().get_int("ceil_mode", 0) != 0;
    attrs().set("ceil_mode", ceil_mode ? 1 : 0);
    Ints extent(k);
    for (std::size_t d = 0; d < k; ++d) {
      if (kernel[d] < 1 || strides[d] < 1 || dilations[d] < 1) return fail("kernel, strides and dilations must be >= 1");
      extent[d] = dilations[d] * (kernel[d] - 1) + 1;
    }
    if (!resolve_auto_pad(x, extent, strides, pads)) return fail("unknown auto_pad");
    attrs().set("pads", pads);
    Shape out{x[0], x[1]};
    for (std::size_t d = 0; d < k; ++d) {
      if (pads[d] < 0 || pads[d + k] < 0) return fail("pads must not be negative");
      if (pads[d] >= extent[d] || pads[d + k] >= extent[d]) return fail("pads must be smaller than the kernel");
      std::int64_t o = window_out(x[d + 2], pads[d] + pads[d + k], extent[d], strides[d], ceil_mode);
      // A last window that would start in the end padding is dropped (PyTorch's and ONNX's rule).
      if (ceil_mode && o > 0 && (o - 1) * strides[d] >= x[d + 2] + pads[d]) --o;
      if (o <= 0) return fail("the kernel does not fit the padded input " + to_string(x));
      out.push_back(o);
    }
    return done(out);
  }

  Status global_pool() {
    const Shape& x = in(0);
    if (x.size() < 3) return fail("input " + to_string(x) + " must have rank >= 3");
    Shape out{x[0], x[1]};
    out.resize(x.size(), 1);
    return done(out);
  }

  Status batch_norm() {
    const Shape& x = in(0);
    if (x.size() < 2) return fail("input " + to_string(x) + " must have rank >= 2");
    for (std::size_t k = 1; k < 5; ++k) {
      if (in(k) != Shape{x[1]}) return fail("scale, bias, mean and var must be [" + std::to_string(x[1]) + "], got " + to_string(in(k)));
    }
    if (attrs().get_int("training_mode", 0) != 0) return fail("training mode is not supported");
    attrs().erase("training_mode");
    attrs().erase("momentum");
    attrs().erase("spatial");
    attrs().set("epsilon", attrs().get_float("epsilon", 1e-5));
    return done(x);
  }

  Status layer_norm() {
    const Shape& x = in(0);
    auto axis = normalize_axis(attrs().get_int("axis", -1), x.size());
    if (!axis) return fail("axis out of range for " + to_string(x));
    attrs().set("axis", *axis);
    attrs().set("epsilon", attrs().get_float("epsilon", 1e-5));
    attrs().erase("stash_type");
    const Shape normalized(x.begin() + *axis, x.end());
    for (std::size_t k = 1; k < node_.inputs.size(); ++k) {
      auto b = broadcast_shapes(in(k), normalized);
      if (!b || *b != normalized) return fail("scale/bias " + to_string(in(k)) + " do not broadcast to " + to_string(normalized));
    }
    return done(x);
  }

  Status softmax() {
    const Shape& x = in(0);
    if (x.empty()) return fail("input must not be a scalar");
    auto axis = normalize_axis(attrs().get_int("axis", -1), x.size());
    if (!axis) return fail("axis out of range for " + to_string(x));
    attrs().set("axis", *axis);
    return done(x);
  }

  Status reduction() {
    const Shape& x = in(0);
    Ints axes;
    if (attrs().has("axes")) {
      for (std::int64_t a : attrs().get_ints("axes")) {
        auto na = normalize_axis(a, x.size());
        if (!na) return fail("axis " + std::to_string(a) + " out of range for " + to_string(x));
        axes.push_back(*na);
      }
    }
    if (axes.empty()) {
      for (std::size_t d = 0; d < x.size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    const bool keepdims = attrs().get_int("keepdims", 1) != 0;
    attrs().set("axes", axes);
    attrs().set("keepdims", keepdims ? 1 : 0);
    attrs().erase("noop_with_empty_axes");
    Shape out;
    for (std::size_t d = 0; d < x.size(); ++d) {
      const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
      if (!reduced) out.push_back(x[d]);
      else if (keepdims) out.push_back(1);
    }
    return done(out);
  }

  Status reshape() {
    const Shape& x = in(0);
    if (!attrs().has("shape")) {
      if (numel(node_.shape) != numel(x)) {
        return fail("needs a target shape (attribute 'shape')");
      }
      return Status::success();
    }
    Ints target = attrs().get_ints("shape");
    const bool allow_zero = attrs().get_int("allowzero", 0) != 0;
    attrs().erase("shape");
    attrs().erase("allowzero");
    int infer_at = -1;
    std::int64_t known = 1;
    for (std::size_t d = 0; d < target.size(); ++d) {
      if (target[d] == 0 && !allow_zero) {
        if (d >= x.size()) return fail("0 in the target shape at " + std::to_string(d) + " has no input dimension");
        target[d] = x[d];
      }
      if (target[d] == -1) {
        if (infer_at >= 0) return fail("more than one -1 in the target shape");
        infer_at = static_cast<int>(d);
      } else if (target[d] < 0) {
        return fail("negative dimension in the target shape");
      } else if (target[d] != 0 && known > std::numeric_limits<std::int64_t>::max() / target[d]) {
        return fail("the target shape " + to_string(target) + " is too large");
      } else {
        known *= target[d];
      }
    }
    if (infer_at >= 0) {
      if (known == 0 || numel(x) % known != 0) return fail("cannot infer -1 reshaping " + to_string(x));
      target[static_cast<std::size_t>(infer_at)] = numel(x) / known;
    }
    if (numel(target) != numel(x)) return fail("cannot reshape " + to_string(x) + " to " + to_string(target));
    return done(target);
  }

  Status flatten() {
    const Shape& x = in(0);
    std::int64_t axis = attrs().get_int("axis", 1);
    if (axis < 0) axis += static_cast<std::int64_t>(x.size());
    if (axis < 0 || axis > static_cast<std::int64_t>(x.size())) return fail("axis out of range for " + to_string(x));
    attrs().set("axis", axis);
    const auto a = static_cast<std::size_t>(axis);
    return done({product(x, 0, a), product(x, a, x.size())});
  }

  Status squeeze() {
    const Shape& x = in(0);
    Ints axes;
    for (std::int64_t a : attrs().get_ints("axes")) {
      auto na = normalize_axis(a, x.size());
      if (!na) return fail("axis " + std::to_string(a) + " out of range for " + to_string(x));
      if (x[static_cast<std::size_t>(*na)] != 1) return fail("cannot squeeze dimension " + std::to_string(*na) + " of " + to_string(x));
      axes.push_back(*na);
    }
    if (!attrs().has("axes")) {
      for (std::size_t d = 0; d < x.size(); ++d) {
        if (x[d] == 1) axes.push_back(static_cast<std::int64_t>(d));
      }
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    attrs().set("axes", axes);
    Shape out;
    for (std::size_t d = 0; d < x.size(); ++d) {
      if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d))) out.push_back(x[d]);
    }
    return done(out);
  }

  Status unsqueeze() {
    const Shape& x = in(0);
    const std::size_t rank = x.size() + attrs().get_ints("axes").size();
    Ints axes;
    for (std::int64_t a : attrs().get_ints("axes")) {
      auto na = normalize_axis(a, rank);
      if (!na) return fail("axis " + std::to_string(a) + " out of range for output rank " + std::to_string(rank));
      axes.push_back(*na);
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return fail("repeated axis");
    if (axes.empty()) return fail("needs axes");
    attrs().set("axes", axes);
    Shape out;
    std::size_t next = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      if (std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d))) {
        out.push_back(1);
      } else {
        out.push_back(x[next++]);
      }
    }
    return done(out);
  }

  Status transpose() {
    const Shape& x = in(0);
    Ints perm = attrs().get_ints("perm");
    if (!attrs().has("perm")) {
      for (std::size_t d = x.size(); d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
    }
    if (perm.size() != x.size()) return fail("perm must have " + std::to_string(x.size()) + " entries");
    Ints seen(x.size(), 0);
    Shape out;
    for (std::int64_t& p : perm) {
      auto np = normalize_axis(p, x.size());
      if (!np || seen[static_cast<std::size_t>(*np)]++) return fail("perm is not a permutation");
      p = *np;
      out.push_back(x[static_cast<std::size_t>(p)]);
    }
    attrs().set("perm", perm);
    return done(out);
  }

  Status concat() {
    const Shape& first = in(0);
    if (first.empty()) return fail("cannot concatenate scalars");
    auto axis = normalize_axis(attrs().get_int("axis", 0), first.size());
    if (!axis || !attrs().has("axis")) return fail("needs an axis in range for " + to_string(first));
    attrs().set("axis", *axis);
    Shape out = first;
    const auto a = static_cast<std::size_t>(*axis);
    for (std::size_t k = 1; k < node_.inputs.size(); ++k) {
      const Shape& s = in(k);
      if (s.size() != first.size()) return fail("inputs have different ranks");
      for (std::size_t d = 0; d < s.size(); ++d) {
        if (d != a && s[d] != first[d]) return fail("input " + to_string(s) + " does not match " + to_string(first) + " off the axis");
      }
      out[a] += s[a];
    }
    return done(out);
  }

  Status slice() {
    const Shape& x = in(0);
    const std::size_t rank = x.size();
    if (!attrs().has("ends")) {
      Ints starts = attrs().get_ints("starts");
      Ints steps = attrs().get_ints("steps");
      if (starts.size() != rank || steps.size() != rank || node_.shape.size() != rank) {
        return fail("needs starts and ends");
      }
      for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t len = node_.shape[d];
        bool inside = len >= 0 && steps[d] != 0;
        if (inside && len > 0) inside = starts[d] >= 0 && starts[d] < x[d] && len <= x[d];
        if (inside && len > 1) {
          // Distinct elements of the input, so len and |step| are at most the dimension (no overflow).
          inside = steps[d] <= x[d] && steps[d] >= -x[d];
          const std::int64_t last = inside ? starts[d] + (len - 1) * steps[d] : 0;
          inside = inside && last >= 0 && last < x[d];
        }
        if (!inside) return fail("starts, steps and the shape " + to_string(node_.shape) + " leave the input " + to_string(x));
      }
      return Status::success();
    }
    Ints starts_in = attrs().get_ints("starts");
    Ints ends_in = attrs().get_ints("ends");
    Ints axes_in = attrs().get_ints("axes");
    Ints steps_in = attrs().get_ints("steps");
    if (axes_in.empty()) {
      for (std::size_t d = 0; d < starts_in.size(); ++d) axes_in.push_back(static_cast<std::int64_t>(d));
    }
    if (steps_in.empty()) steps_in.assign(starts_in.size(), 1);
    if (starts_in.size() != ends_in.size() || axes_in.size() != starts_in.size() || steps_in.size() != starts_in.size()) {
      return fail("starts, ends, axes and steps must have the same length");
    }
    Ints starts(rank, 0), steps(rank, 1);
    Shape out = x;
    Ints seen(rank, 0);
    for (std::size_t k = 0; k < starts_in.size(); ++k) {
      auto axis = normalize_axis(axes_in[k], rank);
      if (!axis || seen[static_cast<std::size_t>(*axis)]++) return fail("axes out of range or repeated");
      const auto a = static_cast<std::size_t>(*axis);
      const std::int64_t dim = x[a];
      const std::int64_t step = steps_in[k];
      if (step == 0) return fail("step must not be 0");
      if (dim == 0) {
        steps[a] = step;
        out[a] = 0;
        continue;
      }
      std::int64_t start = starts_in[k];
      std::int64_t end = ends_in[k];
      if (start < 0) start += dim;
      if (end < 0) end += dim;
      if (step > 0) {
        start = std::clamp<std::int64_t>(start, 0, dim);
        end = std::clamp<std::int64_t>(end, 0, dim);
      } else {
        start = std::clamp<std::int64_t>(start, 0, dim - 1);
        end = std::clamp<std::int64_t>(end, -1, dim - 1);
      }
      // Written so that no step (INT64_MIN included) overflows.
      std::int64_t len = 0;
      if (step > 0 && end > start) len = (end - start - 1) / step + 1;
      if (step < 0 && start > end) len = 1 - (start - end - 1) / step;
      starts[a] = start;
      steps[a] = step;
      out[a] = std::max<std::int64_t>(0, len);
    }
    attrs().erase("ends");
    attrs().erase("axes");
    attrs().set("starts", starts);
    attrs().set("steps", steps);
    return done(out);
  }

  Status pad() {
    const Shape& x = in(0);
    Ints pads;
    if (!list_attr("pads", 2 * x.size(), 0, pads)) return fail("pads must have " + std::to_string(2 * x.size()) + " entries");
    const std::int64_t mode = attrs().get_int("mode", kPadConstant);
    if (mode != kPadConstant && mode != kPadReflect && mode != kPadEdge) return fail("unknown mode");
    attrs().set("mode", mode);
    attrs().set("value", attrs().get_float("value", 0.0));
    Shape out = x;
    for (std::size_t d = 0; d < x.size(); ++d) {
      out[d] = x[d] + pads[d] + pads[d + x.size()];
      if (out[d] < 0) return fail("pads remove more than dimension " + std::to_string(d) + " of " + to_string(x));
      // Negative pads crop first; the positive ones then extend what is left.
      const std::int64_t begin = pads[d];
      const std::int64_t end = pads[d + x.size()];
      const std::int64_t cropped = x[d] + std::min<std::int64_t>(begin, 0) + std::min<std::int64_t>(end, 0);
      if (cropped < 0) return fail("pads remove more than dimension " + std::to_string(d) + " of " + to_string(x));
      if (mode == kPadReflect && (begin > 0 || end > 0) && (begin >= cropped || end >= cropped)) {
        return fail("reflect padding must be smaller than the dimension");
      }
      if (mode == kPadEdge && cropped == 0 && out[d] > 0) return fail("edge padding of an empty dimension");
    }
    return done(out);
  }

  Status gather() {
    const Shape& data = in(0);
    if (data.empty()) return fail("cannot gather from a scalar");
    auto axis = normalize_axis(attrs().get_int("axis", 0), data.size());
    if (!axis) return fail("axis out of range for " + to_string(data));
    attrs().set("axis", *axis);
    const auto a = static_cast<std::ptrdiff_t>(*axis);
    Shape out(data.begin(), data.begin() + a);
    out.insert(out.end(), in(1).begin(), in(1).end());
    out.insert(out.end(), data.begin() + a + 1, data.end());
    return done(out);
  }

  Graph& graph_;
  int n_;
  Node& node_;
};

}  // namespace

collage::Status infer_node_shape(Graph& graph, int n) { return NodeInference(graph, n).run(); }

collage::Status infer_shapes(Graph& graph) {
  for (std::size_t n = 0; n < graph.size(); ++n) {
    if (collage::Status s = infer_node_shape(graph, static_cast<int>(n)); !s.ok()) return s;
  }
  return collage::Status::success();
}

}  // namespace tc
