#include "collage/search/settled_set.hpp"

#include <gtest/gtest.h>

#include <random>
#include <unordered_set>
#include <vector>

namespace collage {
namespace {

using detail::SettledUniverse;

/// What the SettledSet should hold: one flag a node, the preset ones set from the start.
struct Model {
  std::vector<bool> in;
  bool contains(std::size_t i) const { return in[i]; }
  std::size_t first_out() const {
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!in[i]) return i;
    }
    return in.size();
  }
};

/// Checks `s` against `model` on every node, and its canonical form: top is the least bound and
/// only the words below it that are not whole are listed.
void expect_same(const SettledUniverse& u, const SettledSet& s, const Model& model, const std::vector<bool>& preset) {
  for (std::size_t i = 0; i < model.in.size(); ++i) {
    ASSERT_EQ(u.contains(s, i) || preset[i], model.contains(i)) << "node " << i;
  }
  ASSERT_EQ(u.first_unsettled(s), model.first_out());
  for (std::size_t k = 0; k < s.holes.size(); ++k) {
    ASSERT_LT(s.holes[k].index, s.top);
    ASSERT_NE(s.holes[k].bits, ~IndexSet::Word{0});
    if (k > 0) {
      ASSERT_LT(s.holes[k - 1].index, s.holes[k].index);
    }
  }
}

TEST(SettledSet, AgreesWithAFlagPerNodeOverRandomSettlingOrders) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 400;
    std::vector<bool> preset(n);
    const unsigned preset_percent = static_cast<unsigned>(rng() % 60);
    for (std::size_t i = 0; i < n; ++i) preset[i] = rng() % 100 < preset_percent;
    const SettledUniverse u(n, [&](std::size_t i) { return static_cast<bool>(preset[i]); });
    SettledSet s = u.none();
    Model model{preset};
    expect_same(u, s, model, preset);
    // Front to back with stragglers, as searches settle: mostly near a moving frontier, sometimes
    // anywhere, sometimes a whole run.
    std::size_t frontier = 0;
    while (model.first_out() < n) {
      IndexSet added(n);
      const std::size_t count = 1 + rng() % 6;
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t i = rng() % 4 == 0 ? rng() % n : std::min(n - 1, frontier + rng() % 16);
        added.add(i);
      }
      if (rng() % 10 == 0) {
        for (std::size_t i = rng() % n, end = std::min(n, i + 70); i < end; ++i) added.add(i);
      }
      frontier = std::min(n - 1, frontier + rng() % 8);
      s = u.with(s, added);
      for (std::size_t i : added) model.in[i] = true;
      expect_same(u, s, model, preset);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_TRUE(s.holes.empty());
  }
}

TEST(SettledSet, EqualSetsReachedInDifferentOrdersCompareAndHashEqual) {
  const std::size_t n = 300;
  const SettledUniverse u(n, [](std::size_t i) { return i % 7 == 3; });
  std::mt19937_64 rng(11);
  std::vector<std::size_t> nodes;
  for (std::size_t i = 0; i < n; i += 2) nodes.push_back(i);
  SettledSet a = u.none();
  for (std::size_t i : nodes) a = u.with(a, IndexSet(n, {i}));
  std::shuffle(nodes.begin(), nodes.end(), rng);
  SettledSet b = u.none();
  for (std::size_t k = 0; k < nodes.size(); k += 3) {
    IndexSet added(n);
    for (std::size_t j = k; j < std::min(nodes.size(), k + 3); ++j) added.add(nodes[j]);
    b = u.with(b, added);
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a, u.with(a, IndexSet(n, {1})));
}

TEST(SettledSet, SizeFollowsTheWordsWithHolesNotTheirDistance) {
  // Eight branches of 1,000 nodes each, each settled but for its last node (the end of a branch
  // waiting for a join): a window from the first hole would span 7,000 nodes.
  const std::size_t n = 8000;
  const SettledUniverse u(n, [](std::size_t) { return false; });
  SettledSet s = u.none();
  IndexSet added(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 1000 != 999) added.add(i);
  }
  s = u.with(s, added);
  EXPECT_EQ(s.holes.size(), 8u);
  EXPECT_EQ(u.first_unsettled(s), 999u);
  EXPECT_FALSE(u.contains(s, 1999));
  EXPECT_TRUE(u.contains(s, 2000));
}

}  // namespace
}  // namespace collage
