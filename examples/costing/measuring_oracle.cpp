#include "costing/measuring_oracle.hpp"

#include <string>
#include <utility>
#include <vector>

#include "costing/cost_unit.hpp"

namespace tc {

namespace {

/// Measures a batch in two passes: each backend first readies its candidates' compilation at once
/// (Backend::prepare: the cuda backend's NVRTC compiles run on the host's cores in parallel), then
/// each candidate is compiled and timed alone, one after another, so that no two timings overlap.
class MeasuringOracle final : public collage::CostOracle<Graph> {
 public:
  MeasuringOracle(const BackendSet& backends, const DeviceSet& devices, KernelTimingOptions options, std::size_t* timed)
      : backends_(backends), devices_(devices), options_(std::move(options)), timed_(timed) {}

  std::string name() const override { return "measured"; }
  std::string unit() const override { return kCostUnit; }

 private:
  std::vector<collage::Result<collage::Measurement>> do_measure_batch(
      const collage::DataflowGraph<Graph>& dataflow, const std::vector<const collage::Candidate*>& candidates) override {
    std::vector<Function> functions;
    std::vector<std::string> targets;
    for (const collage::Candidate* c : candidates) {
      functions.push_back(extract_function(dataflow, c->sub_graph));
      targets.emplace_back(c->target);
    }
    prepare_all(backends_, devices_, targets, functions);
    std::vector<collage::Result<collage::Measurement>> out;
    out.reserve(candidates.size());
    for (std::size_t k = 0; k < candidates.size(); ++k) out.push_back(measure(targets[k], functions[k]));
    return out;
  }

  collage::Result<collage::Measurement> measure(const std::string& target, const Function& function) const {
    const Backend* backend = backends_.find(target);
    if (backend == nullptr) return collage::Error{collage::ErrorCode::oracle, "no backend named '" + target + "'"};
    Device* device = devices_.find(backend->device());
    if (device == nullptr || !device->available()) {
      return collage::Error{collage::ErrorCode::oracle,
                            target + ": " +
                                (device ? device->unavailable_reason()
                                        : "no " + std::string(to_string(backend->device())) + " device")};
    }
    collage::Result<collage::Measurement> m = time_function(function, *backend, *device, options_);
    if (m.ok() && timed_ != nullptr) ++*timed_;
    return m;
  }

  const BackendSet& backends_;
  const DeviceSet& devices_;
  KernelTimingOptions options_;
  std::size_t* timed_;
};

}  // namespace

std::unique_ptr<collage::CostOracle<Graph>> make_measuring_oracle(const BackendSet& backends, const DeviceSet& devices,
                                                                  KernelTimingOptions options, std::size_t* timed) {
  return std::make_unique<MeasuringOracle>(backends, devices, std::move(options), timed);
}

}  // namespace tc
