#pragma once

/// \file
/// Configurations: the ways the example compiler splits a model among its backends — each backend
/// alone with `native` taking what it lacks (as partition_for_<toolchain> leaves the rest to TVM),
/// the greedy baseline over all backends, and collage's search over all backends.

#include <string>
#include <vector>

#include <collage/cost/cost_oracle.hpp>
#include <collage/partitioner.hpp>

#include "backends/registry.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// One way to partition a model.
struct Configuration {
  /// "native", "eigen", "onednn", "greedy" or "collage".
  std::string name;
  /// The backends whose rules propose candidates, in priority order.
  std::vector<std::string> targets;
  collage::SearchAlgorithm algorithm = collage::SearchAlgorithm::exact;
};

/// The fallback backend every configuration includes.
inline const char* const kFallbackBackend = "native";

/// `backend` alone: greedy over [backend, native] with `backend` first ("native" alone is just
/// native).
Configuration single_backend_configuration(const std::string& backend);

/// Every backend alone, then "greedy" (greedy over all, in the set's order) and "collage" (the
/// exact search over all).
std::vector<Configuration> standard_configurations(const BackendSet& backends);

/// Partitions `dataflow` under `configuration` with `oracle` (options give budgets and progress;
/// their algorithm is replaced by the configuration's). Fails naming an unknown backend.
collage::Result<collage::PartitionResult> partition_model(const collage::DataflowGraph<Graph>& dataflow,
                                                          const BackendSet& backends,
                                                          const Configuration& configuration,
                                                          collage::CostOracle<Graph>& oracle,
                                                          collage::PartitionerOptions options = {});

}  // namespace tc
