// Cross-checks DataflowGraph's post-dominator tree (ipdom, pdom_depth, post_dominates,
// common_post_dominator) against Boost.Graph's Lengauer-Tarjan dominator tree, computed on the
// reversed dataflow graph from a virtual sink.

#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/version.hpp>
#include <gtest/gtest.h>

#include "collage/graph/dataflow_graph.hpp"
#include "common/adjacency_ir.hpp"
#include "common/random_dag.hpp"

namespace {

using collage::DataflowGraph;
using collage::npos;
using testing_ir::AdjacencyGraph;

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;

/// Immediate dominators of `g` from `entry` by Boost's 7-argument Lengauer-Tarjan overload, which
/// (unlike the 3-argument one in Boost 1.74) marks unreachable vertices as the algorithm requires:
/// dfnum = max and parent = null_vertex. Unreachable vertices get null_vertex as dominator, and so
/// does the entry.
std::vector<Vertex> boost_idom(const BoostGraph& g, Vertex entry) {
  const std::size_t n = boost::num_vertices(g);
  const auto index_map = boost::get(boost::vertex_index, g);
  std::vector<std::size_t> dfnum(n, (std::numeric_limits<std::size_t>::max)());
  std::vector<Vertex> parent(n, boost::graph_traits<BoostGraph>::null_vertex());
  std::vector<Vertex> by_dfnum(n, boost::graph_traits<BoostGraph>::null_vertex());
  std::vector<Vertex> idom(n, boost::graph_traits<BoostGraph>::null_vertex());
  boost::lengauer_tarjan_dominator_tree(g, entry, index_map,
                                        boost::make_iterator_property_map(dfnum.begin(), index_map),
                                        boost::make_iterator_property_map(parent.begin(), index_map), by_dfnum,
                                        boost::make_iterator_property_map(idom.begin(), index_map));
  return idom;
}

/// The reversed dataflow graph: vertex i is node i (post-DFS index), vertex n the virtual sink;
/// edges run from every node to each of its inputs, and from the sink to every result node.
BoostGraph reversed(const DataflowGraph<AdjacencyGraph>& graph) {
  const std::size_t n = graph.size();
  BoostGraph g(n + 1);
  for (std::size_t r : graph.roots()) boost::add_edge(n, r, g);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j : graph.inputs(i)) boost::add_edge(i, j, g);
  }
  return g;
}

/// The post-dominator tree as Boost computes it, with the sink as npos.
struct ReferenceTree {
  std::vector<std::size_t> parent;  // npos: the sink
  std::vector<std::size_t> depth;   // the sink is 0

  explicit ReferenceTree(const DataflowGraph<AdjacencyGraph>& graph) {
    const std::size_t n = graph.size();
    const std::vector<Vertex> idom = boost_idom(reversed(graph), n);
    parent.assign(n, npos);
    depth.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_NE(idom[i], boost::graph_traits<BoostGraph>::null_vertex()) << "node " << i << " unreachable";
      parent[i] = idom[i] == n ? npos : idom[i];
    }
    // A node's post-dominators come later in post-DFS order, so a descending sweep sees parents first.
    for (std::size_t i = n; i-- > 0;) {
      depth[i] = parent[i] == npos ? 1 : depth[parent[i]] + 1;
    }
  }

  /// a is b or an ancestor of b (npos, the sink, is everyone's ancestor).
  bool is_ancestor(std::size_t a, std::size_t b) const {
    for (std::size_t v = b; v != npos; v = parent[v]) {
      if (v == a) return true;
    }
    return a == npos;
  }

  /// The lowest common ancestor by walking up, marking b's ancestors first.
  std::size_t lca(std::size_t a, std::size_t b) const {
    std::vector<bool> mark(parent.size(), false);
    for (std::size_t v = b; v != npos; v = parent[v]) mark[v] = true;
    for (std::size_t v = a; v != npos; v = parent[v]) {
      if (mark[v]) return v;
    }
    return npos;
  }
};

DataflowGraph<AdjacencyGraph> build(const AdjacencyGraph& ir) {
  auto result = DataflowGraph<AdjacencyGraph>::build(ir);
  EXPECT_TRUE(result.ok()) << result.error().message;
  return std::move(result).value();
}

/// The post-dominator queries of `graph` agree with Boost; all pairs when `all_pairs`, else a sample.
void check_against_boost(const DataflowGraph<AdjacencyGraph>& graph, std::mt19937_64& rng, bool all_pairs,
                         const std::string& what) {
  SCOPED_TRACE(what);
  const std::size_t n = graph.size();
  const ReferenceTree ref(graph);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(graph.ipdom(i), ref.parent[i]) << "ipdom of node " << i;
    ASSERT_EQ(graph.pdom_depth(i), ref.depth[i]) << "depth of node " << i;
    // Depth consistency within collage's own answers.
    const std::size_t p = graph.ipdom(i);
    ASSERT_EQ(graph.pdom_depth(i), p == npos ? std::size_t{1} : graph.pdom_depth(p) + 1);
    // A post-dominator is a consumer-side node: it comes later in post-DFS order.
    if (p != npos) {
      ASSERT_GT(p, i);
    }
  }
  auto check_pair = [&](std::size_t a, std::size_t b) {
    ASSERT_EQ(graph.post_dominates(a, b), ref.is_ancestor(a, b)) << "post_dominates(" << a << ", " << b << ")";
    ASSERT_EQ(graph.common_post_dominator(a, b), ref.lca(a, b)) << "common_post_dominator(" << a << ", " << b << ")";
  };
  if (all_pairs) {
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) check_pair(a, b);
    }
  } else {
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    for (std::size_t k = 0; k < 4 * n; ++k) check_pair(pick(rng), pick(rng));
    for (std::size_t a = 0; a < n; ++a) check_pair(a, a);
  }
}

// ---------------------------------------------------------------------------------------------
// The Boost reference itself.

TEST(BoostDominatorReference, SevenArgumentFormHandlesUnreachableVertexFeedingReachablePart) {
  // entry(0) -> a(1) -> b(2), and u(3) -> b with u unreachable from entry. idom(b) = a.
  BoostGraph g(4);
  boost::add_edge(0, 1, g);
  boost::add_edge(1, 2, g);
  boost::add_edge(3, 2, g);
  const std::vector<Vertex> idom = boost_idom(g, 0);
  const Vertex null = boost::graph_traits<BoostGraph>::null_vertex();
  EXPECT_EQ(idom[0], null);
  EXPECT_EQ(idom[1], Vertex{0});
  EXPECT_EQ(idom[2], Vertex{1});
  EXPECT_EQ(idom[3], null);

#if BOOST_VERSION <= 107400
  // Why the 7-argument form: Boost 1.74's 3-argument overload numbers unreachable vertices 0 like
  // the entry, so u is taken as b's semi-dominator and b never gets its dominator.
  std::vector<Vertex> wrong(4, null);
  boost::lengauer_tarjan_dominator_tree(
      g, Vertex{0}, boost::make_iterator_property_map(wrong.begin(), boost::get(boost::vertex_index, g)));
  EXPECT_NE(wrong[2], Vertex{1}) << "Boost's 3-argument overload is fixed here; the 7-argument form is still right";
#endif
}

TEST(BoostDominatorReference, UnreachableFeederOnReversedDataflowGraph) {
  // The reversed graph of a diamond 0 -> {1, 2} -> 3 (result), plus an extra Boost vertex 5 that
  // the sink (4) cannot reach and that feeds node 0 and node 1 in the reversed graph.
  testing_ir::AdjacencyGraph ir;
  int a = ir.add();
  int b = ir.add({a});
  int c = ir.add({a});
  int d = ir.add({b, c});
  ir.roots = {d};
  const DataflowGraph<AdjacencyGraph> graph = build(ir);
  ASSERT_EQ(graph.size(), 4U);
  BoostGraph g = reversed(graph);
  const Vertex extra = boost::add_vertex(g);
  boost::add_edge(extra, 0, g);
  boost::add_edge(extra, 1, g);
  const std::vector<Vertex> idom = boost_idom(g, 4);
  EXPECT_EQ(idom[extra], boost::graph_traits<BoostGraph>::null_vertex());
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const std::size_t expected = graph.ipdom(i) == npos ? 4 : graph.ipdom(i);
    EXPECT_EQ(idom[i], expected) << "node " << i;
  }
  EXPECT_EQ(idom[graph.index_of(a)], graph.index_of(d));
}

// ---------------------------------------------------------------------------------------------
// Hand-written graphs with known post-dominators.

TEST(PostDominators, Diamond) {
  AdjacencyGraph ir;
  int a = ir.add();
  int b = ir.add({a});
  int c = ir.add({a});
  int d = ir.add({b, c});
  ir.roots = {d};
  const auto graph = build(ir);
  const std::size_t ia = graph.index_of(a), ib = graph.index_of(b), ic = graph.index_of(c), id = graph.index_of(d);
  EXPECT_EQ(graph.ipdom(id), npos);
  EXPECT_EQ(graph.ipdom(ib), id);
  EXPECT_EQ(graph.ipdom(ic), id);
  EXPECT_EQ(graph.ipdom(ia), id);
  EXPECT_EQ(graph.pdom_depth(id), 1U);
  EXPECT_EQ(graph.pdom_depth(ia), 2U);
  EXPECT_TRUE(graph.post_dominates(id, ia));
  EXPECT_FALSE(graph.post_dominates(ib, ia));
  EXPECT_FALSE(graph.post_dominates(ic, ia));
  EXPECT_TRUE(graph.post_dominates(ia, ia));
  EXPECT_FALSE(graph.post_dominates(ia, id));
  EXPECT_EQ(graph.common_post_dominator(ib, ic), id);
  EXPECT_EQ(graph.common_post_dominator(ia, ib), id);
  EXPECT_EQ(graph.common_post_dominator(id, id), id);
  std::mt19937_64 rng(1);
  check_against_boost(graph, rng, true, "diamond");
}

TEST(PostDominators, Chain) {
  const AdjacencyGraph ir = testing_ir::chain(10);
  const auto graph = build(ir);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(graph.ipdom(i), i + 1 < 10 ? i + 1 : npos);
    EXPECT_EQ(graph.pdom_depth(i), 10 - i);
    for (std::size_t j = 0; j < 10; ++j) {
      EXPECT_EQ(graph.post_dominates(j, i), j >= i);
      EXPECT_EQ(graph.common_post_dominator(i, j), std::max(i, j));
    }
  }
  std::mt19937_64 rng(2);
  check_against_boost(graph, rng, true, "chain");
}

TEST(PostDominators, TwoResults) {
  // x feeds two results r1 and r2: only the sink post-dominates x. y feeds only r2.
  AdjacencyGraph ir;
  int x = ir.add();
  int y = ir.add();
  int r1 = ir.add({x});
  int r2 = ir.add({x, y});
  ir.roots = {r1, r2};
  const auto graph = build(ir);
  const std::size_t ix = graph.index_of(x), iy = graph.index_of(y), i1 = graph.index_of(r1), i2 = graph.index_of(r2);
  EXPECT_EQ(graph.ipdom(i1), npos);
  EXPECT_EQ(graph.ipdom(i2), npos);
  EXPECT_EQ(graph.ipdom(ix), npos);
  EXPECT_EQ(graph.ipdom(iy), i2);
  EXPECT_EQ(graph.pdom_depth(ix), 1U);
  EXPECT_EQ(graph.pdom_depth(iy), 2U);
  EXPECT_EQ(graph.common_post_dominator(i1, i2), npos);
  EXPECT_EQ(graph.common_post_dominator(ix, iy), npos);
  EXPECT_EQ(graph.common_post_dominator(iy, i2), i2);
  EXPECT_FALSE(graph.post_dominates(i1, ix));
  EXPECT_TRUE(graph.post_dominates(i2, iy));
  std::mt19937_64 rng(3);
  check_against_boost(graph, rng, true, "two results");
}

TEST(PostDominators, ResultThatAlsoFeedsAnotherNode) {
  // r is a result and also feeds s (another result): r's only post-dominator is the sink, and a,
  // which feeds only r, is post-dominated by r.
  AdjacencyGraph ir;
  int a = ir.add();
  int r = ir.add({a});
  int s = ir.add({r});
  ir.roots = {s, r};
  const auto graph = build(ir);
  EXPECT_EQ(graph.ipdom(graph.index_of(r)), npos);
  EXPECT_EQ(graph.ipdom(graph.index_of(a)), graph.index_of(r));
  EXPECT_EQ(graph.ipdom(graph.index_of(s)), npos);
  EXPECT_FALSE(graph.post_dominates(graph.index_of(s), graph.index_of(r)));
  std::mt19937_64 rng(4);
  check_against_boost(graph, rng, true, "result feeding another node");
}

TEST(PostDominators, RepeatedInputs) {
  // b uses a twice; c uses b three times: a chain as far as post-dominators go.
  AdjacencyGraph ir;
  int a = ir.add();
  int b = ir.add({a, a});
  int c = ir.add({b, b, b});
  ir.roots = {c};
  const auto graph = build(ir);
  EXPECT_EQ(graph.ipdom(graph.index_of(a)), graph.index_of(b));
  EXPECT_EQ(graph.ipdom(graph.index_of(b)), graph.index_of(c));
  std::mt19937_64 rng(5);
  check_against_boost(graph, rng, true, "repeated inputs");
}

TEST(PostDominators, SingleNode) {
  AdjacencyGraph ir;
  ir.roots = {ir.add()};
  const auto graph = build(ir);
  ASSERT_EQ(graph.size(), 1U);
  EXPECT_EQ(graph.ipdom(0), npos);
  EXPECT_EQ(graph.pdom_depth(0), 1U);
  EXPECT_TRUE(graph.post_dominates(0, 0));
  EXPECT_EQ(graph.common_post_dominator(0, 0), 0U);
}

TEST(PostDominators, EmptyGraph) {
  const AdjacencyGraph ir;
  const auto graph = build(ir);
  EXPECT_EQ(graph.size(), 0U);
  EXPECT_TRUE(graph.roots().empty());
}

// ---------------------------------------------------------------------------------------------
// Random DAGs.

TEST(PostDominators, MatchBoostOnRandomDags) {
  struct Shape {
    std::size_t max_inputs;
    std::size_t window;
  };
  const Shape shapes[] = {{1, 0}, {2, 0}, {3, 0}, {5, 0}, {2, 3}, {3, 5}, {4, 10}, {2, 1}};
  std::mt19937_64 rng(20240602);
  std::size_t graphs = 0;
  std::size_t nontrivial = 0;  // nodes whose ipdom is neither the sink nor a direct consumer
  for (const Shape& shape : shapes) {
    for (std::size_t n = 1; n <= 60; ++n) {
      const std::size_t copies = n <= 20 ? 20 : 10;
      for (std::size_t c = 0; c < copies; ++c) {
        const AdjacencyGraph ir = testing_ir::random_dag(rng, n, shape.max_inputs, shape.window);
        const auto graph = build(ir);
        ASSERT_EQ(graph.size(), n);
        check_against_boost(graph, rng, n <= 24,
                            "n=" + std::to_string(n) + " max_inputs=" + std::to_string(shape.max_inputs) +
                                " window=" + std::to_string(shape.window) + " copy=" + std::to_string(c));
        if (HasFatalFailure()) return;
        ++graphs;
        for (std::size_t i = 0; i < graph.size(); ++i) {
          const std::size_t p = graph.ipdom(i);
          if (p == npos) continue;
          bool direct = false;
          for (std::size_t o : graph.outputs(i)) direct = direct || o == p;
          nontrivial += direct ? 0 : 1;
        }
      }
    }
  }
  EXPECT_GE(graphs, 5000U);
  // The sample must exercise post-dominators that are not simply the only consumer.
  EXPECT_GT(nontrivial, 500U) << nontrivial;
}

}  // namespace
