#include "costing/sqlite_store.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tc
