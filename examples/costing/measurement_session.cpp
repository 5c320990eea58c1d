#include "costing/measurement_session.hpp"

#include <collage/cost/caching_oracle.hpp>
#include <collage/cost/measurement_db.hpp>

#include "costing/measuring_oracle.hpp"

namespace tc {

std::string measuring_oracle_version(const BackendSet& backends, const DeviceSet& devices,
                                     const KernelTimingOptions& timing) {
  std::string version = kMeasuringOracleVersion;
  if (timing.cold_caches) {
    version += "|cold caches";
  } else if (timing.model_bytes > 0) {
    version += "|in turns behind " + std::to_string(timing.model_bytes >> 20) + " MiB";
    if (timing.cpu_threads > 1) version += ", read back interleaved on " + std::to_string(timing.cpu_threads) + " threads";
  }
  if (!timing.flush_denormals) version += "|IEEE denormals";
  for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda}) {
    const Device* device = devices.find(kind);
    if (device == nullptr) continue;
    version += "|" + device->name();
    if (device->can_record() && timing.recorded_launches > 0 && !timing.cold_caches) {
      version += " in recorded graphs";
      if (model_weights_outgrow(*device, timing)) version += ", weights out of its cache";
    }
  }
  for (const auto& backend : backends.all()) {
    if (std::string c = backend->configuration(); !c.empty()) version += "|" + backend->name() + " " + c;
  }
  return version;
}

MeasurementSession::~MeasurementSession() = default;

collage::Result<std::unique_ptr<MeasurementSession>> MeasurementSession::open(const BackendSet& backends,
                                                                              const DeviceSet& devices,
                                                                              KernelTimingOptions timing,
                                                                              const std::string& db,
                                                                              const OracleWrap& wrap) {
  std::unique_ptr<MeasurementSession> session(new MeasurementSession());
  MeasurementSession& s = *session;
  s.cold_caches_ = timing.cold_caches;
  s.model_bytes_ = timing.model_bytes;
  s.cpu_threads_ = timing.cpu_threads;
  if (const Device* gpu = devices.find(DeviceKind::cuda);
      gpu != nullptr && gpu->can_record() && timing.recorded_launches > 0 && !timing.cold_caches) {
    s.cold_weights_ = model_weights_outgrow(*gpu, timing);
  }
  s.measuring_ = make_measuring_oracle(backends, devices, timing, &s.measured_);
  if (wrap) s.measuring_ = wrap(std::move(s.measuring_), &s.measured_);
  collage::CostOracle<Graph>* front = s.measuring_.get();
  if (!db.empty()) {
    auto store = open_measurement_database(db);
    if (store.ok()) {
      s.store_ = std::move(store).value();
    } else if (is_postgres_url(db) && store.error().code == collage::ErrorCode::io) {
      s.warning_ = store.error().message + "; measuring without it";
    } else {
      return store.error();
    }
  }
  if (s.store_) {
    // The identity names what the costs depend on: the method and the hardware.
    s.persistent_ = std::make_unique<collage::PersistentOracle<Graph>>(
        *s.measuring_, *s.store_, measuring_oracle_version(backends, devices, timing));
    front = s.persistent_.get();
  }
  s.cached_ = std::make_unique<collage::CachingOracle<Graph>>(*front);
  return session;
}

std::size_t MeasurementSession::stored_hits() const { return persistent_ ? persistent_->stats().db_hits : 0; }

collage::CostOracle<Graph>& MeasurementSession::oracle() { return *cached_; }

std::string MeasurementSession::describe() const {
  std::string out = "measured (each candidate compiled and timed";
  if (cold_caches_) out += ", the caches evicted before each run";
  if (model_bytes_ > 0) {
    out += ", CPU kernels in turns with " + std::to_string(model_bytes_ >> 20) + " MiB through the caches between two runs of one";
    if (cpu_threads_ > 1) out += ", their inputs and outputs read back on " + std::to_string(cpu_threads_) + " threads, interleaved";
  }
  if (cold_weights_) out += ", the GPU's weights out of its L2 cache as in the model";
  if (store_) {
    auto n = store_->size();
    out += "; " + store_->describe() + ", " + (n.ok() ? std::to_string(*n) : "?") + " entries";
  }
  return out + ")";
}

}  // namespace tc
