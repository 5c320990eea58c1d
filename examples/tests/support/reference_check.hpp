#pragma once

/// \file
/// expect_run_matches_reference(): an executable against the reference interpreter, for tests.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "executor/executable.hpp"
#include "tests/support/test_models.hpp"
#include "tensor/compare.hpp"
#include "tensor/reference.hpp"

namespace tc::testing {

/// Runs `exe`, compiled from `model`, on the random inputs of `seed` and expects the reference
/// interpreter's outputs within `rtol` and `atol`.
inline void expect_run_matches_reference(Executable& exe, const Graph& model, std::uint64_t seed, double rtol,
                                         double atol) {
  const std::vector<Tensor> inputs = random_inputs(model, seed);
  auto expected = evaluate(model, inputs);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto got = exe.run(inputs);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), expected->size());
  for (std::size_t k = 0; k < got->size(); ++k) {
    std::string worst;
    EXPECT_TRUE(all_close((*got)[k], (*expected)[k], rtol, atol, &worst)) << "output " << k << ": " << worst;
  }
}

}  // namespace tc::testing
