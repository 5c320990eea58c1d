#pragma once

/// \file
/// An analytic cost model: what a partition should cost on a backend from its arithmetic and its
/// memory traffic, for when nothing is measured (the measuring oracle replaces it).

#include <map>
#include <memory>
#include <string>

#include <collage/cost/cost_oracle.hpp>

#include "backends/registry.hpp"
#include "tensor/function.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// A backend's speed in the analytic model.
struct AnalyticRates {
  /// Multiply-adds of anchors (conv, gemm, matmul), counted as 2 flops, per second.
  double anchor_gflops = 5.0;
  /// Bytes moved per second by everything else and by a partition's inputs and outputs.
  double gbytes_per_second = 8.0;
  /// Fixed cost per partition (a call, a launch), in microseconds.
  double call_us = 2.0;
};

/// The arithmetic (flops) of a partition's anchors.
double anchor_flops(const Function& function);
/// The bytes a partition reads from its parameters and constants (of a table only gathers read,
/// the rows they pick) and writes to its results.
double boundary_bytes(const Function& function);

/// An oracle estimating each candidate in milliseconds from anchor_flops and boundary_bytes at
/// `rates` of its target (defaults for a target not listed). A candidate its backend does not
/// compile (checked by compiling it on `devices`) is an error (so Invalid), naming the reason.
std::unique_ptr<collage::CostOracle<Graph>> make_analytic_oracle(const BackendSet& backends, const DeviceSet& devices,
                                                                 std::map<std::string, AnalyticRates> rates);

/// Rates of the example compiler's backends on a modern x86 core, single-threaded.
std::map<std::string, AnalyticRates> default_analytic_rates();

}  // namespace tc
