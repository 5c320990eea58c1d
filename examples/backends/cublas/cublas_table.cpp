#include "backends/cublas/cublas_table.hpp"

#include <vector>

#include "backends/kit/fusion_patterns.hpp"

namespace tc::cublas {

LibraryTable table(const Options& options) {
  std::vector<Fusion> fusions(1);
  Fusion& dense = fusions.front();
  dense.name = "dense";
  dense.anchor = dense_anchor();
  dense.scale = true;
  dense.adds = 2;
  dense.activations = {FusedActivation::relu};
  if (options.approximate_gelu) dense.activations.push_back(FusedActivation::gelu);
  return fusion_table("cublas.", fusions, [options](const Graph& graph, const LibraryCall& call) {
    return plan(graph, call, options).ok();
  });
}

}  // namespace tc::cublas
