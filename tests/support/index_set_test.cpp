#include "collage/support/index_set.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <unordered_set>

namespace collage {
namespace {

TEST(IndexSet, EmptyUniverse) {
  IndexSet s;
  EXPECT_EQ(s.universe(), 0u);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.first_inside(), npos);
  EXPECT_EQ(s.last_inside(), npos);
  EXPECT_EQ(s.first_outside(), npos);
  EXPECT_EQ(s.to_string(), "{}");
}

TEST(IndexSet, AddRemoveContains) {
  IndexSet s(200);
  s.add(0);
  s.add(63);
  s.add(64);
  s.add(199);
  EXPECT_TRUE(s.contains(0));
  EXPECT_TRUE(s[63]);
  EXPECT_TRUE(s[64]);
  EXPECT_TRUE(s[199]);
  EXPECT_FALSE(s[1]);
  EXPECT_EQ(s.count(), 4u);
  s.remove(63);
  EXPECT_FALSE(s[63]);
  EXPECT_EQ(s.count(), 3u);
  s.add(64);  // idempotent
  EXPECT_EQ(s.count(), 3u);
  s.clear();
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.universe(), 200u);
}

TEST(IndexSet, FirstLastNextOutside) {
  IndexSet s(130, {5, 64, 129});
  EXPECT_EQ(s.first_inside(), 5u);
  EXPECT_EQ(s.last_inside(), 129u);
  EXPECT_EQ(s.next_inside(5), 64u);
  EXPECT_EQ(s.next_inside(64), 129u);
  EXPECT_EQ(s.next_inside(129), npos);
  EXPECT_EQ(s.next_inside_from(64), 64u);
  EXPECT_EQ(s.next_inside_from(200), npos);
  EXPECT_EQ(s.first_outside(), 0u);
  IndexSet full = IndexSet::full(130);
  EXPECT_EQ(full.first_outside(), npos);
  full.remove(77);
  EXPECT_EQ(full.first_outside(), 77u);
  EXPECT_EQ(IndexSet::full(64).first_outside(), npos);
  EXPECT_EQ(IndexSet::range(10, 3, 6).to_string(), "{3..5}");
}

TEST(IndexSet, SetAlgebra) {
  IndexSet a(100, {1, 2, 3, 70});
  IndexSet b(100, {3, 4, 70, 99});
  EXPECT_EQ((a | b), IndexSet(100, {1, 2, 3, 4, 70, 99}));
  EXPECT_EQ((a & b), IndexSet(100, {3, 70}));
  EXPECT_EQ((a - b), IndexSet(100, {1, 2}));
  EXPECT_TRUE(a.intersects(b));
  EXPECT_FALSE(a.is_disjoint(b));
  EXPECT_TRUE((a - b).is_disjoint(b));
  EXPECT_TRUE((a & b).is_subset_of(a));
  EXPECT_TRUE((a & b).is_subset_of(b));
  EXPECT_FALSE(a.is_subset_of(b));
  EXPECT_TRUE(IndexSet(100).is_subset_of(a));
  IndexSet c = a;
  c |= b;
  c -= a;
  EXPECT_EQ(c, IndexSet(100, {4, 99}));
  c &= IndexSet(100, {99});
  EXPECT_EQ(c, IndexSet(100, {99}));
}

TEST(IndexSet, Printing) {
  EXPECT_EQ(IndexSet(10, {0, 2, 3, 4, 7}).to_string(), "{0,2..4,7}");
  EXPECT_EQ(IndexSet(10, {1, 2}).to_string(), "{1,2}");
  EXPECT_EQ(IndexSet(10, {1, 2, 3}).to_string(), "{1..3}");
  EXPECT_EQ(IndexSet(10, {9}).to_string(), "{9}");
  EXPECT_EQ(IndexSet(100, {62, 63, 64, 65, 99}).to_string(), "{62..65,99}");
  std::ostringstream os;
  os << IndexSet(5, {0, 4});
  EXPECT_EQ(os.str(), "{0,4}");
}

TEST(IndexSet, IterationAndVector) {
  IndexSet s(300, {299, 0, 128, 64});
  std::vector<std::size_t> seen;
  for (std::size_t i : s) seen.push_back(i);
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 64, 128, 299}));
  EXPECT_EQ(s.to_vector(), seen);
  EXPECT_EQ(std::distance(s.begin(), s.end()), 4);
}

TEST(IndexSet, IterationVisitsFullWordsWordEndsAndSkipsEmptyWords) {
  IndexSet s = IndexSet::range(1000, 60, 130);  // the end of one word, a full word, the start of a third
  s.add(63 + 6 * 64);                              // the last bit of a word after empty ones
  s.add(999);
  std::vector<std::size_t> expected;
  for (std::size_t i = 60; i < 130; ++i) expected.push_back(i);
  expected.push_back(447);
  expected.push_back(999);
  EXPECT_EQ(s.to_vector(), expected);
  EXPECT_EQ(IndexSet(1000).to_vector(), std::vector<std::size_t>{});
  EXPECT_EQ(IndexSet::full(64).to_vector().size(), 64u);
}

TEST(IndexSet, OrderIsTotalAndLexicographic) {
  // Lexicographic over the ascending index sequence: {0,5} < {1} and {0} < {0,1}.
  EXPECT_LT(IndexSet(10, {0, 5}), IndexSet(10, {1}));
  EXPECT_LT(IndexSet(10, {0}), IndexSet(10, {0, 1}));
  EXPECT_LT(IndexSet(10), IndexSet(10, {9}));
  EXPECT_FALSE(IndexSet(10, {3}) < IndexSet(10, {3}));
  // Consistent with std::set<std::size_t>'s order on random sets.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::size_t universe = 1 + rng() % 150;
    IndexSet a(universe);
    IndexSet b(universe);
    std::set<std::size_t> sa;
    std::set<std::size_t> sb;
    for (std::size_t i = 0; i < universe; ++i) {
      if (rng() % 3 == 0) { a.add(i); sa.insert(i); }
      if (rng() % 3 == 0) { b.add(i); sb.insert(i); }
    }
    EXPECT_EQ(a < b, sa < sb);
    EXPECT_EQ(b < a, sb < sa);
    EXPECT_EQ(a == b, sa == sb);
    EXPECT_EQ(a.count(), sa.size());
  }
}

TEST(IndexSet, HashAndEquality) {
  IndexSet a(100, {1, 50});
  IndexSet b(100, {50, 1});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a, IndexSet(101, {1, 50}));  // different universes differ
  std::unordered_set<IndexSet> sets{a, b, IndexSet(100, {2})};
  EXPECT_EQ(sets.size(), 2u);
}

TEST(IndexSet, WindowGrowsBothWaysAndShrinks) {
  IndexSet s(1000000);
  s.add(500000);
  s.add(3);        // grows the window to the front
  s.add(999999);   // and to the back
  EXPECT_EQ(s.to_string(), "{3,500000,999999}");
  s.remove(3);
  s.remove(999999);
  EXPECT_EQ(s, IndexSet(1000000, {500000}));  // canonical again after trimming
  EXPECT_EQ(s.hash(), IndexSet(1000000, {500000}).hash());
  EXPECT_EQ(s.first_outside(), 0u);
  s.remove(500000);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s, IndexSet(1000000));
  IndexSet a(1000, {10, 900});
  IndexSet b(1000, {500, 900});
  EXPECT_EQ(a & b, IndexSet(1000, {900}));
  EXPECT_EQ(a - b, IndexSet(1000, {10}));
  EXPECT_TRUE(IndexSet(1000, {900}).is_subset_of(a));
  EXPECT_FALSE(IndexSet(1000, {500}).intersects(a));
  EXPECT_LT(IndexSet(1000, {10}), IndexSet(1000, {10, 900}));
  EXPECT_LT(IndexSet(1000, {10, 900}), IndexSet(1000, {11}));
  EXPECT_EQ(IndexSet::range(1000, 60, 70).to_string(), "{60..69}");
  EXPECT_EQ(IndexSet::range(1000, 60, 70).count(), 10u);
  EXPECT_EQ(IndexSet::full(130).count(), 130u);
  IndexSet f = IndexSet::full(128);
  EXPECT_EQ(f.first_outside(), npos);
}

TEST(IndexSet, ScratchSetReusedWithWindowsMovingDownStaysBounded) {
  // A reused set (as in combine's scratch key): assigned a window, then joined with a set lower
  // down, again and again. Its heap block must stay within the universe, not double each time.
  constexpr std::size_t kUniverse = 64 * 1000;
  IndexSet scratch(kUniverse);
  for (std::size_t k = 0; k < 200; ++k) {
    const std::size_t high = kUniverse - 1 - 64 * k;
    const IndexSet up(kUniverse, {high - 300, high});
    const IndexSet down(kUniverse, {high - 64 * 100, high - 64 * 100 + 1});
    scratch = up;  // a copy keeps the block when it fits
    scratch |= down;
    ASSERT_EQ(scratch.count(), 4u);
    ASSERT_LE(scratch.heap_bytes(), (kUniverse / 64 + 1) * sizeof(std::uint64_t));
  }
  EXPECT_EQ(IndexSet(kUniverse, {5}).heap_bytes(), 0u);
}

TEST(IndexSet, Subst) {
  IndexSet s(5, {0, 2, 4});
  std::vector<std::size_t> map{3, 1, 7, 0, npos};
  EXPECT_EQ(s.subst(8, map), IndexSet(8, {3, 7}));
}

TEST(IndexSet, RandomOpsAgreeWithStdSet) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 500; ++trial) {
    std::size_t universe = 1 + rng() % 400;
    IndexSet a(universe);
    IndexSet b(universe);
    std::set<std::size_t> sa;
    std::set<std::size_t> sb;
    for (int k = 0; k < 40; ++k) {
      std::size_t i = rng() % universe;
      if (rng() % 2) { a.add(i); sa.insert(i); } else { b.add(i); sb.insert(i); }
    }
    std::set<std::size_t> u = sa;
    u.insert(sb.begin(), sb.end());
    EXPECT_EQ((a | b).to_vector(), std::vector<std::size_t>(u.begin(), u.end()));
    bool meet = false;
    for (std::size_t i : sa) meet = meet || sb.count(i) != 0;
    EXPECT_EQ(a.intersects(b), meet);
    std::size_t probe = rng() % universe;
    auto it = sa.upper_bound(probe);
    EXPECT_EQ(a.next_inside(probe), it == sa.end() ? npos : *it);
    EXPECT_EQ(a.last_inside(), sa.empty() ? npos : *sa.rbegin());
  }
}

}  // namespace
}  // namespace collage
