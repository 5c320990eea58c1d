#include "onnx/definitions.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include <onnx/defs/schema.h>

namespace tc::detail {

namespace {

using collage::Error;
using collage::ErrorCode;
using Definition = std::pair<std::string_view, int>;

/// The operator versions introduced in opsets 18 to 27 (ONNX's changelog, by opset; 27 is ONNX 1.22's),
/// for a libonnx whose schemas stop earlier (Debian 12's 1.12 stops at 17).
constexpr Definition kLaterDefinitions[] = {
    {"BitwiseAnd", 18}, {"BitwiseNot", 18}, {"BitwiseOr", 18}, {"BitwiseXor", 18}, {"CenterCropPad", 18},
    {"Col2Im", 18}, {"GroupNormalization", 18}, {"LpPool", 18}, {"Mish", 18}, {"OptionalGetElement", 18},
    {"OptionalHasElement", 18}, {"Pad", 18}, {"ReduceL1", 18}, {"ReduceL2", 18}, {"ReduceLogSum", 18},
    {"ReduceLogSumExp", 18}, {"ReduceMax", 18}, {"ReduceMean", 18}, {"ReduceMin", 18}, {"ReduceProd", 18},
    {"ReduceSumSquare", 18}, {"Resize", 18}, {"ScatterElements", 18}, {"ScatterND", 18}, {"Split", 18},
    {"AveragePool", 19}, {"Cast", 19}, {"CastLike", 19}, {"Constant", 19}, {"DeformConv", 19},
    {"DequantizeLinear", 19}, {"Equal", 19}, {"Identity", 19}, {"If", 19}, {"Loop", 19}, {"Pad", 19},
    {"QuantizeLinear", 19}, {"Reshape", 19}, {"Resize", 19}, {"Scan", 19}, {"Shape", 19}, {"Size", 19},
    {"AffineGrid", 20}, {"ConstantOfShape", 20}, {"DFT", 20}, {"Gelu", 20}, {"GridSample", 20},
    {"ImageDecoder", 20}, {"IsInf", 20}, {"IsNaN", 20}, {"ReduceMax", 20}, {"ReduceMin", 20},
    {"RegexFullMatch", 20}, {"StringConcat", 20}, {"StringSplit", 20},
    {"Cast", 21}, {"CastLike", 21}, {"Constant", 21}, {"ConstantOfShape", 21}, {"DequantizeLinear", 21},
    {"Flatten", 21}, {"GroupNormalization", 21}, {"Identity", 21}, {"If", 21}, {"Loop", 21}, {"Pad", 21},
    {"QLinearMatMul", 21}, {"QuantizeLinear", 21}, {"Reshape", 21}, {"Scan", 21}, {"Shape", 21}, {"Size", 21},
    {"Squeeze", 21}, {"Transpose", 21}, {"Unsqueeze", 21},
    {"Acos", 22}, {"Acosh", 22}, {"Asin", 22}, {"Asinh", 22}, {"Atan", 22}, {"Atanh", 22}, {"AveragePool", 22},
    {"Bernoulli", 22}, {"Conv", 22}, {"ConvTranspose", 22}, {"Cos", 22}, {"Cosh", 22}, {"DeformConv", 22},
    {"Det", 22}, {"Dropout", 22}, {"Elu", 22}, {"EyeLike", 22}, {"GRU", 22}, {"GlobalAveragePool", 22},
    {"GlobalLpPool", 22}, {"GlobalMaxPool", 22}, {"GridSample", 22}, {"HardSigmoid", 22}, {"HardSwish", 22},
    {"InstanceNormalization", 22}, {"LSTM", 22}, {"LpNormalization", 22}, {"LpPool", 22}, {"MaxPool", 22},
    {"MaxRoiPool", 22}, {"MaxUnpool", 22}, {"Mish", 22}, {"Multinomial", 22}, {"NegativeLogLikelihoodLoss", 22},
    {"RNN", 22}, {"RandomNormal", 22}, {"RandomNormalLike", 22}, {"RandomUniform", 22}, {"RandomUniformLike", 22},
    {"RoiAlign", 22}, {"Round", 22}, {"Selu", 22}, {"Sin", 22}, {"Sinh", 22}, {"Softplus", 22}, {"Softsign", 22},
    {"Tan", 22}, {"ThresholdedRelu", 22},
    {"Attention", 23}, {"Cast", 23}, {"CastLike", 23}, {"Constant", 23}, {"ConstantOfShape", 23},
    {"DequantizeLinear", 23}, {"Flatten", 23}, {"Identity", 23}, {"If", 23}, {"Loop", 23}, {"Pad", 23},
    {"QuantizeLinear", 23}, {"RMSNormalization", 23}, {"Reshape", 23}, {"RotaryEmbedding", 23}, {"Scan", 23},
    {"Shape", 23}, {"Size", 23}, {"Squeeze", 23}, {"Transpose", 23}, {"Unsqueeze", 23},
    {"Attention", 24}, {"Cast", 24}, {"CastLike", 24}, {"Constant", 24}, {"ConstantOfShape", 24},
    {"DequantizeLinear", 24}, {"Flatten", 24}, {"Identity", 24}, {"If", 24}, {"Loop", 24}, {"Pad", 24},
    {"QuantizeLinear", 24}, {"Reshape", 24}, {"Scan", 24}, {"Shape", 24}, {"Size", 24}, {"SplitToSequence", 24},
    {"Squeeze", 24}, {"Swish", 24}, {"TensorScatter", 24}, {"TopK", 24}, {"Transpose", 24}, {"Unsqueeze", 24},
    {"Attention", 25}, {"Cast", 25}, {"CastLike", 25}, {"Constant", 25}, {"ConstantOfShape", 25},
    {"DequantizeLinear", 25}, {"Flatten", 25}, {"Identity", 25}, {"If", 25}, {"Loop", 25}, {"Pad", 25},
    {"QuantizeLinear", 25}, {"Reshape", 25}, {"Scan", 25}, {"Shape", 25}, {"Size", 25}, {"Squeeze", 25},
    {"Transpose", 25}, {"Unsqueeze", 25},
    {"BitCast", 26}, {"CumProd", 26},
    {"CausalConvWithState", 27}, {"LinearAttention", 27}, {"Range", 27},
};

/// The definitions older than opset 11's that the reader reads: those that mean, for the float32
/// IR, what opset 11's does (older type lists, optional outputs the reader refuses when used,
/// broadcasting that was not yet allowed), and those whose form it adapts (Pad-2 and Clip-6
/// attributes, Slice-1 attributes, Upsample and Resize-10's asymmetric coordinates,
/// BatchNormalization-7's spatial attribute).
constexpr Definition kOlderDefinitions[] = {
    {"AveragePool", 7}, {"AveragePool", 10}, {"BatchNormalization", 7}, {"Cast", 6}, {"Clip", 6}, {"Concat", 4},
    {"Constant", 1}, {"Constant", 9}, {"Conv", 1}, {"Dropout", 7}, {"Equal", 7}, {"Flatten", 1}, {"Flatten", 9},
    {"Gather", 1}, {"Gemm", 7}, {"Gemm", 9}, {"Greater", 7}, {"Less", 7}, {"MatMul", 1}, {"Max", 6},
    {"MaxPool", 1}, {"MaxPool", 8}, {"MaxPool", 10}, {"Mean", 6}, {"Min", 6}, {"Pad", 2}, {"PRelu", 7},
    {"ReduceMax", 1}, {"ReduceMean", 1}, {"ReduceMin", 1}, {"ReduceProd", 1}, {"ReduceSum", 1}, {"Resize", 10},
    {"Slice", 1}, {"Slice", 10}, {"Softmax", 1}, {"Split", 2}, {"Squeeze", 1}, {"Sum", 6}, {"Unsqueeze", 1},
    {"Upsample", 7}, {"Upsample", 9},
};

Error unsupported(const std::string& what) { return Error{ErrorCode::invalid_argument, what + " is not supported"}; }

/// The newest opset of the default domain the installed libonnx has schemas for.
int schema_opset() {
  const auto& map = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = map.find(::onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

}  // namespace

std::vector<int> later_definitions(const std::string& op_type) {
  std::vector<int> versions;
  for (const auto& [op, since] : kLaterDefinitions) {
    if (op == op_type) versions.push_back(since);
  }
  return versions;
}

collage::Result<int> definition_version(const std::string& op_type, int opset) {
  static const int known = schema_opset();
  int version = 0;
  if (opset > known) {
    for (const auto& [op, since] : kLaterDefinitions) {
      if (op == op_type && since > known && since <= opset) version = std::max(version, since);
    }
  }
  if (version == 0) {
    const ::onnx::OpSchema* schema = ::onnx::OpSchemaRegistry::Schema(op_type, std::min(opset, known), "");
    if (schema == nullptr || schema->Deprecated()) {
      return unsupported("operator " + op_type + " at opset " + std::to_string(opset) +
                         (opset > known ? " (the installed libonnx defines opsets up to " + std::to_string(known) + ")" : ""));
    }
    version = schema->SinceVersion();
  }
  if (opset < 11) {
    const ::onnx::OpSchema* at_11 = ::onnx::OpSchemaRegistry::Schema(op_type, 11, "");
    const bool as_at_11 = at_11 != nullptr && at_11->SinceVersion() == version;
    if (!as_at_11 && std::find(std::begin(kOlderDefinitions), std::end(kOlderDefinitions), Definition(op_type, version)) ==
                         std::end(kOlderDefinitions)) {
      return unsupported(op_type + "-" + std::to_string(version) + " of opset " + std::to_string(opset) +
                         " (a definition older than opset 11's that the reader does not adapt)");
    }
  }
  return version;
}

}  // namespace tc::detail
