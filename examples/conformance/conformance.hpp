#pragma once

/// \file
/// The ONNX node-test conformance runner: for every test directory of the ONNX backend node tests
/// (model.onnx + test_data_set_*/input_N.pb, output_N.pb) it decides whether the test applies to
/// the IR and, when it does, runs it under each configuration and compares with the expected
/// outputs.

#include <functional>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "tensor/graph.hpp"

namespace tc {

/// Runs a graph on its inputs (in graph.inputs() order) and returns its outputs.
using RunGraph = std::function<collage::Result<std::vector<Tensor>>(const Graph&, const std::vector<Tensor>&)>;

/// One way of running models ("reference"; later one per backend, with native taking what the
/// backend lacks).
struct ConformanceConfiguration {
  std::string name;
  RunGraph run;
  /// The least absolute tolerance this configuration is checked with (the run's atol when
  /// larger): float32 kernels with approximated transcendental functions (oneDNN's log, exp) are
  /// off by a few ulps near zero, where ONNX's atol of 1e-7 leaves no room.
  double min_atol = 0;
};

/// The reference interpreter as a configuration.
ConformanceConfiguration reference_configuration();

/// What happened to one test under one configuration.
enum class TestStatus { passed, failed, not_applicable };

/// "passed", "failed", "not-applicable".
const char* to_string(TestStatus status);

/// One row of the conformance list.
struct TestResult {
  std::string test;           ///< the test directory's name ("test_relu")
  std::vector<std::string> ops;  ///< the model's operators, in order of first use
  std::string configuration;
  TestStatus status = TestStatus::failed;
  std::string reason;  ///< why not applicable, or how it failed (the worst element); empty when passed
};

/// Tolerances of the comparison with the expected outputs.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// Runs the node test in directory `dir` under each configuration (one row per configuration; a
/// test that does not apply gives the same reason for all). A test does not apply when the IR
/// does not read it: an operator, element type, optional or sequence value, or variant the reader
/// reports as not supported.
std::vector<TestResult> run_node_test(const std::string& dir, const std::vector<ConformanceConfiguration>& configurations,
                                      const Tolerance& tolerance);

/// run_node_test() for every subdirectory of `root` holding a model.onnx, sorted by name.
collage::Result<std::vector<TestResult>> run_conformance(const std::string& root,
                                                         const std::vector<ConformanceConfiguration>& configurations,
                                                         const Tolerance& tolerance);

/// The list as tab-separated lines "test  ops  configuration  status  reason" under a header.
std::string to_tsv(const std::vector<TestResult>& results);

/// A Markdown summary: totals per configuration, then per operator the tests run, passed, failed
/// and not applicable, and the reasons tests do not apply with their counts.
std::string summary_markdown(const std::vector<TestResult>& results);

}  // namespace tc
