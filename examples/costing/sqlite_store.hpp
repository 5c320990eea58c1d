#pragma once

/// \file
/// SqliteMeasurementStore: a collage::MeasurementStore in an SQLite database, safe for several
/// processes tuning at once and for runs killed mid-way.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <collage/support/result.hpp>

#include "costing/measurement_database.hpp"

struct sqlite3;

namespace tc {

/// Measurements by (oracle identity, key) in an SQLite table.
///
/// Each put() is its own transaction, committed before it returns, in write-ahead-log mode: a
/// process killed at any point leaves every measurement it had put, and the database opens.
/// Several processes may read and write one file at once; a writer waits (up to the busy timeout)
/// for another's transaction instead of failing. A lookup or write that fails anyway counts as a
/// miss or a measurement not kept (failures() counts them; last_error() says why): the run goes
/// on. Unknown costs are not stored.
class SqliteMeasurementStore final : public MeasurementDatabase {
 public:
  /// Opens (creating when missing) the database at `path`. Fails naming the file when it cannot be
  /// opened or is not a measurement database.
  static collage::Result<SqliteMeasurementStore> open(const std::string& path);

  SqliteMeasurementStore(SqliteMeasurementStore&&) noexcept;
  SqliteMeasurementStore& operator=(SqliteMeasurementStore&&) noexcept;
  ~SqliteMeasurementStore() override;

  std::optional<collage::Measurement> find(std::string_view identity, std::string_view key) const override;
  void put(std::string_view identity, std::string key, collage::Measurement m) override;

  collage::Result<std::size_t> size() const override;
  std::size_t failures() const override { return failures_; }
  const std::string& last_error() const override { return last_error_; }
  std::string describe() const override { return "SQLite database " + path_; }
  const std::string& path() const { return path_; }

 private:
  SqliteMeasurementStore(std::string path, sqlite3* db);
  collage::Error error(const std::string& what) const;
  void failed(const std::string& what) const;

  std::string path_;
  sqlite3* db_ = nullptr;
  mutable std::size_t failures_ = 0;
  mutable std::string last_error_;
};

}  // namespace tc
