#pragma once

/// \file
/// A PostgreSQL server for the tests: the one ctest's fixture started (its directory in
/// TC_TEST_POSTGRES_DIR), else a throw-away one this process starts on first use and stops when
/// it exits (scripts/throwaway-postgres.sh either way), or why there is none.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "costing/measurement_database.hpp"

#if TC_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

namespace tc::testing {

/// A server's URL, or why the tests that need one are skipped.
struct TestPostgres {
  std::string url;
  std::string skip_reason;
};

namespace detail {

/// The first line of the file at `path` ("" when there is none).
inline std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// A server this process started, stopped when the process exits normally.
class OwnPostgres {
 public:
  OwnPostgres() {
    char dir[] = "/tmp/tc_postgres_XXXXXX";
    if (::mkdtemp(dir) == nullptr) {
      server_.skip_reason = "cannot make a directory for a PostgreSQL server";
      return;
    }
    dir_ = dir;
    const std::string script = std::string(TC_SCRIPTS_DIR) + "/throwaway-postgres.sh";
    const std::string command = "bash '" + script + "' start '" + dir_ + "' 2>'" + dir_ + ".err' >/dev/null";
    const int status = std::system(command.c_str());
    server_.url = first_line_of(dir_ + "/url");
    if (status != 0 || server_.url.empty()) {
      server_.url.clear();
      const std::string why = first_line_of(dir_ + ".err");
      server_.skip_reason = why.empty() ? "the PostgreSQL server did not start" : why;
    }
    std::remove((dir_ + ".err").c_str());
  }
  OwnPostgres(const OwnPostgres&) = delete;
  OwnPostgres& operator=(const OwnPostgres&) = delete;
  ~OwnPostgres() {
    if (dir_.empty()) return;
    const std::string command = "bash '" + std::string(TC_SCRIPTS_DIR) + "/throwaway-postgres.sh' stop '" + dir_ + "'";
    if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not stop the test's PostgreSQL server\n");
  }
  const TestPostgres& server() const { return server_; }

 private:
  std::string dir_;
  TestPostgres server_;
};

}  // namespace detail

/// The tests' PostgreSQL server (see the file comment).
inline const TestPostgres& test_postgres() {
  static const TestPostgres shared = [] {
    TestPostgres s;
    if (!have_postgres()) {
      s.skip_reason = "this build has no PostgreSQL support (libpq-dev not found)";
    } else if (const char* dir = std::getenv("TC_TEST_POSTGRES_DIR"); dir != nullptr && *dir != '\0') {
      s.url = detail::first_line_of(std::string(dir) + "/url");
      if (s.url.empty()) s.skip_reason = detail::first_line_of(std::string(dir) + "/skipped");
      if (s.url.empty() && s.skip_reason.empty()) s.skip_reason = "ctest's PostgreSQL server did not start";
    } else {
      static detail::OwnPostgres own;
      s = own.server();
    }
    return s;
  }();
  return shared;
}

/// Runs `sql` on the test server's database `postgres`; "" when it worked, else why not.
inline std::string postgres_admin(const std::string& sql) {
#if TC_HAVE_POSTGRES
  PGconn* conn = PQconnectdb(test_postgres().url.c_str());
  std::string error;
  if (PQstatus(conn) != CONNECTION_OK) {
    error = PQerrorMessage(conn);
  } else {
    PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
    PGresult* r = PQexec(conn, sql.c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) error = PQerrorMessage(conn);
    PQclear(r);
  }
  PQfinish(conn);
  return error;
#else
  return "no PostgreSQL support: " + sql;
#endif
}

/// The URL of a new, empty database `name` (lower-case letters, digits, '_') on the test server,
/// or "" when it cannot be made (see test_postgres().skip_reason).
inline std::string fresh_postgres_database(const std::string& name) {
  const std::string& url = test_postgres().url;
  if (url.empty()) return "";
  const std::string db = name + "_" + std::to_string(::getpid());
  if (!postgres_admin("DROP DATABASE IF EXISTS " + db).empty()) return "";
  if (!postgres_admin("CREATE DATABASE " + db).empty()) return "";
  return url.substr(0, url.rfind('/') + 1) + db;
}

}  // namespace tc::testing
