#include "collage/graph/dataflow_graph.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "collage/partition/convexity.hpp"
#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;
using testing_ir::ExprGraph;

std::vector<std::size_t> v(IndexSpan s) { return s.to_vector(); }

// Builds the same shapes in either IR, so the generic behaviour is tested over both.
template <class G>
struct Shapes;

template <>
struct Shapes<AdjacencyGraph> {
  AdjacencyGraph g;
  using H = int;
  H leaf() { return g.add(); }
  H op(std::vector<H> in) { return g.add(std::move(in)); }
  void result(H h) { g.roots.push_back(h); }
};

template <>
struct Shapes<ExprGraph> {
  ExprGraph g;
  using H = const testing_ir::Expr*;
  H leaf() { return g.var("x"); }
  H op(std::vector<H> in) { return g.call("add", std::move(in)); }
  void result(H h) { g.output(h); }
};

template <class G>
class DataflowGraphTyped : public ::testing::Test {};
using IRs = ::testing::Types<AdjacencyGraph, ExprGraph>;
TYPED_TEST_SUITE(DataflowGraphTyped, IRs);

TYPED_TEST(DataflowGraphTyped, PostDfsOrderFollowsArgumentOrder) {
  Shapes<TypeParam> s;
  auto a = s.leaf();
  auto b = s.leaf();
  auto c = s.op({b, a});  // b is visited before a
  auto d = s.op({c, a});
  s.result(d);
  auto graph = DataflowGraph<TypeParam>::build(s.g);
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_EQ(graph->size(), 4u);
  EXPECT_EQ(graph->index_of(b), 0u);
  EXPECT_EQ(graph->index_of(a), 1u);
  EXPECT_EQ(graph->index_of(c), 2u);
  EXPECT_EQ(graph->index_of(d), 3u);
  EXPECT_EQ(v(graph->inputs(2)), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(v(graph->inputs(3)), (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(v(graph->outputs(1)), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(v(graph->outputs(3)), std::vector<std::size_t>{});
  EXPECT_EQ(graph->handle(2), c);
  for (std::size_t i = 0; i < graph->size(); ++i) {
    for (std::size_t j : graph->inputs(i)) EXPECT_LT(j, i);
  }
}

TYPED_TEST(DataflowGraphTyped, RepeatedInputsKeptOutputsDistinct) {
  Shapes<TypeParam> s;
  auto a = s.leaf();
  auto b = s.op({a, a});
  s.result(b);
  auto graph = DataflowGraph<TypeParam>::build(s.g);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(v(graph->inputs(1)), (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(v(graph->outputs(0)), (std::vector<std::size_t>{1}));
}

TYPED_TEST(DataflowGraphTyped, DiamondPostDominators) {
  Shapes<TypeParam> s;
  auto x = s.leaf();
  auto l = s.op({x});
  auto r = s.op({x});
  auto j = s.op({l, r});
  s.result(j);
  auto graph = DataflowGraph<TypeParam>::build(s.g);
  ASSERT_TRUE(graph.ok());
  const std::size_t ix = graph->index_of(x);
  const std::size_t il = graph->index_of(l);
  const std::size_t ir = graph->index_of(r);
  const std::size_t ij = graph->index_of(j);
  EXPECT_EQ(graph->ipdom(ij), npos);
  EXPECT_EQ(graph->ipdom(il), ij);
  EXPECT_EQ(graph->ipdom(ir), ij);
  EXPECT_EQ(graph->ipdom(ix), ij);  // both branches join at j
  EXPECT_EQ(graph->pdom_depth(ij), 1u);
  EXPECT_EQ(graph->pdom_depth(ix), 2u);
  EXPECT_TRUE(graph->post_dominates(ij, ix));
  EXPECT_FALSE(graph->post_dominates(il, ix));
  EXPECT_TRUE(graph->post_dominates(ix, ix));
  EXPECT_EQ(graph->common_post_dominator(il, ir), ij);
  EXPECT_TRUE(graph->reaches(ix, ij));
  EXPECT_FALSE(graph->reaches(il, ir));
  EXPECT_TRUE(graph->is_external(ij));
  EXPECT_FALSE(graph->is_external(il));
  EXPECT_EQ(v(graph->roots()), std::vector<std::size_t>{ij});
}

TYPED_TEST(DataflowGraphTyped, TwoResultsPostDominatedBySink) {
  Shapes<TypeParam> s;
  auto x = s.leaf();
  auto a = s.op({x});
  auto b = s.op({x});
  s.result(a);
  s.result(b);
  s.result(a);  // listed twice: one root
  auto graph = DataflowGraph<TypeParam>::build(s.g);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->ipdom(graph->index_of(x)), npos);
  EXPECT_EQ(graph->roots().size(), 2u);
  EXPECT_EQ(graph->common_post_dominator(graph->index_of(a), graph->index_of(b)), npos);
}

TYPED_TEST(DataflowGraphTyped, UnreachableNodesAreNotIndexed) {
  Shapes<TypeParam> s;
  auto x = s.leaf();
  auto dead = s.op({x});
  auto live = s.op({x});
  s.result(live);
  auto graph = DataflowGraph<TypeParam>::build(s.g);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->size(), 2u);
  EXPECT_EQ(graph->index_of(dead), npos);
}

TEST(DataflowGraph, DefaultsForBareTraits) {
  AdjacencyGraph g;
  int a = g.add();
  int b = g.add({a});
  g.roots = {b};
  auto graph = DataflowGraph<AdjacencyGraph>::build(g);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->kind(0), OpKind::opaque);
  EXPECT_TRUE(graph->needs_kernel(0));
  EXPECT_FALSE(graph->is_inlinable(0));
  EXPECT_EQ(graph->label(1), "%1");
  EXPECT_EQ(graph->op_name(1), "");
  EXPECT_EQ(graph->num_scopes(), 1u);
  EXPECT_EQ(graph->scope(1), 0u);
}

TEST(DataflowGraph, ExprTraitsAreCached) {
  ExprGraph g;
  auto x = g.var("x");
  auto w = g.constant("w");
  auto two = g.scalar("two");
  auto conv = g.call("conv2d", {x, w});
  auto m = g.call("multiply", {conv, two});
  auto t = g.tuple({conv, m});
  auto p = g.get_item(t, 1);
  g.current_scope = 7;
  auto r = g.call("relu", {p});
  g.output(r);
  auto graph = DataflowGraph<ExprGraph>::build(g);
  ASSERT_TRUE(graph.ok());
  auto at = [&](const testing_ir::Expr* e) { return graph->index_of(e); };
  EXPECT_TRUE(graph->is_constant(at(w)));
  EXPECT_TRUE(graph->is_inlinable(at(two)));
  EXPECT_TRUE(graph->is_tuple(at(t)));
  EXPECT_TRUE(graph->is_projection(at(p)));
  EXPECT_EQ(graph->projection_index(at(p)), 1u);
  EXPECT_FALSE(graph->needs_kernel(at(x)));
  EXPECT_FALSE(graph->needs_kernel(at(t)));
  EXPECT_TRUE(graph->needs_kernel(at(conv)));
  EXPECT_EQ(graph->kind(at(conv)), OpKind::anchor);
  EXPECT_EQ(graph->kind(at(m)), OpKind::broadcast);
  EXPECT_EQ(graph->kind(at(t)), OpKind::tuple);
  EXPECT_EQ(graph->op_name(at(conv)), "conv2d");
  EXPECT_EQ(graph->label(at(r)), "relu");
  EXPECT_EQ(graph->num_scopes(), 2u);
  EXPECT_EQ(graph->scope(at(conv)), 0u);
  EXPECT_EQ(graph->scope(at(r)), 1u);  // dense ids by first appearance
}

/// Nodes with an op name and a kind but no signature of their own.
struct NamedKindIr {
  struct Node {
    std::string op;
    OpKind kind;
    std::vector<int> inputs;
  };
  std::vector<Node> nodes;
  std::vector<int> roots;
};

}  // namespace
}  // namespace collage

template <>
struct collage::dataflow_traits<collage::NamedKindIr> {
  using node_handle = int;
  static const std::vector<int>& roots(const collage::NamedKindIr& g) { return g.roots; }
  static const std::vector<int>& inputs(const collage::NamedKindIr& g, int n) { return g.nodes[static_cast<std::size_t>(n)].inputs; }
  static std::string op_name(const collage::NamedKindIr& g, int n) { return g.nodes[static_cast<std::size_t>(n)].op; }
  static collage::OpKind kind(const collage::NamedKindIr& g, int n) { return g.nodes[static_cast<std::size_t>(n)].kind; }
};

namespace collage {
namespace {

// The graph asks the traits for op names and signatures once and keeps each distinct string once;
// what it returns must still be what the traits say, node by node (with and without a signature of
// the traits' own).
TEST(DataflowGraph, CachedOpNamesAndSignaturesAreTheTraits) {
  NamedKindIr named;
  const std::vector<std::pair<std::string, OpKind>> ops{{"add", OpKind::elemwise}, {"add", OpKind::broadcast},
                                                        {"relu", OpKind::elemwise}, {"dense", OpKind::anchor},
                                                        {"add", OpKind::elemwise}, {"", OpKind::opaque}};
  for (std::size_t k = 0; k < ops.size(); ++k) {
    std::vector<int> inputs;
    if (k > 0) inputs.push_back(static_cast<int>(k) - 1);
    named.nodes.push_back(NamedKindIr::Node{ops[k].first, ops[k].second, inputs});
  }
  named.roots = {static_cast<int>(ops.size()) - 1};
  auto graph = DataflowGraph<NamedKindIr>::build(named);
  ASSERT_TRUE(graph.ok());
  for (std::size_t i = 0; i < graph->size(); ++i) {
    const auto& node = named.nodes[static_cast<std::size_t>(graph->handle(i))];
    EXPECT_EQ(graph->op_name(i), node.op);
    EXPECT_EQ(graph->signature(i), node.op + "/" + std::string(to_string(node.kind))) << i;
  }

  ExprGraph expr;
  auto x = expr.var("x");
  auto two = expr.scalar("2");
  auto a = expr.call("add", {x, two});
  auto b = expr.call("add", {a, expr.scalar("3")});
  expr.output(expr.call("relu", {b}));
  auto expr_graph = DataflowGraph<ExprGraph>::build(expr);
  ASSERT_TRUE(expr_graph.ok());
  using Traits = dataflow_traits<ExprGraph>;
  for (std::size_t i = 0; i < expr_graph->size(); ++i) {
    EXPECT_EQ(expr_graph->op_name(i), Traits::op_name(expr, expr_graph->handle(i)));
    EXPECT_EQ(expr_graph->signature(i), Traits::signature(expr, expr_graph->handle(i)));
  }
}

TEST(DataflowGraph, CycleIsAnErrorNamingANode) {
  ExprGraph g;
  auto x = g.var("x");
  auto a = g.call("add", {x});
  auto b = g.call("relu", {a});
  const_cast<testing_ir::Expr*>(a)->args.push_back(b);  // close the loop a -> b -> a
  g.output(b);
  auto graph = DataflowGraph<ExprGraph>::build(g);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.error().message.find("cycle"), std::string::npos);
  // The walk meets the loop at relu (the result), which is on the cycle.
  EXPECT_NE(graph.error().message.find("'relu'"), std::string::npos) << graph.error().message;
}

TEST(DataflowGraph, CycleInAnUnlabelledIrNamesTheHandle) {
  AdjacencyGraph g;
  g.inputs = {{2}, {0}, {1}, {0}};
  g.roots = {3};
  auto graph = DataflowGraph<AdjacencyGraph>::build(g);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.error().message, "the dataflow graph has a cycle through node '0'");
}

TEST(DataflowGraph, EmptyGraph) {
  AdjacencyGraph g;
  auto graph = DataflowGraph<AdjacencyGraph>::build(g);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->size(), 0u);
  EXPECT_TRUE(collage::is_convex(*graph, graph->empty_set()));
}

TEST(OpKind, NamesRoundTrip) {
  for (int k = 0; k <= static_cast<int>(OpKind::opaque); ++k) {
    OpKind kind = static_cast<OpKind>(k);
    EXPECT_EQ(parse_op_kind(to_string(kind)), kind);
  }
  EXPECT_FALSE(parse_op_kind("fancy").has_value());
  EXPECT_LT(OpKind::elemwise, OpKind::broadcast);
  EXPECT_LT(OpKind::anchor, OpKind::opaque);
}

}  // namespace
}  // namespace collage
