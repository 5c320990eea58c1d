#include "onnx/writer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_set>
#include <utility>

#include "tensor/op_attrs.hpp"
#include "tensor/shape_inference.hpp"

namespace tc {

namespace {

/// Builds the model node by node.
class Writer {
 public:
  explicit Writer(const Graph& graph) : graph_(graph) {
    for (const Node& node : graph.nodes()) {
      names_.insert(node.name);
      value_names_.push_back(node.name);
    }
  }

  OnnxModel run() {
    for (int n : graph_.inputs()) {
      const Node& node = graph_.node(n);
      model_.inputs.push_back(float_value_info(node.name, node.shape));
      const InputDomain domain = input_domain(node);
      if (!domain.integer()) continue;
      // The model's input keeps its integer type; the operators read its float32 copy.
      model_.inputs.back().type = static_cast<ElemType>(domain.elem_type);
      value_names_[static_cast<std::size_t>(n)] = cast(node.name, ElemType::float32);
    }
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      const Node& node = graph_.node(static_cast<int>(i));
      if (node.op == Op::constant) model_.initializers.emplace_back(node.name, from_float32(*node.value));
      else if (node.op != Op::input) write_node(node);
    }
    std::set<int> written;
    for (int n : graph_.outputs()) {
      const Node& node = graph_.node(n);
      std::string name = node.name;
      if (node.op == Op::input || node.op == Op::constant || !written.insert(n).second) {
        name = fresh(node.name + "/output");
        model_.nodes.push_back(OnnxNode{"Identity", {value_name(n)}, {name}, {}, name, ""});
      }
      model_.outputs.push_back(float_value_info(name, node.shape));
    }
    return std::move(model_);
  }

 private:
  std::string fresh(const std::string& base) {
    for (int k = 0;; ++k) {
      std::string name = k == 0 ? base : base + "/" + std::to_string(k);
      if (names_.insert(name).second) return name;
    }
  }

  /// The name of node `n`'s value in the model.
  const std::string& value_name(int n) const { return value_names_[static_cast<std::size_t>(n)]; }

  /// A Cast of value `name` to `to`; returns its output's name.
  std::string cast(const std::string& name, ElemType to) {
    std::string out = fresh(name + "/" + elem_type_name(to));
    model_.nodes.push_back(OnnxNode{"Cast", {name}, {out}, {{"to", static_cast<std::int64_t>(to)}}, out, ""});
    return out;
  }

  /// An initializer named after `node` holding `value`; returns its name.
  std::string operand(const Node& node, const std::string& what, OnnxTensor value) {
    std::string name = fresh(node.name + "/" + what);
    model_.initializers.emplace_back(name, std::move(value));
    return name;
  }

  void write_node(const Node& node) {
    OnnxNode out{std::string(op_name(node.op)), {}, {node.name}, {}, node.name, ""};
    for (int in : node.inputs) out.inputs.push_back(value_name(in));
    const auto ints = [&](const char* name, const Ints& value) { out.attrs.emplace_back(name, value); };
    const auto integer = [&](const char* name, std::int64_t value) { out.attrs.emplace_back(name, value); };
    const auto flag = [&](const char* name, bool value) { integer(name, value ? 1 : 0); };
    // ONNX floats are float32: a value at its default is left out, so the reader's default (the
    // IR's, a double) applies and the graph reads back exactly.
    const auto real = [&](const char* name, double value, double fallback) {
      if (value != fallback) out.attrs.emplace_back(name, static_cast<float>(value));
    };
    switch (node.op) {
      case Op::clip: {
        const UnaryAttrs a = unary_attrs(node);
        const auto bound = [&](const char* name, double value) {
          out.inputs.push_back(std::isinf(value) ? std::string() : operand(node, name, float_scalar(value)));
        };
        bound("min", a.min);
        bound("max", a.max);
        while (!out.inputs.empty() && out.inputs.back().empty()) out.inputs.pop_back();
        break;
      }
      case Op::leaky_relu: real("alpha", unary_attrs(node).alpha, 0.01); break;
      case Op::hard_sigmoid: {
        const UnaryAttrs a = unary_attrs(node);
        real("alpha", a.alpha, 0.2);
        real("beta", a.beta, 0.5);
        break;
      }
      case Op::conv: {
        const ConvAttrs a = conv_attrs(node);
        ints("strides", a.strides);
        ints("pads", a.pads);
        ints("dilations", a.dilations);
        integer("group", a.group);
        break;
      }
      case Op::gemm: {
        const GemmAttrs a = gemm_attrs(node);
        real("alpha", a.alpha, 1.0);
        real("beta", a.beta, 1.0);
        flag("transA", a.trans_a);
        flag("transB", a.trans_b);
        break;
      }
      case Op::max_pool:
      case Op::average_pool: {
        const PoolAttrs a = pool_attrs(node);
        ints("kernel_shape", a.kernel_shape);
        ints("strides", a.strides);
        ints("pads", a.pads);
        if (node.op == Op::max_pool) ints("dilations", a.dilations);
        flag("ceil_mode", a.ceil_mode);
        if (node.op == Op::average_pool) flag("count_include_pad", a.count_include_pad);
        break;
      }
      case Op::batch_norm: real("epsilon", epsilon_attr(node), 1e-5); break;
      case Op::layer_norm:
        integer("axis", static_cast<std::int64_t>(axis_attr(node)));
        real("epsilon", epsilon_attr(node), 1e-5);
        break;
      case Op::softmax: case Op::flatten: case Op::concat:
        integer("axis", static_cast<std::int64_t>(axis_attr(node)));
        break;
      case Op::gather:
        out.inputs[1] = cast(out.inputs[1], ElemType::int64);  // the IR's indices are float32
        integer("axis", static_cast<std::int64_t>(axis_attr(node)));
        break;
      case Op::reduce_mean: case Op::reduce_max: case Op::reduce_sum: {
        const ReduceAttrs a = reduce_attrs(node);
        if (node.op == Op::reduce_sum) out.inputs.push_back(operand(node, "axes", int64_vector(a.axes)));
        else ints("axes", a.axes);
        flag("keepdims", a.keepdims);
        break;
      }
      case Op::reshape: {
        out.inputs.push_back(operand(node, "shape", int64_vector(node.shape)));
        const bool has_zero = std::find(node.shape.begin(), node.shape.end(), 0) != node.shape.end();
        if (has_zero) out.attrs.emplace_back("allowzero", std::int64_t{1});
        break;
      }
      case Op::squeeze: case Op::unsqueeze:
        out.inputs.push_back(operand(node, "axes", int64_vector(axes_attr(node))));
        break;
      case Op::transpose: ints("perm", perm_attr(node)); break;
      case Op::slice: write_slice(node, out); break;
      case Op::pad: {
        const PadAttrs a = pad_attrs(node);
        out.inputs.push_back(operand(node, "pads", int64_vector(a.pads)));
        out.inputs.push_back(operand(node, "value", float_scalar(a.value)));
        const char* mode = a.mode == PadAttrs::Mode::reflect ? "reflect" : a.mode == PadAttrs::Mode::edge ? "edge" : "constant";
        out.attrs.emplace_back("mode", std::string(mode));
        break;
      }
      default: break;
    }
    model_.nodes.push_back(std::move(out));
  }

  /// Canonical starts and steps with the shape as extents become ONNX starts/ends/axes/steps; an
  /// end before the first element (negative steps) is INT64_MIN, which ONNX clamps to -1.
  void write_slice(const Node& node, OnnxNode& out) {
    const SliceAttrs a = slice_attrs(node);
    const Ints& starts = a.starts;
    const Ints& steps = a.steps;
    Ints ends, axes;
    for (std::size_t d = 0; d < starts.size(); ++d) {
      std::int64_t end = starts[d] + node.shape[d] * steps[d];
      if (end < 0) end = std::numeric_limits<std::int64_t>::min();
      ends.push_back(end);
      axes.push_back(static_cast<std::int64_t>(d));
    }
    out.inputs.push_back(operand(node, "starts", int64_vector(starts)));
    out.inputs.push_back(operand(node, "ends", int64_vector(ends)));
    out.inputs.push_back(operand(node, "axes", int64_vector(axes)));
    out.inputs.push_back(operand(node, "steps", int64_vector(steps)));
  }

  const Graph& graph_;
  OnnxModel model_;
  std::unordered_set<std::string> names_;
  std::vector<std::string> value_names_;  ///< by node
};

}  // namespace

collage::Result<OnnxModel> to_onnx_model(const Graph& graph) {
  Graph canonical = graph;
  if (collage::Status s = infer_shapes(canonical); !s.ok()) return s.error();
  return Writer(canonical).run();
}

collage::Result<std::string> write_onnx_bytes(const Graph& graph) {
  collage::Result<OnnxModel> model = to_onnx_model(graph);
  if (!model.ok()) return model.error();
  return serialize(*model);
}

collage::Status write_onnx(const Graph& graph, const std::string& path) {
  collage::Result<OnnxModel> model = to_onnx_model(graph);
  if (!model.ok()) return model.error();
  return save(*model, path);
}

}  // namespace tc
