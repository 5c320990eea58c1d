#pragma once

// random_expr_graph(): random expression graphs for the searchers' tests.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "common/expr_ir.hpp"

namespace testing_ir {

/// A random expression graph: operators over earlier values, tensor constants and scalars (some
/// shared by several consumers), and tuples with projections, so candidates can hold nodes that
/// need no kernel.
inline ExprGraph random_expr_graph(std::mt19937_64& rng, std::size_t ops) {
  ExprGraph ir;
  std::vector<const Expr*> values = {ir.var("x")};
  std::vector<const Expr*> unused;
  const Expr* shared = ir.constant("shared");
  const Expr* shared_scalar = ir.scalar();
  auto pick = [&] { return values[values.size() - 1 - rng() % std::min<std::size_t>(values.size(), 4)]; };
  static const char* const kOps[] = {"relu", "add", "conv2d", "multiply"};
  for (std::size_t k = 0; k < ops; ++k) {
    const char* op = kOps[rng() % 4];
    std::vector<const Expr*> args = {pick()};
    switch (rng() % 5) {
      case 0: args.push_back(ir.constant("w" + std::to_string(k))); break;
      case 1: args.push_back(shared); break;
      case 2: args.push_back(rng() % 2 == 0 ? shared_scalar : ir.scalar()); break;
      case 3: args.push_back(pick()); break;
      default: break;
    }
    const Expr* v = ir.call(op, args);
    if (rng() % 6 == 0) {  // a tuple of two values and a projection of it
      const Expr* t = ir.tuple({v, pick()});
      v = ir.get_item(t, rng() % 2);
    }
    values.push_back(v);
  }
  ir.output(values.back());
  for (std::size_t k = 1; k + 1 < values.size(); ++k) {
    if (rng() % 4 == 0) ir.output(values[k]);
  }
  return ir;
}

}  // namespace testing_ir
