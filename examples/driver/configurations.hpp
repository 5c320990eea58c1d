#pragma once

/// \file
/// Configurations: the ways the example compiler splits a model among its backends — each backend
/// alone with `native` taking what it lacks (as partition_for_<toolchain> leaves the rest to TVM),
/// the greedy baseline over all backends, and collage's search over all backends.

#include <optional>
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
  /// A backend's name (that backend alone), "gpu-libraries", "greedy" or "collage".
  std::string name;
  /// The backends whose rules propose candidates, in priority order.
  std::vector<std::string> targets;
  collage::SearchAlgorithm algorithm = collage::SearchAlgorithm::exact;
  /// The backend that takes what the others lack ("native" on the CPU, "cuda" on a GPU); "" when
  /// every backend proposes (greedy, collage).
  std::string fallback = "";
  /// One backend alone with its fallback: a baseline that collage's choice must not lose to.
  bool single = false;
};

/// The backend every CPU configuration falls back to.
inline const char* const kCpuFallback = "native";
/// The backend a GPU configuration falls back to, when the set has it.
inline const char* const kGpuFallback = "cuda";

/// What takes what `backend` lacks: "cuda" for a backend on a CUDA device when `backends` has
/// cuda, else "native" (as TVM's partition_for_cudnn leaves the rest to TVM's own CUDA code, and
/// partition_for_dnnl to its CPU code).
std::string fallback_for(const std::string& backend, const BackendSet& backends);

/// `backend` alone: greedy over [backend, its fallback], `backend` first (a fallback alone is
/// just itself).
Configuration single_backend_configuration(const std::string& backend, const BackendSet& backends);

/// "gpu-libraries": greedy over cublas and cudnn with cuda taking the rest, which is what TVM with
/// its GPU libraries does; nothing unless `backends` has cuda and at least one of the libraries.
std::optional<Configuration> gpu_libraries_configuration(const BackendSet& backends);

/// Every backend alone, then "gpu-libraries" (where there is one), "greedy" (greedy over all, in
/// the set's order) and "collage" (the exact search over all).
std::vector<Configuration> standard_configurations(const BackendSet& backends);

/// Collage's exact search over every backend of `backends`.
Configuration collage_configuration(const BackendSet& backends);

/// Partitions `dataflow` under `configuration` with `oracle` (options give budgets and progress;
/// their algorithm is replaced by the configuration's). Fails naming an unknown backend.
collage::Result<collage::PartitionResult> partition_model(const collage::DataflowGraph<Graph>& dataflow,
                                                          const BackendSet& backends,
                                                          const Configuration& configuration,
                                                          collage::CostOracle<Graph>& oracle,
                                                          collage::PartitionerOptions options = {});

}  // namespace tc
