#pragma once

/// \file
/// The example compiler's one unit of cost: milliseconds. Measured kernels, the analytic model,
/// copies between devices and segment launches convert from seconds here, and every oracle and
/// transfer model of the example says the unit (collage::CostOracle::unit,
/// collage::TransferModel::unit), so the partitioner refuses a mix of units.

namespace tc {

/// The unit every cost of the example compiler is in.
inline constexpr const char* kCostUnit = "ms";

/// `seconds` in kCostUnit.
constexpr double cost_from_seconds(double seconds) { return seconds * 1e3; }

}  // namespace tc
