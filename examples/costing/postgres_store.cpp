#include "costing/postgres_store.hpp"

#include <libpq-fe.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace tc {

namespace {

// Type OIDs of the parameters (pg_type): bytea, bool, float8, int8.
constexpr Oid kBytea = 17;
constexpr Oid kBool = 16;
constexpr Oid kFloat8 = 701;
constexpr Oid kInt8 = 20;

constexpr const char* kTable =
    "CREATE TABLE collage_measurements ("
    "  identity bytea NOT NULL,"
    "  key bytea NOT NULL,"
    "  invalid boolean NOT NULL,"
    "  cost double precision NOT NULL,"
    "  spread double precision NOT NULL,"
    "  samples bigint NOT NULL,"
    "  measured_at timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (identity, key))";

/// The first line of a libpq message, without its line feed.
std::string first_line(const char* message) {
  std::string s = message ? message : "";
  const std::size_t end = s.find('\n');
  if (end != std::string::npos) s.resize(end);
  return s.empty() ? "unknown error" : s;
}

/// `url` with the password of its user information (between ':' and '@') hidden.
std::string redact(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const std::size_t start = scheme + 3;
  const std::size_t at = url.find('@', start);
  const std::size_t slash = url.find('/', start);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return url;
  const std::size_t colon = url.find(':', start);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

/// postgresql://user@host:port/dbname from the parts that are set.
std::string server_name(const char* user, const char* host, const char* port, const char* dbname) {
  auto set = [](const char* s) { return s != nullptr && *s != '\0'; };
  std::string out = "postgresql://";
  if (set(user)) out += std::string(user) + "@";
  out += set(host) ? host : "localhost";
  if (set(port)) out += std::string(":") + port;
  if (set(dbname)) out += std::string("/") + dbname;
  return out;
}

void put_be64(std::uint64_t v, char* out) {
  for (int k = 7; k >= 0; --k, v >>= 8) out[k] = static_cast<char>(v & 0xFF);
}

std::uint64_t get_be64(const char* in) {
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<unsigned char>(in[k]);
  return v;
}

void put_double(double d, char* out) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  put_be64(bits, out);
}

double get_double(const char* in) {
  const std::uint64_t bits = get_be64(in);
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

/// A PGresult cleared on scope exit.
class ResultPtr {
 public:
  explicit ResultPtr(PGresult* r = nullptr) : r_(r) {}
  ResultPtr(ResultPtr&& other) noexcept : r_(std::exchange(other.r_, nullptr)) {}
  ResultPtr& operator=(ResultPtr&& other) noexcept {
    std::swap(r_, other.r_);
    return *this;
  }
  ResultPtr(const ResultPtr&) = delete;
  ResultPtr& operator=(const ResultPtr&) = delete;
  ~ResultPtr() { PQclear(r_); }
  PGresult* get() const { return r_; }
  ExecStatusType status() const { return PQresultStatus(r_); }

 private:
  PGresult* r_;
};

/// The statements, prepared on every connection (again after a reconnect).
struct Prepared {
  const char* name;
  const char* sql;
  std::vector<Oid> types;
};

const std::vector<Prepared>& statements() {
  static const std::vector<Prepared> all = {
      {"collage_find", "SELECT invalid, cost, spread, samples FROM collage_measurements WHERE identity = $1 AND key = $2",
       {kBytea, kBytea}},
      {"collage_put",
       "INSERT INTO collage_measurements (identity, key, invalid, cost, spread, samples) VALUES ($1, $2, $3, $4, $5, "
       "$6) ON CONFLICT (identity, key) DO UPDATE SET invalid = EXCLUDED.invalid, cost = EXCLUDED.cost, spread = "
       "EXCLUDED.spread, samples = EXCLUDED.samples, measured_at = now()",
       {kBytea, kBytea, kBool, kFloat8, kFloat8, kInt8}},
      {"collage_count", "SELECT count(*) FROM collage_measurements", {}},
  };
  return all;
}

}  // namespace

/// One prepared statement with binary parameters and binary results, retried once over a new
/// connection when the old one broke.
class PostgresMeasurementStore::Query {
 public:
  Query(const PostgresMeasurementStore& store, const char* statement) : store_(store), statement_(statement) {}

  /// Adds a parameter of `size` bytes.
  Query& param(const char* data, std::size_t size) {
    values_.push_back(data);
    lengths_.push_back(static_cast<int>(size));
    return *this;
  }

  /// Runs the statement; nothing (with the failure counted as `what`) when it failed.
  std::optional<ResultPtr> run(const char* what) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!store_.usable()) break;
      const std::vector<int> formats(values_.size(), 1);
      ResultPtr r(PQexecPrepared(store_.conn_, statement_, static_cast<int>(values_.size()), values_.data(),
                                 lengths_.data(), formats.data(), 1));
      if (r.status() == PGRES_TUPLES_OK || r.status() == PGRES_COMMAND_OK) return r;
      if (PQstatus(store_.conn_) != CONNECTION_BAD) {
        store_.failed(std::string(what) + ": " + first_line(PQresultErrorMessage(r.get())));
        return std::nullopt;
      }
    }
    store_.failed(std::string(what) + ": " + (store_.offline_ ? "the connection is lost" : "the connection broke"));
    return std::nullopt;
  }

 private:
  const PostgresMeasurementStore& store_;
  const char* statement_;
  std::vector<const char*> values_;
  std::vector<int> lengths_;
};

collage::Result<std::unique_ptr<PostgresMeasurementStore>> PostgresMeasurementStore::open(const std::string& url,
                                                                                         const PostgresOptions& options) {
  const std::string shown = redact(url);
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parse_error);
  if (parsed == nullptr) {
    const std::string why = first_line(parse_error);
    PQfreemem(parse_error);
    return collage::Error{collage::ErrorCode::invalid_argument,
                          "measurement database '" + shown + "': not a PostgreSQL URL: " + why};
  }
  const char* user = nullptr;
  const char* host = nullptr;
  const char* port = nullptr;
  const char* dbname = nullptr;
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    const std::string k = o->keyword;
    if (k == "user") user = o->val;
    if (k == "host") host = o->val;
    if (k == "port") port = o->val;
    if (k == "dbname") dbname = o->val;
  }
  const std::string planned = server_name(user, host, port, dbname);
  PQconninfoFree(parsed);

  // Later keywords win, so the URL (as dbname, expanded) overrides these defaults.
  const std::string connect_timeout = std::to_string(options.connect_timeout_seconds);
  const std::string tcp_user_timeout = std::to_string(options.tcp_user_timeout_ms);
  const char* keywords[] = {"connect_timeout", "tcp_user_timeout", "keepalives", "keepalives_idle",
                            "keepalives_interval", "keepalives_count", "application_name", "dbname", nullptr};
  const char* values[] = {connect_timeout.c_str(), tcp_user_timeout.c_str(), "1", "5", "2", "3", "collage",
                          url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  if (conn == nullptr) {
    return collage::Error{collage::ErrorCode::io, "measurement database " + planned + ": out of memory"};
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string why = first_line(PQerrorMessage(conn));
    PQfinish(conn);
    return collage::Error{collage::ErrorCode::io, "measurement database " + planned + ": cannot connect: " + why};
  }
  // Notices (e.g. of a server shutting down) are not for collage-run's output.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  std::unique_ptr<PostgresMeasurementStore> store(
      new PostgresMeasurementStore(server_name(PQuser(conn), PQhost(conn), PQport(conn), PQdb(conn)), conn));
  auto fail = [&](collage::ErrorCode code, const std::string& what) {
    return collage::Error{code, "measurement database " + store->name_ + ": " + what};
  };
  auto exec = [&](const char* sql) { return ResultPtr(PQexec(conn, sql)); };
  // Several first runs at once would race to create the table: one at a time, under a lock held
  // until the transaction ends.
  ResultPtr setup = exec("BEGIN; SELECT pg_advisory_xact_lock(7361026452289)");
  if (setup.status() != PGRES_TUPLES_OK) {
    return fail(collage::ErrorCode::io, "cannot lock: " + first_line(PQerrorMessage(conn)));
  }
  ResultPtr exists = exec("SELECT to_regclass('collage_measurements') IS NOT NULL");
  if (exists.status() != PGRES_TUPLES_OK) {
    return fail(collage::ErrorCode::io, "cannot look for the table: " + first_line(PQerrorMessage(conn)));
  }
  if (std::strcmp(PQgetvalue(exists.get(), 0, 0), "t") != 0 && exec(kTable).status() != PGRES_COMMAND_OK) {
    return fail(collage::ErrorCode::io, "cannot create table collage_measurements: " + first_line(PQerrorMessage(conn)));
  }
  if (exec("COMMIT").status() != PGRES_COMMAND_OK) {
    return fail(collage::ErrorCode::io, "cannot create table collage_measurements: " + first_line(PQerrorMessage(conn)));
  }
  ResultPtr probe = exec("SELECT identity, key, invalid, cost, spread, samples FROM collage_measurements LIMIT 0");
  if (probe.status() != PGRES_TUPLES_OK) {
    return fail(collage::ErrorCode::parse,
                "table collage_measurements is not a collage measurement table: " + first_line(PQerrorMessage(conn)));
  }
  if (collage::Status s = store->prepare(); !s.ok()) return fail(collage::ErrorCode::io, s.message());
  return store;
}

PostgresMeasurementStore::~PostgresMeasurementStore() { PQfinish(conn_); }

collage::Status PostgresMeasurementStore::prepare() const {
  for (const Prepared& p : statements()) {
    ResultPtr r(PQprepare(conn_, p.name, p.sql, static_cast<int>(p.types.size()), p.types.data()));
    if (r.status() != PGRES_COMMAND_OK) {
      return collage::Error{collage::ErrorCode::io, std::string("cannot prepare ") + p.name + ": " +
                                                        first_line(PQresultErrorMessage(r.get()))};
    }
  }
  return collage::Status::success();
}

bool PostgresMeasurementStore::usable() const {
  if (offline_) return false;
  if (PQstatus(conn_) == CONNECTION_OK) return true;
  PQreset(conn_);
  if (PQstatus(conn_) == CONNECTION_OK && prepare().ok()) return true;
  offline_ = true;
  last_error_ = "measurement database " + name_ + ": connection lost (" + first_line(PQerrorMessage(conn_)) +
                "); going on without it";
  return false;
}

void PostgresMeasurementStore::failed(const std::string& what) const {
  ++failures_;
  if (offline_ && !last_error_.empty()) return;  // keep the line that says the connection is lost
  last_error_ = "measurement database " + name_ + ": " + what;
}

std::optional<collage::Measurement> PostgresMeasurementStore::find(std::string_view identity,
                                                                   std::string_view key) const {
  Query q(*this, "collage_find");
  q.param(identity.data(), identity.size()).param(key.data(), key.size());
  std::optional<ResultPtr> r = q.run("cannot read");
  if (!r || PQntuples(r->get()) == 0) return std::nullopt;
  PGresult* row = r->get();
  if (PQgetlength(row, 0, 0) != 1 || PQgetlength(row, 0, 1) != 8 || PQgetlength(row, 0, 2) != 8 ||
      PQgetlength(row, 0, 3) != 8) {
    failed("cannot read: a row of unexpected types");
    return std::nullopt;
  }
  collage::Measurement m;
  m.cost = PQgetvalue(row, 0, 0)[0] != 0 ? collage::Cost::invalid() : collage::Cost::value(get_double(PQgetvalue(row, 0, 1)));
  m.spread = get_double(PQgetvalue(row, 0, 2));
  m.samples = static_cast<std::size_t>(get_be64(PQgetvalue(row, 0, 3)));
  return m;
}

void PostgresMeasurementStore::put(std::string_view identity, std::string key, collage::Measurement m) {
  if (m.cost.is_unknown()) return;
  const char invalid = m.cost.is_invalid() ? 1 : 0;
  char cost[8];
  char spread[8];
  char samples[8];
  put_double(m.cost.is_invalid() ? 0.0 : m.cost.raw(), cost);
  put_double(m.spread, spread);
  put_be64(static_cast<std::uint64_t>(m.samples), samples);
  Query q(*this, "collage_put");
  q.param(identity.data(), identity.size()).param(key.data(), key.size()).param(&invalid, 1);
  q.param(cost, 8).param(spread, 8).param(samples, 8);
  (void)q.run("cannot write");
}

collage::Result<std::size_t> PostgresMeasurementStore::size() const {
  Query q(*this, "collage_count");
  std::optional<ResultPtr> r = q.run("cannot count");
  if (!r) return collage::Error{collage::ErrorCode::io, last_error_};
  if (PQntuples(r->get()) != 1 || PQgetlength(r->get(), 0, 0) != 8) {
    return collage::Error{collage::ErrorCode::io, "measurement database " + name_ + ": cannot count"};
  }
  return static_cast<std::size_t>(get_be64(PQgetvalue(r->get(), 0, 0)));
}

}  // namespace tc
