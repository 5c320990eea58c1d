#include "collage/support/indexed_priority_queue.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "collage/support/cost.hpp"
#include "collage/support/name_supply.hpp"

namespace collage {
namespace {

TEST(IndexedPriorityQueue, PushPopInOrderWithIdTieBreak) {
  IndexedPriorityQueue<int> q;
  q.push(5, 3);
  q.push(2, 1);
  q.push(9, 3);
  q.push(0, 3);
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.top(), 2u);
  EXPECT_EQ(q.pop().first, 2u);
  EXPECT_EQ(q.pop().first, 0u);  // ties broken by the smaller id
  EXPECT_EQ(q.pop().first, 5u);
  EXPECT_EQ(q.pop().first, 9u);
  EXPECT_TRUE(q.empty());
}

TEST(IndexedPriorityQueue, DecreaseKey) {
  IndexedPriorityQueue<double> q;
  q.push(1, 10.0);
  q.push(2, 20.0);
  q.push(3, 30.0);
  EXPECT_TRUE(q.decrease(3, 5.0));
  EXPECT_FALSE(q.decrease(2, 25.0));  // not lower: ignored
  EXPECT_DOUBLE_EQ(q.priority(2), 20.0);
  EXPECT_TRUE(q.push_or_decrease(4, 1.0));
  EXPECT_FALSE(q.push_or_decrease(4, 2.0));
  EXPECT_TRUE(q.contains(4));
  auto [id, prio] = q.pop();
  EXPECT_EQ(id, 4u);
  EXPECT_DOUBLE_EQ(prio, 1.0);
  EXPECT_FALSE(q.contains(4));
  EXPECT_EQ(q.pop().first, 3u);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.contains(1));
  q.push(1, 7.0);  // an id may come back after clear
  EXPECT_EQ(q.top(), 1u);
}

TEST(IndexedPriorityQueue, RandomAgainstReference) {
  std::mt19937_64 rng(21);
  IndexedPriorityQueue<Cost> q;
  std::map<std::size_t, Cost> ref;
  for (int step = 0; step < 20000; ++step) {
    std::size_t id = rng() % 300;
    int op = static_cast<int>(rng() % 4);
    Cost c = rng() % 17 == 0 ? Cost::unknown() : Cost::value(static_cast<double>(rng() % 1000));
    if (op < 3) {
      bool changed = q.push_or_decrease(id, c);
      auto it = ref.find(id);
      if (it == ref.end()) {
        ref.emplace(id, c);
        EXPECT_TRUE(changed);
      } else {
        EXPECT_EQ(changed, c < it->second);
        if (c < it->second) it->second = c;
      }
    } else if (!ref.empty()) {
      // The reference minimum: least cost, then least id.
      auto best = ref.begin();
      for (auto it = ref.begin(); it != ref.end(); ++it) {
        if (it->second < best->second) best = it;
      }
      auto [got, prio] = q.pop();
      EXPECT_EQ(got, best->first);
      EXPECT_EQ(prio, best->second);
      ref.erase(best);
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

TEST(NameSupply, FreshNamesAreUniqueAndDeterministic) {
  NameSupply names;
  names.reserve("fused_1");
  EXPECT_EQ(names.fresh("fused"), "fused");
  EXPECT_EQ(names.fresh("fused"), "fused_2");  // fused_1 was reserved
  EXPECT_EQ(names.fresh("fused"), "fused_3");
  EXPECT_EQ(names.fresh("x"), "x");
  for (int i = 0; i < 1000; ++i) names.fresh("y");  // rehashes must not break it
  EXPECT_EQ(names.fresh("y"), "y_1000");
}

}  // namespace
}  // namespace collage
