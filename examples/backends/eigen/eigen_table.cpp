#include "backends/eigen/eigen_table.hpp"

#include "backends/eigen/eigen_plan.hpp"
#include "backends/kit/fusion_patterns.hpp"

namespace tc::eigen {

const LibraryTable& table() {
  static const LibraryTable entries = [] {
    std::vector<Fusion> fusions(2);
    fusions[0].name = "dense";
    fusions[0].anchor = dense_anchor();
    fusions[1].name = "conv";
    fusions[1].anchor = conv_anchor(true);
    for (Fusion& f : fusions) {
      f.bias = true;
      f.activations = {FusedActivation::relu, FusedActivation::clip, FusedActivation::gelu};
    }
    return fusion_table("eigen.", fusions, [](const Graph& graph, const LibraryCall& call) { return plan(graph, call).ok(); });
  }();
  return entries;
}

}  // namespace tc::eigen
