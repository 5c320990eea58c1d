#include "collage/cost/mock_oracle.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

struct Fixture {
  ExprGraph ir;
  std::optional<Graph> graph;

  void build() {
    auto r = Graph::build(ir);
    ASSERT_TRUE(r.ok());
    graph.emplace(std::move(r).value());
  }
  Candidate candidate(const std::vector<const Expr*>& nodes, const std::string& target) const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(graph->index_of(e));
    return Candidate{SubGraph(*graph, s), target, "rule"};
  }
  Cost cost(MockOracle<ExprGraph>& oracle, const std::vector<const Expr*>& nodes, const std::string& target) const {
    Candidate c = candidate(nodes, target);
    Result<Cost> r = oracle.estimate(*graph, c);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Cost::unknown();
  }
};

TEST(MockOracle, SingleOpCostsTheTargetsBaseCost) {
  Fixture f;
  auto relu = f.ir.call("relu", {f.ir.var("x")});
  f.ir.output(relu);
  f.build();
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}, {"cutlass", 0.7}});
  EXPECT_EQ(f.cost(oracle, {relu}, "tvm"), Cost::value(1.0));
  EXPECT_EQ(f.cost(oracle, {relu}, "cutlass"), Cost::value(0.7));
  EXPECT_EQ(oracle.calls(), 2u);
  EXPECT_EQ(oracle.name(), "mock");
}

TEST(MockOracle, KthKernelCostsPointNineToTheK) {
  Fixture f;
  auto x = f.ir.var("x");
  auto r1 = f.ir.call("relu", {x});
  auto r2 = f.ir.call("relu", {r1});
  auto r3 = f.ir.call("relu", {r2});
  f.ir.output(r3);
  f.build();
  MockOracle<ExprGraph> oracle({{"tvm", 2.0}});
  EXPECT_DOUBLE_EQ(f.cost(oracle, {r1, r2}, "tvm").raw(), 2.0 + 2.0 * 0.9);
  EXPECT_DOUBLE_EQ(f.cost(oracle, {r1, r2, r3}, "tvm").raw(), 2.0 + 2.0 * 0.9 + 2.0 * 0.81);
  // Fusing is cheaper than the parts.
  EXPECT_LT(f.cost(oracle, {r1, r2, r3}, "tvm"),
            f.cost(oracle, {r1}, "tvm") + f.cost(oracle, {r2}, "tvm") + f.cost(oracle, {r3}, "tvm"));
  oracle.set_decay(0.5);
  EXPECT_DOUBLE_EQ(f.cost(oracle, {r1, r2, r3}, "tvm").raw(), 2.0 + 1.0 + 0.5);
}

TEST(MockOracle, OnlyKernelNodesCount) {
  Fixture f;
  auto x = f.ir.var("x");
  auto c = f.ir.constant("w");
  auto a = f.ir.call("add", {x, c});
  auto t = f.ir.tuple({a, x});
  auto g = f.ir.get_item(t, 0);
  auto r = f.ir.call("relu", {g});
  f.ir.output(r);
  f.build();
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  // The tuple and the projection need no kernel: relu is the second kernel, not the fourth.
  EXPECT_DOUBLE_EQ(f.cost(oracle, {a, t, g, r}, "tvm").raw(), 1.0 + 0.9);
  EXPECT_EQ(f.cost(oracle, {t, g}, "tvm"), Cost::zero());
  EXPECT_EQ(f.cost(oracle, {c}, "tvm"), Cost::zero());
}

TEST(MockOracle, MissingTargetIsInvalid) {
  Fixture f;
  auto x = f.ir.var("x");
  auto r = f.ir.call("relu", {x});
  auto t = f.ir.tuple({r, x});
  f.ir.output(t);
  f.build();
  MockOracle<ExprGraph> oracle({{"tvm", 1.0}});
  EXPECT_TRUE(f.cost(oracle, {r}, "tensorrt").is_invalid());
  EXPECT_TRUE(f.cost(oracle, {t}, "tensorrt").is_invalid());  // even without kernels
}

TEST(MockOracle, OpCostsOverrideTheBaseCost) {
  Fixture f;
  auto x = f.ir.var("x");
  auto d = f.ir.call("dense", {x, f.ir.constant("w")});
  auto b = f.ir.call("bias_add", {d, f.ir.constant("b")});
  auto r = f.ir.call("relu", {b});
  f.ir.output(r);
  f.build();
  MockOracle<ExprGraph> oracle;
  oracle.set_cost("cutlass", 1.0).set_op_cost("cutlass", "dense", 0.5).set_op_cost("cutlass", "relu", 3.0);
  EXPECT_DOUBLE_EQ(f.cost(oracle, {d, b, r}, "cutlass").raw(), 0.5 + 1.0 * 0.9 + 3.0 * 0.81);
  EXPECT_DOUBLE_EQ(f.cost(oracle, {b, r}, "cutlass").raw(), 1.0 + 3.0 * 0.9);
}

TEST(MockOracle, TargetWithOnlyOpCostsSupportsJustThoseOps) {
  Fixture f;
  auto x = f.ir.var("x");
  auto d = f.ir.call("dense", {x, f.ir.constant("w")});
  auto r = f.ir.call("relu", {d});
  f.ir.output(r);
  f.build();
  MockOracle<ExprGraph> oracle;
  oracle.set_op_cost("cublas", "dense", 0.4);
  EXPECT_EQ(f.cost(oracle, {d}, "cublas"), Cost::value(0.4));
  EXPECT_TRUE(f.cost(oracle, {d, r}, "cublas").is_invalid());
  EXPECT_TRUE(f.cost(oracle, {r}, "cublas").is_invalid());
  EXPECT_TRUE(f.cost(oracle, {d}, "cublas2").is_invalid());
}

TEST(MockOracle, ANegativeOrNanCostIsAnOracleError) {
  Fixture f;
  auto r = f.ir.call("relu", {f.ir.var("x")});
  auto a = f.ir.call("abs", {r});
  f.ir.output(a);
  f.build();
  MockOracle<ExprGraph> oracle({{"weird", -1.0}, {"odd", std::numeric_limits<double>::quiet_NaN()}, {"fine", 1.0}});
  oracle.set_op_cost("fine", "abs", -0.5);  // a positive total must not hide it
  using TargetAndValue = std::pair<std::string, std::string>;
  for (const auto& [target, value] : {TargetAndValue{"weird", "-1"}, {"odd", "nan"}, {"fine", "-0.5"}}) {
    Candidate c = f.candidate({r, a}, target);
    Result<Cost> cost = oracle.estimate(*f.graph, c);
    ASSERT_FALSE(cost.ok()) << target;
    EXPECT_EQ(cost.error().code, ErrorCode::oracle);
    EXPECT_NE(cost.error().message.find("a cost of " + value), std::string::npos) << cost.error().message;
  }
}

TEST(MockOracle, WorksOnTheAdjacencyIr) {
  testing_ir::AdjacencyGraph ir;
  int a = ir.add();
  int b = ir.add({a});
  int c = ir.add({b});
  ir.roots = {c};
  auto built = DataflowGraph<testing_ir::AdjacencyGraph>::build(ir);
  ASSERT_TRUE(built.ok());
  const auto& g = *built;
  IndexSet s(g.size());
  s.add(g.index_of(b));
  s.add(g.index_of(c));
  Candidate cand{SubGraph(g, s), "t", "r"};
  MockOracle<testing_ir::AdjacencyGraph> oracle({{"t", 1.0}});
  Result<Cost> cost = oracle.estimate(g, cand);
  ASSERT_TRUE(cost.ok());
  EXPECT_DOUBLE_EQ(cost->raw(), 1.9);  // every adjacency node needs a kernel
}

}  // namespace
}  // namespace collage
