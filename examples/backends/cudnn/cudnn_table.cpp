#include "backends/cudnn/cudnn_table.hpp"

#include <vector>

#include "backends/cudnn/cudnn_plan.hpp"
#include "backends/kit/fusion_patterns.hpp"

namespace tc::cudnn {

namespace {

LibraryTable make_table() {
  const CallCheck plans = [](const Graph& graph, const LibraryCall& call) { return plan(graph, call).ok(); };
  std::vector<Fusion> fusions(1);
  Fusion& conv = fusions.front();
  conv.name = "conv";
  conv.anchor = conv_anchor(false);
  conv.adds = 2;
  conv.activations = {FusedActivation::relu};
  LibraryTable table = fusion_table("cudnn.", fusions, plans);
  using P = collage::Pattern<Graph>;
  const P any = P::wildcard();
  table.push_back({"cudnn.max_pool", P::op("MaxPool", {any}), plans});
  table.push_back({"cudnn.avg_pool", P::op("AveragePool", {any}), plans});
  table.push_back({"cudnn.global_avg_pool", P::op("GlobalAveragePool", {any}), plans});
  table.push_back({"cudnn.global_max_pool", P::op("GlobalMaxPool", {any}), plans});
  table.push_back({"cudnn.softmax", P::op("Softmax", {any}), plans});
  return table;
}

}  // namespace

const LibraryTable& table() {
  static const LibraryTable entries = make_table();
  return entries;
}

}  // namespace tc::cudnn
