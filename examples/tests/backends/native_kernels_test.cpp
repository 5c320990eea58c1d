// The native backend's kernels on their own: the vectorisable math, and the GEMM's blocking and
// callbacks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backends/kit/fast_math.hpp"
#include "backends/native/gemm.hpp"
#include "native_testing.hpp"

namespace tc::native {
namespace {

using testing::pick;

TEST(NativeFastMath, CloseToTheStandardLibrary) {
  double exp_err = 0, tanh_err = 0, erf_err = 0, sig_err = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = static_cast<float>(i) * 0.00045f;  // [-90, 90]
    const double e = std::exp(static_cast<double>(x));
    if (e < 1e37 && e > 1e-37) exp_err = std::max(exp_err, std::abs(fast_exp(x) - e) / e);
    const float small = x / 10.0f;
    tanh_err = std::max(tanh_err, std::abs(fast_tanh(small) - std::tanh(static_cast<double>(small))));
    erf_err = std::max(erf_err, std::abs(fast_erf(small) - std::erf(static_cast<double>(small))));
    sig_err = std::max(sig_err, std::abs(fast_sigmoid(small) - 1.0 / (1.0 + std::exp(-static_cast<double>(small)))));
  }
  EXPECT_LT(exp_err, 3e-7);  // ~2.5 ulp
  EXPECT_LT(tanh_err, 5e-7);  // ~4 ulp near 1
  EXPECT_LT(erf_err, 5e-7);
  EXPECT_LT(sig_err, 3e-7);
  EXPECT_EQ(fast_exp(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fast_exp(-200.0f), 0.0f);
  EXPECT_EQ(fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(fast_exp(-100.0f), 0.0f);  // subnormal, not flushed
  EXPECT_EQ(fast_tanh(50.0f), 1.0f);
  EXPECT_EQ(fast_tanh(-8.0f), -1.0f);
  EXPECT_EQ(fast_erf(-9.0f), -1.0f);
}

// swish_of against x / (1 + e^-x) in double: chunks all above the rational function's floor, chunks
// with some value below it (relative accuracy there too), a short last chunk, in place, NaN.
TEST(NativeFastMath, SwishCloseToTheStandardLibrary) {
  std::vector<float> x;
  for (int i = -100000; i <= 100000; ++i) x.push_back(static_cast<float>(i) * 0.00016f);  // [-16, 16]
  for (int i = 0; i < 1000; ++i) x.push_back(-9.0f - static_cast<float>(i) * 0.07f);     // [-79, -9]
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  swish_of(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  double abs_err = 0, low_rel_err = 0;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) {
    const double v = x[i];
    const double want = v / (1.0 + std::exp(-v));
    abs_err = std::max(abs_err, std::abs(y[i] - want));
    if (v < kLogisticRationalFloor) low_rel_err = std::max(low_rel_err, std::abs(y[i] - want) / std::abs(want));
  }
  EXPECT_LT(abs_err, 3e-6);      // ~2 ulp of the largest results (16)
  EXPECT_LT(low_rel_err, 1e-6);  // the chunks below the floor take the exponential
  EXPECT_TRUE(std::isnan(y.back()));
  EXPECT_EQ(logistic_rational(20.0f), 1.0f);
  std::vector<float> in_place = x;
  swish_of(in_place.data(), in_place.data(), static_cast<std::int64_t>(in_place.size()));
  for (std::size_t i = 0; i + 1 < x.size(); ++i) ASSERT_EQ(in_place[i], y[i]) << i;
}

TEST(NativeGemm, OddShapesStridesAndBlockCallbacks) {
  std::mt19937_64 rng(3);
  GemmWorkspace ws;
  for (int trial = 0; trial < 40; ++trial) {
    const std::int64_t m = pick(rng, 1, 130), n = pick(rng, 1, 600), k = pick(rng, 0, 300);
    const bool ta = pick(rng, 0, 1) != 0, tb = pick(rng, 0, 1) != 0;
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const MatrixRef am{a.data(), ta ? 1 : k, ta ? m : 1};
    const MatrixRef bm{b.data(), tb ? 1 : n, tb ? k : 1};
    const std::int64_t ldc = n + 3;
    std::vector<float> c(static_cast<std::size_t>(m * ldc), 9.0f);
    std::vector<int> done(static_cast<std::size_t>(m * n), 0);
    auto pack = [&](std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst) {
      pack_b_matrix(bm, k0, kc, j0, nc, dst);
    };
    std::int64_t wrong = 0;
    auto finished = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
      for (std::int64_t i = i0; i < i1; ++i) {
        for (std::int64_t j = j0; j < j1; ++j) {
          ++done[static_cast<std::size_t>(i * n + j)];
          double want = 0;
          for (std::int64_t p = 0; p < k; ++p) {
            want += static_cast<double>(am.data[i * am.rs + p * am.cs]) * bm.data[p * bm.rs + j * bm.cs];
          }
          if (std::abs(c[static_cast<std::size_t>(i * ldc + j)] - want) > 1e-4 * (1 + std::sqrt(static_cast<double>(k)))) ++wrong;
        }
      }
    };
    gemm(m, n, k, am, pack, c.data(), ldc, ws, finished);
    EXPECT_EQ(wrong, 0) << m << "x" << n << "x" << k;
    for (int d : done) ASSERT_EQ(d, 1) << "every element is reported final exactly once";
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[static_cast<std::size_t>(i * ldc + j)], 9.0f) << "past n untouched";
    }
  }
}

}  // namespace
}  // namespace tc::native
