#include "collage/cost/structural_key.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// Builds an expression IR, indexes it, and makes candidates from IR handles.
struct Fixture {
  ExprGraph ir;
  std::optional<Graph> graph;

  const Graph& build() {
    auto r = Graph::build(ir);
    EXPECT_TRUE(r.ok());
    graph.emplace(std::move(r).value());
    return *graph;
  }
  IndexSet set(const std::vector<const Expr*>& nodes) const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(graph->index_of(e));
    return s;
  }
  Candidate candidate(const std::vector<const Expr*>& nodes, std::string target = "cutlass") const {
    return Candidate{SubGraph(*graph, set(nodes)), std::move(target), "rule"};
  }
  Candidate with_attrs(const std::vector<const Expr*>& nodes, Attrs attrs, std::string target = "cutlass") const {
    SubGraph s = SubGraph(*graph, set(nodes)).with_attrs(*graph, std::move(attrs));
    return Candidate{std::move(s), std::move(target), "rule"};
  }
  std::string key(const Candidate& c) const { return structural_key(*graph, c); }
  std::string key(const std::vector<const Expr*>& nodes, std::string target = "cutlass") const {
    return key(candidate(nodes, std::move(target)));
  }
};

/// A transformer-like stack: each layer is layer_norm -> dense -> bias_add -> relu, plus a
/// residual add. `blocks[l]` is layer l's {dense, bias_add, relu}. Weights share a name, hence a
/// signature (in a real IR their signature would be their type).
struct Layers : Fixture {
  std::vector<std::vector<const Expr*>> blocks;
  std::vector<const Expr*> norms;

  explicit Layers(int n) {
    const Expr* h = ir.var("x");
    for (int l = 0; l < n; ++l) {
      const Expr* norm = ir.call("layer_norm", {h});
      const Expr* d = ir.call("dense", {norm, ir.constant("w")});
      const Expr* b = ir.call("bias_add", {d, ir.constant("b")});
      const Expr* r = ir.call("relu", {b});
      h = ir.call("add", {r, h});
      blocks.push_back({d, b, r});
      norms.push_back(norm);
    }
    ir.output(h);
    build();
  }
};

/// Appends `n` calls to `nodes` and returns them: each takes 1 to `max_arity` operands, each one of
/// the last `reach` nodes, a shared scalar or a new tensor constant, and its op is drawn from `ops`.
std::vector<const Expr*> add_random_calls(Fixture& f, std::mt19937_64& rng, std::vector<const Expr*>& nodes,
                                          int n, std::size_t max_arity, std::size_t reach,
                                          const std::vector<const char*>& ops) {
  const Expr* two = f.ir.scalar("2");
  std::vector<const Expr*> calls;
  for (int k = 0; k < n; ++k) {
    std::vector<const Expr*> args;
    const std::size_t arity = 1 + rng() % max_arity;
    for (std::size_t a = 0; a < arity; ++a) {
      const std::size_t pick = rng() % (nodes.size() + 3);
      args.push_back(pick < nodes.size() ? nodes[nodes.size() - 1 - rng() % std::min(nodes.size(), reach)]
                     : pick == nodes.size() ? two
                                            : f.ir.constant("w"));
    }
    nodes.push_back(f.ir.call(ops[rng() % ops.size()], std::move(args)));
    calls.push_back(nodes.back());
  }
  return calls;
}

TEST(StructuralKey, TwelveIdenticalLayersShareOneKey) {
  Layers f(12);
  std::set<std::string> keys;
  for (const auto& block : f.blocks) keys.insert(f.key(block));
  EXPECT_EQ(keys.size(), 1u);
  std::set<std::string> norm_keys;
  for (const Expr* n : f.norms) norm_keys.insert(f.key({n}));
  EXPECT_EQ(norm_keys.size(), 2u);  // the first layer norm reads the variable x, the others an add
  EXPECT_NE(*keys.begin(), *norm_keys.begin());
  // The same blocks with attributes still agree with each other.
  std::set<std::string> composite_keys;
  for (const auto& block : f.blocks) {
    composite_keys.insert(f.key(f.with_attrs(block, {{"Composite", "cutlass.dense_bias_relu"}})));
  }
  EXPECT_EQ(composite_keys.size(), 1u);
  EXPECT_NE(*composite_keys.begin(), *keys.begin());
}

TEST(StructuralKey, KeyDescribesTheFunction) {
  Fixture f;
  auto x = f.ir.var("x");
  auto s = f.ir.scalar("two");
  auto m = f.ir.call("multiply", {x, s});
  auto r = f.ir.call("relu", {m});
  f.ir.output(r);
  f.build();
  auto field = [&](const Expr* e) {
    const std::string sig = f.graph->signature(f.graph->index_of(e));
    return std::to_string(sig.size()) + ":" + sig;
  };
  EXPECT_EQ(f.key({m, r}, "tvm"), "target 3:tvm\n"
                                  "param " + field(x) + "\n"
                                  "body " + field(m) + " (p0,i" + field(s) + ")\n"
                                  "body " + field(r) + " (b0)\n"
                                  "results b1\n");
}

TEST(StructuralKey, DifferentOpGivesADifferentKey) {
  Fixture f;
  auto x = f.ir.var("x");
  auto a = f.ir.call("relu", {f.ir.call("dense", {x, f.ir.constant("w")})});
  auto b = f.ir.call("tanh", {f.ir.call("dense", {x, f.ir.constant("w")})});
  f.ir.output(f.ir.call("add", {a, b}));
  f.build();
  EXPECT_NE(f.key({a, a->args[0]}), f.key({b, b->args[0]}));
  EXPECT_EQ(f.key({a->args[0]}), f.key({b->args[0]}));
}

TEST(StructuralKey, DifferentTargetGivesADifferentKey) {
  Layers f(2);
  EXPECT_NE(f.key(f.blocks[1], "cutlass"), f.key(f.blocks[1], "tvm"));
  EXPECT_EQ(f.key(f.blocks[0], "tvm"), f.key(f.blocks[1], "tvm"));
}

TEST(StructuralKey, RuleNameIsNotPartOfTheKey) {
  Layers f(2);
  Candidate a = f.candidate(f.blocks[0]);
  Candidate b = f.candidate(f.blocks[1]);
  b.rule_name = "another_rule";
  EXPECT_EQ(f.key(a), f.key(b));
}

TEST(StructuralKey, DifferentWiringGivesADifferentKey) {
  Fixture f;
  // Two distinct variables with the same signature.
  auto x = f.ir.var("in");
  auto y = f.ir.var("in");
  auto xy = f.ir.call("subtract", {x, y});
  auto yx = f.ir.call("subtract", {y, x});
  auto xx = f.ir.call("subtract", {x, x});
  // Inside operands swapped: sub(relu, abs) vs sub(abs, relu).
  auto r1 = f.ir.call("relu", {xy});
  auto a1 = f.ir.call("abs", {xy});
  auto s1 = f.ir.call("subtract", {r1, a1});
  auto r2 = f.ir.call("relu", {yx});
  auto a2 = f.ir.call("abs", {yx});
  auto s2 = f.ir.call("subtract", {a2, r2});
  f.ir.output(f.ir.tuple({xx, s1, s2}));
  f.build();
  // Parameters are numbered by first use, so sub(x, y) and sub(y, x) are the same function.
  EXPECT_EQ(f.key({xy}), f.key({yx}));
  // One parameter used twice is not two parameters.
  EXPECT_NE(f.key({xy}), f.key({xx}));
  EXPECT_NE(f.key({r1, a1, s1}), f.key({r2, a2, s2}));
}

TEST(StructuralKey, DifferentResultsGiveADifferentKey) {
  Fixture f;
  auto x = f.ir.var("x");
  auto r1 = f.ir.call("relu", {x});
  auto t1 = f.ir.call("tanh", {r1});
  auto r2 = f.ir.call("relu", {x});
  auto t2 = f.ir.call("tanh", {r2});
  // r2 is also used outside {r2, t2}: the function returns it too.
  f.ir.output(f.ir.tuple({t1, t2, f.ir.call("exp", {r2})}));
  f.build();
  EXPECT_NE(f.key({r1, t1}), f.key({r2, t2}));
}

TEST(StructuralKey, InlinedNodesAreWrittenBySignature) {
  Fixture f;
  auto x = f.ir.var("x");
  auto m1 = f.ir.call("multiply", {x, f.ir.scalar("two")});
  auto m2 = f.ir.call("multiply", {x, f.ir.scalar("two")});
  auto m3 = f.ir.call("multiply", {x, f.ir.scalar("three")});
  f.ir.output(f.ir.tuple({m1, m2, m3}));
  f.build();
  EXPECT_EQ(f.key({m1}), f.key({m2}));
  EXPECT_NE(f.key({m1}), f.key({m3}));
}

TEST(StructuralKey, NestedGroupsAreInTheKey) {
  Layers f(2);
  const auto& b0 = f.blocks[0];
  const auto& b1 = f.blocks[1];
  const std::string plain = f.key(b1);
  const std::string dense_bias = f.key(f.with_attrs(b1, {{"Composite", "dense_bias"}}));
  const std::string dense_bias_relu = f.key(f.with_attrs(b1, {{"Composite", "dense_bias_relu"}}));
  const std::string two_attrs = f.key(f.with_attrs(b1, {{"Composite", "dense_bias"}, {"Compiler", "cutlass"}}));
  EXPECT_NE(plain, dense_bias);
  EXPECT_NE(dense_bias, dense_bias_relu);
  EXPECT_NE(dense_bias, two_attrs);
  EXPECT_EQ(dense_bias, f.key(f.with_attrs(b0, {{"Composite", "dense_bias"}})));

  // Same attributes, different members: a group over {dense, bias_add} inside the block.
  auto partial = [&](const std::vector<const Expr*>& block) {
    NestedSubGraph group{SubGraph(*f.graph, f.set({block[0], block[1]})), {{"Composite", "dense_bias"}}};
    return Candidate{SubGraph(*f.graph, f.set(block), {group}), "cutlass", "rule"};
  };
  EXPECT_NE(f.key(partial(b1)), dense_bias);
  EXPECT_EQ(f.key(partial(b0)), f.key(partial(b1)));

  // A group nested in a group is part of the key too.
  Candidate outer = f.with_attrs(b1, {{"Primitive", "1"}});
  SubGraph twice = outer.sub_graph.with_attrs(*f.graph, {{"Compiler", "cutlass"}});
  EXPECT_NE(f.key(Candidate{twice, "cutlass", "rule"}), f.key(outer));
}

TEST(StructuralKey, FieldsCannotRunTogether) {
  Fixture f;
  auto x = f.ir.var("x");
  auto r = f.ir.call("relu", {x});
  f.ir.output(r);
  f.build();
  // A target that spells out a plausible key tail must not collide with the real thing.
  const std::string real = f.key({r}, "t");
  const std::string forged = f.key({r}, "t\nparam 7:x/opaque\nbody 13:relu/elemwise (p0)\nresults b0\n");
  EXPECT_NE(real, forged);
  EXPECT_EQ(real.find("target 1:t\n"), 0u);
}

TEST(StructuralKey, PassingTheViewGivesTheSameKey) {
  Layers f(1);
  Candidate c = f.candidate(f.blocks[0]);
  EXPECT_EQ(structural_key(*f.graph, c, extract(*f.graph, c.sub_graph)), structural_key(*f.graph, c));
}

// The key without a view lays the function out itself (a linear scan for the first parameters, a
// set beyond); it must match extract() for every shape of candidate: repeated, inlinable and
// many parameters, nested groups, several results.
TEST(StructuralKey, PassingTheViewGivesTheSameKeyForAnyCandidate) {
  std::mt19937_64 rng(11);
  int wide = 0;
  for (int trial = 0; trial < 50; ++trial) {
    Fixture f;
    std::vector<const Expr*> nodes;
    for (int v = 0; v < 4; ++v) nodes.push_back(f.ir.var("x" + std::to_string(v)));
    const std::vector<const Expr*> calls =
        add_random_calls(f, rng, nodes, 10 + static_cast<int>(rng() % 40), 3, 12, {"add", "multiply"});
    f.ir.outputs = calls;  // every call is a result: any set is a candidate
    f.build();
    std::vector<const Expr*> picked;
    for (const Expr* c : calls) {
      if (rng() % 3 != 0) picked.push_back(c);
    }
    if (picked.empty()) picked.push_back(calls.front());
    const Candidate plain = f.candidate(picked);
    const Candidate grouped = f.with_attrs(picked, {{"Composite", "c"}});
    for (const Candidate* c : {&plain, &grouped}) {
      EXPECT_EQ(structural_key(*f.graph, *c, extract(*f.graph, c->sub_graph)), structural_key(*f.graph, *c))
          << "trial " << trial;
    }
    if (extract(*f.graph, plain.sub_graph).params.size() > 16) ++wide;
  }
  EXPECT_GE(wide, 5);  // candidates whose parameters outgrow the linear scan
}

/// Groups and text keys must agree: same group exactly when same key, groups numbered by first
/// appearance. Random candidates on random graphs, over several targets and nested groups, so
/// that many candidates share a key and many keys differ in one token only.
TEST(StructuralKey, GroupsByStructureAsTheTextKeysDo) {
  std::mt19937_64 rng(5);
  std::size_t shared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Fixture f;
    std::vector<const Expr*> nodes{f.ir.var("x"), f.ir.var("x")};
    add_random_calls(f, rng, nodes, 8 + static_cast<int>(rng() % 24), 2, 4, {"add", "add", "relu"});
    f.ir.outputs = {nodes.back()};
    for (std::size_t k = 2; k + 1 < nodes.size(); ++k) {
      if (rng() % 4 == 0) f.ir.outputs.push_back(nodes[k]);  // several results
    }
    f.build();
    std::vector<Candidate> candidates;
    for (int c = 0; c < 60; ++c) {
      // A window of one to three consecutive calls, with a target and maybe a group.
      const std::size_t first = 2 + rng() % (nodes.size() - 2);
      std::vector<const Expr*> members;
      for (std::size_t k = first; k < std::min(nodes.size(), first + 1 + rng() % 3); ++k) {
        if (f.graph->index_of(nodes[k]) != npos) members.push_back(nodes[k]);  // reachable from a result
      }
      if (members.empty()) continue;
      const std::string target = rng() % 2 ? "tvm" : "cutlass";
      switch (rng() % 3) {
        case 0: candidates.push_back(f.candidate(members, target)); break;
        case 1: candidates.push_back(f.with_attrs(members, {{"Composite", rng() % 2 ? "a" : "b"}}, target)); break;
        default: {
          Candidate inner = f.with_attrs(members, {{"Composite", "a"}}, target);
          candidates.push_back(
              Candidate{inner.sub_graph.with_attrs(*f.graph, {{"Primitive", "1"}}), target, "rule"});
        }
      }
    }
    std::vector<const Candidate*> pointers;
    std::vector<std::string> keys;
    for (const Candidate& c : candidates) {
      pointers.push_back(&c);
      keys.push_back(f.key(c));
    }
    const StructureGroups groups = group_by_structure(*f.graph, pointers);
    ASSERT_EQ(groups.group_of.size(), candidates.size());
    for (std::size_t a = 0; a < candidates.size(); ++a) {
      for (std::size_t b = 0; b < a; ++b) {
        EXPECT_EQ(groups.group_of[a] == groups.group_of[b], keys[a] == keys[b])
            << "trial " << trial << ":\n" << keys[a] << "vs\n" << keys[b];
        shared += keys[a] == keys[b] ? 1 : 0;
      }
    }
    for (std::size_t g = 0; g < groups.first.size(); ++g) {
      ASSERT_EQ(groups.group_of[groups.first[g]], g);
      for (std::size_t k = 0; k < groups.first[g]; ++k) EXPECT_NE(groups.group_of[k], g);
    }
  }
  EXPECT_GT(shared, 300u);  // the comparison saw many equal keys, not only different ones
}

/// A small typed IR whose signatures carry shapes, for keys that differ only in a shape.
struct TypedIr {
  struct Node {
    std::string op;
    std::string shape;
    std::vector<int> inputs;
  };
  std::vector<Node> nodes;
  std::vector<int> roots;
  int add(std::string op, std::string shape, std::vector<int> inputs = {}) {
    nodes.push_back(Node{std::move(op), std::move(shape), std::move(inputs)});
    return static_cast<int>(nodes.size()) - 1;
  }
};

}  // namespace
}  // namespace collage

template <>
struct collage::dataflow_traits<collage::TypedIr> {
  using node_handle = int;
  using G = collage::TypedIr;
  static const std::vector<int>& roots(const G& g) { return g.roots; }
  static const std::vector<int>& inputs(const G& g, int n) { return g.nodes[static_cast<std::size_t>(n)].inputs; }
  static std::string op_name(const G& g, int n) { return g.nodes[static_cast<std::size_t>(n)].op; }
  static std::string signature(const G& g, int n) {
    return g.nodes[static_cast<std::size_t>(n)].op + ":" + g.nodes[static_cast<std::size_t>(n)].shape;
  }
};

namespace collage {
namespace {

TEST(StructuralKey, DifferentShapeGivesADifferentKey) {
  TypedIr ir;
  int x = ir.add("var", "f32[8,64]");
  int y = ir.add("var", "f32[8,128]");
  int a = ir.add("relu", "f32[8,64]", {x});
  int b = ir.add("relu", "f32[8,128]", {y});
  int c = ir.add("relu", "f32[8,64]", {x});
  ir.roots = {a, b, c};
  auto built = DataflowGraph<TypedIr>::build(ir);
  ASSERT_TRUE(built.ok());
  const DataflowGraph<TypedIr>& g = *built;
  auto key = [&](int n) {
    IndexSet s(g.size());
    s.add(g.index_of(n));
    return structural_key(g, Candidate{SubGraph(g, s), "t", "r"});
  };
  EXPECT_NE(key(a), key(b));
  EXPECT_EQ(key(a), key(c));
  EXPECT_NE(key(a).find("relu:f32[8,64]"), std::string::npos);
}

TEST(StructuralKey, WorksOnTheAdjacencyIr) {
  // Two chains of three: 0 -> 1 -> 2 and 3 -> 4 -> 5, and a fork 6 -> {7, 8}.
  testing_ir::AdjacencyGraph ir;
  int a0 = ir.add();
  int a1 = ir.add({a0});
  int a2 = ir.add({a1});
  int b0 = ir.add();
  int b1 = ir.add({b0});
  int b2 = ir.add({b1});
  int c0 = ir.add();
  int c1 = ir.add({c0, c0});
  ir.roots = {a2, c1, b2};
  auto built = DataflowGraph<testing_ir::AdjacencyGraph>::build(ir);
  ASSERT_TRUE(built.ok());
  const auto& g = *built;
  auto key = [&](std::vector<int> nodes) {
    IndexSet s(g.size());
    for (int n : nodes) s.add(g.index_of(n));
    return structural_key(g, Candidate{SubGraph(g, s), "t", "r"});
  };
  EXPECT_EQ(key({a1, a2}), key({b1, b2}));
  EXPECT_NE(key({a1, a2}), key({a0, a1, a2}));
  EXPECT_NE(key({a1}), key({c1}));  // one input vs the same input twice
}

}  // namespace
}  // namespace collage
