#include "runtime/cpu_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <limits>
#include <vector>

#include "runtime/cpu_threads.hpp"

namespace tc {
namespace {

/// `x` * `y` computed at run time (not folded by the compiler).
float multiply(float x, float y) {
  volatile float a = x;
  volatile float b = y;
  return a * b;
}

TEST(DenormalsFlushed, FlushesWhileAliveAndRestoresTheModeAfter) {
#if defined(__x86_64__) || defined(__i386__)
  const float tiny = FLT_MIN / 4;  // a denormal
  ASSERT_FALSE(denormals_flushed());
  EXPECT_GT(multiply(tiny, 1.0f), 0.0f);
  {
    const DenormalsFlushed flushed;
    EXPECT_TRUE(denormals_flushed());
    EXPECT_EQ(multiply(tiny, 1.0f), 0.0f);           // read as zero
    EXPECT_EQ(multiply(FLT_MIN, 0.25f), 0.0f);       // a denormal result flushed
    EXPECT_EQ(multiply(FLT_MIN, 2.0f), 2 * FLT_MIN);  // normal values untouched
    {
      const DenormalsFlushed nested;
      EXPECT_TRUE(denormals_flushed());
    }
    EXPECT_TRUE(denormals_flushed());
  }
  EXPECT_FALSE(denormals_flushed());
  EXPECT_GT(multiply(tiny, 1.0f), 0.0f);
#else
  GTEST_SKIP() << "denormal flushing is x86 only";
#endif
}

TEST(DenormalsFlushed, KeepingIeeeDenormalsChangesNothing) {
  const DenormalsFlushed ieee(false);
  EXPECT_FALSE(denormals_flushed());
  EXPECT_GT(multiply(FLT_MIN / 4, 1.0f), 0.0f);
}

TEST(TouchInterleaved, ReadsOnTheThreadsAskedOneRegionForEverySpan) {
  std::vector<float> big(1000, 1.0f);
  std::vector<float> small(3, 1.0f);
  const std::vector<FloatSpan> spans{{big.data(), big.size()}, {small.data(), small.size()}, {nullptr, 0}};
  const std::size_t before = parallel_runs();
  touch_interleaved(spans, 1);
  touch_interleaved(spans, 0);
  EXPECT_EQ(parallel_runs(), before);
  touch_interleaved(spans, 2);
  EXPECT_EQ(parallel_runs(), before + (cpu_threads_available() ? 1 : 0));
}

TEST(TouchInterleaved, ThePartsReadEveryFloatOnceAndEachHoldsSomeOfEveryLongStretch) {
  for (int parts : {1, 2, 3, 4}) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, kInterleaveChunkFloats - 1, kInterleaveChunkFloats,
                              kInterleaveChunkFloats * 5 + 7, kInterleaveChunkFloats * 16}) {
      std::vector<int> reads(count, 0);
      std::vector<std::vector<int>> readers_of_half(2);
      for (int part = 0; part < parts; ++part) {
        for_each_interleaved_chunk(count, part, parts, [&](std::size_t begin, std::size_t end) {
          ASSERT_LT(begin, end);
          ASSERT_LE(end, count);
          ASSERT_LE(end - begin, kInterleaveChunkFloats);
          for (std::size_t i = begin; i < end; ++i) ++reads[i];
          readers_of_half[begin < count / 2 ? 0 : 1].push_back(part);
        });
      }
      EXPECT_EQ(std::count(reads.begin(), reads.end(), 1), static_cast<std::ptrdiff_t>(count))
          << parts << " parts, " << count << " floats";
      if (count >= kInterleaveChunkFloats * 4 * static_cast<std::size_t>(parts)) {
        // Not contiguous shares: every part reads in both halves of the span.
        for (int part = 0; part < parts; ++part) {
          for (const std::vector<int>& half : readers_of_half) {
            EXPECT_NE(std::find(half.begin(), half.end(), part), half.end()) << parts << " parts, part " << part;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tc
