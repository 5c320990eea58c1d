// The loop IR's index arithmetic (shared by the native loops and the generated CUDA kernels)
// against brute force.

#include "loops/index_math.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "tests/support/graph_builder.hpp"

namespace tc::loops {
namespace {

using testing::pick;

TEST(LoopsIndexMath, ClipToCheckMatchesBruteForce) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::int64_t e0 = pick(rng, -20, 20), step = pick(rng, -4, 4), lo = pick(rng, -10, 5);
    const std::int64_t hi = lo + pick(rng, 0, 12);
    const std::int64_t len = pick(rng, 0, 15);
    std::int64_t j0 = pick(rng, 0, len);
    std::int64_t j1 = pick(rng, j0, len);
    const std::int64_t begin = j0, end = j1;
    clip_to_check(e0, step, lo, hi, &j0, &j1);
    ASSERT_LE(begin, j0);
    ASSERT_LE(j0, j1);
    ASSERT_LE(j1, end);
    for (std::int64_t j = begin; j < end; ++j) {
      const std::int64_t e = e0 + step * j;
      const bool valid = e >= lo && e < hi;
      ASSERT_EQ(valid, j >= j0 && j < j1) << e0 << " " << step << " [" << lo << "," << hi << ") j " << j;
    }
  }
}

TEST(LoopsIndexMath, RowCarryWalksEveryRow) {
  const std::int64_t dims[3] = {3, 4, 5};
  const std::int64_t coef[3] = {7, -2, 11};
  std::int64_t c[3] = {0, 0, 0};
  std::int64_t base = 0;
  for (int row = 1; row < 12; ++row) {
    int d = 1;
    while (d >= 0 && ++c[d] == dims[d]) c[d--] = 0;
    base += row_carry(coef, dims, 3, d);
    EXPECT_EQ(base, coef[0] * c[0] + coef[1] * c[1]) << row;
  }
}

}  // namespace
}  // namespace tc::loops
