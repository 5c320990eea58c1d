#include "backends/onednn/onednn_backend.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "backends/kit/library_backend.hpp"
#include "backends/onednn/onednn_kernel.hpp"
#include "backends/onednn/onednn_plan.hpp"
#include "backends/onednn/onednn_table.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_ONEDNN ? "" : "oneDNN 2.x (libdnnl-dev) was not found when this build was configured";

/// Adds `part` to `library`'s configuration (its measurements' identity), comma-separated.
void add_to_configuration(Library<onednn::CallPlan>& library, const std::string& part) {
  if (!library.configuration.empty()) library.configuration += ", ";
  library.configuration += part;
}

/// `library`'s configuration and kernel, on `threads` OpenMP threads, its values in `layout`.
void run_on_threads(Library<onednn::CallPlan>& library, int threads, Layout layout) {
  library.configuration = threads_configuration(threads);
  // Its swish steps are its own (onednn::kernel), where they were oneDNN's before.
  add_to_configuration(library, "own swish");
  if (layout != Layout::plain) {
    // Measurements from when a stem's few channels were padded to a whole block are not these.
    add_to_configuration(library, "fewer channels than a block plain");
  }
  library.layout = layout;
#if TC_HAVE_ONEDNN
  library.kernel = [threads, layout](const Function& function, const std::vector<LibraryCall>& calls,
                                     std::vector<onednn::CallPlan> plans, Device& device) {
    return onednn::kernel(function, calls, plans, device, threads, layout);
  };
#endif
}

/// Whether `call` reads or writes a value held blocked in `layout`: where the layout makes a
/// kernel differ from the same kernel on plain tensors.
bool touches_blocked(const Graph& g, const LibraryCall& call, Layout layout) {
  for (int n : call.nodes) {
    if (is_blocked(g.node(n).shape, layout)) return true;
    for (int in : g.node(n).inputs) {
      if (is_blocked(g.node(in).shape, layout)) return true;
    }
  }
  return false;
}

/// `check` (everything when empty) and touches_blocked.
CallCheck touching_blocked(CallCheck check, Layout layout) {
  return [check = std::move(check), layout](const Graph& g, const LibraryCall& call) {
    return touches_blocked(g, call, layout) && (!check || check(g, call));
  };
}

/// The name of a onednn backend (`plain_name` in the plain layout) whose values are in `layout`.
std::string layout_name(const std::string& plain_name, Layout layout) {
  return layout == Layout::plain ? plain_name : plain_name + "_blocked";
}

#if TC_HAVE_ONEDNN
/// The plan of a convolution call (fused as onednn fuses it) run as oneDNN's Winograd convolution;
/// an error for any other call.
collage::Result<onednn::CallPlan> plan_winograd(const Graph& g, const LibraryCall& call) {
  collage::Result<onednn::CallPlan> p = onednn::plan(g, call);
  if (!p.ok()) return p;
  if (!onednn::winograd_shape(*p)) {
    return collage::Error{collage::ErrorCode::invalid_argument,
                          "onednn_winograd: '" + p->name + "' is not a 3x3 convolution of stride 1"};
  }
  p->winograd = true;
  return p;
}

/// Whether `call` is a convolution onednn plans (as its composite) and oneDNN has a Winograd kernel for.
bool accepts_winograd(const Graph& g, const LibraryCall& call) {
  collage::Result<onednn::CallPlan> p = onednn::plan(g, call);
  return p.ok() && (call.composite.empty() || p->name == call.composite) && onednn::winograd_available(*p);
}

/// onednn's convolution entries, each accepting only what accepts_winograd does.
LibraryTable winograd_table() {
  LibraryTable table;
  for (const LibraryPattern& entry : onednn::table()) {
    if (entry.label.rfind("onednn.conv", 0) == 0) table.push_back({entry.label, entry.pattern, accepts_winograd});
  }
  return table;
}
#endif

}  // namespace

std::unique_ptr<Backend> make_onednn_backend(int threads, Layout layout) {
  threads = std::max(threads, 1);
  Library<onednn::CallPlan> library(layout_name("onednn", layout), DeviceKind::cpu, kNotBuilt, onednn::table(), library_calls, onednn::plan);
  library.single_operators = onednn::accepts;
  // Partitions of several calls keep convolution chains in oneDNN's blocked layouts; 6 deep holds
  // a MobileNet block (three convolutions and their activations), and deeper joins measured many
  // more candidates for no faster choice. A Concat joins no others: joins through one of n
  // branches multiply by every choice of the branches' tails (GoogLeNet: 24,236 candidates
  // instead of 880); it stays in the largest regions, which can hold whole Inception and Fire
  // modules (docs/kernels-libraries.md).
  library.joins.max_depth = 6;
  library.joins.alone_only = [](const Graph& g, const LibraryCall& call) { return g.node(call.root()).op == Op::concat; };
  if (layout != Layout::plain) {
    // Calls on plain values only would be the plain backend's kernels again.
    for (LibraryPattern& entry : library.table) entry.check = touching_blocked(std::move(entry.check), layout);
    library.single_operators = touching_blocked(std::move(library.single_operators), layout);
  }
  run_on_threads(library, threads, layout);
  if (layout != Layout::plain) {
    // Its direct convolutions keep their values in its layout and its concats of channel blocks
    // are written in place (onednn::kernel): measurements from before, when convolutions converted
    // their values to oneDNN's choice and back and oneDNN's concat copied, are not these.
    add_to_configuration(library, "blocked convolutions, concats in place");
  }
  return make_library_backend(std::move(library));
}

std::unique_ptr<Backend> make_onednn_winograd_backend(int threads, Layout layout) {
  const std::string name = layout_name("onednn_winograd", layout);
#if TC_HAVE_ONEDNN
  Library<onednn::CallPlan> library(name, DeviceKind::cpu, kNotBuilt, winograd_table(), library_calls, plan_winograd);
  library.single_operators = accepts_winograd;
  run_on_threads(library, std::max(threads, 1), layout);
#else
  (void)threads;
  Library<onednn::CallPlan> library(name, DeviceKind::cpu, kNotBuilt, {}, library_calls, onednn::plan);
  library.layout = layout;
#endif
  return make_library_backend(std::move(library));
}

BackendRegistration onednn_registration() {
  return {"onednn", DeviceKind::cpu, kNotBuilt,
          [](const BackendOptions& options) { return make_onednn_backend(options.cpu_threads); }};
}

BackendRegistration onednn_winograd_registration() {
  return {"onednn_winograd", DeviceKind::cpu, kNotBuilt,
          [](const BackendOptions& options) { return make_onednn_winograd_backend(options.cpu_threads); }};
}

BackendRegistration onednn_blocked_registration() {
  return {layout_name("onednn", native_blocked_layout()), DeviceKind::cpu, kNotBuilt,
          [](const BackendOptions& options) {
            return make_onednn_backend(options.cpu_threads, native_blocked_layout());
          },
          /*by_default=*/false};
}

BackendRegistration onednn_winograd_blocked_registration() {
  return {layout_name("onednn_winograd", native_blocked_layout()), DeviceKind::cpu, kNotBuilt,
          [](const BackendOptions& options) {
            return make_onednn_winograd_backend(options.cpu_threads, native_blocked_layout());
          },
          /*by_default=*/false};
}

}  // namespace tc
