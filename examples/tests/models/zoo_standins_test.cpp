// The stand-ins of the ONNX model zoo: each serialises and parses back at the opset and IR
// version of the zoo files it stands for, with the operators and the old attribute forms those
// files use (whether the reader runs them is the zoo check's business, scripts/zoo-check.sh).

#include "models/zoo_standins.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "models/model_zoo.hpp"

namespace tc {
namespace {

struct Expected {
  int opset;
  int ir_version;
  std::set<std::string> operators;  ///< among the model's operators
};

const std::map<std::string, Expected>& expected() {
  static const std::map<std::string, Expected> table = {
      {"alexnet-standin", {9, 4, {"Conv", "Relu", "LRN", "MaxPool", "Reshape", "Gemm", "Dropout", "Softmax"}}},
      {"zfnet512-standin", {9, 4, {"Conv", "LRN", "MaxPool", "Reshape", "Gemm", "Dropout", "Softmax"}}},
      {"vgg19-standin", {9, 4, {"Conv", "MaxPool", "Flatten", "ConstantOfShape", "Gemm", "Dropout", "Softmax"}}},
      {"squeezenet1.1-standin", {9, 4, {"Conv", "Concat", "Dropout", "GlobalAveragePool", "Flatten"}}},
      {"resnet50-v1-standin", {7, 3, {"Conv", "BatchNormalization", "Add", "GlobalAveragePool", "Flatten", "Gemm"}}},
      {"resnet50-v2-standin", {9, 4, {"Conv", "BatchNormalization", "Add", "Flatten", "Gemm"}}},
      {"inception-v1-standin", {9, 4, {"LRN", "Concat", "MaxPool", "AveragePool", "Dropout", "Reshape", "Softmax"}}},
      {"inception-v2-standin", {9, 4, {"BatchNormalization", "Concat", "AveragePool", "Dropout", "Softmax"}}},
      {"densenet121-standin", {9, 4, {"BatchNormalization", "Concat", "AveragePool", "Softmax"}}},
      {"shufflenet-standin", {9, 4, {"Conv", "Reshape", "Transpose", "Concat", "Add", "AveragePool"}}},
      {"fpn-opset9-standin",
       {9, 4, {"PRelu", "Pad", "LeakyRelu", "Upsample", "Sum", "Clip", "Slice", "Unsqueeze"}}},
      {"fpn-opset10-standin", {10, 5, {"Resize", "Slice", "Add"}}},
      {"resnet18-opset18-standin", {18, 8, {"Conv", "ReduceMean", "Gemm"}}},
      {"bert-opset18-standin", {18, 8, {"Split", "ReduceMean", "MatMul", "Erf", "Softmax"}}},
      {"bert-opset20-standin", {20, 9, {"Split", "ReduceMean", "Gelu"}}},
      {"bert-tokens-opset17-standin", {17, 8, {"Gather", "Unsqueeze", "Cast", "Sub", "MatMul", "Softmax"}}},
      {"unet-opset13-standin",
       {13, 7, {"InstanceNormalization", "Elu", "Selu", "ConvTranspose", "SpaceToDepth", "DepthToSpace", "LogSoftmax"}}},
      {"lstm-opset14-standin", {14, 7, {"LSTM", "GRU", "LogSoftmax", "ReduceMax", "LpNormalization"}}},
      {"llama-opset24-standin", {24, 12, {"RMSNormalization", "RotaryEmbedding", "Attention", "Swish", "MatMul"}}},
      {"llama-decode-opset24-standin", {24, 12, {"RMSNormalization", "RotaryEmbedding", "Attention", "Swish", "MatMul"}}},
  };
  return table;
}

OnnxModel parsed(const std::string& name) {
  collage::Result<std::string> bytes = make_zoo_model(name);
  EXPECT_TRUE(bytes.ok()) << name;
  if (!bytes.ok()) return {};
  collage::Result<OnnxModel> model = parse_model(*bytes);
  EXPECT_TRUE(model.ok()) << name << ": " << model.error().message;
  return model.ok() ? std::move(model).value() : OnnxModel{};
}

/// The first node of `op` in `model`; fails the test when there is none.
const OnnxNode& first(const OnnxModel& model, const std::string& op) {
  static const OnnxNode none;
  auto it = std::find_if(model.nodes.begin(), model.nodes.end(), [&](const OnnxNode& n) { return n.op_type == op; });
  EXPECT_NE(it, model.nodes.end()) << model.graph_name << ": no " << op;
  return it == model.nodes.end() ? none : *it;
}

bool has_attr(const OnnxNode& node, const std::string& name) {
  return std::any_of(node.attrs.begin(), node.attrs.end(), [&](const auto& a) { return a.first == name; });
}

TEST(ZooStandins, EachHasTheOpsetIrVersionAndOperatorsOfItsZooFiles) {
  ASSERT_EQ(zoo_standins().size(), expected().size());
  for (const ZooStandin& s : zoo_standins()) {
    auto e = expected().find(s.name);
    ASSERT_NE(e, expected().end()) << s.name << " has no expectations here";
    const OnnxModel m = parsed(s.name);
    EXPECT_EQ(m.opset, e->second.opset) << s.name;
    EXPECT_EQ(m.ir_version, e->second.ir_version) << s.name;
    std::set<std::string> ops;
    for (const OnnxNode& n : m.nodes) ops.insert(n.op_type);
    for (const std::string& op : e->second.operators) EXPECT_EQ(ops.count(op), 1u) << s.name << ": no " << op;
    EXPECT_TRUE(m.left_out.empty()) << s.name;
  }
}

TEST(ZooStandins, OldIrVersionsListTheInitializersAsInputs) {
  for (const ZooStandin& s : zoo_standins()) {
    const OnnxModel m = parsed(s.name);
    std::set<std::string> inputs;
    for (const OnnxValueInfo& v : m.inputs) inputs.insert(v.name);
    std::size_t listed = 0, caches = 0;
    for (const auto& init : m.initializers) listed += inputs.count(init.first);
    for (const std::string& name : inputs) caches += name.rfind("past_", 0) == 0 ? 1 : 0;  // a decoder's key/value caches
    EXPECT_EQ(listed, m.ir_version <= 4 ? m.initializers.size() : 0u) << s.name;
    // One real input besides the caches, or the token ids, token types and mask.
    const std::size_t real = s.name == "bert-tokens-opset17-standin" ? 3 : 1;
    EXPECT_EQ(inputs.size() - listed - caches, real) << s.name;
  }
}

TEST(ZooStandins, OldOpsetsUseTheAttributeForms) {
  const OnnxModel alexnet = parsed("alexnet-standin");
  const OnnxNode& lrn = first(alexnet, "LRN");
  EXPECT_TRUE(has_attr(lrn, "size") && has_attr(lrn, "alpha") && has_attr(lrn, "beta") && has_attr(lrn, "bias"));
  EXPECT_TRUE(has_attr(first(alexnet, "Dropout"), "ratio"));
  EXPECT_EQ(first(alexnet, "Reshape").inputs.size(), 2u);

  EXPECT_TRUE(has_attr(first(parsed("resnet50-v1-standin"), "BatchNormalization"), "spatial"));
  EXPECT_FALSE(has_attr(first(parsed("resnet50-v2-standin"), "BatchNormalization"), "spatial"));
  EXPECT_TRUE(has_attr(first(parsed("vgg19-standin"), "ConstantOfShape"), "value"));

  const OnnxModel fpn = parsed("fpn-opset9-standin");
  for (const char* op : {"Pad", "Clip", "Slice", "Unsqueeze"}) EXPECT_EQ(first(fpn, op).inputs.size(), 1u) << op;
  EXPECT_TRUE(has_attr(first(fpn, "Pad"), "pads"));
  EXPECT_TRUE(has_attr(first(fpn, "Clip"), "min") && has_attr(first(fpn, "Clip"), "max"));
  EXPECT_TRUE(has_attr(first(fpn, "Slice"), "starts") && has_attr(first(fpn, "Slice"), "axes"));
  EXPECT_TRUE(has_attr(first(fpn, "Unsqueeze"), "axes"));
  EXPECT_EQ(first(fpn, "Upsample").inputs.size(), 2u);
  EXPECT_EQ(first(fpn, "Sum").inputs.size(), 4u);

  const OnnxModel fpn10 = parsed("fpn-opset10-standin");
  EXPECT_EQ(first(fpn10, "Slice").inputs.size(), 4u);
  EXPECT_EQ(first(fpn10, "Resize").inputs.size(), 2u);
}

TEST(ZooStandins, Opset18ExportsTakeAxesAsInputsAndSplitByCount) {
  for (const char* name : {"resnet18-opset18-standin", "bert-opset18-standin", "bert-opset20-standin"}) {
    const OnnxModel m = parsed(name);
    for (const OnnxNode& n : m.nodes) {
      if (n.op_type != "ReduceMean") continue;
      EXPECT_EQ(n.inputs.size(), 2u) << name;
      EXPECT_FALSE(has_attr(n, "axes")) << name;
    }
  }
  const OnnxModel bert = parsed("bert-opset18-standin");
  const OnnxNode& split = first(bert, "Split");
  EXPECT_TRUE(has_attr(split, "num_outputs"));
  EXPECT_EQ(split.inputs.size(), 1u);
  EXPECT_EQ(split.outputs.size(), 3u);
  EXPECT_EQ(std::count_if(bert.nodes.begin(), bert.nodes.end(), [](const OnnxNode& n) { return n.op_type == "Gelu"; }),
            0);
}

TEST(ZooStandins, TheSeedDecidesTheWeights) {
  for (const ZooStandin& s : zoo_standins()) {
    collage::Result<std::string> once = make_zoo_model(s.name, 3);
    collage::Result<std::string> again = make_zoo_model(s.name, 3);
    collage::Result<std::string> other = make_zoo_model(s.name, 4);
    ASSERT_TRUE(once.ok() && again.ok() && other.ok()) << s.name;
    EXPECT_EQ(*once, *again) << s.name;
    EXPECT_NE(*once, *other) << s.name;
  }
  EXPECT_FALSE(make_zoo_standin("no-such-standin").ok());
}

}  // namespace
}  // namespace tc
