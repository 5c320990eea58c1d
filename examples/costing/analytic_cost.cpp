#include "costing/analytic_cost.hpp"

#include <algorithm>
#include <vector>

#include "costing/cost_unit.hpp"
#include "tensor/op_attrs.hpp"

namespace tc {

double anchor_flops(const Function& function) {
  const Graph& g = function.graph;
  double flops = 0;
  for (int n : function.body()) {
    const Node& node = g.node(n);
    const double out = static_cast<double>(numel(node.shape));
    switch (node.op) {
      case Op::conv: {
        const Shape& w = g.node(node.inputs[1]).shape;
        flops += 2.0 * out * static_cast<double>(numel(w) / w[0]);
        break;
      }
      case Op::gemm: {
        const Shape& a = g.node(node.inputs[0]).shape;
        const double k = static_cast<double>(gemm_attrs(node).trans_a ? a[0] : a[1]);
        flops += 2.0 * out * k;
        break;
      }
      case Op::matmul: {
        const Shape& a = g.node(node.inputs[0]).shape;
        flops += 2.0 * out * static_cast<double>(a.back());
        break;
      }
      default: break;
    }
  }
  return flops;
}

double boundary_bytes(const Function& function) {
  const Graph& g = function.graph;
  // A table only gathers read is read a row per index, not whole.
  std::vector<double> gathered(g.size(), 0.0);
  std::vector<bool> read_otherwise(g.size(), false);
  for (const Node& node : g.nodes()) {
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      const auto in = static_cast<std::size_t>(node.inputs[k]);
      if (node.op == Op::gather && k == 0) gathered[in] += static_cast<double>(numel(node.shape));
      else read_otherwise[in] = true;
    }
  }
  double elements = 0;
  for (std::size_t n = 0; n < g.size(); ++n) {
    const Node& node = g.node(static_cast<int>(n));
    if (node.op != Op::input && node.op != Op::constant) continue;
    const auto whole = static_cast<double>(numel(node.shape));
    elements += gathered[n] > 0 && !read_otherwise[n] ? std::min(whole, gathered[n]) : whole;
  }
  for (int out : g.outputs()) elements += static_cast<double>(numel(g.node(out).shape));
  return elements * sizeof(float);
}

std::map<std::string, AnalyticRates> default_analytic_rates() {
  // GPU rates are an H100's FP32 peak derated to what library kernels reach on small layers.
  // cuda's generated kernels: a SIMT float32 tiled GEMM (no tensor cores) and fused elementwise
  // loops, one launch per partition.
  return {{"native", {6.0, 8.0, 1.0}},      {"eigen", {25.0, 8.0, 2.0}},        {"onednn", {35.0, 10.0, 4.0}},
          {"cublas", {20000.0, 1500.0, 8.0}}, {"cudnn", {15000.0, 1500.0, 10.0}}, {"cuda", {8000.0, 2000.0, 5.0}}};
}

std::unique_ptr<collage::CostOracle<Graph>> make_analytic_oracle(const BackendSet& backends, const DeviceSet& devices,
                                                                 std::map<std::string, AnalyticRates> rates) {
  auto estimate = [&backends, &devices, rates = std::move(rates)](
                      const collage::DataflowGraph<Graph>& dataflow, const collage::Candidate& candidate,
                      const auto&) -> collage::Result<collage::Cost> {
    const std::string target(candidate.target);
    const Backend* backend = backends.find(target);
    if (backend == nullptr) return collage::Error{collage::ErrorCode::oracle, "no backend named '" + target + "'"};
    Device* device = devices.find(backend->device());
    if (device == nullptr || !device->available()) {
      return collage::Error{collage::ErrorCode::oracle, target + ": its device is not available"};
    }
    const Function function = extract_function(dataflow, candidate.sub_graph);
    auto kernel = backend->compile(function, *device);
    if (!kernel.ok()) return kernel.error();
    auto it = rates.find(target);
    const AnalyticRates r = it == rates.end() ? AnalyticRates{} : it->second;
    const double seconds = anchor_flops(function) / (r.anchor_gflops * 1e9) +
                           boundary_bytes(function) / (r.gbytes_per_second * 1e9) + r.call_us * 1e-6;
    return collage::Cost::value(cost_from_seconds(seconds));
  };
  return collage::make_oracle<Graph>("analytic", kCostUnit, std::move(estimate));
}

}  // namespace tc
