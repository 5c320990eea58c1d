#include "collage/support/epoch_marks.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace collage {
namespace {

TEST(EpochMarks, MarksOnceUntilCleared) {
  detail::EpochMarks marks;
  marks.clear(4);
  EXPECT_FALSE(marks.marked(2));
  EXPECT_TRUE(marks.mark(2));
  EXPECT_FALSE(marks.mark(2));  // already marked
  EXPECT_TRUE(marks.marked(2));
  EXPECT_FALSE(marks.marked(3));
  marks.clear(8);  // and grows
  EXPECT_FALSE(marks.marked(2));
  EXPECT_TRUE(marks.mark(7));
  EXPECT_TRUE(marks.mark(2));
}

TEST(EpochMarks, ClearingStaysCorrectWhenTheEpochWraps) {
  // 8-bit stamps wrap after 255 clears: a mark from 256 clears ago must not reappear.
  detail::BasicEpochMarks<std::uint8_t> marks;
  marks.clear(3);
  EXPECT_TRUE(marks.mark(0));
  for (int k = 0; k < 1000; ++k) {
    marks.clear(3);
    EXPECT_FALSE(marks.marked(0)) << "after " << k + 1 << " clears";
    EXPECT_FALSE(marks.marked(1)) << "after " << k + 1 << " clears";
    if (k % 255 == 254) {
      EXPECT_TRUE(marks.mark(0));  // stamps left behind as the counter wraps
    }
    EXPECT_TRUE(marks.mark(1));
  }
}

}  // namespace
}  // namespace collage
