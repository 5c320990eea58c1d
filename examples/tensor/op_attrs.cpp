#include "tensor/op_attrs.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "tensor/shape_inference.hpp"

namespace tc {

static_assert(static_cast<int>(PadAttrs::Mode::constant) == kPadConstant &&
                  static_cast<int>(PadAttrs::Mode::reflect) == kPadReflect &&
                  static_cast<int>(PadAttrs::Mode::edge) == kPadEdge,
              "PadAttrs::Mode reads the codes of Pad's mode attribute");

namespace {

/// The spatial part of a window's lists; `pads` holds begins then ends.
WindowGeometry window(const Shape& x, const Shape& y, const Ints& kernel, const Ints& strides, const Ints& dilations,
                      const Ints& pads) {
  WindowGeometry g;
  const std::size_t k = x.size() - 2;
  g.batch = x[0];
  g.channels = x[1];
  g.out_channels = y[1];
  g.in.assign(x.begin() + 2, x.end());
  g.out.assign(y.begin() + 2, y.end());
  g.kernel = kernel;
  g.stride = strides;
  g.dilation = dilations;
  g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(k));
  g.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(k), pads.end());
  return g;
}

}  // namespace

ConvAttrs conv_attrs(const Node& node) {
  const Attributes& a = node.attrs;
  return {a.get_ints("strides"), a.get_ints("dilations"), a.get_ints("pads"), a.get_int("group", 1)};
}

PoolAttrs pool_attrs(const Node& node) {
  const Attributes& a = node.attrs;
  PoolAttrs p;
  p.kernel_shape = a.get_ints("kernel_shape");
  p.strides = a.get_ints("strides");
  p.dilations = a.get_ints("dilations", Ints(p.kernel_shape.size(), 1));
  p.pads = a.get_ints("pads");
  p.ceil_mode = a.get_int("ceil_mode") != 0;
  p.count_include_pad = a.get_int("count_include_pad") != 0;
  return p;
}

GemmAttrs gemm_attrs(const Node& node) {
  const Attributes& a = node.attrs;
  return {a.get_float("alpha", 1.0), a.get_float("beta", 1.0), a.get_int("trans_a") != 0, a.get_int("trans_b") != 0};
}

ReduceAttrs reduce_attrs(const Node& node) { return {node.attrs.get_ints("axes"), node.attrs.get_int("keepdims", 1) != 0}; }

std::size_t axis_attr(const Node& node) { return static_cast<std::size_t>(node.attrs.get_int("axis")); }
double epsilon_attr(const Node& node) { return node.attrs.get_float("epsilon", 1e-5); }
Ints axes_attr(const Node& node) { return node.attrs.get_ints("axes"); }
Ints perm_attr(const Node& node) { return node.attrs.get_ints("perm"); }

UnaryAttrs unary_attrs(const Node& node) {
  const Attributes& a = node.attrs;
  constexpr double inf = std::numeric_limits<double>::infinity();
  return {a.get_float("min", -inf), a.get_float("max", inf), a.get_float("alpha"), a.get_float("beta")};
}

SliceAttrs slice_attrs(const Node& node) { return {node.attrs.get_ints("starts"), node.attrs.get_ints("steps")}; }

PadAttrs pad_attrs(const Node& node) {
  const Attributes& a = node.attrs;
  return {a.get_ints("pads"), a.get_float("value"), static_cast<PadAttrs::Mode>(a.get_int("mode"))};
}

bool WindowGeometry::pointwise() const {
  for (std::size_t d = 0; d < rank(); ++d) {
    if (kernel[d] != 1 || stride[d] != 1 || pad_begin[d] != 0 || pad_end[d] != 0 || out[d] != in[d]) return false;
  }
  return true;
}

WindowGeometry WindowGeometry::expanded_to(std::size_t rank) const {
  WindowGeometry g = *this;
  const std::size_t lead = rank - this->rank();
  const auto widen = [lead](Ints& list, std::int64_t fill) { list.insert(list.begin(), lead, fill); };
  for (Ints* ones : {&g.in, &g.out, &g.kernel, &g.stride, &g.dilation}) widen(*ones, 1);
  widen(g.pad_begin, 0);
  widen(g.pad_end, 0);
  return g;
}

WindowGeometry conv_geometry(const Graph& graph, int n) {
  const Node& node = graph.node(n);
  const Shape& w = graph.node(node.inputs[1]).shape;
  const ConvAttrs a = conv_attrs(node);
  WindowGeometry g = window(graph.node(node.inputs[0]).shape, node.shape, Ints(w.begin() + 2, w.end()), a.strides,
                            a.dilations, a.pads);
  g.group = a.group;
  return g;
}

WindowGeometry pool_geometry(const Graph& graph, int n) {
  const Node& node = graph.node(n);
  const PoolAttrs a = pool_attrs(node);
  return window(graph.node(node.inputs[0]).shape, node.shape, a.kernel_shape, a.strides, a.dilations, a.pads);
}

InputDomain input_domain(const Node& input) {
  return InputDomain{input.attrs.get_int("elem_type", 1), input.attrs.get_int("index_bound", 0)};
}

void set_input_domain(Node& input, const InputDomain& domain) {
  input.attrs.set("elem_type", domain.elem_type);
  if (domain.index_bound > 0) input.attrs.set("index_bound", domain.index_bound);
}

namespace {

/// `v` as a message shows it: an integer without decimals.
std::string number_text(double v) {
  if (v == std::trunc(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

collage::Status check_input_values(const Graph& graph, const std::vector<Tensor>& inputs) {
  for (std::size_t k = 0; k < inputs.size() && k < graph.inputs().size(); ++k) {
    const Node& node = graph.node(graph.inputs()[k]);
    const InputDomain domain = input_domain(node);
    if (!domain.integer()) continue;
    const auto limit = static_cast<double>(domain.index_bound > 0 ? domain.index_bound : kMaxExactInteger + 1);
    const double low = domain.index_bound > 0 ? -limit : -static_cast<double>(kMaxExactInteger);
    for (std::size_t i = 0; i < inputs[k].data.size(); ++i) {
      const double v = inputs[k].data[i];
      if (v == std::trunc(v) && v >= low && v < limit) continue;
      const std::string range = domain.index_bound > 0
                                    ? "an index in [-" + std::to_string(domain.index_bound) + ", " +
                                          std::to_string(domain.index_bound) + ") (the axis a Gather reads)"
                                    : "an integer of magnitude at most 2^24";
      return collage::Error{collage::ErrorCode::invalid_argument,
                            "input '" + node.name + "': element " + std::to_string(i) + " is " + number_text(v) +
                                ", not " + range};
    }
  }
  return collage::Status::success();
}

}  // namespace tc
