#pragma once

/// \file
/// Running a whole graph under one configuration (a backend alone with native taking what it
/// lacks, greedy, or collage), for conformance tests and checks that need a graph in and outputs
/// out.

#include <vector>

#include <collage/support/result.hpp>

#include "backends/registry.hpp"
#include "driver/configurations.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// Partitions `graph` under `configuration` with the analytic cost model (which also drops the
/// candidates a backend cannot compile), compiles it and runs it on `inputs`.
collage::Result<std::vector<Tensor>> run_configuration(const Graph& graph, const std::vector<Tensor>& inputs,
                                                       const Configuration& configuration, const BackendSet& backends,
                                                       const DeviceSet& devices);

}  // namespace tc
