#include "runtime/cpu_state.hpp"

#include <gtest/gtest.h>

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

TEST(TouchShares, ReadsOnTheThreadsAskedOneRegionForEverySpan) {
  std::vector<float> big(1000, 1.0f);
  std::vector<float> small(3, 1.0f);
  const std::vector<FloatSpan> spans{{big.data(), big.size()}, {small.data(), small.size()}, {nullptr, 0}};
  const std::size_t before = parallel_runs();
  touch_shares(spans, 1);
  touch_shares(spans, 0);
  EXPECT_EQ(parallel_runs(), before);
  touch_shares(spans, 2);
  EXPECT_EQ(parallel_runs(), before + (cpu_threads_available() ? 1 : 0));
}

}  // namespace
}  // namespace tc
