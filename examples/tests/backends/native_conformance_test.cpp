// The ONNX backend node tests (Debian's libonnx-testdata) on the native backend: every test the IR
// reads runs as one native kernel of its whole graph and matches the expected outputs.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "native_testing.hpp"
#include "conformance/conformance.hpp"

namespace tc {
namespace {

constexpr const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

TEST(NativeConformance, OnnxNodeTestsPass) {
  if (!std::filesystem::is_directory(kNodeTests)) GTEST_SKIP() << "libonnx-testdata not installed (" << kNodeTests << ")";
  const ConformanceConfiguration native{"native", [](const Graph& graph, const std::vector<Tensor>& inputs) {
                               return native_testing::run_native(whole_model_function(graph), inputs);
                             }};
  // The runner's tolerances, with an absolute one for float (not double) accumulation.
  auto results = run_conformance(kNodeTests, {native}, Tolerance{1e-3, 1e-5});
  ASSERT_TRUE(results.ok()) << results.error().message;
  std::size_t passed = 0;
  for (const TestResult& r : *results) {
    if (r.status == TestStatus::passed) ++passed;
    EXPECT_NE(r.status, TestStatus::failed) << r.test << ": " << r.reason;
  }
  // As many as the reference runs (docs/onnx-conformance.md).
  EXPECT_GE(passed, 281u);
}

}  // namespace
}  // namespace tc
