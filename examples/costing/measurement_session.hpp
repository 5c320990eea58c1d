#pragma once

/// \file
/// MeasurementSession: the measuring oracle behind the library's PersistentOracle over an SQLite
/// store, and a cache. A candidate is measured once per machine: its measurement goes into the
/// database under the oracle's identity (its version and the devices it ran on) and the
/// candidate's structural key (target included), so a second run of the same model measures
/// nothing and a different model reuses what it shares. Candidates a backend refuses are not
/// stored (the library keeps no errors); they are asked again, which costs a failed compile, not a
/// measurement.

#include <cstddef>
#include <memory>
#include <string>

#include <collage/cost/cost_oracle.hpp>

#include "backends/registry.hpp"
#include "costing/kernel_timing.hpp"
#include "costing/sqlite_store.hpp"

namespace tc {

/// The version of the measuring oracle's method, part of its identity in the database:
/// measurements taken another way are not served.
inline constexpr const char* kMeasuringOracleVersion = "1";

/// A measuring oracle with persistence and caching, and its counters.
class MeasurementSession {
 public:
  /// Measures with `backends` on `devices` (borrowed) under `timing`; keeps measurements in the
  /// SQLite database at `db_path` (none when empty). Fails naming the database when it cannot be
  /// opened.
  static collage::Result<std::unique_ptr<MeasurementSession>> open(const BackendSet& backends, const DeviceSet& devices,
                                                                    KernelTimingOptions timing,
                                                                    const std::string& db_path);
  ~MeasurementSession();

  /// The oracle to partition with (cached, persistent, measuring).
  collage::CostOracle<Graph>& oracle();
  /// Candidates compiled and timed in this session (database and cache hits excluded).
  std::size_t measured() const { return measured_; }
  /// Answers served from the database.
  std::size_t stored_hits() const;
  /// Failed lookups and writes of the database (the run goes on; a measurement is only not kept).
  std::size_t store_failures() const { return store_ ? store_->failures() : 0; }
  /// "measured (SQLite database build/m.db, 120 entries)".
  std::string describe() const;

 private:
  MeasurementSession() = default;

  std::unique_ptr<SqliteMeasurementStore> store_;
  std::unique_ptr<collage::CostOracle<Graph>> measuring_;
  std::unique_ptr<collage::CostOracle<Graph>> persistent_;
  std::unique_ptr<collage::CostOracle<Graph>> cached_;
  std::size_t measured_ = 0;
  bool cold_caches_ = false;
};

}  // namespace tc
