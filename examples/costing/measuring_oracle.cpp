#include "costing/measuring_oracle.hpp"

#include "costing/cost_unit.hpp"

namespace tc {

std::unique_ptr<collage::CostOracle<Graph>> make_measuring_oracle(const BackendSet& backends, const DeviceSet& devices,
                                                                  KernelTimingOptions options, std::size_t* timed) {
  auto measure = [&backends, &devices, options, timed](const collage::DataflowGraph<Graph>& dataflow,
                                                const collage::Candidate& candidate,
                                                const auto&) -> collage::Result<collage::Measurement> {
    const std::string target(candidate.target);
    const Backend* backend = backends.find(target);
    if (backend == nullptr) return collage::Error{collage::ErrorCode::oracle, "no backend named '" + target + "'"};
    Device* device = devices.find(backend->device());
    if (device == nullptr || !device->available()) {
      return collage::Error{collage::ErrorCode::oracle,
                            target + ": " + (device ? device->unavailable_reason() : "no " + std::string(to_string(backend->device())) + " device")};
    }
    collage::Result<collage::Measurement> m =
        time_function(extract_function(dataflow, candidate.sub_graph), *backend, *device, options);
    if (m.ok() && timed != nullptr) ++*timed;
    return m;
  };
  return collage::make_oracle<Graph>("measured", kCostUnit, std::move(measure));
}

}  // namespace tc
