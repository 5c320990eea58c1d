#pragma once

/// \file
/// SpreadOracle: a cost oracle whose batches are measured by the ranks of a Cluster, rank 0
/// included (with the oracle it wraps). Its name is that oracle's, so its measurements are stored
/// under the same identity as a single process's.

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <collage/cost/cost_oracle.hpp>
#include <collage/trace.hpp>

#include "distributed/cluster.hpp"

namespace tc {

/// Measures each batch over `cluster`: every candidate as a trace record to the serving ranks,
/// and with `local` on rank 0. The answers are in candidate order whatever the number of ranks.
template <class G>
class SpreadOracle final : public collage::CostOracle<G> {
 public:
  /// Spreads over `cluster` (borrowed); `local` measures on rank 0. When `timed` is given, adds the
  /// candidates other ranks measured to it.
  SpreadOracle(std::unique_ptr<collage::CostOracle<G>> local, Cluster& cluster, std::size_t* timed = nullptr)
      : local_(std::move(local)), cluster_(cluster), timed_(timed) {}

  /// The local oracle's name (so a measurement database keys both the same).
  std::string name() const override { return local_->name(); }
  std::string unit() const override { return local_->unit(); }

 private:
  std::vector<collage::Result<collage::Measurement>> do_measure_batch(
      const collage::DataflowGraph<G>& graph, const std::vector<const collage::Candidate*>& candidates) override {
    std::vector<std::string> records;
    records.reserve(candidates.size());
    for (const collage::Candidate* c : candidates) records.push_back(collage::trace_candidate_record(*c));
    BatchAnswers batch = cluster_.measure(records, [&](const std::vector<std::size_t>& indices) {
      std::vector<const collage::Candidate*> taken;
      taken.reserve(indices.size());
      for (std::size_t k : indices) taken.push_back(candidates[k]);
      return local_->measure_batch(graph, taken);
    });
    if (timed_ != nullptr) *timed_ += batch.measured_elsewhere;
    return std::move(batch.answers);
  }

  std::unique_ptr<collage::CostOracle<G>> local_;
  Cluster& cluster_;
  std::size_t* timed_;
};

}  // namespace tc
