#pragma once

/// \file
/// What the GPU backends' tests share: the candidates a rule proposes for a graph, written as
/// (composite label, model nodes); the process's CUDA device; and running a graph as one kernel
/// of a backend on it, or a partitioned model's Executable, checked against the reference
/// interpreter.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <collage/graph/dataflow_graph.hpp>
#include <collage/rules/partition_spec.hpp>

#include "backends/backend.hpp"
#include "backends/registry.hpp"
#include "executor/executable.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/test_models.hpp"
#include "runtime/cpu_device.hpp"
#include "runtime/cuda_device.hpp"
#include "tensor/compare.hpp"
#include "tensor/function.hpp"
#include "tensor/reference.hpp"

namespace tc::testing {

/// One candidate of a rule: its Composite label and its operator nodes (model ids, ascending).
struct Claim {
  std::string composite;
  std::vector<int> nodes;
  friend bool operator==(const Claim& a, const Claim& b) { return a.composite == b.composite && a.nodes == b.nodes; }
};

inline std::ostream& operator<<(std::ostream& out, const Claim& c) {
  out << c.composite << "{";
  for (std::size_t k = 0; k < c.nodes.size(); ++k) out << (k == 0 ? "" : ",") << c.nodes[k];
  return out << "}";
}

/// The Composite attribute of the first group carrying one, searching nested groups depth first.
inline std::string composite_of(const collage::SubGraph& sub_graph) {
  for (const collage::NestedSubGraph& group : sub_graph.nested()) {
    if (!group.attr("Composite").empty()) return std::string(group.attr("Composite"));
    if (std::string inner = composite_of(group.sub_graph); !inner.empty()) return inner;
  }
  return "";
}

/// The candidates of `spec` for `graph`, in the rule's order.
inline std::vector<Claim> claims(const collage::PartitionSpec<Graph>& spec, const Graph& graph) {
  collage::Result<collage::DataflowGraph<Graph>> dataflow = collage::DataflowGraph<Graph>::build(graph);
  EXPECT_TRUE(dataflow.ok()) << dataflow.error().message;
  std::vector<Claim> out;
  if (!dataflow.ok()) return out;
  for (const collage::Candidate& c : spec.all_candidates(*dataflow)) {
    Claim claim{composite_of(c.sub_graph), {}};
    for (std::size_t i : c.sub_graph.inside()) {
      if (dataflow->needs_kernel(i)) claim.nodes.push_back(dataflow->handle(i));
    }
    std::sort(claim.nodes.begin(), claim.nodes.end());
    out.push_back(std::move(claim));
  }
  return out;
}

/// The operator nodes of `graph` (all but inputs and constants), ascending.
inline std::vector<int> operator_nodes(const Graph& graph) {
  std::vector<int> out;
  for (std::size_t n = 0; n < graph.size(); ++n) {
    const Op op = graph.node(static_cast<int>(n)).op;
    if (op != Op::input && op != Op::constant) out.push_back(static_cast<int>(n));
  }
  return out;
}

/// Expects `backend` to be the CUDA target `name`, registered as such.
inline void expect_cuda_target(const Backend& backend, const std::string& name) {
  EXPECT_EQ(backend.name(), name);
  EXPECT_EQ(backend.device(), DeviceKind::cuda);
  EXPECT_EQ(backend.spec().target, name);
  const BackendRegistration* registration = find_registration(name);
  ASSERT_NE(registration, nullptr);
  EXPECT_EQ(registration->device, DeviceKind::cuda);
}

/// Expects `backend` to refuse compiling `function` for the CPU, and, where no GPU can be used,
/// for the CUDA device, with the device's reason.
inline void expect_refusals_without_a_gpu(const Backend& backend, const Function& function) {
  CpuDevice cpu;
  collage::Result<std::unique_ptr<Kernel>> on_cpu = backend.compile(function, cpu);
  ASSERT_FALSE(on_cpu.ok());
  EXPECT_EQ(on_cpu.error().message, backend.name() + ": needs a CUDA device, got " + cpu.name());
  CudaDevice cuda;
  if (cuda.available()) return;  // the kernel tests compile on it
  collage::Result<std::unique_ptr<Kernel>> unavailable = backend.compile(function, cuda);
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.error().message, backend.name() + ": " + cuda.unavailable_reason());
}

/// The process's CUDA device, made once and kept to the end (library handles live on it).
inline CudaDevice& cuda_device() {
  static CudaDevice* device = new CudaDevice();
  return *device;
}

/// A fixture for tests that run kernels: skipped, with the reason shown, unless the process's
/// CUDA device is available.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device().available()) GTEST_SKIP() << "needs a GPU: " << cuda_device().unavailable_reason();
  }
};

/// Compiles all of `graph` as one call of `backend` on `device`, runs it on seeded random inputs
/// and expects the reference interpreter's outputs within rtol / atol. `what` names the case.
inline void expect_kernel_matches_reference(const Backend& backend, Device& device, const Graph& graph,
                                            const std::string& what, double rtol = 1e-3, double atol = 1e-4,
                                            std::uint64_t seed = 7) {
  SCOPED_TRACE(what);
  const Function function = whole_model_function(graph);
  collage::Result<std::unique_ptr<Kernel>> kernel = backend.compile(function, device);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  const std::vector<Tensor> inputs = random_inputs(graph, seed);
  collage::Result<std::vector<Tensor>> expected = evaluate(graph, inputs);
  ASSERT_TRUE(expected.ok()) << expected.error().message;

  std::vector<OwnedBuffer> buffers;
  std::vector<const float*> in;
  std::vector<float*> out;
  for (const Tensor& t : inputs) {
    collage::Result<OwnedBuffer> b = allocate_owned(device, t.bytes());
    ASSERT_TRUE(b.ok()) << b.error().message;
    ASSERT_TRUE(device.upload(b->get(), 0, t.data.data(), t.bytes()).ok());
    in.push_back(b->floats());
    buffers.push_back(std::move(b).value());
  }
  for (const Tensor& t : *expected) {
    collage::Result<OwnedBuffer> b = allocate_owned(device, t.bytes());
    ASSERT_TRUE(b.ok()) << b.error().message;
    out.push_back(b->floats());
    buffers.push_back(std::move(b).value());
  }
  collage::Status ran = (*kernel)->run(in, out);
  ASSERT_TRUE(ran.ok()) << ran.message();
  collage::Status synced = device.synchronize();
  ASSERT_TRUE(synced.ok()) << synced.message();
  for (std::size_t k = 0; k < expected->size(); ++k) {
    Tensor got((*expected)[k].shape);
    const Buffer& b = buffers[inputs.size() + k].get();
    ASSERT_TRUE(device.download(got.data.data(), b, 0, got.bytes()).ok());
    std::string worst;
    EXPECT_TRUE(all_close(got, (*expected)[k], rtol, atol, &worst)) << worst;
  }
}

/// Runs `exe`, compiled from `model`, on the seeded random inputs of seeds 1 and 2 and expects the
/// reference interpreter's outputs within rtol 1e-3, atol 1e-4.
inline void expect_executable_matches_reference(Executable& exe, const Graph& model) {
  for (std::uint64_t seed : {1, 2}) expect_run_matches_reference(exe, model, seed, 1e-3, 1e-4);
}

}  // namespace tc::testing
