#pragma once

/// \file
/// MeasurementSession: the measuring oracle behind the library's PersistentOracle over a
/// measurement database (an SQLite file or a PostgreSQL server), and a cache. A candidate is measured once per machine: its measurement goes into the
/// database under the oracle's identity (its version and the devices it ran on) and the
/// candidate's structural key (target included), so a second run of the same model measures
/// nothing and a different model reuses what it shares. Candidates a backend refuses are not
/// stored (the library keeps no errors); they are asked again, which costs a failed compile, not a
/// measurement.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <collage/cost/cost_oracle.hpp>

#include "backends/registry.hpp"
#include "costing/kernel_timing.hpp"
#include "costing/measurement_database.hpp"

namespace tc {

/// The version of the measuring oracle's method, part of its identity in the database:
/// measurements taken another way are not served.
inline constexpr const char* kMeasuringOracleVersion = "1";

/// The version the measuring oracle's measurements are stored under: the method, the devices
/// `backends` run on and their configurations, so measurements of other hardware are not served.
std::string measuring_oracle_version(const BackendSet& backends, const DeviceSet& devices,
                                     const KernelTimingOptions& timing);

/// Turns the session's measuring oracle (`local`) into the one it asks, e.g. one that spreads its
/// batches over other processes; adds what is compiled and timed elsewhere to `*timed`.
using OracleWrap = std::function<std::unique_ptr<collage::CostOracle<Graph>>(
    std::unique_ptr<collage::CostOracle<Graph>> local, std::size_t* timed)>;

/// A measuring oracle with persistence and caching, and its counters.
class MeasurementSession {
 public:
  /// Measures with `backends` on `devices` (borrowed) under `timing`, through `wrap` when given;
  /// keeps measurements in the database `db` names (open_measurement_database(): a file, or a
  /// PostgreSQL URL; none when empty). Fails naming the database when it cannot be opened, except
  /// a server that cannot be reached: then the session measures without it and warning() says so.
  static collage::Result<std::unique_ptr<MeasurementSession>> open(const BackendSet& backends, const DeviceSet& devices,
                                                                    KernelTimingOptions timing, const std::string& db,
                                                                    const OracleWrap& wrap = {});
  ~MeasurementSession();

  /// The oracle to partition with (cached, persistent, measuring).
  collage::CostOracle<Graph>& oracle();
  /// Candidates compiled and timed in this session (database and cache hits excluded).
  std::size_t measured() const { return measured_; }
  /// Answers served from the database.
  std::size_t stored_hits() const;
  /// Failed lookups and writes of the database (the run goes on; a measurement is only not kept).
  std::size_t store_failures() const { return store_ ? store_->failures() : 0; }
  /// Why the session keeps no measurements although a database was named ("" when it does or none
  /// was named): one line.
  const std::string& warning() const { return warning_; }
  /// The database, or nullptr.
  const MeasurementDatabase* database() const { return store_.get(); }
  /// "measured (each candidate compiled and timed; SQLite database build/m.db, 120 entries)".
  std::string describe() const;

 private:
  MeasurementSession() = default;

  std::unique_ptr<MeasurementDatabase> store_;
  std::string warning_;
  std::unique_ptr<collage::CostOracle<Graph>> measuring_;
  std::unique_ptr<collage::CostOracle<Graph>> persistent_;
  std::unique_ptr<collage::CostOracle<Graph>> cached_;
  std::size_t measured_ = 0;
  bool cold_caches_ = false;
  std::size_t model_bytes_ = 0;
  int cpu_threads_ = 1;
  bool cold_weights_ = false;
};

}  // namespace tc
