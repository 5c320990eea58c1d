#include "costing/sqlite_store.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tc {
namespace {

std::string temp_db(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "tc_sqlite_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".db";
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return path;
}

collage::Measurement ms(double cost, std::size_t samples = 7) { return {collage::Cost::value(cost), 0.02, samples}; }

TEST(SqliteMeasurementStore, PutFindReplaceAndReopen) {
  const std::string path = temp_db("basic");
  {
    auto store = SqliteMeasurementStore::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    EXPECT_FALSE(store->find("m@1", "a").has_value());
    store->put("m@1", "a", ms(1.5));
    store->put("m@1", "b\tweird\nkey\x01", {collage::Cost::invalid(), 0, 1});
    store->put("m@1", "u", {collage::Cost::unknown(), 0, 0});
    store->put("m@1", "a", ms(2.5, 9));
    store->put("m@2", "a", ms(7));
    EXPECT_EQ(store->failures(), 0u) << store->last_error();
  }
  auto store = SqliteMeasurementStore::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*store->size(), 3u);
  auto a = store->find("m@1", "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->cost, collage::Cost::value(2.5));
  EXPECT_EQ(a->samples, 9u);
  EXPECT_EQ(store->find("m@2", "a")->cost, collage::Cost::value(7));
  EXPECT_FALSE(store->find("m@3", "a").has_value());
  auto b = store->find("m@1", "b\tweird\nkey\x01");
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->cost.is_invalid());
  EXPECT_FALSE(store->find("m@1", "u").has_value());
}

TEST(SqliteMeasurementStore, NotADatabaseIsOneClearError) {
  const std::string path = temp_db("garbage");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("this is not an sqlite database, but it is long enough to have a header.......", f);
  std::fclose(f);
  auto store = SqliteMeasurementStore::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(path), std::string::npos);
  EXPECT_EQ(store.error().message.find('\n'), std::string::npos);
}

TEST(SqliteMeasurementStore, ConcurrentWritersLoseNoEntry) {
  const std::string path = temp_db("concurrent");
  ASSERT_TRUE(SqliteMeasurementStore::open(path).ok());
  constexpr int kWriters = 4;
  constexpr int kEach = 150;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto store = SqliteMeasurementStore::open(path);
      int failures = store.ok() ? 0 : 1;
      for (int k = 0; store.ok() && k < kEach; ++k) {
        // Each writer has its own keys and shares the "shared-" ones with the others.
        store->put("id", "w" + std::to_string(w) + "-" + std::to_string(k), ms(k));
        store->put("id", "shared-" + std::to_string(k % 10), ms(w));
      }
      if (store.ok()) failures += static_cast<int>(store->failures());
      std::_Exit(failures == 0 ? 0 : 1);
    }
  }
  for (int w = 0; w < kWriters; ++w) {
    int status = 0;
    ::wait(&status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto store = SqliteMeasurementStore::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*store->size(), static_cast<std::size_t>(kWriters * kEach + 10));
  for (int w = 0; w < kWriters; ++w) {
    for (int k = 0; k < kEach; ++k) EXPECT_TRUE(store->find("id", "w" + std::to_string(w) + "-" + std::to_string(k)).has_value());
  }
}

TEST(SqliteMeasurementStore, AKilledRunKeepsEverythingItPut) {
  const std::string path = temp_db("killed");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    auto store = SqliteMeasurementStore::open(path);
    if (!store.ok()) std::_Exit(1);
    for (int k = 0;; ++k) {
      store->put("id", "k" + std::to_string(k), ms(k));
      if (store->failures() != 0) std::_Exit(1);
      // Tell the parent how many are in; it kills this process at some point after 200.
      if (k == 200) (void)!::write(ready[1], "x", 1);
    }
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto store = SqliteMeasurementStore::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  const std::size_t n = *store->size();
  EXPECT_GT(n, 200u);
  for (std::size_t k = 0; k < n; ++k) {
    auto m = store->find("id", "k" + std::to_string(k));
    ASSERT_TRUE(m.has_value()) << k;
    EXPECT_EQ(m->cost, collage::Cost::value(static_cast<double>(k)));
  }
}

}  // namespace
}  // namespace tc
