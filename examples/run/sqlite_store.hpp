#pragma once

/// \file
/// SqliteMeasurementStore: measured costs by key in an SQLite database, safe for several processes
/// tuning at once and for runs killed mid-way.

#include <memory>
#include <optional>
#include <string>

#include <collage/cost/cost_oracle.hpp>
#include <collage/support/result.hpp>

struct sqlite3;

namespace tc {

/// A stored measurement and, for an Invalid cost, why (the backend's error).
struct StoredMeasurement {
  collage::Measurement measurement;
  std::string reason;
};

/// A table of measurements by key (the caller's key: structure, target, machine, oracle version).
///
/// Each put() is its own transaction, committed before it returns, in write-ahead-log mode: a
/// process killed at any point leaves every measurement it had put, and the database opens.
/// Several processes may read and write one file at once; a writer waits (up to the busy timeout)
/// for another's transaction instead of failing. Unknown costs are not stored.
class SqliteMeasurementStore {
 public:
  /// Opens (creating when missing) the database at `path`. Fails naming the file when it cannot be
  /// opened or is not a measurement database.
  static collage::Result<SqliteMeasurementStore> open(const std::string& path);

  SqliteMeasurementStore(SqliteMeasurementStore&&) noexcept;
  SqliteMeasurementStore& operator=(SqliteMeasurementStore&&) noexcept;
  ~SqliteMeasurementStore();

  /// The stored measurement of `key`, or nothing.
  collage::Result<std::optional<StoredMeasurement>> find(const std::string& key) const;
  /// Stores (or replaces) the measurement of `key` with the reason of an Invalid cost; an Unknown
  /// cost is ignored.
  collage::Status put(const std::string& key, const collage::Measurement& measurement, const std::string& reason = "");
  /// The number of stored measurements.
  collage::Result<std::size_t> size() const;
  const std::string& path() const { return path_; }

 private:
  SqliteMeasurementStore(std::string path, sqlite3* db);
  collage::Error error(const std::string& what) const;

  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace tc
