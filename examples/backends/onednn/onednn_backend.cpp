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

}  // namespace

std::unique_ptr<Backend> make_onednn_backend(int threads) {
  threads = std::max(threads, 1);
  Library<onednn::CallPlan> library("onednn", DeviceKind::cpu, kNotBuilt, onednn::table(), library_calls, onednn::plan);
  library.single_operators = onednn::accepts;
  // Partitions of several calls keep convolution chains in oneDNN's blocked layouts; 6 deep holds
  // a MobileNet block (three convolutions and their activations), and deeper joins measured many
  // more candidates for no faster choice. A Concat joins no others: joins through one of n
  // branches multiply by every choice of the branches' tails (GoogLeNet: 24,236 candidates
  // instead of 880); it stays in the largest regions, which can hold whole Inception and Fire
  // modules (docs/kernels-libraries.md).
  library.joins.max_depth = 6;
  library.joins.alone_only = [](const Graph& g, const LibraryCall& call) { return g.node(call.root()).op == Op::concat; };
  library.configuration = threads == 1 ? "" : "threads=" + std::to_string(threads);
#if TC_HAVE_ONEDNN
  library.kernel = [threads](const Function& function, const std::vector<LibraryCall>& calls,
                             std::vector<onednn::CallPlan> plans, Device& device) {
    return onednn::kernel(function, calls, plans, device, threads);
  };
#endif
  return make_library_backend(std::move(library));
}

BackendRegistration onednn_registration() {
  return {"onednn", DeviceKind::cpu, kNotBuilt,
          [](const BackendOptions& options) { return make_onednn_backend(options.cpu_threads); }};
}

}  // namespace tc
