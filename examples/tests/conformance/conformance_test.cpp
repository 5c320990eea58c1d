#include "conformance/conformance.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "onnx/model.hpp"
#include "onnx/tensor_proto.hpp"

namespace tc {
namespace {

namespace fs = std::filesystem;

/// A node test directory `root/name` holding a one-node model y = op(x) and one data set.
void make_test(const fs::path& root, const std::string& name, const std::string& op, const Tensor& x, const Tensor& y) {
  const fs::path dir = root / name;
  fs::create_directories(dir / "test_data_set_0");
  OnnxModel m;
  m.inputs.push_back(float_value_info("x", x.shape));
  m.outputs.push_back(float_value_info("y", y.shape));
  m.nodes.push_back(OnnxNode{op, {"x"}, {"y"}, {}, "", ""});
  ASSERT_TRUE(save(m, (dir / "model.onnx").string()).ok());
  ASSERT_TRUE(write_tensor_file(from_float32(x), "x", (dir / "test_data_set_0" / "input_0.pb").string()).ok());
  ASSERT_TRUE(write_tensor_file(from_float32(y), "y", (dir / "test_data_set_0" / "output_0.pb").string()).ok());
}

TEST(OnnxConformance, PassesFailsAndSaysWhatDoesNotApply) {
  const fs::path root = fs::path(::testing::TempDir()) / "tc_conformance_test";
  fs::remove_all(root);
  const Tensor x({3}, std::vector<float>{-1, 0, 2});
  make_test(root, "test_relu", "Relu", x, Tensor({3}, std::vector<float>{0, 0, 2}));
  make_test(root, "test_relu_wrong", "Relu", x, Tensor({3}, std::vector<float>{0, 0, 2.01f}));
  make_test(root, "test_det", "Det", x, x);
  fs::create_directories(root / "not_a_test");

  ConformanceConfiguration broken{"broken", [](const Graph&, const std::vector<Tensor>&) -> collage::Result<std::vector<Tensor>> {
                         return collage::Error{collage::ErrorCode::internal, "no kernel"};
                       }};
  auto results = run_conformance(root.string(), {reference_configuration(), broken}, Tolerance{});
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 6u);  // 3 tests x 2 configurations, sorted by test name
  const TestResult& det = (*results)[0];
  EXPECT_EQ(det.test, "test_det");
  EXPECT_EQ(det.status, TestStatus::not_applicable);
  EXPECT_EQ(det.reason, "node 'y' (Det): operator Det is not supported");
  EXPECT_EQ((*results)[1].status, TestStatus::not_applicable);
  const TestResult& relu = (*results)[2];
  EXPECT_EQ(relu.configuration, "reference");
  EXPECT_EQ(relu.status, TestStatus::passed);
  EXPECT_EQ(relu.ops, std::vector<std::string>{"Relu"});
  EXPECT_EQ((*results)[3].status, TestStatus::failed);
  EXPECT_EQ((*results)[3].reason, "no kernel");
  const TestResult& wrong = (*results)[4];
  EXPECT_EQ(wrong.status, TestStatus::failed);
  EXPECT_EQ(wrong.reason.rfind("output 'y': 1 of 3 elements differ; worst at 2 [2]: 2 vs expected 2.01", 0), 0u) << wrong.reason;

  const std::string tsv = to_tsv(*results);
  EXPECT_EQ(tsv.substr(0, tsv.find('\n')), "test\tops\tconfiguration\tstatus\treason");
  EXPECT_NE(tsv.find("test_relu\tRelu\treference\tpassed\t\n"), std::string::npos);
  const std::string summary = summary_markdown(*results);
  EXPECT_NE(summary.find("| reference | 3 | 2 | 1 | 0 | 1 | 1 |"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| 1 | node '…' (Det): operator Det is not supported |"), std::string::npos) << summary;
  EXPECT_FALSE(run_conformance((root / "missing").string(), {reference_configuration()}, Tolerance{}).ok());
  fs::remove_all(root);
}

}  // namespace
}  // namespace tc
