// Coordinate-map composition (transpose, reshape, pad, concat) against brute force.

#include "loops/coord_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <variant>

#include "loops/index_math.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc::loops {
namespace {

using testing::pick;

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

TEST(LoopsCoordMap, TransposeThenReshapeMatchesBruteForce) {
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

TEST(LoopsCoordMap, PadAndConcatChecksMarkTheHoles) {
  // Pad [2,3] by (1,0 | 0,2) then take the second of two concat pieces along axis 1.
  const Shape in{2, 3};
  const Shape padded{3, 5};
  const Shape out{3, 9};
  Domain domain(out);
  const Shape dims = domain.dims();
  const CoordMap piece = concat_input(domain.identity(), out, 1, 4, padded, dims);
  const CoordMap m = pad_input(piece, padded, {1, 0, 0, 2}, PadAttrs::Mode::constant, in, dims);
  const Access a = access_of(m, in, dims.size());
  for (std::int64_t r = 0; r < 3; ++r) {
    for (std::int64_t col = 0; col < 9; ++col) {
      const std::int64_t pr = r, pc = col - 4;
      const bool inside = pc >= 0 && pc < 5 && pr - 1 >= 0 && pr - 1 < 2 && pc < 3;
      EXPECT_EQ(read_at(a, dims, r * 9 + col), inside ? (pr - 1) * 3 + pc : -1) << r << "," << col;
    }
  }
  // Reflect padding becomes a table.
  const CoordMap reflect = pad_input(Domain(Shape{6}).identity(), {6}, {2, 1}, PadAttrs::Mode::reflect, {3}, {6});
  ASSERT_TRUE(reflect.table != nullptr);
  EXPECT_EQ(*reflect.table, (std::vector<std::int64_t>{2, 1, 0, 1, 2, 1}));
}

}  // namespace
}  // namespace tc::loops
