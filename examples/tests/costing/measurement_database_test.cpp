#include "costing/measurement_database.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "costing/measurement_session.hpp"
#include "runtime/cpu_device.hpp"
#include "tests/support/postgres_server.hpp"
#if TC_HAVE_POSTGRES
#include "costing/postgres_store.hpp"
#endif

namespace tc {
namespace {

collage::Measurement ms(double cost, std::size_t samples = 7) { return {collage::Cost::value(cost), 0.02, samples}; }

/// The same tests over both kinds of database: an SQLite file, a PostgreSQL server.
class MeasurementDatabaseTest : public ::testing::TestWithParam<std::string> {
 protected:
  /// Where a fresh database of the kind under test is (a file path or a URL), or "" after
  /// GTEST_SKIP when there is no PostgreSQL.
  std::string fresh(const std::string& name) {
    if (GetParam() == "sqlite") {
      const std::string dir = ::testing::TempDir() + "tc_db_" + std::to_string(::getpid());
      std::filesystem::create_directories(dir);
      const std::string path = dir + "/" + name + ".db";
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
      return path;
    }
    const std::string url = testing::fresh_postgres_database(name);
    if (url.empty()) ADD_FAILURE() << "cannot make a database on " << testing::test_postgres().url;
    return url;
  }

  void SetUp() override {
    if (GetParam() == "postgres" && testing::test_postgres().url.empty()) {
      GTEST_SKIP() << testing::test_postgres().skip_reason;
    }
  }

  static std::unique_ptr<MeasurementDatabase> open(const std::string& where) {
    auto db = open_measurement_database(where);
    if (!db.ok()) {
      ADD_FAILURE() << db.error().message;
      return nullptr;
    }
    return std::move(db).value();
  }
};

TEST_P(MeasurementDatabaseTest, PutFindReplaceAndReopen) {
  const std::string where = fresh("basic");
  {
    auto db = open(where);
    ASSERT_TRUE(db);
    EXPECT_FALSE(db->find("m@1", "a").has_value());
    db->put("m@1", "a", ms(1.5));
    db->put("m@1", std::string("b\tweird\nkey\x01\0\xff", 14), {collage::Cost::invalid(), 0, 1});
    db->put("m@1", "u", {collage::Cost::unknown(), 0, 0});
    db->put("m@1", "a", ms(2.5, 9));
    db->put("m@2", "a", ms(1.0 / 3.0));
    EXPECT_EQ(db->failures(), 0u) << db->last_error();
  }
  auto db = open(where);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->size(), 3u);
  auto a = db->find("m@1", "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->cost, collage::Cost::value(2.5));
  EXPECT_EQ(a->spread, 0.02);
  EXPECT_EQ(a->samples, 9u);
  EXPECT_EQ(db->find("m@2", "a")->cost, collage::Cost::value(1.0 / 3.0));  // every bit
  EXPECT_FALSE(db->find("m@3", "a").has_value());
  auto b = db->find("m@1", std::string("b\tweird\nkey\x01\0\xff", 14));
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->cost.is_invalid());
  EXPECT_FALSE(db->find("m@1", "b\tweird\nkey\x01").has_value());
  EXPECT_FALSE(db->find("m@1", "u").has_value());
  EXPECT_EQ(db->failures(), 0u) << db->last_error();
  EXPECT_NE(db->describe().find(GetParam() == "sqlite" ? "SQLite database" : "PostgreSQL database"), std::string::npos);
}

TEST_P(MeasurementDatabaseTest, ConcurrentWritersLoseAndDuplicateNoEntry) {
  const std::string where = fresh("concurrent");
  ASSERT_TRUE(open(where));
  constexpr int kWriters = 4;
  constexpr int kEach = 100;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto db = open_measurement_database(where);
      int failures = db.ok() ? 0 : 1;
      for (int k = 0; db.ok() && k < kEach; ++k) {
        // Each writer has its own keys and shares the "shared-" ones with the others.
        (*db)->put("id", "w" + std::to_string(w) + "-" + std::to_string(k), ms(k));
        (*db)->put("id", "shared-" + std::to_string(k % 10), ms(w));
      }
      if (db.ok()) failures += static_cast<int>((*db)->failures());
      std::_Exit(failures == 0 ? 0 : 1);
    }
  }
  for (int w = 0; w < kWriters; ++w) {
    int status = 0;
    ::wait(&status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto db = open(where);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->size(), static_cast<std::size_t>(kWriters * kEach + 10));
  for (int w = 0; w < kWriters; ++w) {
    for (int k = 0; k < kEach; ++k) {
      auto m = db->find("id", "w" + std::to_string(w) + "-" + std::to_string(k));
      ASSERT_TRUE(m.has_value()) << w << " " << k;
      EXPECT_EQ(m->cost, collage::Cost::value(k));
    }
  }
  for (int k = 0; k < 10; ++k) {
    auto m = db->find("id", "shared-" + std::to_string(k));
    ASSERT_TRUE(m.has_value());
    EXPECT_LT(m->cost.raw(), kWriters);  // one writer's, whole
  }
}

TEST_P(MeasurementDatabaseTest, AWriterKilledMidWayLosesNothingItHadPut) {
  const std::string where = fresh("killed");
  ASSERT_TRUE(open(where));
  int done[2];
  ASSERT_EQ(::pipe(done), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(done[0]);
    auto db = open_measurement_database(where);
    if (!db.ok()) std::_Exit(1);
    for (std::uint32_t k = 0;; ++k) {
      (*db)->put("id", "k" + std::to_string(k), ms(k));
      if ((*db)->failures() != 0) std::_Exit(1);
      // Tell the parent that put k has returned.
      if (::write(done[1], &k, sizeof k) != sizeof k) std::_Exit(1);
    }
  }
  ::close(done[1]);
  // Kill the writer once 150 puts have returned, at whatever point of the next one it is.
  std::uint32_t last = 0;
  while (last < 150) ASSERT_EQ(::read(done[0], &last, sizeof last), static_cast<ssize_t>(sizeof last));
  ::kill(pid, SIGKILL);
  std::uint32_t k = 0;
  while (::read(done[0], &k, sizeof k) == static_cast<ssize_t>(sizeof k)) last = k;
  ::close(done[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto db = open(where);
  ASSERT_TRUE(db);
  for (std::uint32_t j = 0; j <= last; ++j) {
    auto m = db->find("id", "k" + std::to_string(j));
    ASSERT_TRUE(m.has_value()) << "put " << j << " returned before the kill, and is lost";
    EXPECT_EQ(m->cost, collage::Cost::value(j));
  }
  // At most the put in flight at the kill went in besides, whole.
  const std::size_t n = *db->size();
  EXPECT_GE(n, last + 1u);
  EXPECT_LE(n, last + 2u);
  if (n == last + 2u) {
    EXPECT_EQ(db->find("id", "k" + std::to_string(last + 1))->cost, collage::Cost::value(last + 1));
  }
}

INSTANTIATE_TEST_SUITE_P(Both, MeasurementDatabaseTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(MeasurementDatabase, TheIdentityNamesTheThreadsThatReadBackACandidatesInputsInTurns) {
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  const BackendSet backends;
  KernelTimingOptions timing;
  timing.model_bytes = std::size_t{64} << 20;
  const std::string one = measuring_oracle_version(backends, devices, timing);
  timing.cpu_threads = 2;
  const std::string two = measuring_oracle_version(backends, devices, timing);
  EXPECT_NE(one, two);
  EXPECT_NE(two.find("in turns behind 64 MiB, read back interleaved on 2 threads"), std::string::npos) << two;
  timing.model_bytes = 0;  // warm, run over and over: nothing read back
  EXPECT_EQ(measuring_oracle_version(backends, devices, timing).find("read back"), std::string::npos);
}

TEST(MeasurementDatabase, AUrlNamesAServerAndAnythingElseAFile) {
  EXPECT_TRUE(is_postgres_url("postgresql://h/db"));
  EXPECT_TRUE(is_postgres_url("postgres://u@h:5432/db"));
  EXPECT_FALSE(is_postgres_url("build/measurements.db"));
  EXPECT_FALSE(is_postgres_url("postgresql:/h"));
}

TEST(PostgresMeasurementStore, AnUnreachableServerIsOneLineWithoutThePassword) {
  if (!have_postgres()) GTEST_SKIP() << "this build has no PostgreSQL support (libpq-dev not found)";
  const auto started = std::chrono::steady_clock::now();
  // Nothing listens on port 1.
  auto db = open_measurement_database("postgresql://tuner:s3cret@127.0.0.1:1/collage");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, collage::ErrorCode::io);
  const std::string& m = db.error().message;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
  EXPECT_EQ(m.rfind("measurement database postgresql://tuner@127.0.0.1:1/collage: cannot connect: ", 0), 0u) << m;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));

  auto malformed = open_measurement_database("postgresql://h/db?nonsense=1");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().code, collage::ErrorCode::invalid_argument);
  EXPECT_EQ(malformed.error().message.find('\n'), std::string::npos);
}

TEST(PostgresMeasurementStore, ARunGoesOnMeasuringWithoutAnUnreachableServerAndSaysSo) {
  if (!have_postgres()) GTEST_SKIP() << "this build has no PostgreSQL support (libpq-dev not found)";
  CpuDevice cpu;
  DeviceSet devices;
  devices.add(cpu);
  BackendSet backends;
  auto session = MeasurementSession::open(backends, devices, KernelTimingOptions{}, "postgresql://127.0.0.1:1/x");
  ASSERT_TRUE(session.ok()) << session.error().message;
  const std::string& warning = (*session)->warning();
  EXPECT_EQ(warning.find('\n'), std::string::npos);
  EXPECT_NE(warning.find("cannot connect"), std::string::npos) << warning;
  EXPECT_NE(warning.find("; measuring without it"), std::string::npos) << warning;
  EXPECT_EQ((*session)->database(), nullptr);
  // A file that is not a database still stops the run.
  EXPECT_FALSE(MeasurementSession::open(backends, devices, KernelTimingOptions{}, "/nonexistent/dir/m.db").ok());
}

#if TC_HAVE_POSTGRES
TEST(PostgresMeasurementStore, ReconnectsOnceAfterTheConnectionBreaksThenGoesOffline) {
  if (testing::test_postgres().url.empty()) GTEST_SKIP() << testing::test_postgres().skip_reason;
  const std::string url = testing::fresh_postgres_database("reconnect");
  ASSERT_FALSE(url.empty());
  auto store = PostgresMeasurementStore::open(url);
  ASSERT_TRUE(store.ok()) << store.error().message;
  PostgresMeasurementStore& db = **store;
  db.put("id", "before", ms(1));
  const std::string name = url.substr(url.rfind('/') + 1);
  const std::string kill_store = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name +
                                 "' AND application_name = 'collage'";
  // The server ends the store's session: the next statement reconnects and goes through.
  ASSERT_EQ(testing::postgres_admin(kill_store), "");
  db.put("id", "after", ms(2));
  EXPECT_EQ(db.failures(), 0u) << db.last_error();
  EXPECT_EQ(db.find("id", "before")->cost, collage::Cost::value(1));
  EXPECT_FALSE(db.offline());
  // Again, with connections refused: the store goes offline and answers at once.
  ASSERT_EQ(testing::postgres_admin("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false"), "");
  ASSERT_EQ(testing::postgres_admin(kill_store), "");
  EXPECT_FALSE(db.find("id", "before").has_value());
  EXPECT_TRUE(db.offline());
  const auto started = std::chrono::steady_clock::now();
  for (int k = 0; k < 100; ++k) db.put("id", "k" + std::to_string(k), ms(k));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  EXPECT_EQ(db.failures(), 101u);
  EXPECT_NE(db.last_error().find("connection lost"), std::string::npos) << db.last_error();
  EXPECT_NE(db.last_error().find("going on without it"), std::string::npos) << db.last_error();
  EXPECT_EQ(db.last_error().find('\n'), std::string::npos);
}
#endif

}  // namespace
}  // namespace tc
