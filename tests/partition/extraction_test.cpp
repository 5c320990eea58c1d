#include "collage/partition/extraction.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "collage/cost/structural_key.hpp"
#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"
#include "common/random_dag.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

static_assert(std::is_same_v<ExtractionView, ExtractedFunction>, "the former name stays usable for one release");

/// Builds an IR, indexes it, and makes sub-graphs from IR handles.
struct Fixture {
  ExprGraph ir;
  std::optional<Graph> graph;

  void build() {
    auto r = Graph::build(ir);
    ASSERT_TRUE(r.ok());
    graph.emplace(std::move(r).value());
  }
  std::size_t at(const Expr* e) const { return graph->index_of(e); }
  SubGraph sub(std::initializer_list<const Expr*> nodes) const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(at(e));
    return SubGraph(*graph, s);
  }
};

TEST(Extraction, ParamsInFirstUseOrderResultsInEvaluationOrder) {
  Fixture f;
  auto x = f.ir.var("x");
  auto y = f.ir.var("y");
  auto a = f.ir.call("add", {y, x});
  auto b = f.ir.call("multiply", {a, x});
  auto c = f.ir.call("relu", {a});
  f.ir.output(b);
  f.ir.output(c);
  f.build();
  SubGraph s = f.sub({a, b, c}).with_attrs(*f.graph, {{"Composite", "fused"}});
  ExtractedFunction fn = extract(*f.graph, s);
  EXPECT_EQ(fn.params, (std::vector<std::size_t>{f.at(y), f.at(x)}));
  EXPECT_EQ(fn.body, (std::vector<std::size_t>{f.at(a), f.at(b), f.at(c)}));
  EXPECT_EQ(fn.results, (std::vector<std::size_t>{f.at(b), f.at(c)}));
  ASSERT_EQ(fn.groups.size(), 1u);
  EXPECT_EQ(fn.groups[0].attrs, (Attrs{{"Composite", "fused"}}));
  EXPECT_EQ(fn.groups[0].body, fn.body);
  EXPECT_TRUE(fn.groups[0].groups.empty());
}

TEST(Extraction, GroupsKeepTheirNestingAtEveryDepth) {
  // primitive(composite(...)): the rewrite needs the Composite name inside the Primitive group.
  Fixture f;
  auto x = f.ir.var("x");
  auto d = f.ir.call("dense", {x, f.ir.constant("w")});
  auto b = f.ir.call("bias_add", {d, f.ir.constant("b")});
  auto r = f.ir.call("relu", {b});
  f.ir.output(r);
  f.build();
  SubGraph part(*f.graph, f.sub({d, b, r}).inside(),
                {NestedSubGraph{f.sub({d, b}), {{"Composite", "lib.dense_bias"}}}});
  SubGraph wrapped = part.with_attrs(*f.graph, {{"Primitive", "1"}});
  ExtractedFunction fn = extract(*f.graph, wrapped);
  ASSERT_EQ(fn.groups.size(), 1u);
  EXPECT_EQ(fn.groups[0].attrs.find("Primitive"), "1");
  EXPECT_EQ(fn.groups[0].body, (std::vector<std::size_t>{f.at(d), f.at(b), f.at(r)}));
  ASSERT_EQ(fn.groups[0].groups.size(), 1u);
  const ExtractedFunction::Group& composite = fn.groups[0].groups[0];
  EXPECT_EQ(composite.attrs.find("Composite"), "lib.dense_bias");
  EXPECT_EQ(composite.body, (std::vector<std::size_t>{f.at(d), f.at(b)}));
  EXPECT_TRUE(composite.groups.empty());
}

TEST(Extraction, ManyOperandsAreListedOnceInFirstUseOrder) {
  // More distinct operands than the linear scan holds, each used twice, with inlinable ones mixed in.
  Fixture f;
  std::vector<const Expr*> vars;
  for (int k = 0; k < 40; ++k) vars.push_back(f.ir.var("v" + std::to_string(k)));
  auto scalar = f.ir.scalar("two");
  std::vector<const Expr*> args;
  for (int k = 39; k >= 0; --k) args.push_back(vars[static_cast<std::size_t>(k)]);
  args.push_back(scalar);
  auto first = f.ir.call("concat", args);
  args.insert(args.begin(), first);
  auto second = f.ir.call("concat", args);
  f.ir.output(second);
  f.build();
  ExtractedFunction fn = extract(*f.graph, f.sub({first, second}));
  std::vector<std::size_t> expected;
  for (int k = 39; k >= 0; --k) expected.push_back(f.at(vars[static_cast<std::size_t>(k)]));
  EXPECT_EQ(fn.params, expected);
  EXPECT_EQ(fn.inlined, std::vector<std::size_t>{f.at(scalar)});
}

TEST(Extraction, TheStructuralKeyUsesTheSameLayout) {
  // structural_key(graph, c) lays the function out itself; it must agree with extract() on random
  // sub-graphs, including ones with more parameters than its small buffers hold.
  std::mt19937_64 rng(6);
  for (int round = 0; round < 40; ++round) {
    const auto ir = testing_ir::random_dag(rng, 60, 6, round % 2 == 0 ? 0 : 8);
    auto g = DataflowGraph<testing_ir::AdjacencyGraph>::build(ir);
    ASSERT_TRUE(g.ok());
    IndexSet inside(g->size());
    for (std::size_t i = 0; i < g->size(); ++i) {
      if (rng() % 3 == 0) inside.add(i);
    }
    if (inside.empty()) continue;
    Candidate c{SubGraph(*g, inside), "t", "r"};
    EXPECT_EQ(structural_key(*g, c), structural_key(*g, c, extract(*g, c.sub_graph))) << round;
  }
}

}  // namespace
}  // namespace collage
