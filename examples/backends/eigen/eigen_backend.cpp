#include "backends/eigen/eigen_backend.hpp"

#include <utility>

#include "backends/eigen/eigen_kernel.hpp"
#include "backends/eigen/eigen_plan.hpp"
#include "backends/kit/library_calls.hpp"
#include "backends/kit/pattern_table.hpp"

namespace tc {

namespace {

std::vector<LabelledPattern> make_table() {
  const std::pair<std::string, std::string> anchors[] = {
      {"dense", "MatMul(*, *) | Gemm(*, *) | Gemm(*, *, *)"},
      {"conv", "Conv(*, const) | Conv(*, const, const)"},
  };
  std::vector<LabelledPattern> table;
  for (const auto& [name, anchor] : anchors) {
    const std::string label = "eigen." + name;
    for (const bool bias : {false, true}) {
      const std::string body = bias ? either_order("Add", anchor, "const") : anchor;
      const std::string base = label + (bias ? "_bias" : "");
      table.push_back({base, body});
      table.push_back({base + "_relu", "Relu(" + body + ")"});
      table.push_back({base + "_clip", "Clip(" + body + ")"});
      table.push_back({base + "_gelu", gelu_erf_pattern(body)});
    }
  }
  return table;
}

bool compiles(const Graph& graph, const LibraryCall& call) { return eigen::plan_call(graph, call).ok(); }

constexpr const char* kNotBuilt = TC_HAVE_EIGEN ? "" : "Eigen3 was not found when this build was configured";

}  // namespace

const std::vector<LabelledPattern>& eigen_pattern_table() {
  static const std::vector<LabelledPattern> table = make_table();
  return table;
}

EigenBackend::EigenBackend() : Backend("eigen", DeviceKind::cpu) {}

collage::PartitionSpec<Graph> EigenBackend::spec() const {
  collage::Result<std::vector<collage::PartitionRule<Graph>>> composites =
      checked_composites(eigen_pattern_table(), compiles);
  // The table is fixed text that a test parses; should it ever fail, the target proposes nothing.
  std::vector<collage::PartitionRule<Graph>> rules;
  if (composites.ok()) rules = std::move(composites).value();
  return collage::PartitionSpec<Graph>{name(), one_call_per_partition(std::move(rules)), 0.0};
}

collage::Result<std::unique_ptr<Kernel>> EigenBackend::do_compile(const Function& function, Device& device) const {
  collage::Result<std::vector<LibraryCall>> calls = library_calls(function, name());
  if (!calls.ok()) return calls.error();
  std::vector<eigen::CallPlan> plans;
  for (const LibraryCall& call : *calls) {
    collage::Result<eigen::CallPlan> plan = eigen::plan_call(function.graph, call);
    if (!plan.ok()) return plan.error();
    plans.push_back(std::move(plan).value());
  }
#if TC_HAVE_EIGEN
  return eigen::make_kernel(function, *calls, std::move(plans), device);
#else
  (void)device;
  return collage::Error{collage::ErrorCode::invalid_argument, kNotBuilt};
#endif
}

BackendRegistration eigen_registration() {
  return {"eigen", DeviceKind::cpu, kNotBuilt, [](const BackendOptions&) { return std::make_unique<EigenBackend>(); }};
}

}  // namespace tc
