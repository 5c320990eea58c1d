#pragma once

/// \file
/// Helpers of the native backend's tests: running a Function on the native backend and comparing it
/// with the reference interpreter (graphs and random values from tests/support/graph_builder.hpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/native/native_backend.hpp"
#include "loops/lower.hpp"
#include "runtime/cpu_device.hpp"
#include "tensor/compare.hpp"
#include "tensor/function.hpp"
#include "tensor/reference.hpp"
#include "tensor/shape_inference.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc::native_testing {

/// Runs `function` on the native backend (CPU device) on `threads` threads.
inline collage::Result<std::vector<Tensor>> run_native(const Function& function, const std::vector<Tensor>& inputs,
                                                       int threads = 1) {
  CpuDevice cpu;
  NativeBackend backend(loops::kFusionMaxDepth, threads);
  auto kernel = backend.compile(function, cpu);
  if (!kernel.ok()) return kernel.error();
  std::vector<Tensor> outputs;
  for (int out : function.graph.outputs()) outputs.emplace_back(function.graph.node(out).shape, -7.0f);
  std::vector<const float*> in;
  for (const Tensor& t : inputs) in.push_back(t.data.data());
  std::vector<float*> out;
  for (Tensor& t : outputs) out.push_back(t.data.data());
  if (collage::Status s = (*kernel)->run(in, out); !s.ok()) return s.error();
  return outputs;
}

/// Whether the native backend computes what the reference interpreter does on `inputs`.
inline ::testing::AssertionResult matches_reference(const Function& function, const std::vector<Tensor>& inputs,
                                                    double rtol = 1e-4, double atol = 1e-4) {
  auto expected = evaluate(function.graph, inputs);
  if (!expected.ok()) return ::testing::AssertionFailure() << "reference: " << expected.error().message;
  auto actual = run_native(function, inputs);
  if (!actual.ok()) return ::testing::AssertionFailure() << "native: " << actual.error().message;
  for (std::size_t k = 0; k < expected->size(); ++k) {
    std::string worst;
    if (!all_close((*actual)[k], (*expected)[k], rtol, atol, &worst)) {
      auto lowered = loops::lower(function);
      return ::testing::AssertionFailure() << "output " << k << ": " << worst << "\n"
                                           << (lowered.ok() ? lowered->to_string() : lowered.error().message);
    }
  }
  return ::testing::AssertionSuccess();
}

/// matches_reference for the whole of `graph` (shapes inferred here) on random inputs.
inline ::testing::AssertionResult graph_matches_reference(Graph graph, std::uint64_t seed, float lo = -1.0f,
                                                          float hi = 1.0f, double rtol = 1e-4, double atol = 1e-4) {
  if (collage::Status s = infer_shapes(graph); !s.ok()) return ::testing::AssertionFailure() << s.message();
  const Function function = whole_model_function(graph);
  std::mt19937_64 rng(seed);
  return matches_reference(function, testing::random_inputs(function.graph, rng, lo, hi), rtol, atol);
}

}  // namespace tc::native_testing
