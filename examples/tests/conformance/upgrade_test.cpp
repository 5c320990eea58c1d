#include "conformance/upgrade.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <variant>

namespace tc {
namespace {

namespace fs = std::filesystem;
using Ints = std::vector<std::int64_t>;

const OnnxAttr* attr(const OnnxNode& node, const std::string& name) {
  for (const auto& [key, value] : node.attrs) {
    if (key == name) return &value;
  }
  return nullptr;
}

const OnnxTensor* initializer(const OnnxModel& model, const std::string& name) {
  for (const auto& [key, value] : model.initializers) {
    if (key == name) return &value;
  }
  return nullptr;
}

/// An opset-17 model y = op(x...) over a float32 x of `shape`.
OnnxModel one_node(const std::string& op, const Shape& shape, std::vector<std::pair<std::string, OnnxAttr>> attrs,
                   std::vector<std::string> outputs = {"y"}) {
  OnnxModel m;
  m.inputs.push_back(float_value_info("x", shape));
  for (const std::string& out : outputs) m.outputs.push_back(float_value_info(out, shape));
  m.nodes.push_back(OnnxNode{op, {"x"}, std::move(outputs), std::move(attrs), "", ""});
  return m;
}

TEST(UpgradeNodeTests, ReductionAxesBecomeAnInput) {
  const OnnxModel m = one_node("ReduceMean", {2, 3, 4}, {{"axes", Ints{1, -1}}, {"keepdims", std::int64_t{0}}});
  EXPECT_EQ(upgrade_targets(m), std::vector<int>{18});
  auto forms = upgrade_model(m, 18);
  ASSERT_TRUE(forms.ok()) << forms.error().message;
  ASSERT_EQ(forms->size(), 1u);
  EXPECT_EQ((*forms)[0].suffix, "_opset18");
  // Written and read back, as the conformance runner sees it.
  auto bytes = serialize((*forms)[0].model);
  ASSERT_TRUE(bytes.ok());
  auto read = parse_model(*bytes);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->opset, 18);
  EXPECT_EQ(read->ir_version, 8);
  const OnnxNode& node = read->nodes.at(0);
  ASSERT_EQ(node.inputs.size(), 2u);
  EXPECT_EQ(attr(node, "axes"), nullptr);
  ASSERT_NE(attr(node, "keepdims"), nullptr);
  const OnnxTensor* axes = initializer(*read, node.inputs[1]);
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(axes->type, ElemType::int64);
  EXPECT_EQ(axes->ints, (Ints{1, -1}));

  // No axes attribute: every axis, which the absent input also means.
  auto all = upgrade_model(one_node("ReduceL2", {2, 3}, {}), 18);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].model.nodes[0].inputs.size(), 1u);
  // ReduceSum's axes were an input already; it did not change.
  EXPECT_TRUE(upgrade_targets(one_node("ReduceSum", {2}, {})).empty());
}

TEST(UpgradeNodeTests, ReduceMaxAtOpset20HasIrVersion9) {
  const OnnxModel m = one_node("ReduceMax", {2, 3}, {{"axes", Ints{0}}});
  EXPECT_EQ(upgrade_targets(m), (std::vector<int>{18, 20}));
  auto forms = upgrade_model(m, 20);
  ASSERT_TRUE(forms.ok());
  EXPECT_EQ((*forms)[0].suffix, "_opset20");
  EXPECT_EQ((*forms)[0].model.opset, 20);
  EXPECT_EQ((*forms)[0].model.ir_version, 9);
  EXPECT_EQ((*forms)[0].model.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(ir_version_for_opset(21), 10);
  EXPECT_FALSE(upgrade_model(m, 17).ok());
}

TEST(UpgradeNodeTests, OperatorsThatOnlyGainedElementTypesCrossOpsets22To25) {
  // Conv-22 (bfloat16 added) is the same model at opset 22; Reshape changed at 19, 21 and 23-25.
  const OnnxModel conv = one_node("Conv", {1, 1, 3, 3}, {});
  EXPECT_EQ(upgrade_targets(conv), std::vector<int>{22});
  auto at22 = upgrade_model(conv, 22);
  ASSERT_TRUE(at22.ok()) << at22.error().message;
  EXPECT_EQ((*at22)[0].model.opset, 22);
  EXPECT_EQ((*at22)[0].model.ir_version, 10);
  ASSERT_EQ((*at22)[0].model.nodes.size(), 1u);
  EXPECT_EQ((*at22)[0].model.nodes[0].inputs, conv.nodes[0].inputs);
  EXPECT_TRUE((*at22)[0].model.nodes[0].attrs.empty());
  EXPECT_EQ(upgrade_targets(one_node("Reshape", {2}, {})), (std::vector<int>{19, 21, 23, 24, 25}));
  EXPECT_EQ(ir_version_for_opset(23), 11);
  EXPECT_EQ(ir_version_for_opset(24), 12);
  EXPECT_EQ(ir_version_for_opset(25), 13);
  EXPECT_EQ(ir_version_for_opset(27), 13);
  auto at25 = upgrade_model(one_node("Reshape", {2}, {}), 25);
  ASSERT_TRUE(at25.ok());
  EXPECT_EQ((*at25)[0].suffix, "_opset25");
  EXPECT_FALSE(upgrade_model(conv, 28).ok());
  // GridSample-20 renamed its modes: not rewritten, so its tests stop before 20.
  EXPECT_FALSE(upgrade_model(one_node("GridSample", {1, 1, 2, 2}, {}), 22).ok());
}

TEST(UpgradeNodeTests, SplitIntoEqualPartsGetsNumOutputs) {
  auto forms = upgrade_model(one_node("Split", {6}, {{"axis", std::int64_t{0}}}, {"a", "b", "c"}), 18);
  ASSERT_TRUE(forms.ok());
  const OnnxAttr* n = attr((*forms)[0].model.nodes[0], "num_outputs");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*n), 3);

  OnnxModel sized = one_node("Split", {6}, {}, {"a", "b"});
  sized.initializers.emplace_back("split", OnnxTensor{ElemType::int64, {2}, {}, {2, 4}});
  sized.nodes[0].inputs.push_back("split");
  auto kept = upgrade_model(sized, 18);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(attr((*kept)[0].model.nodes[0], "num_outputs"), nullptr);
  EXPECT_EQ((*kept)[0].model.nodes[0].inputs.size(), 2u);
}

TEST(UpgradeNodeTests, PadIsWrittenWithAndWithoutAxes) {
  OnnxModel m = one_node("Pad", {1, 2, 3}, {{"mode", std::string("edge")}});
  OnnxValueInfo pads;
  pads.name = "pads";
  pads.type = ElemType::int64;
  pads.dims = {std::int64_t{6}};
  m.inputs.push_back(pads);
  m.nodes[0].inputs.push_back("pads");
  EXPECT_EQ(upgrade_targets(m), (std::vector<int>{18, 19, 21, 23, 24, 25}));
  auto forms = upgrade_model(m, 18);
  ASSERT_TRUE(forms.ok());
  ASSERT_EQ(forms->size(), 2u);
  EXPECT_EQ((*forms)[0].model.nodes[0].inputs, (std::vector<std::string>{"x", "pads"}));
  EXPECT_EQ((*forms)[1].suffix, "_opset18_axes");
  const OnnxNode& node = (*forms)[1].model.nodes[0];
  ASSERT_EQ(node.inputs.size(), 4u);
  EXPECT_EQ(node.inputs[2], "");  // constant_value stays omitted
  const OnnxTensor* axes = initializer((*forms)[1].model, node.inputs[3]);
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(axes->ints, (Ints{0, 1, 2}));
  auto at21 = upgrade_model(m, 21);
  ASSERT_TRUE(at21.ok());
  EXPECT_EQ(at21->size(), 1u);
  EXPECT_EQ((*at21)[0].model.ir_version, 10);
}

TEST(UpgradeNodeTests, RefusesWhatItCannotRewriteFaithfully) {
  // Sub-13 is not Sub-14 of opset 17.
  OnnxModel old = one_node("Cast", {2}, {{"to", std::int64_t{1}}});
  old.opset = 13;
  old.nodes.push_back(OnnxNode{"Sub", {"x", "x"}, {"z"}, {}, "", ""});
  auto refused = upgrade_model(old, 19);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("Sub-13 of opset 13 is not Sub-14 of opset 17"), std::string::npos) << refused.error().message;
  // An unchanged operator of an older opset is fine.
  OnnxModel cast13 = one_node("Cast", {2}, {{"to", std::int64_t{1}}});
  cast13.opset = 13;
  EXPECT_TRUE(upgrade_model(cast13, 19).ok());

  OnnxModel scatter = one_node("Identity", {2}, {});
  scatter.nodes.push_back(OnnxNode{"ScatterND", {"x", "i", "u"}, {"z"}, {}, "", ""});
  EXPECT_FALSE(upgrade_model(scatter, 19).ok());
  EXPECT_FALSE(upgrade_model(one_node("Resize", {1, 1, 2, 2}, {{"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}}), 18).ok());
  OnnxModel lossy = one_node("Identity", {2}, {});
  lossy.left_out.push_back("node 'y' (Identity): attribute 'g'");
  EXPECT_FALSE(upgrade_model(lossy, 19).ok());
}

TEST(UpgradeNodeTests, GeluExpectedOutputsFollowTheFormula) {
  // Independent values: 0.5 (1 + erf(1 / sqrt 2)) and 0.5 (1 + tanh(sqrt(2 / pi) 1.044715)).
  EXPECT_NEAR(gelu_reference(1, false), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(gelu_reference(1, true), 0.8411919906082768, 1e-15);
  EXPECT_EQ(gelu_reference(0, false), 0);
  int gelu_tests = 0;
  for (const NewNodeTest& test : new_node_tests()) {
    if (test.model.nodes.at(0).op_type != "Gelu") continue;
    ++gelu_tests;
    EXPECT_EQ(test.model.opset, 20);
    EXPECT_EQ(test.model.ir_version, 9);
    const OnnxAttr* approximate = attr(test.model.nodes[0], "approximate");
    const bool tanh = approximate != nullptr && std::get<std::string>(*approximate) == "tanh";
    EXPECT_EQ(tanh, test.name.find("tanh") != std::string::npos) << test.name;
    ASSERT_EQ(test.inputs.size(), 1u);
    ASSERT_EQ(test.outputs.size(), 1u);
    const OnnxTensor& x = test.inputs[0];
    const OnnxTensor& y = test.outputs[0];
    EXPECT_EQ(y.type, ElemType::float32);
    ASSERT_EQ(x.shape, y.shape);
    ASSERT_EQ(x.reals.size(), y.reals.size());
    for (std::size_t k = 0; k < x.reals.size(); ++k) {
      const double v = x.reals[k];
      const double expected = tanh ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                                   : 0.5 * v * (1 + std::erf(v * 0.7071067811865476));
      EXPECT_NEAR(y.reals[k], expected, 1e-6 * (1 + std::abs(expected))) << test.name << " [" << k << "]";
    }
  }
  EXPECT_EQ(gelu_tests, 4);
}

TEST(UpgradeNodeTests, SwishAndRmsNormalizationExpectedOutputsFollowTheFormulas) {
  // Independent values: 1 / (1 + e^-1) and 2 / (1 + e^-1) (alpha 0.5 at x = 2).
  EXPECT_NEAR(swish_reference(1, 1), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(swish_reference(2, 0.5), 1.4621171572600098, 1e-15);
  // [3, 4] over the last axis: the root mean square is sqrt(12.5); scale [1, 2].
  const OnnxTensor x{ElemType::float32, {1, 2}, {3, 4}, {}};
  const OnnxTensor scale{ElemType::float32, {2}, {1, 2}, {}};
  const OnnxTensor y = rms_normalization_reference(x, scale, -1, 0);
  ASSERT_EQ(y.shape, (Shape{1, 2}));
  EXPECT_NEAR(y.reals[0], 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(y.reals[1], 8 / std::sqrt(12.5), 1e-6);
  // Over both axes of [[1], [7]] with epsilon 1: sqrt(25 + 1); a scale of [2, 1] broadcast along
  // the last axis.
  const OnnxTensor column{ElemType::float32, {2, 1}, {1, 7}, {}};
  const OnnxTensor per_row{ElemType::float32, {2, 1}, {2, 3}, {}};
  const OnnxTensor z = rms_normalization_reference(column, per_row, 0, 1);
  EXPECT_NEAR(z.reals[0], 2 / std::sqrt(26.0), 1e-6);
  EXPECT_NEAR(z.reals[1], 21 / std::sqrt(26.0), 1e-6);
  int swish = 0, rms = 0;
  for (const NewNodeTest& test : new_node_tests()) {
    const std::string& op = test.model.nodes.at(0).op_type;
    if (op == "Swish") {
      ++swish;
      EXPECT_EQ(test.model.opset, 24);
      EXPECT_EQ(test.model.ir_version, 12);
    } else if (op == "RMSNormalization") {
      ++rms;
      EXPECT_EQ(test.model.opset, 23);
      ASSERT_EQ(test.inputs.size(), 2u);
      EXPECT_EQ(test.outputs.at(0).shape, test.inputs[0].shape);
    }
  }
  EXPECT_EQ(swish, 3);
  EXPECT_EQ(rms, 3);
}

TEST(UpgradeNodeTests, AttentionReferenceWeighsTheValuesBySoftmaxZeroesEmptyRowsAndReadsThePast) {
  // One head, two queries and two keys of size 2, scale 1: query 0 = [1, 0] scores the keys
  // [1, 0] and [0, 1] as 1 and 0, so it takes (e V0 + V1) / (e + 1); query 1 is masked out
  // entirely and gives zeros.
  const OnnxTensor q{ElemType::float32, {1, 1, 2, 2}, {1, 0, 0, 1}, {}};
  const OnnxTensor k{ElemType::float32, {1, 1, 2, 2}, {1, 0, 0, 1}, {}};
  const OnnxTensor v{ElemType::float32, {1, 1, 2, 2}, {1, 2, 3, 4}, {}};
  OnnxTensor mask{ElemType::boolean, {2, 2}, {}, {1, 1, 0, 0}};
  AttentionOptions options;
  options.scale = 1.0;
  const OnnxTensor y = attention_reference(q, k, v, &mask, options).y;
  const double e = std::exp(1.0);
  ASSERT_EQ(y.shape, (Shape{1, 1, 2, 2}));
  EXPECT_NEAR(y.reals[0], (e * 1 + 3) / (e + 1), 1e-6);
  EXPECT_NEAR(y.reals[1], (e * 2 + 4) / (e + 1), 1e-6);
  EXPECT_EQ(y.reals[2], 0.0f);
  EXPECT_EQ(y.reals[3], 0.0f);
  // Causal, no mask: query 0 sees key 0 only.
  options.causal = true;
  const OnnxTensor causal = attention_reference(q, k, v, nullptr, options).y;
  EXPECT_FLOAT_EQ(causal.reals[0], 1.0f);
  EXPECT_FLOAT_EQ(causal.reals[1], 2.0f);
  // With one past position: query 0 sees it and key 0 (j <= i + 1); query 1 sees all three.
  // Zero scores weigh them alike; a boolean mask over the first two keys blocks the third.
  const OnnxTensor zeros{ElemType::float32, {1, 1, 2, 2}, {0, 0, 0, 0}, {}};
  const OnnxTensor past_key{ElemType::float32, {1, 1, 1, 2}, {0, 0}, {}};
  const OnnxTensor past_value{ElemType::float32, {1, 1, 1, 2}, {7, 8}, {}};
  const AttentionOutputs cached = attention_reference(zeros, zeros, v, nullptr, options, &past_key, &past_value);
  EXPECT_EQ(cached.present_key.shape, (Shape{1, 1, 3, 2}));
  EXPECT_EQ(cached.present_value.reals, (std::vector<float>{7, 8, 1, 2, 3, 4}));
  EXPECT_FLOAT_EQ(cached.y.reals[0], 4.0f);  // (7 + 1) / 2
  EXPECT_FLOAT_EQ(cached.y.reals[2], 11.0f / 3);  // (7 + 1 + 3) / 3
  options.causal = false;
  const OnnxTensor first_two{ElemType::boolean, {2}, {}, {1, 1}};
  const OnnxTensor short_mask = attention_reference(zeros, zeros, v, &first_two, options, &past_key, &past_value).y;
  EXPECT_FLOAT_EQ(short_mask.reals[2], 4.0f);
}

TEST(UpgradeNodeTests, WrapPadWrapsAround) {
  for (const NewNodeTest& test : new_node_tests()) {
    if (test.name != "test_wrap_pad_opset19") continue;
    const OnnxTensor& x = test.inputs.at(0);
    const OnnxTensor& y = test.outputs.at(0);
    ASSERT_EQ(x.shape, (Shape{1, 3, 4, 5}));
    ASSERT_EQ(y.shape, (Shape{1, 3, 6, 7}));
    EXPECT_EQ(test.inputs.at(1).ints, (Ints{0, 0, 1, 1, 0, 0, 1, 1}));
    // y[0, c, 0, 0] is x[0, c, 3, 4]; y[0, c, 5, 6] is x[0, c, 0, 0]; y[0, c, 1, 1] is x[0, c, 0, 0].
    for (std::size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(y.reals[c * 42], x.reals[c * 20 + 3 * 5 + 4]);
      EXPECT_EQ(y.reals[c * 42 + 5 * 7 + 6], x.reals[c * 20]);
      EXPECT_EQ(y.reals[c * 42 + 1 * 7 + 1], x.reals[c * 20]);
    }
    return;
  }
  FAIL() << "no test_wrap_pad_opset19";
}

TEST(UpgradeNodeTests, WritesTheFormsWithTheirDataSets) {
  const fs::path root = fs::path(::testing::TempDir()) / "tc_upgrade_test";
  fs::remove_all(root);
  const fs::path test = root / "data" / "test_reduce_min";
  fs::create_directories(test / "test_data_set_0");
  ASSERT_TRUE(save(one_node("ReduceMin", {2, 2}, {{"axes", Ints{0}}}), (test / "model.onnx").string()).ok());
  OnnxTensor x{ElemType::float32, {2, 2}, {1, 2, 3, 4}, {}};
  ASSERT_TRUE(write_tensor_file(x, "x", (test / "test_data_set_0" / "input_0.pb").string()).ok());
  fs::create_directories(root / "out" / "test_stale_opset18");

  auto report = upgrade_node_tests((root / "data").string(), (root / "out").string());
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->written, 2 + static_cast<int>(new_node_tests().size()));
  EXPECT_FALSE(fs::exists(root / "out" / "test_stale_opset18"));
  for (const char* name : {"test_reduce_min_opset18", "test_reduce_min_opset20"}) {
    auto bytes = read_file_bytes((root / "out" / name / "model.onnx").string());
    ASSERT_TRUE(bytes.ok()) << name;
    auto model = parse_model(*bytes);
    ASSERT_TRUE(model.ok());
    EXPECT_EQ(model->nodes.at(0).inputs.size(), 2u);
    auto copied = read_tensor_file((root / "out" / name / "test_data_set_0" / "input_0.pb").string());
    ASSERT_TRUE(copied.ok()) << name;
    EXPECT_EQ(copied->reals, x.reals);
  }
  EXPECT_TRUE(fs::exists(root / "out" / "test_gelu_tanh_2_opset20" / "test_data_set_0" / "output_0.pb"));
  EXPECT_FALSE(upgrade_node_tests((root / "missing").string(), (root / "out").string()).ok());
  fs::remove_all(root);
}

}  // namespace
}  // namespace tc
