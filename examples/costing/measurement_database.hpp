#pragma once

/// \file
/// MeasurementDatabase: where the example keeps measurements between runs, named by one string:
/// a file path (SQLite) or a server's URL (postgresql://... or postgres://..., PostgreSQL), with
/// the same keys either way: the oracle's identity (method, devices, backends' configurations)
/// and the candidate's structural key (target included).

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <collage/cost/measurement_store.hpp>
#include <collage/support/result.hpp>

namespace tc {

/// A measurement store in a database. A lookup or write that fails counts as a miss or a
/// measurement not kept (failures() counts them, last_error() says why): the run goes on.
class MeasurementDatabase : public collage::MeasurementStore {
 public:
  /// The number of stored measurements.
  virtual collage::Result<std::size_t> size() const = 0;
  /// Lookups and writes that failed.
  virtual std::size_t failures() const = 0;
  /// Why the last one failed ("" when none did).
  virtual const std::string& last_error() const = 0;
  /// "SQLite database build/m.db" or "PostgreSQL database postgresql://user@host:5432/db" (never
  /// a password).
  virtual std::string describe() const = 0;
};

/// Whether `where` names a PostgreSQL server (a URL starting postgresql:// or postgres://).
bool is_postgres_url(std::string_view where);

/// Whether this build can open PostgreSQL databases (libpq was found when it was built).
bool have_postgres();

/// The database `where` names: a PostgreSQL server by URL, else an SQLite file (created when
/// missing). Fails with one line naming it: ErrorCode::io when the file cannot be opened or the
/// server cannot be reached, ErrorCode::invalid_argument for a malformed URL or a build without
/// PostgreSQL, ErrorCode::parse when it holds something else than measurements.
collage::Result<std::unique_ptr<MeasurementDatabase>> open_measurement_database(const std::string& where);

}  // namespace tc
