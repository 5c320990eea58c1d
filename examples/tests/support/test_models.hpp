#pragma once

/// \file
/// Small tensor graphs with seeded random weights for the run/ tests.

#include <cstdint>
#include <random>
#include <vector>

#include "tensor/graph.hpp"
#include "tensor/shape_inference.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc::testing {

/// A residual CNN block with a classifier: conv -> relu -> conv -> add(residual) -> relu ->
/// global average pool -> flatten -> gemm, and a second output after the first relu; `c` channels.
inline Graph residual_block(std::uint64_t seed = 3, std::int64_t c = 4) {
  std::mt19937_64 rng(seed);
  Graph g;
  const int x = g.add_input("x", {1, c, 6, 6});
  Attributes same;
  same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  const int w1 = g.add_constant("w1", random_tensor({c, c, 3, 3}, rng));
  const int b1 = g.add_constant("b1", random_tensor({c}, rng));
  const int c1 = *g.add_op(Op::conv, {x, w1, b1}, same, "conv1");
  const int r1 = *g.add_op(Op::relu, {c1}, {}, "relu1");
  const int w2 = g.add_constant("w2", random_tensor({c, c, 3, 3}, rng));
  const int c2 = *g.add_op(Op::conv, {r1, w2}, same, "conv2");
  const int sum = *g.add_op(Op::add, {c2, x}, {}, "residual");
  const int r2 = *g.add_op(Op::relu, {sum}, {}, "relu2");
  const int pool = *g.add_op(Op::global_average_pool, {r2}, {}, "pool");
  const int flat = *g.add_op(Op::flatten, {pool}, {}, "flatten");
  const int wf = g.add_constant("wf", random_tensor({3, c}, rng));
  const int bf = g.add_constant("bf", random_tensor({3}, rng));
  Attributes tb;
  tb.set("trans_b", 1);
  const int fc = *g.add_op(Op::gemm, {flat, wf, bf}, tb, "fc");
  g.add_output(fc);
  g.add_output(r1);
  (void)infer_shapes(g);
  return g;
}

}  // namespace tc::testing
