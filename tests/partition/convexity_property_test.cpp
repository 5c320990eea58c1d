// Property tests over random DAGs and random node subsets: is_convex (partition/convexity.hpp's
// and DataflowGraph's), reaches, SubGraph's cached sets, SubGraph::check and are_touching, each
// against a brute-force definition computed from the full transitive closure of the (small) graph.

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/convexity.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/support/index_set.hpp"
#include "common/adjacency_ir.hpp"
#include "common/random_dag.hpp"

namespace {

using collage::DataflowGraph;
using collage::IndexSet;
using collage::SubGraph;
using collage::SubGraphConfig;
using collage::Validity;
using testing_ir::AdjacencyGraph;
using Graph = DataflowGraph<AdjacencyGraph>;

/// Brute-force facts about a small graph, from its edge lists alone.
struct Oracle {
  std::size_t n = 0;
  std::vector<std::vector<std::size_t>> succ;  // consumers (repeats allowed)
  std::vector<std::vector<std::size_t>> pred;  // inputs (repeats allowed)
  std::vector<bool> external;
  std::vector<std::vector<bool>> reach;  // reach[a][b]: a path a -> ... -> b (reflexive)

  explicit Oracle(const Graph& g) : n(g.size()), succ(n), pred(n), external(n, false), reach(n) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j : g.inputs(i)) {
        pred[i].push_back(j);
        succ[j].push_back(i);
      }
    }
    for (std::size_t r : g.roots()) external[r] = true;
    // Breadth-first search from every node.
    for (std::size_t a = 0; a < n; ++a) {
      std::vector<bool>& seen = reach[a];
      seen.assign(n, false);
      std::vector<std::size_t> queue{a};
      seen[a] = true;
      for (std::size_t head = 0; head < queue.size(); ++head) {
        for (std::size_t o : succ[queue[head]]) {
          if (!seen[o]) {
            seen[o] = true;
            queue.push_back(o);
          }
        }
      }
    }
  }

  /// Not convex: a path from an inside node through an outside node back to an inside node.
  bool convex(const std::vector<bool>& in) const {
    for (std::size_t a = 0; a < n; ++a) {
      if (!in[a]) continue;
      for (std::size_t o = 0; o < n; ++o) {
        if (in[o] || !reach[a][o]) continue;
        for (std::size_t b = 0; b < n; ++b) {
          if (in[b] && reach[o][b]) return false;
        }
      }
    }
    return true;
  }

  struct Boundary {
    std::vector<bool> entry, exit, input, output;
    std::size_t depth = 0;
    bool tap = false;  // an exit that also feeds an inside node
  };

  Boundary boundary(const std::vector<bool>& in) const {
    Boundary b;
    b.entry.assign(n, false);
    b.exit.assign(n, false);
    b.input.assign(n, false);
    b.output.assign(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      if (!in[i]) continue;
      for (std::size_t j : pred[i]) {
        if (!in[j]) {
          b.entry[i] = true;
          b.input[j] = true;
        }
      }
      if (external[i]) b.exit[i] = true;
      for (std::size_t o : succ[i]) {
        if (!in[o]) {
          b.exit[i] = true;
          b.output[o] = true;
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!b.exit[i]) continue;
      for (std::size_t o : succ[i]) b.tap = b.tap || in[o];
    }
    b.depth = longest_inside_path(in);
    return b;
  }

  /// Nodes on the longest path that stays inside, by memoised search over all inside start nodes
  /// (independent of index order: each node's longest path is its own successors' best plus one).
  std::size_t longest_inside_path(const std::vector<bool>& in) const {
    std::vector<std::size_t> memo(n, 0);
    std::size_t best = 0;
    // Iterate to a fixed point instead of assuming any topological order.
    bool changed = true;
    while (changed) {
      changed = false;
      for (std::size_t i = 0; i < n; ++i) {
        if (!in[i]) continue;
        std::size_t d = 1;
        for (std::size_t o : succ[i]) {
          if (in[o]) d = std::max(d, memo[o] + 1);
        }
        if (d != memo[i]) {
          memo[i] = d;
          changed = true;
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) best = std::max(best, memo[i]);
    return best;
  }

  /// Disjoint, an edge between them in either direction, and the union convex.
  bool touching(const std::vector<bool>& a, const std::vector<bool>& b) const {
    std::vector<bool> both(n, false);
    bool edge = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] && b[i]) return false;
      both[i] = a[i] || b[i];
      for (std::size_t o : succ[i]) edge = edge || (a[i] && b[o]) || (b[i] && a[o]);
    }
    return edge && convex(both);
  }
};

std::vector<bool> members(const IndexSet& s) {
  std::vector<bool> v(s.universe(), false);
  for (std::size_t i : s) v[i] = true;
  return v;
}

IndexSet to_set(std::size_t n, const std::vector<bool>& v) {
  IndexSet s(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (v[i]) s.add(i);
  }
  return s;
}

/// A random subset of one of several shapes, so that both convex and non-convex sets, taps and
/// non-taps all occur often.
IndexSet random_subset(const Graph& g, std::mt19937_64& rng) {
  const std::size_t n = g.size();
  IndexSet s(n);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0: {  // independent coin flips at a random density
      const double p = std::uniform_real_distribution<double>(0.05, 0.95)(rng);
      std::bernoulli_distribution coin(p);
      for (std::size_t i = 0; i < n; ++i) {
        if (coin(rng)) s.add(i);
      }
      break;
    }
    case 1: {  // a few nodes
      const std::size_t k = std::uniform_int_distribution<std::size_t>(1, std::min<std::size_t>(n, 4))(rng);
      for (std::size_t i = 0; i < k; ++i) s.add(pick(rng));
      break;
    }
    case 2: {  // an index range
      std::size_t a = pick(rng);
      std::size_t b = pick(rng);
      if (a > b) std::swap(a, b);
      for (std::size_t i = a; i <= b; ++i) s.add(i);
      break;
    }
    case 3: {  // a random walk along edges in either direction
      std::size_t v = pick(rng);
      s.add(v);
      const std::size_t steps = std::uniform_int_distribution<std::size_t>(0, n)(rng);
      for (std::size_t k = 0; k < steps; ++k) {
        const auto ins = g.inputs(v);
        const auto outs = g.outputs(v);
        const std::size_t degree = ins.size() + outs.size();
        if (degree == 0) break;
        const std::size_t e = std::uniform_int_distribution<std::size_t>(0, degree - 1)(rng);
        v = e < ins.size() ? ins[e] : outs[e - ins.size()];
        s.add(v);
      }
      break;
    }
    case 4: {  // the nodes between two nodes: convex by construction when non-empty
      std::size_t a = pick(rng);
      std::size_t b = pick(rng);
      if (a > b) std::swap(a, b);
      for (std::size_t i = a; i <= b; ++i) {
        if (g.reaches(a, i) && g.reaches(i, b)) s.add(i);
      }
      break;
    }
    default:  // empty now and then, full now and then
      if (std::bernoulli_distribution(0.5)(rng)) s = IndexSet::full(n);
      break;
  }
  return s;
}

struct Tally {
  std::size_t convex = 0, not_convex = 0, tap = 0, empty = 0, touching = 0, not_touching = 0;
};

void check_subset(const Graph& g, const Oracle& oracle, const IndexSet& s, Tally& tally) {
  SCOPED_TRACE("subset " + s.to_string());
  const std::vector<bool> in = members(s);
  const bool convex = oracle.convex(in);
  ASSERT_EQ(collage::is_convex(g, s), convex);
  (convex ? tally.convex : tally.not_convex) += 1;

  const SubGraph sub(g, s);
  ASSERT_EQ(collage::is_convex(g, s, sub.output()), convex);
  const Oracle::Boundary b = oracle.boundary(in);
  ASSERT_EQ(sub.inside(), s);
  ASSERT_EQ(sub.entry(), to_set(g.size(), b.entry));
  ASSERT_EQ(sub.exit(), to_set(g.size(), b.exit));
  ASSERT_EQ(sub.input(), to_set(g.size(), b.input));
  ASSERT_EQ(sub.output(), to_set(g.size(), b.output));
  ASSERT_EQ(sub.depth(), b.depth);
  ASSERT_EQ(sub.size(), s.count());

  // Taps allowed, no limits: valid iff non-empty and convex (one scope, no nested groups).
  const Validity with_taps = sub.check(g, SubGraphConfig{0, true, 0});
  if (s.empty()) {
    ASSERT_EQ(with_taps, Validity::empty);
    ++tally.empty;
  } else {
    ASSERT_EQ(with_taps, convex ? Validity::valid : Validity::not_convex);
  }

  // The default config forbids taps; the tap rule is checked before convexity.
  const Validity strict = sub.check(g, SubGraphConfig{});
  if (s.empty()) {
    ASSERT_EQ(strict, Validity::empty);
  } else if (b.tap) {
    ASSERT_EQ(strict, Validity::tap);
    ++tally.tap;
  } else {
    ASSERT_EQ(strict, convex ? Validity::valid : Validity::not_convex);
  }
  ASSERT_EQ(sub.is_valid(g, SubGraphConfig{}), strict == Validity::valid);

  // Limits on exits and depth, in check order: empty, too_many_exits, tap, too_deep, ..., not_convex.
  const std::size_t exits = s.empty() ? 0 : sub.exit().count();
  for (std::size_t max_exits : {std::size_t{1}, std::size_t{2}}) {
    for (std::size_t max_depth : {std::size_t{1}, std::size_t{3}}) {
      for (bool allow_taps : {false, true}) {
        Validity expected;
        if (s.empty()) {
          expected = Validity::empty;
        } else if (exits > max_exits) {
          expected = Validity::too_many_exits;
        } else if (!allow_taps && b.tap) {
          expected = Validity::tap;
        } else if (b.depth > max_depth) {
          expected = Validity::too_deep;
        } else {
          expected = convex ? Validity::valid : Validity::not_convex;
        }
        ASSERT_EQ(sub.check(g, SubGraphConfig{max_exits, allow_taps, max_depth}), expected)
            << "max_exits=" << max_exits << " allow_taps=" << allow_taps << " max_depth=" << max_depth;
      }
    }
  }
}

TEST(ConvexityProperty, RandomDagsAndSubsets) {
  std::mt19937_64 rng(424242);
  Tally tally;
  std::size_t graphs = 0;
  std::size_t subsets = 0;
  for (std::size_t round = 0; round < 3000; ++round) {
    const std::size_t n = 2 + round % 39;  // 2..40
    const std::size_t max_inputs = 1 + round % 4;
    const std::size_t window = (round / 4) % 3 == 0 ? 0 : 2 + (round / 12) % 8;
    const AdjacencyGraph ir = testing_ir::random_dag(rng, n, max_inputs, window);
    auto built = Graph::build(ir);
    ASSERT_TRUE(built.ok()) << built.error().message;
    const Graph& g = built.value();
    const Oracle oracle(g);
    ++graphs;

    // (b) reachability, every pair.
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        ASSERT_EQ(g.reaches(a, b), static_cast<bool>(oracle.reach[a][b])) << "reaches(" << a << ", " << b << ")";
      }
    }

    // (a), (c), (d) per subset.
    for (int k = 0; k < 10; ++k) {
      const IndexSet s = random_subset(g, rng);
      check_subset(g, oracle, s, tally);
      if (HasFatalFailure()) return;
      ++subsets;
    }

    // (e) are_touching on pairs of disjoint subsets (and now and then overlapping ones).
    for (int k = 0; k < 3; ++k) {
      IndexSet a = random_subset(g, rng);
      IndexSet b = random_subset(g, rng);
      if (k != 2) b -= a;
      const bool expected = oracle.touching(members(a), members(b));
      const SubGraph sa(g, a);
      const SubGraph sb(g, b);
      ASSERT_EQ(sa.are_touching(g, sb), expected) << a << " and " << b;
      ASSERT_EQ(sb.are_touching(g, sa), expected) << b << " and " << a;
      (expected ? tally.touching : tally.not_touching) += 1;
    }
  }
  EXPECT_EQ(graphs, 3000U);
  EXPECT_EQ(subsets, 30000U);
  // Every outcome must be well represented, or the properties were tested on easy cases only.
  EXPECT_GT(tally.convex, 3000U);
  EXPECT_GT(tally.not_convex, 3000U) << tally.not_convex;
  EXPECT_GT(tally.tap, 1000U);
  EXPECT_GT(tally.empty, 100U);
  EXPECT_GT(tally.touching, 500U);
  EXPECT_GT(tally.not_touching, 500U);
  RecordProperty("convex", std::to_string(tally.convex));
  RecordProperty("not_convex", std::to_string(tally.not_convex));
  RecordProperty("tap", std::to_string(tally.tap));
  RecordProperty("touching", std::to_string(tally.touching));
}

/// A reference for wide sets: one sweep up the index range of `inside`, tainting the outside
/// nodes that an inside node reaches through outside nodes only; convex unless a tainted node
/// feeds an inside one.
bool sweep_is_convex(const Graph& g, const IndexSet& inside) {
  const std::size_t lo = inside.first_inside();
  if (lo == collage::npos) return true;
  const std::size_t hi = inside.last_inside();
  std::vector<bool> tainted(hi - lo + 1, false);
  for (std::size_t i = lo; i <= hi; ++i) {
    const bool in = inside.contains(i);
    for (std::size_t j : g.inputs(i)) {
      if (j < lo) continue;
      if (tainted[j - lo]) {
        if (in) return false;
        tainted[i - lo] = true;
      } else if (!in && inside.contains(j)) {
        tainted[i - lo] = true;
      }
    }
  }
  return true;
}

TEST(ConvexityProperty, WideIndexRangesAgreeWithASweep) {
  // Sets spanning more than 4,096 indexes take is_convex's heap bitmap; compare with a
  // sweep on sets made convex or not by construction.
  std::mt19937_64 rng(4096);
  const AdjacencyGraph ir = testing_ir::random_dag(rng, 20000, 3, 40);
  auto built = Graph::build(ir);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const Graph& g = built.value();
  const std::size_t n = g.size();
  std::size_t convex = 0;
  std::size_t not_convex = 0;
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  for (int q = 0; q < 200; ++q) {
    std::size_t a = pick(rng);
    std::size_t b = pick(rng);
    if (a > b) std::swap(a, b);
    IndexSet s = IndexSet::range(n, a, b + 1);
    if (q % 2 == 1) {  // punch holes: usually no longer convex
      for (int h = 0; h < 3; ++h) s.remove(a + (b - a) * static_cast<std::size_t>(h + 1) / 4);
    }
    const bool expected = sweep_is_convex(g, s);
    ASSERT_EQ(collage::is_convex(g, s), expected) << a << ".." << b;
    ASSERT_EQ(collage::is_convex(g, s, SubGraph(g, s).output()), expected) << a << ".." << b;
    (expected ? convex : not_convex) += 1;
  }
  EXPECT_GT(convex, 20U);
  EXPECT_GT(not_convex, 20U);
}

TEST(ConvexityProperty, TouchingExamples) {
  // a -> b -> c and a -> c: {a} and {c} are not touching (their union skips b); {a} and {b} are.
  AdjacencyGraph ir;
  int a = ir.add();
  int b = ir.add({a});
  int c = ir.add({b, a});
  ir.roots = {c};
  auto built = Graph::build(ir);
  ASSERT_TRUE(built.ok());
  const Graph& g = built.value();
  const std::size_t n = g.size();
  const SubGraph sa(g, IndexSet(n, {g.index_of(a)}));
  const SubGraph sb(g, IndexSet(n, {g.index_of(b)}));
  const SubGraph sc(g, IndexSet(n, {g.index_of(c)}));
  EXPECT_TRUE(sa.are_touching(g, sb));
  EXPECT_TRUE(sb.are_touching(g, sc));
  EXPECT_FALSE(sa.are_touching(g, sc));
  EXPECT_FALSE(sa.are_touching(g, sa));  // not disjoint
  const SubGraph sab(g, IndexSet(n, {g.index_of(a), g.index_of(b)}));
  EXPECT_TRUE(sab.are_touching(g, sc));
}

}  // namespace
