#include "run/persistent_measurements.hpp"

#include <collage/cost/caching_oracle.hpp>
#include <collage/cost/structural_key.hpp>

#include "run/measuring_oracle.hpp"

namespace tc {

MeasurementSession::~MeasurementSession() = default;

collage::Result<std::unique_ptr<MeasurementSession>> MeasurementSession::open(const BackendSet& backends,
                                                                              const DeviceSet& devices,
                                                                              KernelTimingOptions timing,
                                                                              const std::string& db_path) {
  std::unique_ptr<MeasurementSession> session(new MeasurementSession());
  MeasurementSession& s = *session;
  if (!db_path.empty()) {
    auto store = SqliteMeasurementStore::open(db_path);
    if (!store.ok()) return store.error();
    s.store_ = std::make_unique<SqliteMeasurementStore>(std::move(store).value());
  }
  s.measuring_ = make_measuring_oracle(backends, devices, timing);
  auto persist = [&s, &backends, &devices](const collage::DataflowGraph<Graph>& graph, const collage::Candidate& candidate,
                                          const auto& view) -> collage::Result<collage::Measurement> {
    std::string key;
    if (s.store_) {
      const Backend* backend = backends.find(std::string(candidate.target));
      const Device* device = backend ? devices.find(backend->device()) : nullptr;
      key = std::string(kMeasuringOracleVersion) + '|' + (device ? device->name() : "no device") + '|' +
            collage::structural_key(graph, candidate, view);
      auto stored = s.store_->find(key);
      if (stored.ok() && stored->has_value()) {
        ++s.stored_hits_;
        const StoredMeasurement& m = **stored;
        if (m.measurement.cost.is_invalid() && !m.reason.empty()) {
          return collage::Error{collage::ErrorCode::oracle, m.reason};
        }
        return m.measurement;
      }
    }
    ++s.measured_;
    collage::Result<collage::Measurement> m = s.measuring_->measure(graph, candidate, view);
    if (s.store_) {
      collage::Status put = m.ok() ? s.store_->put(key, *m)
                                   : s.store_->put(key, collage::Measurement{collage::Cost::invalid(), 0.0, 0},
                                                   m.error().message);
      if (!put.ok()) ++s.store_failures_;
    }
    return m;
  };
  s.persistent_ = collage::make_oracle<Graph>("persistent(measured)", std::move(persist));
  s.cached_ = std::make_unique<collage::CachingOracle<Graph>>(*s.persistent_);
  return session;
}

collage::CostOracle<Graph>& MeasurementSession::oracle() { return *cached_; }

std::string MeasurementSession::describe() const {
  std::string out = "measured (each candidate compiled and timed";
  if (store_) {
    auto n = store_->size();
    out += "; SQLite database " + store_->path() + ", " + (n.ok() ? std::to_string(*n) : "?") + " entries";
  }
  return out + ")";
}

}  // namespace tc
