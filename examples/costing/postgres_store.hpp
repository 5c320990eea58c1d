#pragma once

/// \file
/// PostgresMeasurementStore: a collage::MeasurementStore on a PostgreSQL server (over libpq), one
/// database shared by every machine that tunes.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <collage/support/result.hpp>

#include "costing/measurement_database.hpp"

struct pg_conn;

namespace tc {

/// How the store talks to its server; what the URL says wins over these.
struct PostgresOptions {
  /// Seconds to wait for a connection (libpq's connect_timeout).
  int connect_timeout_seconds = 5;
  /// Milliseconds unacknowledged data may wait before a silent server counts as gone (libpq's
  /// tcp_user_timeout, with TCP keep-alives), so a lost network never blocks a run for long.
  int tcp_user_timeout_ms = 10000;
};

/// Measurements by (oracle identity, key) in table collage_measurements of a PostgreSQL
/// database, the same rows as SqliteMeasurementStore keeps (identity and key as bytea, any bytes).
///
/// Each put() is one statement, its own transaction, committed before it returns: an upsert on the
/// primary key (identity, key), so writers on any number of hosts neither lose nor duplicate an
/// entry (the last write of a key wins), and a writer killed at any point leaves every
/// measurement it had put. The table is created when missing (under an advisory lock, so that
/// several first runs at once do not race). When the connection breaks, the store reconnects once;
/// if that fails too it stays offline for the rest of the run and answers every lookup as a miss
/// without waiting (failures() counts them, last_error() says so).
class PostgresMeasurementStore final : public MeasurementDatabase {
 public:
  /// Connects to the server at `url` (postgresql://[user[:password]@][host][:port][/dbname][?...],
  /// or postgres://) and checks or creates the table. Fails with one line naming the server
  /// (never its password): ErrorCode::invalid_argument for a malformed URL, ErrorCode::io when it
  /// cannot connect, ErrorCode::parse when collage_measurements has other columns.
  static collage::Result<std::unique_ptr<PostgresMeasurementStore>> open(const std::string& url,
                                                                         const PostgresOptions& options = {});

  PostgresMeasurementStore(const PostgresMeasurementStore&) = delete;
  PostgresMeasurementStore& operator=(const PostgresMeasurementStore&) = delete;
  ~PostgresMeasurementStore() override;

  std::optional<collage::Measurement> find(std::string_view identity, std::string_view key) const override;
  void put(std::string_view identity, std::string key, collage::Measurement m) override;

  collage::Result<std::size_t> size() const override;
  std::size_t failures() const override { return failures_; }
  const std::string& last_error() const override { return last_error_; }
  std::string describe() const override { return "PostgreSQL database " + name_; }
  /// Whether the connection was lost for good (every lookup is a miss since).
  bool offline() const { return offline_; }
  /// The server as postgresql://user@host:port/dbname (no password).
  const std::string& name() const { return name_; }

 private:
  PostgresMeasurementStore(std::string name, pg_conn* conn) : name_(std::move(name)), conn_(conn) {}
  class Query;
  friend class Query;

  collage::Status prepare() const;
  /// Whether the connection works, reconnecting once after it broke.
  bool usable() const;
  void failed(const std::string& what) const;

  std::string name_;
  pg_conn* conn_ = nullptr;
  mutable bool offline_ = false;
  mutable std::size_t failures_ = 0;
  mutable std::string last_error_;
};

}  // namespace tc
