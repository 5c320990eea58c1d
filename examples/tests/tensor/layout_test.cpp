#include "tensor/layout.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tc {
namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Layout, BlockedLayoutsPutEachBlockOfChannelsInnermostAndPadTheLastWithZeros) {
  const Shape shape{2, 20, 3, 5};
  const std::vector<float> plain = random_values(static_cast<std::size_t>(numel(shape)), 1);
  for (Layout layout : {Layout::nChw8c, Layout::nChw16c}) {
    const auto b = static_cast<std::int64_t>(channel_block(layout));
    const std::int64_t blocks = (20 + b - 1) / b;
    ASSERT_EQ(stored_floats(shape, layout), static_cast<std::size_t>(2 * blocks * b * 15)) << to_string(layout);
    std::vector<float> blocked(stored_floats(shape, layout), -7.0f);
    reorder(plain.data(), Layout::plain, blocked.data(), layout, shape);
    for (std::int64_t n = 0; n < 2; ++n) {
      for (std::int64_t c = 0; c < blocks * b; ++c) {
        for (std::int64_t p = 0; p < 15; ++p) {
          const float got = blocked[static_cast<std::size_t>((((n * blocks) + c / b) * 15 + p) * b + c % b)];
          const float want = c < 20 ? plain[static_cast<std::size_t>((n * 20 + c) * 15 + p)] : 0.0f;
          ASSERT_EQ(got, want) << to_string(layout) << " n=" << n << " c=" << c << " p=" << p;
        }
      }
    }
    std::vector<float> back(plain.size());
    reorder(blocked.data(), layout, back.data(), Layout::plain, shape);
    EXPECT_EQ(back, plain) << to_string(layout);
  }
}

TEST(Layout, ReordersRoundTripOnRandomShapesAndBetweenBlockedLayouts) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    const Shape shape{1 + static_cast<std::int64_t>(rng() % 2), 1 + static_cast<std::int64_t>(rng() % 40),
                      1 + static_cast<std::int64_t>(rng() % 9), 1 + static_cast<std::int64_t>(rng() % 9)};
    const std::vector<float> plain = random_values(static_cast<std::size_t>(numel(shape)), static_cast<unsigned>(trial));
    std::vector<float> b8(stored_floats(shape, Layout::nChw8c)), b16(stored_floats(shape, Layout::nChw16c));
    std::vector<float> direct16(b16.size()), back(plain.size());
    reorder(plain.data(), Layout::plain, b8.data(), Layout::nChw8c, shape);
    reorder(b8.data(), Layout::nChw8c, b16.data(), Layout::nChw16c, shape);
    reorder(plain.data(), Layout::plain, direct16.data(), Layout::nChw16c, shape);
    EXPECT_EQ(b16, direct16) << to_string(shape);
    reorder(b16.data(), Layout::nChw16c, back.data(), Layout::plain, shape);
    EXPECT_EQ(back, plain) << to_string(shape);
  }
}

TEST(Layout, PartsOfAReorderWriteDisjointFloatsThatTogetherAreTheWholeReorder) {
  constexpr float kUnwritten = -1234.5f;  // neither a random value in [-1, 1] nor padding's zero
  const Layout layouts[] = {Layout::plain, Layout::nChw8c, Layout::nChw16c};
  std::mt19937 rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    const Shape shape{1 + static_cast<std::int64_t>(rng() % 3), 1 + static_cast<std::int64_t>(rng() % 40),
                      1 + static_cast<std::int64_t>(rng() % 7), 1 + static_cast<std::int64_t>(rng() % 7)};
    for (Layout from : layouts) {
      for (Layout to : layouts) {
        std::vector<float> source(stored_floats(shape, from));
        {
          // A valid tensor in `from`: its padding zero, as every reorder into it leaves it.
          const std::vector<float> plain = random_values(static_cast<std::size_t>(numel(shape)), static_cast<unsigned>(trial));
          reorder(plain.data(), Layout::plain, source.data(), from, shape);
        }
        std::vector<float> whole(stored_floats(shape, to));
        reorder(source.data(), from, whole.data(), to, shape);
        for (int parts = 1; parts <= 5; ++parts) {
          std::vector<float> joined(whole.size(), kUnwritten);
          std::vector<int> writers(whole.size(), 0);
          for (int part = 0; part < parts; ++part) {
            std::vector<float> alone(whole.size(), kUnwritten);
            reorder_part(source.data(), from, alone.data(), to, shape, part, parts);
            for (std::size_t k = 0; k < alone.size(); ++k) {
              if (alone[k] == kUnwritten) continue;
              ++writers[k];
              joined[k] = alone[k];
            }
          }
          const std::string where = to_string(shape) + " " + to_string(from) + " -> " + to_string(to) + " in " +
                                    std::to_string(parts) + " parts";
          EXPECT_EQ(joined, whole) << where;
          EXPECT_EQ(std::count(writers.begin(), writers.end(), 1), static_cast<std::ptrdiff_t>(writers.size())) << where;
        }
      }
    }
  }
}

TEST(Layout, TensorsOfAnotherRankArePlainInEveryLayout) {
  for (const Shape& shape : {Shape{}, Shape{7}, Shape{3, 20}, Shape{2, 20, 5}, Shape{1, 20, 2, 2, 2}}) {
    EXPECT_FALSE(is_blocked(shape, Layout::nChw16c)) << to_string(shape);
    EXPECT_EQ(layout_of(shape, Layout::nChw16c), Layout::plain);
    EXPECT_EQ(stored_floats(shape, Layout::nChw8c), static_cast<std::size_t>(numel(shape)));
    const std::vector<float> v = random_values(static_cast<std::size_t>(numel(shape)), 5);
    std::vector<float> out(v.size());
    reorder(v.data(), Layout::plain, out.data(), Layout::nChw16c, shape);
    EXPECT_EQ(out, v);
  }
  EXPECT_TRUE(is_blocked(Shape{1, 9, 4, 4}, Layout::nChw8c));
  EXPECT_EQ(layout_of(Shape{1, 9, 4, 4}, Layout::nChw8c), Layout::nChw8c);
}

TEST(Layout, TensorsWithFewerChannelsThanABlockArePlainInThatLayout) {
  const Shape image{1, 3, 6, 6};
  EXPECT_FALSE(is_blocked(image, Layout::nChw8c));
  EXPECT_EQ(layout_of(image, Layout::nChw16c), Layout::plain);
  EXPECT_EQ(stored_floats(image, Layout::nChw16c), static_cast<std::size_t>(numel(image)));
  EXPECT_TRUE(is_blocked(Shape{1, 8, 6, 6}, Layout::nChw8c));
  EXPECT_FALSE(is_blocked(Shape{1, 8, 6, 6}, Layout::nChw16c));
  EXPECT_EQ(stored_floats(Shape{1, 12, 6, 6}, Layout::nChw8c), static_cast<std::size_t>(16 * 36));
  const std::vector<float> v = random_values(static_cast<std::size_t>(numel(image)), 9);
  std::vector<float> out(v.size());
  reorder(v.data(), Layout::plain, out.data(), Layout::nChw16c, image);
  EXPECT_EQ(out, v);
}

}  // namespace
}  // namespace tc
