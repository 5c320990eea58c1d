#pragma once

// Random model-like graphs over the expression IR, for property tests of rules and specs.

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "common/expr_ir.hpp"

namespace testing_ir {

/// A random expression graph of `ops` steps: operators of every kind over earlier values, tensor
/// constants and scalars, splits read through some of their projections, and tuples concatenated.
/// Two inputs; the last value and about a fifth of the others are results. Operands are drawn
/// from the `window` latest values (0: from any earlier value).
inline ExprGraph random_ops_graph(std::mt19937_64& rng, std::size_t ops, std::size_t window = 5) {
  ExprGraph ir;
  std::vector<const Expr*> values = {ir.var("x"), ir.var("y")};
  auto pick = [&] {
    const std::size_t span = window == 0 ? values.size() : std::min<std::size_t>(values.size(), window);
    return values[values.size() - 1 - rng() % span];
  };
  static const char* const kUnary[] = {"relu", "tanh", "reshape", "transpose", "sum", "softmax"};
  static const char* const kBinary[] = {"add", "multiply", "dense", "conv2d"};
  for (std::size_t k = 0; k < ops; ++k) {
    const std::size_t shape = rng() % 10;
    if (shape < 4) {
      values.push_back(ir.call(kUnary[rng() % 6], {pick()}));
    } else if (shape < 7) {
      const Expr* second = rng() % 3 == 0 ? ir.constant() : rng() % 3 == 0 ? ir.scalar() : pick();
      values.push_back(ir.call(kBinary[rng() % 4], {pick(), second}));
    } else if (shape < 9) {  // a split, read through some of its projections
      const Expr* split = ir.call("split", {pick()});
      const std::size_t fields = 2 + rng() % 2;
      for (std::size_t field = 0; field < fields; ++field) {
        if (rng() % 4 != 0) values.push_back(ir.get_item(split, field));
      }
      if (values.back()->type != ExprType::get_item) values.push_back(ir.get_item(split, 0));
    } else {  // a concat over a tuple of two or three values
      std::vector<const Expr*> fields;
      for (std::size_t field = 0; field < 2 + rng() % 2; ++field) fields.push_back(pick());
      values.push_back(ir.call("concat", {ir.tuple(fields)}));
    }
  }
  ir.output(values.back());
  for (std::size_t k = 2; k + 1 < values.size(); ++k) {
    if (rng() % 5 == 0) ir.output(values[k]);
  }
  return ir;
}

}  // namespace testing_ir
