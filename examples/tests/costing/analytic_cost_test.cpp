// The analytic cost model's measures of a partition: its anchors' arithmetic and the bytes it moves.

#include "costing/analytic_cost.hpp"

#include <gtest/gtest.h>

#include "tensor/function.hpp"
#include "tensor/shape_inference.hpp"

namespace tc {
namespace {

Function function_of(Graph g) {
  EXPECT_TRUE(infer_shapes(g).ok());
  return whole_model_function(g);
}

TEST(AnalyticCost, AMatMulCountsItsMultiplyAddsAndEveryOperand) {
  Graph g;
  const int a = g.add_input("a", {3, 5});
  const int b = g.add_constant("b", Tensor({5, 7}));
  g.add_output(*g.add_op(Op::matmul, {a, b}));
  const Function f = function_of(g);
  EXPECT_EQ(anchor_flops(f), 2.0 * 3 * 7 * 5);
  EXPECT_EQ(boundary_bytes(f), (3 * 5 + 5 * 7 + 3 * 7) * 4.0);
}

TEST(AnalyticCost, ATableOnlyGathersReadCountsTheRowsTheyPick) {
  Graph g;
  const int table = g.add_constant("table", Tensor({1000, 8}));
  const int ids = g.add_input("ids", {4});
  Attributes axis;
  axis.set("axis", std::int64_t{0});
  const int rows = *g.add_op(Op::gather, {table, ids}, axis);
  g.add_output(rows);
  EXPECT_EQ(boundary_bytes(function_of(g)), (4 * 8 + 4 + 4 * 8) * 4.0);
  // Read by something else too, the table is read whole.
  Graph both = g;
  both.add_output(*both.add_op(Op::relu, {table}));
  EXPECT_EQ(boundary_bytes(function_of(both)), (1000 * 8 + 4 + 4 * 8 + 1000 * 8) * 4.0);
}

}  // namespace
}  // namespace tc
