#pragma once

/// \file
/// MockOracle<G>: the cost model of the Collage RFC scenarios, for tests and benchmarks.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"

namespace collage {

/// Costs a candidate as the sum over its kernel nodes (those that need_kernel) in topological
/// order of c * decay^k, where k = 0, 1, 2, ... is the node's position among the candidate's
/// kernel nodes and c is the per-op cost set for (target, op name), else the target's base cost.
/// So a larger candidate is cheaper than its parts (decay 0.9 by default, as in the RFC).
///
/// A target with neither a base cost nor any op cost is Invalid; so is a candidate with a kernel
/// node that has no cost on its target (a target with only op costs supports just those ops). A
/// candidate without kernel nodes costs zero. A negative or NaN cost (set by the caller) is an
/// oracle Error naming the value. Counts its calls.
template <class G>
class MockOracle final : public CostOracle<G> {
 public:
  MockOracle() = default;
  /// Base costs per target, e.g. {{"tvm", 1.0}, {"cutlass", 0.7}}.
  explicit MockOracle(std::map<std::string, double> base_costs) : base_(std::move(base_costs)) {}

  /// Sets the base cost of `target`.
  MockOracle& set_cost(std::string target, double cost) {
    base_[std::move(target)] = cost;
    return *this;
  }
  /// Sets the cost of op `op_name` on `target`, overriding the base cost.
  MockOracle& set_op_cost(std::string target, std::string op_name, double cost) {
    ops_[{std::move(target), std::move(op_name)}] = cost;
    return *this;
  }
  /// Sets the factor between consecutive kernel nodes' costs (0.9 by default).
  MockOracle& set_decay(double decay) {
    decay_ = decay;
    return *this;
  }

  /// "mock".
  std::string name() const override { return "mock"; }

  /// Number of candidates costed so far.
  std::size_t calls() const { return calls_; }

 private:
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    return measure_each(graph, candidates,
                        [this](const auto& g, const auto& c, const auto& v) { return cost(g, c, v); });
  }

  /// The RFC cost of `candidate` (see the class comment).
  Result<Measurement> cost(const DataflowGraph<G>& graph, const Candidate& candidate, const ExtractedFunction& view) {
    ++calls_;
    auto base = base_.find(candidate.target);
    const bool has_base = base != base_.end();
    if (!has_base && !has_op_costs(candidate.target)) return Measurement{Cost::invalid(), 0.0, 1};
    double total = 0.0;
    double factor = 1.0;
    for (std::size_t i : view.body) {
      if (!graph.needs_kernel(i)) continue;
      double c = 0.0;
      if (auto op = ops_.find({candidate.target, graph.op_name(i)}); op != ops_.end()) {
        c = op->second;
      } else if (has_base) {
        c = base->second;
      } else {
        return Measurement{Cost::invalid(), 0.0, 1};
      }
      if (!(c >= 0.0)) return make_measurement(c);  // an Error naming the bad cost
      total += c * factor;
      factor *= decay_;
    }
    return make_measurement(total);
  }

  bool has_op_costs(const std::string& target) const {
    auto it = ops_.lower_bound({target, std::string()});
    return it != ops_.end() && it->first.first == target;
  }

  std::map<std::string, double> base_;
  std::map<std::pair<std::string, std::string>, double> ops_;
  double decay_ = 0.9;
  std::size_t calls_ = 0;
};

}  // namespace collage
