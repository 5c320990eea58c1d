// The native backend's shared pieces on their own: index arithmetic, coordinate-map composition
// (which a CUDA backend reuses), the vectorisable math, and the GEMM's blocking and callbacks.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <variant>

#include "loops/coord_map.hpp"
#include "backends/native/fast_math.hpp"
#include "backends/native/gemm.hpp"
#include "loops/index_math.hpp"
#include "native_testing.hpp"

namespace tc::native {
namespace {

using native_testing::pick;

TEST(NativeIndexMath, ClipToCheckMatchesBruteForce) {
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

TEST(NativeIndexMath, RowCarryWalksEveryRow) {
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

/// The element each domain point reads through `access`, or -1.
std::int64_t read_at(const Access& access, const Shape& domain, std::int64_t point) {
  if (access.table) return (*access.table)[static_cast<std::size_t>(point)];
  Ints c(domain.size());
  unravel(point, domain.data(), static_cast<int>(domain.size()), c.data());
  for (const Check& check : access.checks) {
    const std::int64_t v = check.expr.at(c);
    if (v < check.lo || v >= check.hi) return -1;
  }
  return access.linear.at(c);
}

/// An access and the (split) domain it is over.
struct Composed {
  Access access;
  Shape dims;
};

/// Transpose by `perm` then reshape to `out`, composed over the output's domain with the splits
/// the reshape asks for: the access of the transpose's input.
Composed transpose_then_reshape(const Shape& in, const Ints& perm, const Shape& out) {
  Shape mid;
  for (std::int64_t p : perm) mid.push_back(in[static_cast<std::size_t>(p)]);
  Domain domain(out);
  for (int splits = 0; splits < 64; ++splits) {
    const Shape dims = domain.dims();
    auto m = reshape_input(domain.identity(), out, mid, dims);
    if (const Split* s = std::get_if<Split>(&m)) {
      EXPECT_TRUE(domain.split(*s));
      continue;
    }
    const CoordMap t = transpose_input(std::get<CoordMap>(m), mid, perm, in, dims);
    return Composed{access_of(t, in, dims.size()), dims};
  }
  ADD_FAILURE() << "splits do not converge";
  return {};
}

TEST(NativeCoordMap, TransposeThenReshapeMatchesBruteForce) {
  std::mt19937_64 rng(2);
  int tables = 0;
  const int trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    const auto rank = static_cast<std::size_t>(pick(rng, 1, 4));
    Shape in;
    for (std::size_t d = 0; d < rank; ++d) in.push_back(pick(rng, 1, 6));
    Ints perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    // A random factorisation of the element count as the output shape.
    std::int64_t left = numel(in);
    Shape out;
    while (left > 1 && out.size() < 3) {
      std::vector<std::int64_t> divisors;
      for (std::int64_t f = 2; f <= left; ++f) {
        if (left % f == 0) divisors.push_back(f);
      }
      const std::int64_t f = divisors[static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(divisors.size()) - 1))];
      out.push_back(f);
      left /= f;
    }
    if (left > 1 || out.empty()) out.push_back(left);
    Composed c = transpose_then_reshape(in, perm, out);
    tables += c.access.table ? 1 : 0;
    Shape mid;
    for (std::int64_t p : perm) mid.push_back(in[static_cast<std::size_t>(p)]);
    auto expected = [&](std::int64_t i) {
      // Output point i is element i of the transposed tensor.
      Ints mc(mid.size()), ic(in.size());
      unravel(i, mid.data(), static_cast<int>(mid.size()), mc.data());
      for (std::size_t k = 0; k < perm.size(); ++k) ic[static_cast<std::size_t>(perm[k])] = mc[k];
      return ravel(ic.data(), in.data(), static_cast<int>(in.size()));
    };
    for (std::int64_t i = 0; i < numel(in); ++i) {
      ASSERT_EQ(read_at(c.access, c.dims, i), expected(i)) << tc::to_string(in) << " trial " << trial << " -> " << tc::to_string(out);
    }
    // Coalescing keeps what every point reads.
    if (!c.access.table) {
      Access merged = c.access;
      const Shape dims = coalesce(c.dims, {&merged.linear});
      for (std::int64_t i = 0; i < numel(in); ++i) ASSERT_EQ(read_at(merged, dims, i), expected(i));
    }
  }
  EXPECT_GT(tables, 0);       // some reshapes are no view of the transposed data
  EXPECT_LT(tables, trials / 2);  // most are
}

TEST(NativeCoordMap, PadAndConcatChecksMarkTheHoles) {
  // Pad [2,3] by (1,0 | 0,2) then take the second of two concat pieces along axis 1.
  const Shape in{2, 3};
  const Shape padded{3, 5};
  const Shape out{3, 9};
  Domain domain(out);
  const Shape dims = domain.dims();
  const CoordMap piece = concat_input(domain.identity(), out, 1, 4, padded, dims);
  const CoordMap m = pad_input(piece, padded, {1, 0, 0, 2}, kPadConstant, in, dims);
  const Access a = access_of(m, in, dims.size());
  for (std::int64_t r = 0; r < 3; ++r) {
    for (std::int64_t col = 0; col < 9; ++col) {
      const std::int64_t pr = r, pc = col - 4;
      const bool inside = pc >= 0 && pc < 5 && pr - 1 >= 0 && pr - 1 < 2 && pc < 3;
      EXPECT_EQ(read_at(a, dims, r * 9 + col), inside ? (pr - 1) * 3 + pc : -1) << r << "," << col;
    }
  }
  // Reflect padding becomes a table.
  const CoordMap reflect = pad_input(Domain(Shape{6}).identity(), {6}, {2, 1}, kPadReflect, {3}, {6});
  ASSERT_TRUE(reflect.table != nullptr);
  EXPECT_EQ(*reflect.table, (std::vector<std::int64_t>{2, 1, 0, 1, 2, 1}));
}

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
