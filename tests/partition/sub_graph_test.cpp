#include "collage/partition/sub_graph.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "collage/partition/candidate.hpp"
#include "collage/partition/extraction.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// Builds an IR, indexes it, and makes sub-graphs from IR handles.
struct Fixture {
  ExprGraph ir;
  std::optional<Graph> graph;

  const Graph& build() {
    auto r = Graph::build(ir);
    EXPECT_TRUE(r.ok());
    graph.emplace(std::move(r).value());
    return *graph;
  }
  std::size_t at(const Expr* e) const { return graph->index_of(e); }
  IndexSet set(std::initializer_list<const Expr*> nodes) const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(at(e));
    return s;
  }
  SubGraph sub(std::initializer_list<const Expr*> nodes) const { return SubGraph(*graph, set(nodes)); }
};

const SubGraphConfig kOneExit{1, false, 0};

TEST(SubGraphRfc, SingleOp) {
  Fixture f;
  auto x = f.ir.var("x");
  auto r = f.ir.call("relu", {x});
  f.ir.output(r);
  f.build();
  SubGraph s = f.sub({r});
  EXPECT_EQ(s.check(*f.graph, kOneExit), Validity::valid);
  EXPECT_EQ(s.depth(), 1u);
  EXPECT_EQ(s.entry(), f.set({r}));
  EXPECT_EQ(s.exit(), f.set({r}));
  EXPECT_EQ(s.input(), f.set({x}));
  EXPECT_TRUE(s.output().empty());
  EXPECT_EQ(s.kind(), OpKind::elemwise);
  EXPECT_EQ(s.label(*f.graph), "relu");
}

TEST(SubGraphRfc, TwoIndependentOpsNeedTwoExits) {
  Fixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {x});
  auto b = f.ir.call("abs", {x});
  f.ir.output(f.ir.call("add", {a, b}));
  f.build();
  SubGraph s = f.sub({a, b});
  EXPECT_EQ(s.exit(), f.set({a, b}));
  EXPECT_EQ(s.check(*f.graph, kOneExit), Validity::too_many_exits);
  EXPECT_EQ(s.check(*f.graph, SubGraphConfig{2, false, 0}), Validity::valid);
}

TEST(SubGraphRfc, ChainHasDepthThree) {
  Fixture f;
  auto x = f.ir.var("x");
  auto w = f.ir.constant("w");
  auto b = f.ir.constant("b");
  auto conv = f.ir.call("conv2d", {x, w});
  auto add = f.ir.call("add", {conv, b});
  auto relu = f.ir.call("relu", {add});
  f.ir.output(relu);
  f.build();
  SubGraph s = f.sub({conv, add, relu});
  EXPECT_EQ(s.depth(), 3u);
  EXPECT_EQ(s.check(*f.graph, kOneExit), Validity::valid);
  EXPECT_EQ(s.check(*f.graph, SubGraphConfig{1, false, 2}), Validity::too_deep);
  EXPECT_EQ(s.kind(), OpKind::anchor);
  EXPECT_EQ(s.label(*f.graph), "conv2d+add+relu");
  EXPECT_EQ(s.input(), f.set({x, w, b}));
  EXPECT_EQ(s.entry(), f.set({conv, add}));
  EXPECT_EQ(f.sub({conv, add}).depth(), 2u);
  // Nodes without a kernel are left out of a label, unless nothing inside needs a kernel.
  ASSERT_FALSE(f.graph->needs_kernel(f.at(w)));
  EXPECT_EQ(f.sub({w, conv}).label(*f.graph), "conv2d");
  EXPECT_EQ(f.sub({w}).label(*f.graph), f.graph->op_name(f.at(w)));
  EXPECT_FALSE(f.sub({w}).label(*f.graph).empty());
}

TEST(SubGraph, DepthCountsOperatorsTuplesAndProjections) {
  // As TVM's Collage counts the nodes on paths from an entry to an exit: operators, tuples and
  // projections add to the depth; a constant pulled in never deepens a candidate.
  Fixture f;
  auto x = f.ir.var("x");
  auto w = f.ir.constant("w");
  auto dense = f.ir.call("dense", {x, w});
  auto split = f.ir.call("split", {dense});
  auto p0 = f.ir.get_item(split, 0);
  auto p1 = f.ir.get_item(split, 1);
  auto relu = f.ir.call("relu", {p0});
  auto t = f.ir.tuple({relu, p1});
  auto cat = f.ir.call("concat", {t});
  f.ir.output(cat);
  f.build();
  EXPECT_EQ(f.sub({w}).depth(), 0u);
  EXPECT_EQ(f.sub({w, dense}).depth(), 1u);
  EXPECT_EQ(f.sub({split, p0, p1}).depth(), 2u);
  EXPECT_EQ(f.sub({split, p0, relu}).depth(), 3u);
  EXPECT_EQ(f.sub({relu, t, cat}).depth(), 3u);
  const SubGraph all = f.sub({w, dense, split, p0, p1, relu, t, cat});
  EXPECT_EQ(all.depth(), 6u);  // dense, split, p0, relu, tuple, concat
  EXPECT_EQ(all.check(*f.graph, SubGraphConfig{1, false, 6}), Validity::valid);
  EXPECT_EQ(all.check(*f.graph, SubGraphConfig{1, false, 5}), Validity::too_deep);
  // The same over a window wider than the dense scan's (512 indexes): a chain of operators with a
  // constant and a projection among every few.
  Fixture g;
  const Expr* h = g.ir.var("x");
  std::vector<const Expr*> inside;
  for (int k = 0; k < 300; ++k) {
    const Expr* c = g.ir.constant("c");
    h = g.ir.call("add", {h, c});
    inside.push_back(c);
    inside.push_back(h);
    if (k % 3 == 0) {
      h = g.ir.get_item(g.ir.call("split", {h}), 0);
      inside.push_back(h->args[0]);
      inside.push_back(h);
    }
  }
  g.ir.output(h);
  g.build();
  IndexSet chain(g.graph->size());
  for (const Expr* e : inside) chain.add(g.at(e));
  ASSERT_GT(chain.last_inside() - chain.first_inside(), 512u);
  EXPECT_EQ(SubGraph(*g.graph, chain).depth(), 500u);  // 300 adds, 100 splits and their projections
}

struct Diamond : Fixture {
  const Expr *x, *conv, *relu, *abs, *join;
  Diamond() {
    x = ir.var("x");
    conv = ir.call("conv2d", {x, ir.constant("w")});
    relu = ir.call("relu", {conv});
    abs = ir.call("abs", {conv});
    join = ir.call("add", {relu, abs});
    ir.output(join);
    build();
  }
};

TEST(SubGraphRfc, DiamondWithJoinIsValid) {
  Diamond d;
  SubGraph s = d.sub({d.conv, d.relu, d.abs, d.join});
  EXPECT_EQ(s.check(*d.graph, kOneExit), Validity::valid);
  EXPECT_EQ(s.depth(), 3u);
}

TEST(SubGraphRfc, DiamondWithoutJoinHasTwoExits) {
  Diamond d;
  SubGraph s = d.sub({d.conv, d.relu, d.abs});
  EXPECT_EQ(s.exit(), d.set({d.relu, d.abs}));
  EXPECT_EQ(s.check(*d.graph, kOneExit), Validity::too_many_exits);
  EXPECT_EQ(s.output(), d.set({d.join}));
}

TEST(SubGraphRfc, TapIsInvalidUnlessAllowed) {
  // 5 conv; 6 relu(5); 7 add(6, 5)
  Fixture f;
  auto conv = f.ir.call("conv2d", {f.ir.var("x"), f.ir.constant("w")});
  auto relu = f.ir.call("relu", {conv});
  auto add = f.ir.call("add", {relu, conv});
  f.ir.output(add);
  f.build();
  SubGraph s = f.sub({conv, relu});
  EXPECT_EQ(s.exit(), f.set({conv, relu}));
  EXPECT_EQ(s.check(*f.graph, SubGraphConfig{2, false, 0}), Validity::tap);
  EXPECT_EQ(s.check(*f.graph, SubGraphConfig{2, true, 0}), Validity::valid);
  EXPECT_EQ(f.sub({conv, relu, add}).check(*f.graph, kOneExit), Validity::valid);
}

TEST(SubGraphRfc, PathThroughOutsideBreaksConvexity) {
  // 3 add(a, b); 4 add(3, b); 5 add(4, b)
  Fixture f;
  auto a = f.ir.var("a");
  auto b = f.ir.var("b");
  auto n3 = f.ir.call("add", {a, b});
  auto n4 = f.ir.call("add", {n3, b});
  auto n5 = f.ir.call("add", {n4, b});
  f.ir.output(n5);
  f.build();
  EXPECT_EQ(f.sub({n3, n5}).check(*f.graph, SubGraphConfig{}), Validity::not_convex);
  EXPECT_FALSE(f.sub({n3, n5}).is_valid(*f.graph, kOneExit));
  EXPECT_EQ(f.sub({n3, n4, n5}).check(*f.graph, kOneExit), Validity::valid);
}

TEST(SubGraph, InlinableNodesAreNeverInputs) {
  Fixture f;
  auto x = f.ir.var("x");
  auto two = f.ir.scalar("two");
  auto ref = f.ir.op_ref("callee");
  auto m = f.ir.call("multiply", {x, two, ref});
  f.ir.output(m);
  f.build();
  SubGraph s = f.sub({m});
  EXPECT_EQ(s.input(), f.set({x}));
  ExtractedFunction fn = extract(*f.graph, s);
  EXPECT_EQ(fn.params, std::vector<std::size_t>{f.at(x)});
  EXPECT_EQ(fn.inlined, (std::vector<std::size_t>{f.at(two), f.at(ref)}));
  SubGraph only_scalar_input = f.sub({m});
  EXPECT_TRUE(only_scalar_input.entry().contains(f.at(m)));
}

TEST(SubGraph, ScopesMustAgree) {
  Fixture f;
  auto a = f.ir.call("relu", {f.ir.var("x")});
  f.ir.current_scope = 1;
  auto b = f.ir.call("abs", {a});
  f.ir.output(b);
  f.build();
  EXPECT_EQ(f.sub({a, b}).check(*f.graph, kOneExit), Validity::multiple_scopes);
  EXPECT_EQ(f.sub({b}).check(*f.graph, kOneExit), Validity::valid);
}

TEST(SubGraph, EmptyIsInvalid) {
  Diamond d;
  EXPECT_EQ(SubGraph(*d.graph, d.graph->empty_set()).check(*d.graph, {}), Validity::empty);
}

TEST(SubGraph, NestedGroupsAndAttrs) {
  Diamond d;
  SubGraph relu = d.sub({d.relu});
  SubGraph abs = d.sub({d.abs});
  SubGraph composite = relu.with_attrs(*d.graph, {{"Composite", "my.relu"}});
  ASSERT_EQ(composite.nested().size(), 1u);
  EXPECT_EQ(composite.nested()[0].attr("Composite"), "my.relu");
  EXPECT_EQ(composite.nested()[0].attr("Missing"), "");
  EXPECT_EQ(composite.inside(), relu.inside());
  EXPECT_NE(composite, relu);  // nesting is part of identity

  SubGraph both = composite.disjoint_union(*d.graph, abs);
  EXPECT_EQ(both.inside(), d.set({d.relu, d.abs}));
  EXPECT_EQ(both.nested().size(), 1u);
  EXPECT_EQ(both.check(*d.graph, SubGraphConfig{2, false, 0}), Validity::valid);

  // A nested group that sticks out, or two that overlap, make the sub-graph invalid.
  SubGraph outer(*d.graph, d.set({d.relu}), {NestedSubGraph{d.sub({d.relu, d.abs}), {}}});
  EXPECT_EQ(outer.check(*d.graph, SubGraphConfig{2, false, 0}), Validity::nested_not_inside);
  SubGraph overlap(*d.graph, d.set({d.relu, d.abs}),
                   {NestedSubGraph{d.sub({d.relu}), {{"A", "1"}}}, NestedSubGraph{d.sub({d.relu}), {{"B", "2"}}}});
  EXPECT_EQ(overlap.check(*d.graph, SubGraphConfig{2, false, 0}), Validity::nested_overlap);
  SubGraph bad_nested(*d.graph, d.set({d.conv, d.relu, d.abs, d.join}),
                      {NestedSubGraph{d.sub({d.conv, d.join}), {}}});
  EXPECT_EQ(bad_nested.check(*d.graph, kOneExit), Validity::nested_invalid);
  // The outer kernel's limits do not apply to a nested group: conv is an exit of {conv, relu} (it feeds
  // abs) and also feeds relu inside it, a tap, yet the group is a fine composite inside the whole diamond.
  SubGraph tapped_nested(*d.graph, d.set({d.conv, d.relu, d.abs, d.join}),
                         {NestedSubGraph{d.sub({d.conv, d.relu}), {}}});
  EXPECT_EQ(d.sub({d.conv, d.relu}).check(*d.graph, kOneExit), Validity::too_many_exits);
  EXPECT_EQ(tapped_nested.check(*d.graph, kOneExit), Validity::valid);
  EXPECT_EQ(composite.to_string(*d.graph), "relu{3}[Composite=my.relu:relu{3}]");
  EXPECT_EQ(composite.to_string(), "{3}[Composite=my.relu:{3}]");
}

TEST(AttrList, SortedSharedAndComparedByContent) {
  const AttrList a{{"Compiler", "tvm"}, {"Composite", "x"}};
  const AttrList b(Attrs{{"Composite", "x"}, {"Compiler", "tvm"}});  // another order, another list
  EXPECT_EQ(a, b);
  EXPECT_EQ(AttrList::compare(a, b), 0);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].first, "Compiler");  // sorted by key
  EXPECT_EQ(b.find("Composite"), "x");
  EXPECT_EQ(b.find("Primitive"), "");

  const AttrList copy = a;  // a copy shares the list
  EXPECT_EQ(&copy.list(), &a.list());
  EXPECT_TRUE(AttrList().empty());
  EXPECT_EQ(AttrList(), AttrList(Attrs{}));

  // Order: by (key, value) pairs, a prefix first.
  const AttrList shorter{{"Compiler", "tvm"}};
  const AttrList other_value{{"Compiler", "tvm"}, {"Composite", "y"}};
  EXPECT_LT(AttrList::compare(shorter, a), 0);
  EXPECT_LT(AttrList::compare(a, other_value), 0);
  EXPECT_GT(AttrList::compare(other_value, a), 0);
  EXPECT_NE(a, other_value);

  // Groups made from either order of the same attributes are the same group.
  Diamond d;
  SubGraph relu = d.sub({d.relu});
  EXPECT_EQ(relu.with_attrs(*d.graph, a), relu.with_attrs(*d.graph, b));
  SubGraph direct(*d.graph, d.set({d.relu}), {NestedSubGraph{relu, Attrs{{"Composite", "x"}, {"Compiler", "tvm"}}}});
  EXPECT_EQ(direct.nested()[0].attrs, a);
}

TEST(SubGraph, TouchingNeedsAnEdgeAndAConvexUnion) {

  Diamond d;
  const Graph& g = *d.graph;
  EXPECT_TRUE(d.sub({d.conv}).are_touching(g, d.sub({d.relu})));
  EXPECT_TRUE(d.sub({d.relu}).are_touching(g, d.sub({d.conv})));  // either direction
  EXPECT_TRUE(d.sub({d.conv}).feeds_into(d.sub({d.relu})));
  EXPECT_FALSE(d.sub({d.relu}).feeds_into(d.sub({d.conv})));
  EXPECT_FALSE(d.sub({d.relu}).are_touching(g, d.sub({d.abs})));  // no edge
  EXPECT_FALSE(d.sub({d.conv}).are_touching(g, d.sub({d.join})) &&
               !collage::is_convex(g, d.set({d.conv, d.join})));
  EXPECT_FALSE(d.sub({d.conv, d.relu}).are_touching(g, d.sub({d.join})));  // union skips abs
  EXPECT_TRUE(d.sub({d.conv, d.relu, d.abs}).are_touching(g, d.sub({d.join})));
  EXPECT_FALSE(d.sub({d.conv, d.relu}).are_touching(g, d.sub({d.relu, d.join})));  // overlap
}

TEST(SubGraph, SubstIntoAnotherGraph) {
  Diamond a;
  Diamond b;  // same shape, fresh IR
  std::vector<std::size_t> map(a.graph->size());
  for (std::size_t i = 0; i < map.size(); ++i) map[i] = i;
  SubGraph s = a.sub({a.relu, a.join}).with_attrs(*a.graph, {{"Primitive", "1"}});
  SubGraph t = s.subst(*b.graph, map);
  EXPECT_EQ(t.inside(), b.set({b.relu, b.join}));
  EXPECT_EQ(t.nested().size(), 1u);
  EXPECT_EQ(t.nested()[0].attr("Primitive"), "1");
  EXPECT_EQ(t.exit(), b.set({b.join}));
}

TEST(SubGraph, OrderAndHashAreConsistent) {
  Diamond d;
  std::vector<SubGraph> subs = {d.sub({d.join}), d.sub({d.conv, d.relu}), d.sub({d.conv}),
                                d.sub({d.relu}), d.sub({d.conv}).with_attrs(*d.graph, {{"K", "v"}})};
  std::set<SubGraph> ordered(subs.begin(), subs.end());
  EXPECT_EQ(ordered.size(), subs.size());
  EXPECT_EQ(ordered.begin()->first_inside(), d.at(d.conv));
  EXPECT_EQ(d.sub({d.conv}).hash(), d.sub({d.conv}).hash());
  EXPECT_FALSE(d.sub({d.conv}) < d.sub({d.conv}));
}

TEST(Candidate, IdentityAndOrder) {
  Diamond d;
  Candidate a{d.sub({d.conv}), "cuda", "native"};
  Candidate b{d.sub({d.conv}), "cuda", "other_rule", Cost::value(3)};
  Candidate c{d.sub({d.conv}), "cpu", "native"};
  EXPECT_EQ(a, b);  // same sub-graph and target: a duplicate whatever the rule
  EXPECT_NE(a, c);
  EXPECT_LT(c, a);  // by target after the sub-graph
  EXPECT_LT(a, b);  // then by rule name
  EXPECT_EQ(c.to_string(*d.graph), "cpu:native:conv2d{2}");
  EXPECT_EQ(c.to_string(), "cpu:native:{2}");
}

}  // namespace
}  // namespace collage
