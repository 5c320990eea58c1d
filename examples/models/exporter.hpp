#pragma once

/// \file
/// Internal to examples/models/: Exporter writes an OnnxModel node by node as an exporter does,
/// Layers the layers the zoo's CNNs and transformers share. The model zoo and the stand-ins of
/// the ONNX model zoo's architectures (zoo_standins.cpp) both write through them.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "onnx/model.hpp"

namespace tc::zoo {

using Ints = std::vector<std::int64_t>;
/// A node's attributes.
using Attrs = std::vector<std::pair<std::string, OnnxAttr>>;

/// Writes an OnnxModel at `opset` node by node as an exporter does: every value named after its
/// hint or operator and a counter ("conv_7"), weights drawn from one seeded generator.
class Exporter {
 public:
  /// The IR version is the one the opset shipped with (ir_version_for_opset).
  Exporter(std::string name, std::uint64_t seed, int opset = 17) : rng_(seed) {
    model_.graph_name = std::move(name);
    model_.opset = opset;
    model_.ir_version = ir_version_for_opset(opset);
  }

  int opset() const { return model_.opset; }
  /// The IR version written: the model zoo's files of opsets 7 to 9 carry 3 or 4.
  void set_ir_version(int version) { model_.ir_version = version; }
  /// Lists every initializer among the graph inputs too, as IR version 3 requires and the zoo's
  /// Caffe2 and MXNet conversions do at IR version 4 as well.
  void list_initializers_as_inputs() { initializers_as_inputs_ = true; }

  /// A float32 graph input; returns its name.
  std::string input(const std::string& name, const Shape& shape) {
    model_.inputs.push_back(float_value_info(name, shape));
    return name;
  }
  /// An integer graph input (token ids, a mask) of `type`; returns its name.
  std::string integer_input(const std::string& name, const Shape& shape, ElemType type = ElemType::int64) {
    model_.inputs.push_back(float_value_info(name, shape));
    model_.inputs.back().type = type;
    return name;
  }
  /// A float32 initializer holding `value`; returns its name.
  std::string initializer(const std::string& hint, const Tensor& value) {
    std::string name = fresh(hint);
    model_.initializers.emplace_back(name, from_float32(value));
    return name;
  }
  /// An int64 initializer (shapes, axes, indices); returns its name.
  std::string int64_initializer(const std::string& hint, const Ints& values, const Shape& shape) {
    OnnxTensor t;
    t.type = ElemType::int64;
    t.shape = shape;
    t.ints = values;
    std::string name = fresh(hint);
    model_.initializers.emplace_back(name, std::move(t));
    return name;
  }
  /// A float32 initializer of `shape` with seeded values uniform in [-scale, scale].
  std::string random_weight(const std::string& hint, const Shape& shape, float scale) {
    Tensor t(shape);
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (float& v : t.data) v = dist(rng_);
    return initializer(hint, t);
  }
  /// A node of `op` over `inputs` with one output, named after the operator; returns the output.
  std::string node(const std::string& op, const std::vector<std::string>& inputs, Attrs attrs = {}) {
    std::string lower = op;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string name = fresh(lower);
    model_.nodes.push_back(OnnxNode{op, inputs, {name}, std::move(attrs), name, ""});
    return name;
  }
  /// A node of `op` with `count` outputs (Split); returns them.
  std::vector<std::string> node_outputs(const std::string& op, const std::vector<std::string>& inputs,
                                        std::size_t count, Attrs attrs = {}) {
    const std::string name = node(op, inputs, std::move(attrs));
    std::vector<std::string> outputs;
    for (std::size_t k = 0; k < count; ++k) outputs.push_back(name + "_out" + std::to_string(k));
    model_.nodes.back().outputs = outputs;
    return outputs;
  }
  /// Marks `value` a float32 graph output of `shape`.
  void output(const std::string& value, const Shape& shape) {
    model_.outputs.push_back(float_value_info(value, shape));
  }

  std::mt19937_64& rng() { return rng_; }
  /// The model written so far.
  OnnxModel take() {
    if (initializers_as_inputs_) {
      for (const auto& [name, value] : model_.initializers) {
        OnnxValueInfo info{name, value.type, {}};
        info.dims.assign(value.shape.begin(), value.shape.end());
        model_.inputs.push_back(std::move(info));
      }
    }
    return std::move(model_);
  }

 private:
  std::string fresh(const std::string& hint) { return hint + "_" + std::to_string(counter_++); }

  OnnxModel model_;
  std::mt19937_64 rng_;
  std::size_t counter_ = 0;
  bool initializers_as_inputs_ = false;
};

/// Builds the layers of exported CNNs and transformers on an Exporter.
class Layers {
 public:
  explicit Layers(Exporter& b) : b_(b) {}

  /// Conv with bias (batch norm folded in, as exporters do), square kernel.
  std::string conv(const std::string& x, std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride,
                   std::int64_t group = 1) {
    const float scale = std::sqrt(3.0f / static_cast<float>(in / group * k * k));
    const std::string w = b_.random_weight("w", {out, in / group, k, k}, scale);
    const std::string bias = b_.random_weight("b", {out}, 0.1f);
    const std::int64_t p = k / 2;
    return b_.node("Conv", {x, w, bias},
                   {{"kernel_shape", Ints{k, k}}, {"strides", Ints{stride, stride}},
                    {"pads", Ints{p, p, p, p}}, {"dilations", Ints{1, 1}},
                    {"group", group}});
  }
  std::string relu(const std::string& x) { return b_.node("Relu", {x}); }
  /// ReLU6 as PyTorch exports it: Clip with constant min and max inputs.
  std::string relu6(const std::string& x) { return b_.node("Clip", {x, scalar(0.0f), scalar(6.0f)}); }
  std::string add(const std::string& a, const std::string& c) { return b_.node("Add", {a, c}); }
  std::string scalar(float v) { return b_.initializer("c", Tensor({}, std::vector<float>{v})); }

  /// Global average pool, flatten, and a Gemm classifier; from opset 18 the pool as the dynamo
  /// exporter writes x.mean([2, 3]): ReduceMean with its axes as input.
  std::string head(const std::string& x, std::int64_t channels, std::int64_t classes) {
    const std::string flat =
        b_.opset() >= 18
            ? b_.node("ReduceMean", {x, b_.int64_initializer("axes", {2, 3}, {2})}, {{"keepdims", std::int64_t{0}}})
            : b_.node("Flatten", {b_.node("GlobalAveragePool", {x})}, {{"axis", std::int64_t{1}}});
    const float scale = std::sqrt(3.0f / static_cast<float>(channels));
    const std::string w = b_.random_weight("fc_w", {classes, channels}, scale);
    const std::string bias = b_.random_weight("fc_b", {classes}, 0.1f);
    return b_.node("Gemm", {flat, w, bias}, {{"transB", std::int64_t{1}}});
  }

  /// MatMul by a [in, out] weight plus a bias, as nn.Linear exports.
  std::string linear(const std::string& x, std::int64_t in, std::int64_t out) {
    const float scale = std::sqrt(3.0f / static_cast<float>(in));
    const std::string w = b_.random_weight("w", {in, out}, scale);
    const std::string bias = b_.random_weight("b", {out}, 0.1f);
    return b_.node("Add", {b_.node("MatMul", {x, w}), bias});
  }

  /// Layer norm over the last axis, decomposed as older exporters (opset < 17) write it.
  std::string layer_norm(const std::string& x, std::int64_t hidden) {
    const std::string mean = mean_last(x);
    const std::string d = b_.node("Sub", {x, mean});
    const std::string sq = b_.node("Pow", {d, scalar(2.0f)});
    const std::string var = mean_last(sq);
    const std::string sd = b_.node("Sqrt", {b_.node("Add", {var, scalar(1e-12f)})});
    const std::string n = b_.node("Div", {d, sd});
    Tensor gamma({hidden});
    std::uniform_real_distribution<float> g(0.8f, 1.2f);
    for (float& v : gamma.data) v = g(b_.rng());
    const std::string scaled = b_.node("Mul", {n, b_.initializer("gamma", gamma)});
    return b_.node("Add", {scaled, b_.random_weight("beta", {hidden}, 0.1f)});
  }

  /// ReduceMean over the last axis, kept: the axes an attribute before opset 18, an input from 18.
  std::string mean_last(const std::string& x) {
    if (b_.opset() < 18) return b_.node("ReduceMean", {x}, {{"axes", Ints{-1}}});
    return b_.node("ReduceMean", {x, b_.int64_initializer("axes", {-1}, {1})});
  }

  /// GELU: the Gelu operator from opset 20, else its erf form, as exported from nn.GELU().
  std::string gelu(const std::string& x) {
    if (b_.opset() >= 20) return b_.node("Gelu", {x});
    const std::string e = b_.node("Erf", {b_.node("Div", {x, scalar(1.4142135381698608f)})});
    const std::string m = b_.node("Mul", {x, b_.node("Add", {e, scalar(1.0f)})});
    return b_.node("Mul", {m, scalar(0.5f)});
  }

  /// x.view(*x.size()[:2], a, c) as exported: the target computed from x's shape.
  std::string split_heads_shape(const std::string& x, std::int64_t a, std::int64_t c) {
    const std::string shape = b_.node("Shape", {x});
    const std::string d0 = unsqueezed_dim(shape, 0);
    const std::string d1 = unsqueezed_dim(shape, 1);
    return b_.node("Concat", {d0, d1, b_.int64_initializer("heads", {a}, {1}), b_.int64_initializer("dh", {c}, {1})},
                   {{"axis", std::int64_t{0}}});
  }
  /// x.view(*x.size()[:2], -1) as exported.
  std::string merge_heads_shape(const std::string& x) {
    const std::string shape = b_.node("Shape", {x});
    return b_.node("Concat", {unsqueezed_dim(shape, 0), unsqueezed_dim(shape, 1), b_.int64_initializer("m1", {-1}, {1})},
                   {{"axis", std::int64_t{0}}});
  }

 private:
  std::string unsqueezed_dim(const std::string& shape, std::int64_t k) {
    const std::string d = b_.node("Gather", {shape, b_.int64_initializer("idx", {k}, {})}, {{"axis", std::int64_t{0}}});
    return b_.node("Unsqueeze", {d, b_.int64_initializer("axes", {0}, {1})});
  }

  Exporter& b_;
};

}  // namespace tc::zoo
