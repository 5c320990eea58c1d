#include "collage/support/identity_index.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace collage {
namespace {

using detail::IdentityIndex;

TEST(IdentityIndex, FindsWhatWasPushedByHashAndPredicate) {
  std::vector<std::string> items;
  IdentityIndex index;
  auto find = [&](const std::string& s, std::size_t hash) {
    return index.find(hash, [&](std::size_t id) { return items[id] == s; });
  };
  EXPECT_EQ(find("a", 1), npos);
  for (const char* s : {"a", "b", "c"}) {
    items.push_back(s);
    index.push(items.size());  // hashes 1, 2, 3
  }
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(find("a", 1), 0u);
  EXPECT_EQ(find("c", 3), 2u);
  EXPECT_EQ(find("a", 2), npos);  // right item, wrong hash
  EXPECT_EQ(find("z", 1), npos);  // right hash, wrong item
}

TEST(IdentityIndex, TellsApartItemsWhoseHashesCollide) {
  std::vector<int> items;
  IdentityIndex index;
  for (int v = 0; v < 100; ++v) {
    items.push_back(v);
    index.push(v % 3);  // many items per hash
  }
  for (int v = 0; v < 100; ++v) {
    EXPECT_EQ(index.find(static_cast<std::size_t>(v % 3), [&](std::size_t id) { return items[id] == v; }),
              static_cast<std::size_t>(v));
  }
  EXPECT_EQ(index.find(1, [&](std::size_t id) { return items[id] == 100; }), npos);
}

TEST(IdentityIndex, KeepsEveryIdWhileGrowingAndForgetsThemOnClear) {
  IdentityIndex index;
  const std::size_t n = 5000;
  for (std::size_t id = 0; id < n; ++id) index.push(id * 0x9E3779B97F4A7C15ULL);
  for (std::size_t id = 0; id < n; ++id) {
    ASSERT_EQ(index.find(id * 0x9E3779B97F4A7C15ULL, [&](std::size_t found) { return found == id; }), id);
  }
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find(0, [](std::size_t) { return true; }), npos);
  index.push(7);
  EXPECT_EQ(index.find(7, [](std::size_t id) { return id == 0; }), 0u);
}

}  // namespace
}  // namespace collage
