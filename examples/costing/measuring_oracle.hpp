#pragma once

/// \file
/// The measuring cost oracle: each candidate is laid out as a function (the library's extraction),
/// compiled by its backend, run on seeded random inputs on its device and timed robustly. Its cost
/// is the time in milliseconds; a candidate its backend cannot compile or run is an error (so
/// Invalid, with the reason kept for the explanation).

#include <memory>

#include <collage/cost/cost_oracle.hpp>

#include "backends/registry.hpp"
#include "costing/kernel_timing.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// The measuring oracle over `backends` on `devices` (both borrowed). When `timed` is given, it
/// counts the candidates compiled and timed (refusals not included).
std::unique_ptr<collage::CostOracle<Graph>> make_measuring_oracle(const BackendSet& backends, const DeviceSet& devices,
                                                                  KernelTimingOptions options,
                                                                  std::size_t* timed = nullptr);

}  // namespace tc
