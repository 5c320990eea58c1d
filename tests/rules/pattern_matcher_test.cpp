#include "collage/rules/pattern_matcher.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"
#include "common/pattern_helpers.hpp"

namespace collage {
namespace {

using testing_ir::build;
using testing_ir::Expr;
using testing_ir::ExprGraph;
using testing_ir::Matches;
using testing_ir::matches_of;
using testing_ir::parse;
using testing_ir::summarize;
using P = Pattern<ExprGraph>;
using Graph = DataflowGraph<ExprGraph>;

// x(0) w(1) conv2d(2) b(3) add(4) relu(5)
struct ConvChain {
  ExprGraph ir;
  const Expr* x = ir.var("x");
  const Expr* w = ir.constant("w");
  const Expr* conv = ir.call("conv2d", {x, w});
  const Expr* b = ir.var("b");
  const Expr* add = ir.call("add", {conv, b});
  const Expr* relu = ir.call("relu", {add});
  ConvChain() { ir.output(relu); }
};

TEST(PatternMatcher, ConvAddReluChain) {
  ConvChain c;
  Graph graph = build(c.ir);
  ASSERT_EQ(graph.size(), 6u);
  ASSERT_EQ(graph.index_of(c.conv), 2u);
  ASSERT_EQ(graph.index_of(c.add), 4u);
  ASSERT_EQ(graph.index_of(c.relu), 5u);

  const Matches expected = {{5, {2, 4, 5}}};
  EXPECT_EQ(matches_of(graph, "relu(add(conv2d(*, const), *))"), expected);
  P built = P::op("relu", {P::op("add", {P::op("conv2d", {P::wildcard(), P::constant()}), P::wildcard()})});
  EXPECT_EQ(summarize(match_all(graph, built)), expected);
  EXPECT_EQ(built.to_string(), "relu(add(conv2d(*, const), *))");

  // The weight must be a constant, the input need not be.
  EXPECT_EQ(matches_of(graph, "relu(add(conv2d(const, *), *))"), Matches{});
  EXPECT_EQ(matches_of(graph, "relu(add(conv2d(*, *), const))"), Matches{});
  EXPECT_EQ(matches_of(graph, "add(conv2d(*, const), *)"), (Matches{{4, {2, 4}}}));
  EXPECT_EQ(matches_of(graph, "add(*, conv2d(*, const))"), Matches{});  // argument order matters
}

TEST(PatternMatcher, WildcardAndConstantAloneMatchNothingInside) {
  ConvChain c;
  Graph graph = build(c.ir);
  EXPECT_EQ(summarize(match_all(graph, P::wildcard())), Matches{});
  EXPECT_EQ(summarize(match_all(graph, P::constant())), Matches{});
  EXPECT_EQ(summarize(match_all(graph, P())), Matches{});
  EXPECT_EQ(P().to_string(), "*");
}

// x(0) relu(1) relu(2) relu(3)
struct ReluChain {
  ExprGraph ir;
  const Expr* x = ir.var("x");
  const Expr* r1 = ir.call("relu", {x});
  const Expr* r2 = ir.call("relu", {r1});
  const Expr* r3 = ir.call("relu", {r2});
  ReluChain() { ir.output(r3); }
};

TEST(PatternMatcher, OpByNameAndOverlappingMatches) {
  ReluChain c;
  Graph graph = build(c.ir);
  EXPECT_EQ(matches_of(graph, "relu"), (Matches{{1, {1}}, {2, {2}}, {3, {3}}}));
  EXPECT_EQ(matches_of(graph, "relu(*)"), (Matches{{1, {1}}, {2, {2}}, {3, {3}}}));
  EXPECT_EQ(matches_of(graph, "relu(relu(*))"), (Matches{{2, {1, 2}}, {3, {2, 3}}}));
  EXPECT_EQ(matches_of(graph, "relu(relu(relu(*)))"), (Matches{{3, {1, 2, 3}}}));
  EXPECT_EQ(matches_of(graph, "relu(relu(relu(relu(*))))"), Matches{});
  EXPECT_EQ(matches_of(graph, "abs"), Matches{});
  EXPECT_EQ(matches_of(graph, "relu(*, *)"), Matches{});
  EXPECT_EQ(matches_of(graph, "relu()"), Matches{});
  EXPECT_EQ(summarize(match_at(graph, parse("relu(relu(*))"), 2)), (Matches{{2, {1, 2}}}));
  EXPECT_EQ(summarize(match_at(graph, parse("relu(relu(*))"), 1)), Matches{});
}

// x(0) y(1) concat(x, y)(2) concat(c2, x, y)(3) concat()(4)
struct Concats {
  ExprGraph ir;
  const Expr* x = ir.var("x");
  const Expr* y = ir.var("y");
  const Expr* c2 = ir.call("concat", {x, y});
  const Expr* c3 = ir.call("concat", {c2, x, y});
  const Expr* c0 = ir.call("concat", {});
  Concats() {
    ir.output(c3);
    ir.output(c0);
  }
};

TEST(PatternMatcher, ArityAndMoreArgs) {
  Concats c;
  Graph graph = build(c.ir);
  ASSERT_EQ(graph.index_of(c.c2), 2u);
  ASSERT_EQ(graph.index_of(c.c3), 3u);
  ASSERT_EQ(graph.index_of(c.c0), 4u);
  EXPECT_EQ(matches_of(graph, "concat"), (Matches{{2, {2}}, {3, {3}}, {4, {4}}}));
  EXPECT_EQ(matches_of(graph, "concat(...)"), (Matches{{2, {2}}, {3, {3}}, {4, {4}}}));
  EXPECT_EQ(matches_of(graph, "concat()"), (Matches{{4, {4}}}));
  EXPECT_EQ(matches_of(graph, "concat(*, *)"), (Matches{{2, {2}}}));
  EXPECT_EQ(matches_of(graph, "concat(*, *, *)"), (Matches{{3, {3}}}));
  EXPECT_EQ(matches_of(graph, "concat(*, ...)"), (Matches{{2, {2}}, {3, {3}}}));
  EXPECT_EQ(matches_of(graph, "concat(*, *, ...)"), (Matches{{2, {2}}, {3, {3}}}));
  EXPECT_EQ(matches_of(graph, "concat(*, *, *, ...)"), (Matches{{3, {3}}}));
  EXPECT_EQ(matches_of(graph, "concat(concat(*, *), ...)"), (Matches{{3, {2, 3}}}));
  EXPECT_EQ(matches_of(graph, "concat(concat, *, *)"), (Matches{{3, {2, 3}}}));

  P more = P::op("concat", {P::wildcard()}, true);
  EXPECT_EQ(more.to_string(), "concat(*, ...)");
  EXPECT_EQ(summarize(match_all(graph, more)), (Matches{{2, {2}}, {3, {3}}}));
  P exact = P::op("concat", {P::wildcard()});
  EXPECT_EQ(exact.to_string(), "concat(*)");
  EXPECT_EQ(summarize(match_all(graph, exact)), Matches{});
  EXPECT_EQ(P::op("concat", {}).to_string(), "concat()");
  EXPECT_EQ(summarize(match_all(graph, P::op("concat", {}))), (Matches{{4, {4}}}));
  EXPECT_EQ(P::op("concat", {}, true).to_string(), "concat");
}

// x(0) relu(1) relu(2) | abs(3) relu(4)
struct ReluAbs {
  ExprGraph ir;
  const Expr* x = ir.var("x");
  const Expr* r1 = ir.call("relu", {x});
  const Expr* r2 = ir.call("relu", {r1});
  const Expr* a = ir.call("abs", {x});
  const Expr* r3 = ir.call("relu", {a});
  ReluAbs() {
    ir.output(r2);
    ir.output(r3);
  }
};

TEST(PatternMatcher, Alternatives) {
  ReluAbs c;
  Graph graph = build(c.ir);
  ASSERT_EQ(graph.index_of(c.r2), 2u);
  ASSERT_EQ(graph.index_of(c.a), 3u);
  ASSERT_EQ(graph.index_of(c.r3), 4u);

  const Matches expected = {{2, {1, 2}}, {4, {3, 4}}};
  EXPECT_EQ(matches_of(graph, "relu(relu(*) | abs(*))"), expected);
  P built = P::op("relu", {P::alt({P::op("relu", {P::wildcard()}), P::op("abs", {P::wildcard()})})});
  EXPECT_EQ(summarize(match_all(graph, built)), expected);
  EXPECT_EQ(built.to_string(), "relu(relu(*) | abs(*))");

  // `|` binds loosest: this is (relu(relu(*))) or (abs(*)).
  EXPECT_EQ(matches_of(graph, "relu(relu(*)) | abs(*)"), (Matches{{2, {1, 2}}, {3, {3}}}));
  EXPECT_EQ(matches_of(graph, "relu | abs"), (Matches{{1, {1}}, {2, {2}}, {3, {3}}, {4, {4}}}));

  // Several distinct ways at one root are all reported, sorted by inside set; equal ways once.
  EXPECT_EQ(matches_of(graph, "relu(relu(*) | *)"), (Matches{{1, {1}}, {2, {1, 2}}, {2, {2}}, {4, {4}}}));
  EXPECT_EQ(matches_of(graph, "relu(* | *)"), (Matches{{1, {1}}, {2, {2}}, {4, {4}}}));
  EXPECT_EQ(matches_of(graph, "relu | relu"), (Matches{{1, {1}}, {2, {2}}, {4, {4}}}));

  EXPECT_EQ(summarize(match_all(graph, P::alt({}))), Matches{});
}

TEST(PatternMatcher, CartesianProductOverArguments) {
  // x(0) relu(1) y(2) relu(3) add(4)
  ExprGraph ir;
  const Expr* x = ir.var("x");
  const Expr* r1 = ir.call("relu", {x});
  const Expr* y = ir.var("y");
  const Expr* r2 = ir.call("relu", {y});
  ir.output(ir.call("add", {r1, r2}));
  Graph graph = build(ir);
  EXPECT_EQ(matches_of(graph, "add(relu(*) | *, relu(*) | *)"),
            (Matches{{4, {1, 3, 4}}, {4, {1, 4}}, {4, {3, 4}}, {4, {4}}}));
  EXPECT_EQ(matches_of(graph, "add(relu(*), relu(*))"), (Matches{{4, {1, 3, 4}}}));
  EXPECT_EQ(matches_of(graph, "add(relu(*), abs(*) | relu(const))"), Matches{});
}

TEST(PatternMatcher, SharedArgumentIsInsideOnce) {
  // x(0) relu(1) add(r, r)(2)
  ExprGraph ir;
  const Expr* r = ir.call("relu", {ir.var("x")});
  ir.output(ir.call("add", {r, r}));
  Graph graph = build(ir);
  EXPECT_EQ(matches_of(graph, "add(relu(*), relu(*))"), (Matches{{2, {1, 2}}}));
  EXPECT_EQ(matches_of(graph, "add(relu(*), *) | add(*, relu(*))"), (Matches{{2, {1, 2}}}));
}

// f = op_ref(0) x(1) s = scalar(2) multiply(3) apply(f, multiply)(4)
struct Inlinables {
  ExprGraph ir;
  const Expr* f = ir.op_ref("nn.relu");
  const Expr* x = ir.var("x");
  const Expr* s = ir.scalar("s");
  const Expr* m = ir.call("multiply", {x, s});
  const Expr* apply = ir.call("apply", {f, m});
  Inlinables() { ir.output(apply); }
};

TEST(PatternMatcher, ScalarConstantsAndOpRefsAreNeverInside) {
  Inlinables c;
  Graph graph = build(c.ir);
  ASSERT_EQ(graph.index_of(c.f), 0u);
  ASSERT_EQ(graph.index_of(c.s), 2u);
  ASSERT_EQ(graph.index_of(c.m), 3u);
  ASSERT_EQ(graph.index_of(c.apply), 4u);

  // A scalar constant matches `const`; it is not inside.
  EXPECT_EQ(matches_of(graph, "multiply(*, const)"), (Matches{{3, {3}}}));
  // Matched by name, it is still not inside.
  EXPECT_EQ(matches_of(graph, "multiply(*, s)"), (Matches{{3, {3}}}));
  // A dotted op reference name is one identifier; the reference is not inside.
  EXPECT_EQ(matches_of(graph, "apply(nn.relu, multiply(*, const))"), (Matches{{4, {3, 4}}}));
  // An op reference is an inlinable node without inputs, so `const` takes it too.
  EXPECT_EQ(matches_of(graph, "apply(const, *)"), (Matches{{4, {4}}}));
  // Alone, inlinable nodes give empty inside sets, which are dropped.
  EXPECT_EQ(matches_of(graph, "nn.relu"), Matches{});
  EXPECT_EQ(matches_of(graph, "s"), Matches{});
  EXPECT_EQ(matches_of(graph, "nn.relu | s"), Matches{});
  // The scalar has kind elemwise, the variable and the reference opaque: kind patterns put
  // non-inlinable nodes inside (even variables), never the inlinable ones.
  EXPECT_EQ(matches_of(graph, "kind:elemwise"), Matches{});
  EXPECT_EQ(matches_of(graph, "kind:opaque"), (Matches{{1, {1}}, {4, {4}}}));
  // A variable is not a constant.
  EXPECT_EQ(matches_of(graph, "multiply(const, *)"), Matches{});
}

TEST(PatternMatcher, TensorConstantsAreNotInsideWhenMatchedByConst) {
  // x(0) c(1) add(2)
  ExprGraph ir;
  const Expr* x = ir.var("x");
  ir.output(ir.call("add", {x, ir.constant("c")}));
  Graph graph = build(ir);
  EXPECT_EQ(matches_of(graph, "add(*, const)"), (Matches{{2, {2}}}));
  EXPECT_EQ(matches_of(graph, "add(const, *)"), Matches{});
}

TEST(PatternMatcher, KindPatterns) {
  ConvChain c;
  Graph graph = build(c.ir);
  EXPECT_EQ(matches_of(graph, "kind:anchor"), (Matches{{2, {2}}}));
  EXPECT_EQ(matches_of(graph, "kind:broadcast(kind:anchor, *)"), (Matches{{4, {2, 4}}}));
  EXPECT_EQ(matches_of(graph, "kind:elemwise(kind:broadcast(kind:anchor(*, const), *))"), (Matches{{5, {2, 4, 5}}}));
  EXPECT_EQ(matches_of(graph, "kind:anchor(*)"), Matches{});
  EXPECT_EQ(matches_of(graph, "kind:reduce"), Matches{});
  EXPECT_EQ(matches_of(graph, "kind:anchor | kind:broadcast"), (Matches{{2, {2}}, {4, {4}}}));

  P built = P::kind(OpKind::anchor, {P::wildcard(), P::constant()});
  EXPECT_EQ(built.to_string(), "kind:anchor(*, const)");
  EXPECT_EQ(summarize(match_all(graph, built)), (Matches{{2, {2}}}));
  EXPECT_EQ(summarize(match_all(graph, P::kind(OpKind::broadcast))), (Matches{{4, {4}}}));
  EXPECT_EQ(summarize(match_all(graph, P::kind(OpKind::anchor, {}, true))), (Matches{{2, {2}}}));
}

TEST(PatternMatcher, KindPatternsOverAnIrWithoutKinds) {
  // The adjacency IR has no kinds (all opaque) and no op names.
  testing_ir::AdjacencyGraph ir;
  const int a = ir.add();
  const int b = ir.add({a});
  ir.roots.push_back(ir.add({a, b}));
  auto graph = DataflowGraph<testing_ir::AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  auto pattern = parse_pattern<testing_ir::AdjacencyGraph>("kind:opaque(*, kind:opaque(*))");
  ASSERT_TRUE(pattern.ok()) << pattern.error().message;
  std::vector<PatternMatch> matches = match_all(*graph, *pattern);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].root, 2u);
  EXPECT_EQ(matches[0].inside.to_vector(), (std::vector<std::size_t>{1, 2}));
}

TEST(PatternMatcher, PredicatesFromTheTableAndBuiltDirectly) {
  ConvChain c;
  Graph graph = build(c.ir);
  PredicateTable<ExprGraph> table;
  table["two_args"] = [](const Graph& g, std::size_t i) { return g.inputs(i).size() == 2; };
  table["is_result"] = [](const Graph& g, std::size_t i) { return g.is_external(i); };

  EXPECT_EQ(matches_of(graph, "?two_args", table), (Matches{{2, {2}}, {4, {4}}}));
  EXPECT_EQ(matches_of(graph, "?two_args(kind:anchor, *)", table), (Matches{{4, {2, 4}}}));
  EXPECT_EQ(matches_of(graph, "?is_result(?two_args(conv2d, *))", table), (Matches{{5, {2, 4, 5}}}));
  EXPECT_EQ(matches_of(graph, "?is_result(*, ...)", table), (Matches{{5, {5}}}));
  EXPECT_EQ(matches_of(graph, "?is_result()", table), Matches{});

  P direct = P::predicate("is_relu", [](const Graph& g, std::size_t i) { return g.op_name(i) == "relu"; });
  EXPECT_EQ(direct.to_string(), "?is_relu");
  EXPECT_EQ(summarize(match_all(graph, direct)), (Matches{{5, {5}}}));
  P with_args = P::predicate(
      "is_add", [](const Graph& g, std::size_t i) { return g.op_name(i) == "add"; },
      {P::op("conv2d"), P::wildcard()});
  EXPECT_EQ(with_args.to_string(), "?is_add(conv2d, *)");
  EXPECT_EQ(summarize(match_all(graph, with_args)), (Matches{{4, {2, 4}}}));
  EXPECT_EQ(summarize(match_all(graph, P::op("relu", {with_args}))), (Matches{{5, {2, 4, 5}}}));

  // An empty predicate matches nothing (and is never called).
  EXPECT_EQ(summarize(match_all(graph, P::predicate("nothing", nullptr))), Matches{});
}

TEST(PatternMatcher, LargeGraph) {
  // 100,000+ nodes: a chain of blocks conv2d(h, w) -> add(., c) -> relu, then 97 relus each.
  ExprGraph ir;
  const Expr* h = ir.var("x");
  constexpr std::size_t kBlocks = 1000;
  for (std::size_t k = 0; k < kBlocks; ++k) {
    h = ir.call("conv2d", {h, ir.constant("w")});
    h = ir.call("add", {h, ir.constant("c")});
    for (int r = 0; r < 98; ++r) h = ir.call("relu", {h});
  }
  ir.output(h);
  Graph graph = build(ir);
  ASSERT_EQ(graph.size(), 1 + kBlocks * 102);

  std::vector<PatternMatch> matches = match_all(graph, parse("relu(add(conv2d(*, const), const) | abs(*))"));
  ASSERT_EQ(matches.size(), kBlocks);
  for (std::size_t k = 0; k < kBlocks; ++k) {
    // Block k: conv2d at 1 + 102k + 1 (after its weight), add after its constant, then the relus.
    const std::size_t conv = 102 * k + 2;
    EXPECT_EQ(matches[k].root, conv + 3);
    EXPECT_EQ(matches[k].inside.to_vector(), (std::vector<std::size_t>{conv, conv + 2, conv + 3}));
  }
}

TEST(PatternMatcher, MatchesAreSortedAndUnique) {
  ReluAbs c;
  Graph graph = build(c.ir);
  std::vector<PatternMatch> matches = match_all(graph, parse("relu(relu(*) | abs | *) | abs | relu"));
  EXPECT_EQ(summarize(matches), (Matches{{1, {1}}, {2, {1, 2}}, {2, {2}}, {3, {3}}, {4, {3, 4}}, {4, {4}}}));
  for (std::size_t k = 1; k < matches.size(); ++k) EXPECT_TRUE(matches[k - 1] < matches[k]);
}

// A pattern without alternatives is matched in one pass; one with alternatives through the sets of
// partial matches. p | p matches what p does, so the two paths must agree, on random graphs whose
// nodes share arguments (an argument used twice is inside once) and take constants and scalars.
TEST(PatternMatcher, OnePassMatchingAgreesWithTheGeneralPath) {
  std::mt19937_64 rng(3);
  const std::vector<std::string> texts = {"add(relu(*), const)", "add(*, *)",     "relu(add(*, *))",
                                          "multiply(*, const)",  "add(relu, relu)", "relu(relu(relu))",
                                          "add(add(*, *), *)",   "kind:elemwise(*)", "add(*, ...)"};
  std::size_t matched = 0;
  for (int trial = 0; trial < 30; ++trial) {
    ExprGraph ir;
    std::vector<const Expr*> nodes{ir.var("x")};
    const Expr* two = ir.scalar("2");
    for (int k = 0; k < 40; ++k) {
      const Expr* a = nodes[nodes.size() - 1 - rng() % std::min<std::size_t>(nodes.size(), 3)];
      const Expr* b = rng() % 3 == 0 ? a : rng() % 2 ? ir.constant("w") : two;
      switch (rng() % 3) {
        case 0: nodes.push_back(ir.call("relu", {a})); break;
        case 1: nodes.push_back(ir.call("add", {a, b})); break;
        default: nodes.push_back(ir.call("multiply", {a, b})); break;
      }
    }
    ir.outputs = {nodes.back()};
    Graph graph = build(ir);
    for (const std::string& text : texts) {
      const P p = parse(text);
      const P twice = P::alt({p, p});
      ASSERT_NE(twice.to_string().find('|'), std::string::npos);
      const std::vector<PatternMatch> one = match_all(graph, p);
      EXPECT_EQ(summarize(one), summarize(match_all(graph, twice))) << text << ", trial " << trial;
      matched += one.size();
    }
  }
  EXPECT_GT(matched, 500u);
}

}  // namespace
}  // namespace collage
