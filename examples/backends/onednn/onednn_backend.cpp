#include "backends/onednn/onednn_backend.hpp"

#include <algorithm>
#include <utility>

#include "backends/kit/library_calls.hpp"
#include "backends/onednn/onednn_kernel.hpp"
#include "backends/onednn/onednn_plan.hpp"
#include "backends/kit/pattern_table.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_ONEDNN ? "" : "oneDNN 2.x (libdnnl-dev) was not found when this build was configured";

/// One optional step of an anchor's epilogue: its label suffix and how it wraps the pattern
/// before it.
struct StepPattern {
  std::string suffix;
  std::string (*wrap)(const std::string&);
};

std::string bias(const std::string& a) { return either_order("Add", a, "const"); }
std::string scale(const std::string& a) { return "Div(" + a + ", const) | " + either_order("Mul", a, "const"); }
std::string sum(const std::string& a) { return either_order("Add", a, "*"); }
std::string relu(const std::string& a) { return "Relu(" + a + ")"; }
std::string clip(const std::string& a) { return "Clip(" + a + ")"; }
std::string sigmoid(const std::string& a) { return "Sigmoid(" + a + ")"; }
std::string tanh_(const std::string& a) { return "Tanh(" + a + ")"; }
std::string gelu(const std::string& a) { return gelu_erf_pattern(a); }
std::string swish(const std::string& a) { return either_order("Mul", a, "Sigmoid(" + a + ")"); }

std::vector<LabelledPattern> make_table() {
  std::vector<LabelledPattern> table;
  const StepPattern activations[] = {{"", nullptr},          {"_relu", relu}, {"_clip", clip}, {"_sigmoid", sigmoid},
                                     {"_tanh", tanh_},       {"_gelu", gelu}, {"_swish", swish}};
  struct Anchor {
    std::string name;
    std::string pattern;
    bool scales;
  };
  const Anchor anchors[] = {{"conv", "Conv(*, const) | Conv(*, const, const)", false},
                            {"dense", "MatMul(*, *) | Gemm(*, *) | Gemm(*, *, *)", true}};
  for (const Anchor& anchor : anchors) {
    for (const bool with_bias : {false, true}) {
      for (const bool with_scale : {false, true}) {
        if (with_scale && !anchor.scales) continue;
        for (const bool with_sum : {false, true}) {
          for (const StepPattern& act : activations) {
            std::string label = "onednn." + anchor.name;
            std::string text = anchor.pattern;
            if (with_bias) label += "_bias", text = bias(text);
            if (with_scale) label += "_scale", text = scale(text);
            if (with_sum) label += "_sum", text = sum(text);
            if (act.wrap != nullptr) label += act.suffix, text = act.wrap(text);
            if (text != anchor.pattern) table.push_back({label, text});
          }
        }
      }
    }
  }
  table.push_back({"onednn.gelu", gelu("*")});
  table.push_back({"onednn.swish", swish("*")});
  table.push_back({"onednn.batch_norm_relu", "Relu(BatchNormalization(*, *, *, *, *))"});
  const std::string diff = "Sub(*, ReduceMean(*))";
  const std::string variance = "ReduceMean(Pow(" + diff + ", const))";
  const std::string normalised = "Div(" + diff + ", Sqrt(" + either_order("Add", variance, "const") + "))";
  const std::string scaled = either_order("Mul", normalised, "*");
  table.push_back({"onednn.layer_norm", either_order("Add", scaled, "*")});
  table.push_back({"onednn.layer_norm_scale", scaled});
  table.push_back({"onednn.layer_norm_bare", normalised});
  return table;
}

/// A match is proposed when it plans under its own label; an operator alone when it plans.
bool accepts(const Graph& graph, const LibraryCall& call) {
  collage::Result<onednn::CallPlan> plan = onednn::plan_call(graph, call);
  return plan.ok() && (call.composite.empty() || plan->name == call.composite);
}

}  // namespace

const std::vector<LabelledPattern>& onednn_pattern_table() {
  static const std::vector<LabelledPattern> table = make_table();
  return table;
}

OnednnBackend::OnednnBackend(int threads) : Backend("onednn", DeviceKind::cpu), threads_(std::max(threads, 1)) {}

std::string OnednnBackend::configuration() const { return threads_ == 1 ? "" : "threads=" + std::to_string(threads_); }

collage::PartitionSpec<Graph> OnednnBackend::spec() const {
  collage::Result<std::vector<collage::PartitionRule<Graph>>> composites =
      checked_composites(onednn_pattern_table(), accepts);
  // The table is fixed text that a test parses; should it ever fail, only single operators remain.
  std::vector<collage::PartitionRule<Graph>> rules;
  if (composites.ok()) rules = std::move(composites).value();
  rules.push_back(checked_operators("onednn.op", accepts));
  return collage::PartitionSpec<Graph>{name(), one_call_per_partition(std::move(rules)), 0.0};
}

collage::Result<std::unique_ptr<Kernel>> OnednnBackend::do_compile(const Function& function, Device& device) const {
  collage::Result<std::vector<LibraryCall>> calls = library_calls(function, name());
  if (!calls.ok()) return calls.error();
  std::vector<onednn::CallPlan> plans;
  for (const LibraryCall& call : *calls) {
    collage::Result<onednn::CallPlan> plan = onednn::plan_call(function.graph, call);
    if (!plan.ok()) return plan.error();
    plans.push_back(std::move(plan).value());
  }
#if TC_HAVE_ONEDNN
  return onednn::make_kernel(function, *calls, plans, device, threads_);
#else
  (void)device;
  return collage::Error{collage::ErrorCode::invalid_argument, kNotBuilt};
#endif
}

BackendRegistration onednn_registration() {
  return {"onednn", DeviceKind::cpu, kNotBuilt,
          [](const BackendOptions& options) { return std::make_unique<OnednnBackend>(options.cpu_threads); }};
}

}  // namespace tc
