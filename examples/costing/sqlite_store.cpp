#include "costing/sqlite_store.hpp"

#include <sqlite3.h>

#include <utility>

namespace tc {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS collage_measurements ("
    "  identity TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  invalid INTEGER NOT NULL,"
    "  cost REAL NOT NULL,"
    "  spread REAL NOT NULL,"
    "  samples INTEGER NOT NULL,"
    "  measured_at TEXT NOT NULL DEFAULT (datetime('now')),"
    "  PRIMARY KEY (identity, key)"
    ") WITHOUT ROWID;";

/// A prepared statement finalised on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

}  // namespace

SqliteMeasurementStore::SqliteMeasurementStore(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

SqliteMeasurementStore::SqliteMeasurementStore(SqliteMeasurementStore&& other) noexcept
    : path_(std::move(other.path_)), db_(std::exchange(other.db_, nullptr)) {}

SqliteMeasurementStore& SqliteMeasurementStore::operator=(SqliteMeasurementStore&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    path_ = std::move(other.path_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

SqliteMeasurementStore::~SqliteMeasurementStore() { sqlite3_close(db_); }

collage::Error SqliteMeasurementStore::error(const std::string& what) const {
  return collage::Error{collage::ErrorCode::io,
                        "measurement database '" + path_ + "': " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "closed")};
}

collage::Result<SqliteMeasurementStore> SqliteMeasurementStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  SqliteMeasurementStore store(path, db);
  if (rc != SQLITE_OK) return store.error("cannot open");
  sqlite3_busy_timeout(db, 30000);
  // WAL keeps readers and one writer from blocking each other; NORMAL syncs at checkpoints, which
  // loses nothing when a process dies (only when the machine does).
  const char* setup = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;";
  if (sqlite3_exec(db, setup, nullptr, nullptr, nullptr) != SQLITE_OK) return store.error("not a database");
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) return store.error("cannot create its table");
  Statement probe(db, "SELECT identity, key, invalid, cost, spread, samples FROM collage_measurements LIMIT 1");
  if (!probe.ok()) return store.error("not a collage measurement database");
  return store;
}

void SqliteMeasurementStore::failed(const std::string& what) const {
  ++failures_;
  last_error_ = error(what).message;
}

std::optional<collage::Measurement> SqliteMeasurementStore::find(std::string_view identity, std::string_view key) const {
  Statement s(db_, "SELECT invalid, cost, spread, samples FROM collage_measurements WHERE identity = ?1 AND key = ?2");
  if (!s.ok()) {
    failed("cannot query");
    return std::nullopt;
  }
  sqlite3_bind_text(s.get(), 1, identity.data(), static_cast<int>(identity.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(s.get(), 2, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(s.get());
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) {
    failed("cannot read");
    return std::nullopt;
  }
  collage::Measurement m;
  m.cost = sqlite3_column_int(s.get(), 0) != 0 ? collage::Cost::invalid() : collage::Cost::value(sqlite3_column_double(s.get(), 1));
  m.spread = sqlite3_column_double(s.get(), 2);
  m.samples = static_cast<std::size_t>(sqlite3_column_int64(s.get(), 3));
  return m;
}

void SqliteMeasurementStore::put(std::string_view identity, std::string key, collage::Measurement m) {
  if (m.cost.is_unknown()) return;
  Statement s(db_,
              "INSERT OR REPLACE INTO collage_measurements (identity, key, invalid, cost, spread, samples) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!s.ok()) return failed("cannot prepare a write");
  sqlite3_bind_text(s.get(), 1, identity.data(), static_cast<int>(identity.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(s.get(), 2, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int(s.get(), 3, m.cost.is_invalid() ? 1 : 0);
  sqlite3_bind_double(s.get(), 4, m.cost.is_invalid() ? 0.0 : m.cost.raw());
  sqlite3_bind_double(s.get(), 5, m.spread);
  sqlite3_bind_int64(s.get(), 6, static_cast<sqlite3_int64>(m.samples));
  if (sqlite3_step(s.get()) != SQLITE_DONE) failed("cannot write");
}

collage::Result<std::size_t> SqliteMeasurementStore::size() const {
  Statement s(db_, "SELECT COUNT(*) FROM collage_measurements");
  if (!s.ok() || sqlite3_step(s.get()) != SQLITE_ROW) return error("cannot count");
  return static_cast<std::size_t>(sqlite3_column_int64(s.get(), 0));
}

}  // namespace tc
