#include "costing/measuring_oracle.hpp"

#include <string>
#include <utility>
#include <vector>

#include "costing/cost_unit.hpp"

namespace tc {

namespace {

/// Measures a batch in two passes: each backend first readies its candidates' compilation at once
/// (Backend::prepare: the cuda backend's NVRTC compiles run on the host's cores in parallel), then
/// the candidates are compiled and timed (time_functions: CPU ones in turns), so that no two
/// timings overlap.
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
    std::vector<collage::Result<collage::Measurement>> out(candidates.size(), collage::Measurement{});
    std::vector<KernelToTime> timed;
    std::vector<std::size_t> timed_index;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const Backend* backend = backends_.find(targets[k]);
      if (backend == nullptr) {
        out[k] = collage::Error{collage::ErrorCode::oracle, "no backend named '" + targets[k] + "'"};
        continue;
      }
      Device* device = devices_.find(backend->device());
      if (device == nullptr || !device->available()) {
        out[k] = collage::Error{collage::ErrorCode::oracle,
                                targets[k] + ": " +
                                    (device ? device->unavailable_reason()
                                            : "no " + std::string(to_string(backend->device())) + " device")};
        continue;
      }
      timed.push_back({&functions[k], backend, device});
      timed_index.push_back(k);
    }
    std::vector<collage::Result<collage::Measurement>> ms = time_functions(timed, options_);
    for (std::size_t j = 0; j < ms.size(); ++j) {
      if (ms[j].ok() && timed_ != nullptr) ++*timed_;
      out[timed_index[j]] = std::move(ms[j]);
    }
    return out;
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
