#include "conformance/upgrade.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <variant>

#include <onnx/defs/schema.h>

#include "onnx/definitions.hpp"
#include "tensor/shape.hpp"

namespace tc {

namespace {

namespace fs = std::filesystem;

using collage::Error;
using collage::ErrorCode;
using Ints = std::vector<std::int64_t>;

/// The operators whose opset-18 to 27 definitions upgrade_model() writes. Another operator that
/// changed in those opsets (detail::later_definitions) stops a model from crossing its change,
/// since its new semantics are not rewritten.
bool rewritten(const std::string& op) {
  static const std::set<std::string> kRewritten = {
      // axes attribute -> optional input (18); bool added (20)
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
      "ReduceSumSquare",
      "Split",        // num_outputs
      "Pad",          // axes input (18), wrap mode (19), int4 (21), then element types
      "Resize",       // antialias, axes, keep_aspect_ratio_policy (18), half_pixel_symmetric (19)
      "AveragePool",  // dilations (19); windows that would start in the right padding are dropped (22)
      "MaxPool",      // as AveragePool-22 (ceil_mode)
      // element types only (Cast-24 also changed float8 saturation; the tests of opset 17 have no
      // float8), or attributes added at 18-21 whose defaults keep the old meaning (LpPool-18's
      // ceil_mode and dilations; QuantizeLinear and DequantizeLinear at 19 and 21)
      "Cast", "CastLike", "Constant", "Identity", "Reshape", "Shape", "Size", "Equal", "ConstantOfShape", "Flatten",
      "Squeeze", "Transpose", "Unsqueeze", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Bernoulli", "Conv",
      "ConvTranspose", "Cos", "Cosh", "Det", "Dropout", "Elu", "EyeLike", "GRU", "GlobalAveragePool", "GlobalLpPool",
      "GlobalMaxPool", "HardSigmoid", "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization",
      "LpPool", "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN", "RandomNormal",
      "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin", "Sinh",
      "Softplus", "Softsign", "Tan", "ThresholdedRelu", "SplitToSequence", "TopK",
      // attributes added later whose defaults keep the old meaning: output_dtype and precision
      // (23), Range's stash_type for float16 (27)
      "DequantizeLinear", "QuantizeLinear", "Range"};
  return kRewritten.count(op) != 0;
}

/// The reductions whose axes became an input at opset 18 (ReduceSum's did at 13).
bool is_reduction_with_axes_attribute(const std::string& op) {
  return op.rfind("Reduce", 0) == 0 && op != "ReduceSum" && !detail::later_definitions(op).empty();
}

/// A name no value of `model` has, from `base`.
std::string fresh_name(const OnnxModel& model, const std::string& base) {
  std::set<std::string> used;
  for (const OnnxValueInfo& v : model.inputs) used.insert(v.name);
  for (const auto& [name, value] : model.initializers) used.insert(name);
  for (const OnnxNode& n : model.nodes) {
    used.insert(n.inputs.begin(), n.inputs.end());
    used.insert(n.outputs.begin(), n.outputs.end());
  }
  std::string name = base;
  for (int k = 1; used.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
  return name;
}

std::string node_label(const OnnxNode& node) {
  return "node '" + (node.name.empty() && !node.outputs.empty() ? node.outputs[0] : node.name) + "' (" + node.op_type + ")";
}

const OnnxAttr* find_attr(const OnnxNode& node, const std::string& name) {
  for (const auto& [key, value] : node.attrs) {
    if (key == name) return &value;
  }
  return nullptr;
}

/// Why `model` cannot be rewritten to `target` whatever its operators' attributes; "" when it can.
std::string model_refusal(const OnnxModel& model, int target) {
  if (model.opset <= 0 || model.opset > 17) return "opset " + std::to_string(model.opset) + " (tests of opsets up to 17 are rewritten)";
  if (!model.left_out.empty()) return model.left_out.front() + " cannot be read back, so it would be lost";
  for (const auto* values : {&model.inputs, &model.outputs}) {
    for (const OnnxValueInfo& v : *values) {
      if (!v.is_tensor) return "value '" + v.name + "' is not a tensor (its type would be lost)";
    }
  }
  for (const OnnxNode& node : model.nodes) {
    if (!node.domain.empty() && node.domain != "ai.onnx") return node_label(node) + " is of domain " + node.domain;
    // A test of an older opset is rewritten from its opset-17 meaning: each operator's definition
    // must be the one still in force at 17 (libonnx's schemas stop there).
    const ::onnx::OpSchema* at_model = ::onnx::OpSchemaRegistry::Schema(node.op_type, model.opset, "");
    const ::onnx::OpSchema* at_17 = ::onnx::OpSchemaRegistry::Schema(node.op_type, 17, "");
    if (at_model == nullptr || at_17 == nullptr) return node_label(node) + ": no definition at opset " + std::to_string(model.opset) + " and 17";
    if (at_model->SinceVersion() != at_17->SinceVersion()) {
      return node_label(node) + ": " + node.op_type + "-" + std::to_string(at_model->SinceVersion()) + " of opset " +
             std::to_string(model.opset) + " is not " + node.op_type + "-" + std::to_string(at_17->SinceVersion()) + " of opset 17";
    }
    if (rewritten(node.op_type)) continue;
    for (int v : detail::later_definitions(node.op_type)) {
      if (v <= target) return node_label(node) + ": " + node.op_type + "-" + std::to_string(v) + " is not rewritten";
    }
  }
  return "";
}

/// The rank of graph input `name` with a static shape; -1 when it is not one.
std::int64_t input_rank(const OnnxModel& model, const std::string& name) {
  for (const OnnxValueInfo& v : model.inputs) {
    if (v.name == name && v.has_shape) return static_cast<std::int64_t>(v.dims.size());
  }
  return -1;
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  // 24 random bits: exact in float32, and independent of the standard library's distributions.
  return lo + (hi - lo) * static_cast<double>(rng() >> 40) / static_cast<double>(1 << 24);
}

OnnxTensor random_float32(const Shape& shape, std::mt19937_64& rng) {
  OnnxTensor t;
  t.shape = shape;
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  for (std::int64_t k = 0; k < n; ++k) t.reals.push_back(static_cast<float>(uniform(rng, -4, 4)));
  return t;
}

OnnxTensor float32_tensor(const Shape& shape, std::vector<float> values) {
  OnnxTensor t;
  t.shape = shape;
  t.reals = std::move(values);
  return t;
}

/// An empty test `name` whose model is of `opset` (at its release's IR version).
NewNodeTest empty_test(const std::string& name, int opset) {
  NewNodeTest test;
  test.name = name;
  test.model.opset = opset;
  test.model.ir_version = ir_version_for_opset(opset);
  test.model.graph_name = name;
  return test;
}

/// A test of y = op(x) at `opset`, elementwise: y[k] = f(x[k]) in double, rounded to float32.
template <class F>
NewNodeTest elementwise_test(const std::string& name, const std::string& op, int opset,
                             std::vector<std::pair<std::string, OnnxAttr>> attrs, OnnxTensor x, F f) {
  NewNodeTest test = empty_test(name, opset);
  test.model.inputs.push_back(float_value_info("x", x.shape));
  test.model.outputs.push_back(float_value_info("y", x.shape));
  test.model.nodes.push_back(OnnxNode{op, {"x"}, {"y"}, std::move(attrs), "", ""});
  OnnxTensor y = float32_tensor(x.shape, {});
  for (float v : x.reals) y.reals.push_back(static_cast<float>(f(static_cast<double>(v))));
  test.inputs.push_back(std::move(x));
  test.outputs.push_back(std::move(y));
  return test;
}

NewNodeTest gelu_test(const std::string& name, bool tanh, OnnxTensor x) {
  std::vector<std::pair<std::string, OnnxAttr>> attrs;
  if (tanh) attrs.emplace_back("approximate", std::string("tanh"));
  return elementwise_test(name, "Gelu", 20, std::move(attrs), std::move(x), [tanh](double v) { return gelu_reference(v, tanh); });
}

NewNodeTest swish_test(const std::string& name, std::optional<float> alpha, OnnxTensor x) {
  std::vector<std::pair<std::string, OnnxAttr>> attrs;
  if (alpha) attrs.emplace_back("alpha", *alpha);
  const double a = alpha ? *alpha : 1.0;
  return elementwise_test(name, "Swish", 24, std::move(attrs), std::move(x), [a](double v) { return swish_reference(v, a); });
}

/// RMSNormalization-23 of x over the axes from `axis` on, times `scale` (broadcast to x), in
/// double; `axis` and `epsilon` are written as attributes when given.
NewNodeTest rms_normalization_test(const std::string& name, OnnxTensor x, OnnxTensor scale, std::optional<std::int64_t> axis,
                                   std::optional<float> epsilon) {
  NewNodeTest test = empty_test(name, 23);
  test.model.inputs.push_back(float_value_info("x", x.shape));
  test.model.inputs.push_back(float_value_info("scale", scale.shape));
  test.model.outputs.push_back(float_value_info("y", x.shape));
  OnnxNode node{"RMSNormalization", {"x", "scale"}, {"y"}, {}, "", ""};
  if (axis) node.attrs.emplace_back("axis", *axis);
  if (epsilon) node.attrs.emplace_back("epsilon", *epsilon);
  test.model.nodes.push_back(std::move(node));
  test.outputs.push_back(rms_normalization_reference(x, scale, axis.value_or(-1), epsilon.value_or(1e-5f)));
  test.inputs = {std::move(x), std::move(scale)};
  return test;
}

/// np.pad(x, pads, mode="wrap") for pads of at most each dimension's size, as ONNX's Pad-19 defines
/// wrap: the output element at i is the input element at (i - begin) mod size, per axis.
OnnxTensor wrap_pad(const OnnxTensor& x, const Ints& pads) {
  const std::size_t rank = x.shape.size();
  Shape out_shape(rank);
  for (std::size_t a = 0; a < rank; ++a) out_shape[a] = x.shape[a] + pads[a] + pads[a + rank];
  std::int64_t n = 1;
  for (std::int64_t d : out_shape) n *= d;
  OnnxTensor y = float32_tensor(out_shape, {});
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t rest = flat, source = 0, stride = 1;
    for (std::size_t a = rank; a-- > 0;) {
      const std::int64_t i = rest % out_shape[a];
      rest /= out_shape[a];
      const std::int64_t size = x.shape[a];
      source += (((i - pads[a]) % size + size) % size) * stride;
      stride *= size;
    }
    y.reals.push_back(x.reals[static_cast<std::size_t>(source)]);
  }
  return y;
}

NewNodeTest wrap_pad_test(std::mt19937_64& rng) {
  NewNodeTest test = empty_test("test_wrap_pad_opset19", 19);
  const Ints pads = {0, 0, 1, 1, 0, 0, 1, 1};
  OnnxTensor x = random_float32({1, 3, 4, 5}, rng);
  OnnxTensor y = wrap_pad(x, pads);
  test.model.inputs.push_back(float_value_info("x", x.shape));
  OnnxValueInfo pads_info;
  pads_info.name = "pads";
  pads_info.type = ElemType::int64;
  pads_info.dims = {static_cast<std::int64_t>(pads.size())};
  test.model.inputs.push_back(pads_info);
  test.model.outputs.push_back(float_value_info("y", y.shape));
  test.model.nodes.push_back(OnnxNode{"Pad", {"x", "pads"}, {"y"}, {{"mode", std::string("wrap")}}, "", ""});
  test.inputs = {std::move(x), int64_vector(pads)};
  test.outputs.push_back(std::move(y));
  return test;
}

/// RotaryEmbedding-23 of a random X of `shape` (3-D with `heads`, or 4-D) with random caches: of
/// [B, S, dim / 2], or of [positions, dim / 2] read at `positions` (B x S of them) when given.
NewNodeTest rotary_embedding_test(const std::string& name, const Shape& shape, std::int64_t heads, std::int64_t dim,
                                  bool interleaved, const Ints& positions, std::int64_t cached, std::mt19937_64& rng) {
  NewNodeTest test = empty_test(name, 23);
  const bool packed = shape.size() == 3;
  const std::int64_t batch = shape[0], seq = packed ? shape[1] : shape[2];
  const Shape cache = positions.empty() ? Shape{batch, seq, dim / 2} : Shape{cached, dim / 2};
  OnnxTensor x = random_float32(shape, rng);
  OnnxTensor cos = random_float32(cache, rng);
  OnnxTensor sin = random_float32(cache, rng);
  OnnxNode node{"RotaryEmbedding", {"x", "cos_cache", "sin_cache"}, {"y"}, {}, "", ""};
  if (packed) node.attrs.emplace_back("num_heads", heads);
  if (interleaved) node.attrs.emplace_back("interleaved", std::int64_t{1});
  node.attrs.emplace_back("rotary_embedding_dim", dim);
  test.model.inputs = {float_value_info("x", shape), float_value_info("cos_cache", cache), float_value_info("sin_cache", cache)};
  test.model.outputs.push_back(float_value_info("y", shape));
  test.outputs.push_back(rotary_embedding_reference(x, cos, sin, positions, interleaved, dim, heads));
  test.inputs = {std::move(x), std::move(cos), std::move(sin)};
  if (!positions.empty()) {
    node.inputs.push_back("position_ids");
    OnnxValueInfo info;
    info.name = "position_ids";
    info.type = ElemType::int64;
    info.dims = {batch, seq};
    test.model.inputs.push_back(info);
    OnnxTensor ids = int64_vector(positions);
    ids.shape = {batch, seq};
    test.inputs.push_back(std::move(ids));
  }
  test.model.nodes.push_back(std::move(node));
  return test;
}

/// Attention-23 of random Q, K and V of the given shapes (3-D with q_num_heads and kv_num_heads
/// in `attrs`, or 4-D), with `mask` (boolean or float, or none) as input 3 and `attrs`; with
/// `past_len` > 0, random past_key and past_value of that many positions as inputs 4 and 5 and
/// present_key and present_value as outputs 1 and 2.
NewNodeTest attention_test(const std::string& name, const Shape& q_shape, const Shape& k_shape, const Shape& v_shape,
                           std::optional<OnnxTensor> mask, std::vector<std::pair<std::string, OnnxAttr>> attrs,
                           std::mt19937_64& rng, std::int64_t past_len = 0) {
  NewNodeTest test = empty_test(name, 23);
  OnnxTensor q = random_float32(q_shape, rng), k = random_float32(k_shape, rng), v = random_float32(v_shape, rng);
  AttentionOptions options;
  for (const auto& [key, value] : attrs) {
    if (key == "is_causal") options.causal = std::get<std::int64_t>(value) != 0;
    if (key == "scale") options.scale = std::get<float>(value);
    if (key == "softcap") options.softcap = std::get<float>(value);
    if (key == "q_num_heads") options.q_heads = std::get<std::int64_t>(value);
    if (key == "kv_num_heads") options.kv_heads = std::get<std::int64_t>(value);
  }
  std::optional<OnnxTensor> past_key, past_value;
  if (past_len > 0) {
    const bool packed = q_shape.size() == 3;
    const std::int64_t kv_heads = packed ? options.kv_heads : k_shape[1];
    const std::int64_t head = packed ? k_shape[2] / kv_heads : k_shape[3], v_head = packed ? v_shape[2] / kv_heads : v_shape[3];
    past_key = random_float32({q_shape[0], kv_heads, past_len, head}, rng);
    past_value = random_float32({q_shape[0], kv_heads, past_len, v_head}, rng);
  }
  AttentionOutputs outputs =
      attention_reference(q, k, v, mask ? &*mask : nullptr, options, past_key ? &*past_key : nullptr, past_value ? &*past_value : nullptr);
  test.model.inputs = {float_value_info("q", q_shape), float_value_info("k", k_shape), float_value_info("v", v_shape)};
  OnnxNode node{"Attention", {"q", "k", "v"}, {"y"}, std::move(attrs), "", ""};
  test.inputs = {std::move(q), std::move(k), std::move(v)};
  node.inputs.emplace_back(mask ? "attn_mask" : "");
  if (mask) {
    OnnxValueInfo info = float_value_info("attn_mask", mask->shape);
    info.type = mask->type;
    test.model.inputs.push_back(info);
    test.inputs.push_back(std::move(*mask));
  }
  test.model.outputs.push_back(float_value_info("y", outputs.y.shape));
  test.outputs.push_back(std::move(outputs.y));
  if (past_key) {
    for (auto [input, output, past, present] : {std::tuple{"past_key", "present_key", &*past_key, &outputs.present_key},
                                                std::tuple{"past_value", "present_value", &*past_value, &outputs.present_value}}) {
      test.model.inputs.push_back(float_value_info(input, past->shape));
      node.inputs.emplace_back(input);
      test.inputs.push_back(std::move(*past));
      test.model.outputs.push_back(float_value_info(output, present->shape));
      node.outputs.emplace_back(output);
      test.outputs.push_back(std::move(*present));
    }
  }
  if (node.inputs.back().empty()) node.inputs.pop_back();
  test.model.nodes.push_back(std::move(node));
  return test;
}

collage::Status write_test(const NewNodeTest& test, const fs::path& dir) {
  const fs::path data = dir / "test_data_set_0";
  std::error_code ec;
  fs::create_directories(data, ec);
  if (ec) return Error{ErrorCode::io, data.string() + ": cannot create (" + ec.message() + ")"};
  if (collage::Status s = save(test.model, (dir / "model.onnx").string()); !s.ok()) return s;
  for (std::size_t k = 0; k < test.inputs.size(); ++k) {
    const fs::path path = data / ("input_" + std::to_string(k) + ".pb");
    if (collage::Status s = write_tensor_file(test.inputs[k], test.model.inputs[k].name, path.string()); !s.ok()) return s;
  }
  for (std::size_t k = 0; k < test.outputs.size(); ++k) {
    const fs::path path = data / ("output_" + std::to_string(k) + ".pb");
    if (collage::Status s = write_tensor_file(test.outputs[k], test.model.outputs[k].name, path.string()); !s.ok()) return s;
  }
  return collage::Status::success();
}

}  // namespace

std::vector<int> upgrade_targets(const OnnxModel& model) {
  std::set<int> targets;
  for (const OnnxNode& node : model.nodes) {
    if (!rewritten(node.op_type)) continue;
    for (int v : detail::later_definitions(node.op_type)) targets.insert(v);
  }
  return {targets.begin(), targets.end()};
}

collage::Result<std::vector<UpgradedModel>> upgrade_model(const OnnxModel& model, int target) {
  if (target < kFirstUpgradeOpset || target > kLastUpgradeOpset) {
    return Error{ErrorCode::invalid_argument, "opset " + std::to_string(target) + " is not one of " +
                                                  std::to_string(kFirstUpgradeOpset) + " to " + std::to_string(kLastUpgradeOpset)};
  }
  if (std::string why = model_refusal(model, target); !why.empty()) return Error{ErrorCode::invalid_argument, why};
  OnnxModel plain = model;
  plain.opset = target;
  plain.ir_version = ir_version_for_opset(target);
  std::vector<std::size_t> pads;  // the Pad nodes, for the explicit-axes form
  for (std::size_t k = 0; k < plain.nodes.size(); ++k) {
    OnnxNode& node = plain.nodes[k];
    if (is_reduction_with_axes_attribute(node.op_type)) {
      const auto it = std::find_if(node.attrs.begin(), node.attrs.end(), [](const auto& a) { return a.first == "axes"; });
      if (it == node.attrs.end()) continue;  // every axis, as the absent input means
      const auto* axes = std::get_if<Ints>(&it->second);
      if (axes == nullptr || node.inputs.size() != 1) return Error{ErrorCode::invalid_argument, node_label(node) + ": unexpected axes"};
      const std::string name = fresh_name(plain, node.outputs.empty() ? "axes" : node.outputs[0] + "_axes");
      plain.initializers.emplace_back(name, int64_vector(*axes));
      node.inputs.push_back(name);
      node.attrs.erase(it);
    } else if (node.op_type == "Split") {
      // Split-18 needs the split input or num_outputs; equal parts had neither before.
      if ((node.inputs.size() < 2 || node.inputs[1].empty()) && find_attr(node, "num_outputs") == nullptr) {
        node.attrs.emplace_back("num_outputs", static_cast<std::int64_t>(node.outputs.size()));
      }
    } else if (node.op_type == "Resize") {
      // Resize-18 no longer lists this mode.
      const OnnxAttr* mode = find_attr(node, "coordinate_transformation_mode");
      if (mode != nullptr && std::holds_alternative<std::string>(*mode) && std::get<std::string>(*mode) == "tf_half_pixel_for_nn") {
        return Error{ErrorCode::invalid_argument, node_label(node) + ": coordinate_transformation_mode tf_half_pixel_for_nn is gone from Resize-18"};
      }
    } else if (node.op_type == "Pad") {
      pads.push_back(k);
    }
  }
  const std::string suffix = "_opset" + std::to_string(target);
  std::vector<UpgradedModel> forms;
  if (target == 18 && !pads.empty()) {
    // Every axis in order names the same pads, so the test's data still holds.
    OnnxModel with_axes = plain;
    bool all = true;
    for (std::size_t k : pads) {
      OnnxNode& node = with_axes.nodes[k];
      const std::int64_t rank = node.inputs.empty() ? -1 : input_rank(with_axes, node.inputs[0]);
      if (rank < 0 || node.inputs.size() > 3) {
        all = false;
        break;
      }
      Ints axes(static_cast<std::size_t>(rank));
      for (std::int64_t a = 0; a < rank; ++a) axes[static_cast<std::size_t>(a)] = a;
      const std::string name = fresh_name(with_axes, node.outputs.empty() ? "axes" : node.outputs[0] + "_axes");
      with_axes.initializers.emplace_back(name, int64_vector(axes));
      node.inputs.resize(3);  // an omitted constant_value stays omitted
      node.inputs.push_back(name);
    }
    forms.push_back(UpgradedModel{suffix, std::move(plain)});
    if (all) forms.push_back(UpgradedModel{suffix + "_axes", std::move(with_axes)});
    return forms;
  }
  forms.push_back(UpgradedModel{suffix, std::move(plain)});
  return forms;
}

double swish_reference(double x, double alpha) { return x / (1 + std::exp(-alpha * x)); }

OnnxTensor rms_normalization_reference(const OnnxTensor& x, const OnnxTensor& scale, std::int64_t axis, float epsilon) {
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t first = axis < 0 ? axis + rank : axis;
  std::int64_t inner = 1;  // elements of one normalised group: the dimensions from `first` on
  for (std::int64_t d = first; d < rank; ++d) inner *= x.shape[static_cast<std::size_t>(d)];
  const std::vector<std::int64_t> scale_strides = broadcast_strides(scale.shape, x.shape);
  OnnxTensor y = float32_tensor(x.shape, {});
  for (std::size_t start = 0; start < x.reals.size(); start += static_cast<std::size_t>(inner)) {
    double sum = 0;
    for (std::int64_t k = 0; k < inner; ++k) sum += static_cast<double>(x.reals[start + k]) * x.reals[start + k];
    const double rms = std::sqrt(sum / static_cast<double>(inner) + static_cast<double>(epsilon));
    for (std::int64_t k = 0; k < inner; ++k) {
      const std::int64_t source = broadcast_offset(static_cast<std::int64_t>(start) + k, x.shape, scale_strides);
      y.reals.push_back(static_cast<float>(x.reals[start + k] / rms * scale.reals[static_cast<std::size_t>(source)]));
    }
  }
  return y;
}

OnnxTensor rotary_embedding_reference(const OnnxTensor& x, const OnnxTensor& cos, const OnnxTensor& sin, const Ints& positions,
                                      bool interleaved, std::int64_t dim, std::int64_t heads) {
  const bool packed = x.shape.size() == 3;
  const std::int64_t batch = x.shape[0], seq = packed ? x.shape[1] : x.shape[2];
  if (!packed) heads = x.shape[1];
  const std::int64_t head_size = packed ? x.shape[2] / heads : x.shape[3];
  const std::int64_t half = dim / 2;
  OnnxTensor y = x;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < seq; ++t) {
      // The caches' row for this token: by position, or the token's own.
      const std::int64_t row = positions.empty() ? b * seq + t : positions[static_cast<std::size_t>(b * seq + t)];
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t base = packed ? (b * seq + t) * heads * head_size + h * head_size : ((b * heads + h) * seq + t) * head_size;
        for (std::int64_t i = 0; i < half; ++i) {
          const auto first = static_cast<std::size_t>(base + (interleaved ? 2 * i : i));
          const auto second = static_cast<std::size_t>(base + (interleaved ? 2 * i + 1 : i + half));
          const double c = cos.reals[static_cast<std::size_t>(row * half + i)];
          const double s = sin.reals[static_cast<std::size_t>(row * half + i)];
          const double x1 = x.reals[first], x2 = x.reals[second];
          y.reals[first] = static_cast<float>(c * x1 - s * x2);
          y.reals[second] = static_cast<float>(s * x1 + c * x2);
        }
      }
    }
  }
  return y;
}

AttentionOutputs attention_reference(const OnnxTensor& q, const OnnxTensor& k, const OnnxTensor& v, const OnnxTensor* mask,
                                     const AttentionOptions& options, const OnnxTensor* past_key,
                                     const OnnxTensor* past_value) {
  const bool packed = q.shape.size() == 3;
  const std::int64_t batch = q.shape[0];
  const std::int64_t q_heads = packed ? options.q_heads : q.shape[1], kv_heads = packed ? options.kv_heads : k.shape[1];
  const std::int64_t q_len = q.shape[packed ? 1 : 2], kv_len = k.shape[packed ? 1 : 2];
  const std::int64_t head = packed ? q.shape[2] / q_heads : q.shape[3];
  const std::int64_t v_head = packed ? v.shape[2] / kv_heads : v.shape[3];
  const std::int64_t group = q_heads / kv_heads;
  const double scale = options.scale ? *options.scale : 1 / std::sqrt(static_cast<double>(head));
  constexpr double kBlocked = -std::numeric_limits<double>::infinity();
  // Element (b, h, t, d) of a tensor of `heads` heads of `size` in either layout.
  auto at = [&](const OnnxTensor& x, std::int64_t heads, std::int64_t len, std::int64_t size, std::int64_t b, std::int64_t h,
                std::int64_t t, std::int64_t d) -> double {
    const std::int64_t flat = packed ? ((b * len + t) * heads + h) * size + d : ((b * heads + h) * len + t) * size + d;
    return x.reals[static_cast<std::size_t>(flat)];
  };
  // The keys and values: the past's, then k's and v's, as [B, kv heads, P + S, size].
  const std::int64_t past = past_key != nullptr ? past_key->shape[2] : 0, total = past + kv_len;
  auto present = [&](const OnnxTensor* before, const OnnxTensor& x, std::int64_t size) {
    OnnxTensor p = float32_tensor({batch, kv_heads, total, size}, {});
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t h = 0; h < kv_heads; ++h) {
        for (std::int64_t t = 0; t < total; ++t) {
          for (std::int64_t d = 0; d < size; ++d) {
            p.reals.push_back(t < past ? before->reals[static_cast<std::size_t>(((b * kv_heads + h) * past + t) * size + d)]
                                       : static_cast<float>(at(x, kv_heads, kv_len, size, b, h, t - past, d)));
          }
        }
      }
    }
    return p;
  };
  AttentionOutputs out{{}, present(past_key, k, head), present(past_value, v, v_head)};
  auto cached = [&](const OnnxTensor& p, std::int64_t size, std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t d) -> double {
    return p.reals[static_cast<std::size_t>(((b * kv_heads + h) * total + t) * size + d)];
  };
  // The mask's element for score (b, h, i, j), its dimensions aligned right and broadcast, the
  // keys past its last dimension blocked.
  const std::int64_t mask_keys = mask != nullptr ? mask->shape.back() : total;
  const Shape mask_bounds = {batch, q_heads, q_len, mask_keys};
  const std::vector<std::int64_t> mask_strides = mask != nullptr ? broadcast_strides(mask->shape, mask_bounds) : std::vector<std::int64_t>{};
  auto mask_at = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) -> double {
    if (j >= mask_keys) return kBlocked;
    const auto at = static_cast<std::size_t>(broadcast_offset(((b * q_heads + h) * q_len + i) * mask_keys + j, mask_bounds, mask_strides));
    if (mask->type == ElemType::boolean) return mask->ints[at] != 0 ? 0.0 : kBlocked;
    return mask->reals[at];
  };
  OnnxTensor& y = out.y;
  y = float32_tensor(packed ? Shape{batch, q_len, q_heads * v_head} : Shape{batch, q_heads, q_len, v_head}, {});
  y.reals.assign(static_cast<std::size_t>(batch * q_heads * q_len * v_head), 0.0f);
  std::vector<double> scores(static_cast<std::size_t>(total));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < q_heads; ++h) {
      for (std::int64_t i = 0; i < q_len; ++i) {
        double top = kBlocked;
        for (std::int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < head; ++d) {
            dot += at(q, q_heads, q_len, head, b, h, i, d) * cached(out.present_key, head, b, h / group, j, d);
          }
          double score = dot * scale;
          if (options.softcap > 0) score = options.softcap * std::tanh(score / options.softcap);
          if (mask != nullptr) score += mask_at(b, h, i, j);
          if (options.causal && j > i + past) score = kBlocked;
          scores[static_cast<std::size_t>(j)] = score;
          top = std::max(top, score);
        }
        if (top == kBlocked) continue;  // no key to attend: a row of zeros (the errata of Attention-23)
        double sum_exp = 0;
        for (double& score : scores) sum_exp += (score = std::exp(score - top));
        for (std::int64_t d = 0; d < v_head; ++d) {
          double sum = 0;
          for (std::int64_t j = 0; j < total; ++j) {
            sum += scores[static_cast<std::size_t>(j)] / sum_exp * cached(out.present_value, v_head, b, h / group, j, d);
          }
          const std::int64_t flat = packed ? ((b * q_len + i) * q_heads + h) * v_head + d : ((b * q_heads + h) * q_len + i) * v_head + d;
          y.reals[static_cast<std::size_t>(flat)] = static_cast<float>(sum);
        }
      }
    }
  }
  return out;
}

double gelu_reference(double x, bool tanh) {
  const double pi = 3.14159265358979323846;
  if (tanh) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

std::vector<NewNodeTest> new_node_tests() {
  std::mt19937_64 rng(20);  // fixed: the files are the same on every run
  const OnnxTensor example = float32_tensor({3}, {-1, 0, 1});
  std::vector<NewNodeTest> tests;
  tests.push_back(gelu_test("test_gelu_default_1_opset20", false, example));
  tests.push_back(gelu_test("test_gelu_default_2_opset20", false, random_float32({3, 4, 5}, rng)));
  tests.push_back(gelu_test("test_gelu_tanh_1_opset20", true, example));
  tests.push_back(gelu_test("test_gelu_tanh_2_opset20", true, random_float32({3, 4, 5}, rng)));
  tests.push_back(wrap_pad_test(rng));
  tests.push_back(swish_test("test_swish_1_opset24", std::nullopt, example));
  tests.push_back(swish_test("test_swish_2_opset24", std::nullopt, random_float32({3, 4, 5}, rng)));
  tests.push_back(swish_test("test_swish_alpha_opset24", 0.5f, random_float32({3, 4, 5}, rng)));
  tests.push_back(rms_normalization_test("test_rms_normalization_last_axis_opset23", random_float32({2, 3, 8}, rng),
                                         random_float32({8}, rng), std::nullopt, std::nullopt));
  tests.push_back(rms_normalization_test("test_rms_normalization_axis_1_epsilon_opset23", random_float32({2, 3, 4, 5}, rng),
                                         random_float32({3, 1, 5}, rng), std::int64_t{1}, 0.5f));
  tests.push_back(rms_normalization_test("test_rms_normalization_negative_axis_opset23", random_float32({4, 6, 5}, rng),
                                         random_float32({6, 5}, rng), std::int64_t{-2}, std::nullopt));
  tests.push_back(rotary_embedding_test("test_rotary_embedding_opset23", {2, 3, 4, 8}, 0, 8, false, {}, 0, rng));
  tests.push_back(rotary_embedding_test("test_rotary_embedding_interleaved_partial_3d_opset23", {1, 5, 12}, 2, 4, true,
                                        {3, 4, 5, 6, 7}, 8, rng));
  tests.push_back(rotary_embedding_test("test_rotary_embedding_position_ids_opset23", {2, 2, 3, 6}, 0, 6, false,
                                        {0, 2, 1, 4, 4, 0}, 5, rng));
  tests.push_back(attention_test("test_attention_4d_opset23", {2, 3, 4, 8}, {2, 3, 4, 8}, {2, 3, 4, 8}, std::nullopt, {}, rng));
  tests.push_back(attention_test("test_attention_4d_gqa_causal_softcap_opset23", {1, 4, 5, 6}, {1, 2, 5, 6}, {1, 2, 5, 3},
                                 std::nullopt,
                                 {{"is_causal", std::int64_t{1}}, {"softcap", 2.0f}, {"scale", 0.3f}}, rng));
  // A boolean mask over [queries, keys] whose third row attends to nothing.
  OnnxTensor allowed;
  allowed.type = ElemType::boolean;
  allowed.shape = {3, 4};
  allowed.ints = {1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0};
  tests.push_back(attention_test("test_attention_3d_mqa_bool_mask_opset23", {2, 3, 8}, {2, 4, 4}, {2, 4, 6}, allowed,
                                 {{"q_num_heads", std::int64_t{2}}, {"kv_num_heads", std::int64_t{1}}}, rng));
  tests.push_back(attention_test("test_attention_4d_float_mask_cross_opset23", {1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4},
                                 random_float32({1, 1, 3, 5}, rng), {}, rng));
  // Causal without a cache and with fewer queries than keys: aligned top left (key j for query
  // j and before).
  tests.push_back(attention_test("test_attention_4d_causal_cross_opset23", {1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4},
                                 std::nullopt, {{"is_causal", std::int64_t{1}}}, rng));
  // With a key/value cache: present_key and present_value out; causal aligned bottom right
  // (query i sees the past and the new keys up to i).
  tests.push_back(attention_test("test_attention_4d_with_past_and_present_opset23", {1, 2, 3, 4}, {1, 2, 3, 4},
                                 {1, 2, 3, 5}, std::nullopt, {}, rng, 4));
  tests.push_back(attention_test("test_attention_3d_gqa_causal_with_past_opset23", {2, 2, 12}, {2, 2, 6}, {2, 2, 4},
                                 std::nullopt,
                                 {{"q_num_heads", std::int64_t{4}}, {"kv_num_heads", std::int64_t{2}}, {"is_causal", std::int64_t{1}}},
                                 rng, 3));
  // Masks shorter than the past and new keys, padded with -inf: a float one over 3 of 5 keys,
  // a boolean one over 4 of 5.
  tests.push_back(attention_test("test_attention_4d_short_float_mask_with_past_opset23", {1, 2, 2, 4}, {1, 2, 2, 4},
                                 {1, 2, 2, 4}, random_float32({1, 1, 2, 3}, rng), {}, rng, 3));
  OnnxTensor four_keys;
  four_keys.type = ElemType::boolean;
  four_keys.shape = {2, 4};
  four_keys.ints = {1, 0, 1, 1, 0, 1, 1, 0};
  tests.push_back(attention_test("test_attention_4d_short_bool_mask_with_past_opset23", {1, 1, 2, 4}, {1, 1, 3, 4},
                                 {1, 1, 3, 4}, four_keys, {}, rng, 2));
  return tests;
}

collage::Result<UpgradeReport> upgrade_node_tests(const std::string& data, const std::string& out) {
  std::error_code ec;
  if (!fs::is_directory(data, ec)) return Error{ErrorCode::io, data + ": not a directory"};
  fs::create_directories(out, ec);
  if (!fs::is_directory(out, ec)) return Error{ErrorCode::io, out + ": cannot create"};
  std::vector<fs::path> stale, tests;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("test_", 0) == 0 && name.find("_opset") != std::string::npos) stale.push_back(it->path());
  }
  for (const fs::path& p : stale) {
    fs::remove_all(p, ec);
    if (ec) return Error{ErrorCode::io, p.string() + ": cannot remove (" + ec.message() + ")"};
  }
  for (fs::directory_iterator it(data, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code exists_ec;
    if (fs::exists(it->path() / "model.onnx", exists_ec)) tests.push_back(it->path());
  }
  if (ec) return Error{ErrorCode::io, data + ": cannot list (" + ec.message() + ")"};
  std::sort(tests.begin(), tests.end());
  UpgradeReport report;
  for (const fs::path& test : tests) {
    const std::string name = test.filename().string();
    collage::Result<std::string> bytes = read_file_bytes((test / "model.onnx").string());
    if (!bytes.ok()) return bytes.error();
    collage::Result<OnnxModel> model = parse_model(*bytes);
    // A model parse_model() cannot hold (string initializers) is not rewritten; the conformance
    // run of the originals reports it.
    if (!model.ok()) continue;
    for (int target : upgrade_targets(*model)) {
      collage::Result<std::vector<UpgradedModel>> forms = upgrade_model(*model, target);
      if (!forms.ok()) {
        report.skipped.push_back(name + " -> opset " + std::to_string(target) + ": " + forms.error().message);
        continue;
      }
      for (const UpgradedModel& form : *forms) {
        const fs::path dir = fs::path(out) / (name + form.suffix);
        fs::create_directories(dir, ec);
        if (ec) return Error{ErrorCode::io, dir.string() + ": cannot create (" + ec.message() + ")"};
        if (collage::Status s = save(form.model, (dir / "model.onnx").string()); !s.ok()) return s.error();
        for (fs::directory_iterator it(test, ec), end; !ec && it != end; it.increment(ec)) {
          if (!it->is_directory(ec) || it->path().filename().string().rfind("test_data_set_", 0) != 0) continue;
          fs::copy(it->path(), dir / it->path().filename(), fs::copy_options::recursive, ec);
          if (ec) break;
        }
        if (ec) return Error{ErrorCode::io, dir.string() + ": cannot copy the data sets (" + ec.message() + ")"};
        ++report.written;
      }
    }
  }
  for (const NewNodeTest& test : new_node_tests()) {
    if (collage::Status s = write_test(test, fs::path(out) / test.name); !s.ok()) return s.error();
    ++report.written;
  }
  return report;
}

}  // namespace tc
