#pragma once

/// \file
/// SyntheticOracle: the `synthetic` cost model of collage-spec/1 files, as a collage::CostOracle.

#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"
#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/extraction.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"

namespace collage::cli {

/// One target's synthetic cost: a kernel of k compute nodes costs
/// launch + fusion^(k-1) * (sum of the ops' costs); a kernel without compute node costs 0.
struct SyntheticCost {
  double launch = 0.0;
  double fusion = 1.0;
  /// Cost per op name.
  std::unordered_map<std::string, double> ops;
  /// The `"*"` entry: the cost of an op not in `ops`; without it such an op is Invalid.
  std::optional<double> any;

  /// The cost of op `op`, or nothing when the target cannot run it.
  std::optional<double> op_cost(const std::string& op) const {
    auto it = ops.find(op);
    if (it != ops.end()) return it->second;
    return any;
  }
};

/// The synthetic cost model over any IR: costs by target and op name (see SyntheticCost). A
/// target it has no entry for is an Error (the spec reader makes sure every target has one).
template <class G>
class SyntheticOracle final : public CostOracle<G> {
 public:
  explicit SyntheticOracle(std::map<std::string, SyntheticCost> targets) : targets_(std::move(targets)) {}

  std::string name() const override { return "synthetic"; }

 private:
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    return measure_each(graph, candidates,
                        [this](const auto& g, const auto& c, const auto& v) { return cost(g, c, v); });
  }

  /// The synthetic cost of `candidate` (see SyntheticCost).
  Result<Measurement> cost(const DataflowGraph<G>& graph, const Candidate& candidate,
                           const ExtractedFunction& view) const {
    auto it = targets_.find(candidate.target);
    if (it == targets_.end()) return Error{ErrorCode::oracle, "no synthetic cost for target '" + candidate.target + "'"};
    const SyntheticCost& model = it->second;
    std::size_t k = 0;
    double sum = 0.0;
    for (std::size_t i : view.body) {
      if (!graph.needs_kernel(i)) continue;
      std::optional<double> c = model.op_cost(graph.op_name(i));
      if (!c) return Measurement{Cost::invalid(), 0.0, 1};
      sum += *c;
      ++k;
    }
    if (k == 0) return Measurement{Cost::zero(), 0.0, 1};
    return make_measurement(model.launch + std::pow(model.fusion, static_cast<double>(k - 1)) * sum);
  }

  std::map<std::string, SyntheticCost> targets_;
};

}  // namespace collage::cli
