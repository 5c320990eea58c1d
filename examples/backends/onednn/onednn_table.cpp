#include "backends/onednn/onednn_table.hpp"

#include <vector>

#include "backends/kit/fusion_patterns.hpp"
#include "backends/onednn/onednn_plan.hpp"

namespace tc::onednn {

namespace {

using P = collage::Pattern<Graph>;

LibraryTable make_table() {
  std::vector<Fusion> fusions(2);
  fusions[0].name = "conv";
  fusions[0].anchor = conv_anchor(true);
  fusions[1].name = "dense";
  fusions[1].anchor = dense_anchor();
  fusions[1].scale = true;
  for (Fusion& f : fusions) {
    f.bias = true;
    f.adds = 1;
    f.add_label = "_sum";
    f.activations = {FusedActivation::relu,    FusedActivation::clip, FusedActivation::sigmoid,
                     FusedActivation::tanh,    FusedActivation::gelu, FusedActivation::silu};
    f.alone = false;
  }
  LibraryTable table = fusion_table("onednn.", fusions, accepts);
  const P any = P::wildcard();
  const P c = P::constant();
  table.push_back({"onednn.gelu", activation_pattern(FusedActivation::gelu, any), accepts});
  table.push_back({"onednn.swish", activation_pattern(FusedActivation::silu, any), accepts});
  table.push_back({"onednn.batch_norm_relu", P::op("Relu", {P::op("BatchNormalization", {any, any, any, any, any})}), accepts});
  const P diff = P::op("Sub", {any, P::op("ReduceMean", {any})});
  const P variance = P::op("ReduceMean", {P::op("Pow", {diff, c})});
  const P normalised = P::op("Div", {diff, P::op("Sqrt", {either_order("Add", variance, c)})});
  const P scaled = either_order("Mul", normalised, any);
  table.push_back({"onednn.layer_norm", either_order("Add", scaled, any), accepts});
  table.push_back({"onednn.layer_norm_scale", scaled, accepts});
  table.push_back({"onednn.layer_norm_bare", normalised, accepts});
  return table;
}

}  // namespace

bool accepts(const Graph& graph, const LibraryCall& call) {
  collage::Result<CallPlan> planned = plan(graph, call);
  return planned.ok() && (call.composite.empty() || planned->name == call.composite);
}

const LibraryTable& table() {
  static const LibraryTable entries = make_table();
  return entries;
}

}  // namespace tc::onednn
