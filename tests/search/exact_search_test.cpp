#include "collage/search/exact_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/combine.hpp"
#include "collage/search/beam_search.hpp"
#include "common/adjacency_ir.hpp"
#include "common/brute_force.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"
#include "common/random_candidates.hpp"
#include "common/random_dag.hpp"
#include "common/random_expr_graph.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;
using testing_ir::random_candidates;
using testing_ir::random_expr_graph;

/// The successors met walking `space` breadth first from its start (at most 300 states), as
/// (item, hash of the covered set) in the order met.
template <class G>
std::vector<std::pair<std::size_t, std::size_t>> walk_states(const detail::StateSpace<G>& space,
                                                             detail::SearchScratch& scratch) {
  std::vector<std::pair<std::size_t, std::size_t>> met;
  std::vector<detail::SearchState> queue{space.start(scratch)};
  for (std::size_t at = 0; at < queue.size() && queue.size() < 300; ++at) {
    const detail::SearchState state = queue[at];
    space.for_each_successor(state, scratch, [&](std::size_t item, detail::SearchState next, double) {
      met.emplace_back(item, next.covered.hash());
      queue.push_back(std::move(next));
    });
  }
  return met;
}

TEST(StateSpace, TwoWalksOverOneSpaceRunAtOnceEachWithItsOwnScratch) {
  testing_ir::for_each_random_problem(77, 40, [&](int trial, const DataflowGraph<AdjacencyGraph>&,
                                                  const SearchProblem<AdjacencyGraph>& problem) {
    const detail::StateSpace<AdjacencyGraph> space(problem);
    detail::SearchScratch serial;
    const auto expected = walk_states(space, serial);
    std::vector<std::pair<std::size_t, std::size_t>> got[2];
    std::thread first([&] {
      detail::SearchScratch scratch;
      got[0] = walk_states(space, scratch);
    });
    std::thread second([&] {
      detail::SearchScratch scratch;
      got[1] = walk_states(space, scratch);
    });
    first.join();
    second.join();
    EXPECT_EQ(got[0], expected) << "trial " << trial;
    EXPECT_EQ(got[1], expected) << "trial " << trial;
  });
}

TEST(ExactSearch, MatchesBruteForceOnRandomDags) {
  int compared = 0;
  testing_ir::for_each_random_problem(2024, 1000, [&](int trial, const DataflowGraph<AdjacencyGraph>& graph,
                                                      const SearchProblem<AdjacencyGraph>& problem) {
    auto expected = testing_ir::brute_force_best(problem);
    auto got = exact_search(problem);
    ASSERT_EQ(got.ok(), expected.has_value()) << "trial " << trial;
    if (!expected) return;
    ++compared;
    ASSERT_NEAR(got->effective_total.raw(), *expected, 1e-9 * (1 + *expected)) << "trial " << trial;
    // The result is a valid partitioning: disjoint, covering, acyclic.
    std::vector<IndexSet> parts;
    IndexSet used(graph.size());
    for (const Candidate& c : got->parts) {
      ASSERT_FALSE(c.sub_graph.inside().intersects(used));
      used |= c.sub_graph.inside();
      parts.push_back(c.sub_graph.inside());
    }
    EXPECT_EQ(used.count(), graph.size());
    EXPECT_TRUE(testing_ir::quotient_is_acyclic(graph, parts));
  });
  EXPECT_EQ(compared, 1000);
}

/// Exact search finds what brute force finds on `problem` (or fails where it does); `compared`
/// counts the problems that have a partitioning.
template <class G>
void expect_exact_matches_brute_force(const SearchProblem<G>& problem, int trial, int& compared) {
  std::optional<double> expected = testing_ir::brute_force_best(problem);
  Result<Partitioning> got = exact_search(problem);
  ASSERT_EQ(got.ok(), expected.has_value()) << "trial " << trial;
  if (!expected) return;
  ++compared;
  ASSERT_NEAR(got->effective_total.raw(), *expected, 1e-9 * (1 + *expected)) << "trial " << trial;
}

TEST(ExactSearch, MatchesBruteForceWithConstantsTuplesAndProjectionsInside) {
  // Candidates that hold nodes without kernels (pulled-in constants, a shared one among them;
  // tuples and projections) exercise the search's reduction of which candidates it tries.
  std::mt19937_64 rng(77);
  using G = testing_ir::ExprGraph;
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    G ir = random_expr_graph(rng, 5 + trial % 6);
    auto graph = DataflowGraph<G>::build(ir);
    ASSERT_TRUE(graph.ok()) << graph.error().message;
    std::vector<Candidate> all;
    for (int t = 0; t < 2 + trial % 2; ++t) {
      auto rule = combine(op_kind<G>(OpKind::opaque),
                          {Combiner<G>::all(), Combiner<G>::constant(), Combiner<G>::tuple_arg(),
                           Combiner<G>::tuple_proj()},
                          {3});
      for (Candidate c : rule.all_candidates(*graph, "t" + std::to_string(t))) {
        if (c.sub_graph.size() > 1 && rng() % 3 == 0) continue;
        c.cost = Cost::value(1.0 + static_cast<double>(rng() % 50) * std::pow(0.7, c.sub_graph.size() - 1.0));
        all.push_back(std::move(c));
      }
    }
    auto problem = SearchProblem<G>::build(*graph, all);
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    ASSERT_NO_FATAL_FAILURE(expect_exact_matches_brute_force(*problem, trial, compared));
  }
  EXPECT_GT(compared, 250);
}

TEST(SearchProblem, ItemsAreIndexedByFirstKernelNodeInCandidateOrder) {
  // Pulled-in constants come before their consumers, so a candidate's first inside node is often
  // not its first kernel node: the items' order differs from the candidates' order.
  std::mt19937_64 rng(91);
  using G = testing_ir::ExprGraph;
  for (int trial = 0; trial < 100; ++trial) {
    G ir = random_expr_graph(rng, 5 + trial % 6);
    auto graph = DataflowGraph<G>::build(ir);
    ASSERT_TRUE(graph.ok()) << graph.error().message;
    auto rule = combine(op_kind<G>(OpKind::opaque), {Combiner<G>::all(), Combiner<G>::constant()}, {3});
    std::vector<Candidate> all;
    for (const char* target : {"a", "b"}) {
      for (Candidate c : rule.all_candidates(*graph, target)) {
        // Every fifth multi-node candidate is invalid: it must not become an item.
        const bool invalid = c.sub_graph.size() > 1 && rng() % 5 == 0;
        c.cost = invalid ? Cost::invalid() : Cost::value(1.0 + static_cast<double>(rng() % 9));
        all.push_back(std::move(c));
      }
    }
    std::shuffle(all.begin(), all.end(), rng);
    const std::size_t usable = static_cast<std::size_t>(
        std::count_if(all.begin(), all.end(), [](const Candidate& c) { return !c.cost.is_invalid(); }));
    auto problem = SearchProblem<G>::build(*graph, std::move(all));
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    ASSERT_EQ(problem->size(), usable);
    std::size_t expected_first = 0;
    for (std::size_t node = 0; node < graph->size(); ++node) {
      const auto [first, last] = problem->starting_at(node);
      ASSERT_EQ(first, expected_first) << "trial " << trial << ", node " << node;  // ranges tile the items
      expected_first = last;
      for (std::size_t id = first; id < last; ++id) {
        const auto& item = (*problem)[id];
        const Candidate& c = item.candidate();
        std::size_t first_kernel = npos;
        for (std::size_t i : c.sub_graph.inside()) {
          if (graph->needs_kernel(i)) {
            first_kernel = i;
            break;
          }
        }
        EXPECT_EQ(first_kernel, node);
        EXPECT_EQ(item.first_kernel, node);
        EXPECT_EQ(item.inside, c.sub_graph.inside());
        EXPECT_EQ(item.input, c.sub_graph.input());
        EXPECT_EQ(item.cost, c.cost);
        if (id > first) {
          EXPECT_LT(&(*problem)[id - 1].candidate(), &c) << "candidate order within a node";
        }
      }
    }
    EXPECT_EQ(expected_first, problem->size());
  }
}

/// Candidates of any shape: each kernel node alone, plus the convex hulls of random pairs and
/// triples of nodes (up to 7 nodes; several exits, joins of independent branches, disconnected
/// pieces), for `targets` targets with random costs.
template <class G>
std::vector<Candidate> random_convex_candidates(const DataflowGraph<G>& graph, std::mt19937_64& rng, int targets) {
  std::vector<Candidate> all;
  const std::size_t n = graph.size();
  for (int t = 0; t < targets; ++t) {
    const std::string target = "t" + std::to_string(t);
    auto add = [&](IndexSet inside) {
      Candidate c{SubGraph(graph, std::move(inside)), target, "hull"};
      c.cost = Cost::value(static_cast<double>(1 + rng() % 40) * std::pow(0.75, c.sub_graph.size() - 1.0) *
                           static_cast<double>(c.sub_graph.size()));
      all.push_back(std::move(c));
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (graph.needs_kernel(i)) add(IndexSet(n, {i}));
    }
    for (std::size_t k = 0; k < 3 * n; ++k) {
      IndexSet seeds(n);
      for (std::size_t m = 0; m < 2 + rng() % 2; ++m) seeds.add(rng() % n);
      IndexSet hull = seeds;
      for (std::size_t x = 0; x < n; ++x) {
        for (std::size_t a : seeds) {
          for (std::size_t b : seeds) {
            if (graph.reaches(a, x) && graph.reaches(x, b)) hull.add(x);
          }
        }
      }
      if (hull.count() > 7 || !collage::is_convex(graph, hull)) continue;
      add(std::move(hull));
    }
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

TEST(ExactSearch, MatchesBruteForceWithCandidatesOfAnyShape) {
  // The search tries only some of the applicable candidates in each state (see
  // StateSpace::for_each_successor); candidates that hold joins, several exits or disconnected
  // pieces make parts wait on each other in every way.
  std::mt19937_64 rng(31337);
  int compared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    AdjacencyGraph ir = testing_ir::random_dag(rng, 6 + rng() % 6, 1 + rng() % 3, 0);
    auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
    ASSERT_TRUE(graph.ok());
    auto problem = SearchProblem<AdjacencyGraph>::build(*graph, random_convex_candidates(*graph, rng, 1 + trial % 3));
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    ASSERT_NO_FATAL_FAILURE(expect_exact_matches_brute_force(*problem, trial, compared));
  }
  EXPECT_GT(compared, 350);
}

/// Searches 16 parallel chains of 20 ops joined by a tree of adds, with depth-3 candidates of
/// two targets (those that hold a join only when `with_joins`); returns the states generated
/// per node, after checking the result against beam search.
double wide_branch_states_per_node(bool with_joins) {
  using G = testing_ir::ExprGraph;
  G ir;
  testing_ir::models::wide_branches(ir, 16, 20);
  auto graph = DataflowGraph<G>::build(ir);
  EXPECT_TRUE(graph.ok());
  auto holds_join = [&](const SubGraph& sub) {
    for (std::size_t i : sub.inside()) {
      std::size_t kernel_inputs = 0;
      for (std::size_t j : graph->inputs(i)) kernel_inputs += graph->needs_kernel(j) ? 1 : 0;
      if (kernel_inputs == 2) return true;
    }
    return false;
  };
  std::vector<Candidate> all;
  for (const char* target : {"a", "b"}) {
    auto rule = combine(op_kind<G>(OpKind::opaque), {Combiner<G>::all()}, {3});
    for (Candidate c : rule.all_candidates(*graph, target)) {
      if (!with_joins && c.sub_graph.size() > 1 && holds_join(c.sub_graph)) continue;
      c.cost = Cost::value((target[0] == 'a' ? 1.0 : 1.1) * std::pow(0.9, c.sub_graph.size() - 1.0) *
                           static_cast<double>(c.sub_graph.size()));
      all.push_back(std::move(c));
    }
  }
  auto problem = SearchProblem<G>::build(*graph, all);
  EXPECT_TRUE(problem.ok());
  Result<Partitioning> got = exact_search(*problem);
  EXPECT_TRUE(got.ok()) << got.error().message;
  if (!got.ok()) return 1e9;
  Result<Partitioning> beam = beam_search(*problem, BeamSearchOptions{64});
  EXPECT_TRUE(beam.ok());
  if (beam.ok()) {
    EXPECT_LE(got->effective_total.raw(), beam->effective_total.raw() + 1e-9);
  }
  return static_cast<double>(got->stats.states_generated) / static_cast<double>(graph->size());
}

TEST(ExactSearch, IndependentBranchesAreNotInterleaved) {
  // Interleaving the 16 chains in every order would create about 21^16 states; the search covers
  // them branch by branch.
  EXPECT_LT(wide_branch_states_per_node(false), 4.0);
  // A candidate that holds a join and the end of a branch waits for the other branch: it sends
  // the search into that one branch only, not into all the branches below the join.
  // (10.7 states per node when written; without that rule the search gave up.)
  EXPECT_LT(wide_branch_states_per_node(true), 25.0);
}

TEST(ExactSearch, NeverReturnsTheCyclicTrap) {
  // a -> d, b -> c, a -> c, b -> d; parts {a,d} and {b,c} are each convex but depend on each
  // other. They are by far the cheapest candidates, yet the search must not pick both.
  AdjacencyGraph ir = testing_ir::crossed_pairs();
  const int a = 0, b = 1, c = 2, d = 3;
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  auto cand = [&](std::initializer_list<int> nodes, double cost) {
    IndexSet s(g.size());
    for (int n : nodes) s.add(g.index_of(n));
    return Candidate{SubGraph(g, s), "t", "r", Cost::value(cost)};
  };
  std::vector<Candidate> candidates = {cand({a, d}, 1), cand({b, c}, 1), cand({a}, 10), cand({b}, 10),
                                       cand({c}, 10), cand({d}, 10)};
  auto problem = SearchProblem<AdjacencyGraph>::build(g, candidates);
  ASSERT_TRUE(problem.ok());
  auto best = exact_search(*problem);
  ASSERT_TRUE(best.ok());
  // Best acyclic: one of the pairs plus two singletons (1 + 10 + 10).
  EXPECT_DOUBLE_EQ(best->total.raw(), 21.0);
  ASSERT_EQ(best->parts.size(), 3u);
}

TEST(ExactSearch, ReachesPartsWhoseFirstNodeIsNotTheFirstUncovered) {
  // x -> 3, y -> f -> 3 (3 = g(x, f)). The part {x, g} must come after {y, f}; a search that
  // only extends the first uncovered node (x) could never choose it.
  AdjacencyGraph ir;
  int x = ir.add();
  int y = ir.add();
  int f = ir.add({y});
  int g3 = ir.add({x, f});
  ir.roots = {g3};
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  auto cand = [&](std::initializer_list<int> nodes, double cost) {
    IndexSet s(g.size());
    for (int n : nodes) s.add(g.index_of(n));
    return Candidate{SubGraph(g, s), "t", "r", Cost::value(cost)};
  };
  auto problem = SearchProblem<AdjacencyGraph>::build(
      g, {cand({x, g3}, 1), cand({y, f}, 1), cand({x}, 5), cand({y}, 5), cand({f}, 5), cand({g3}, 5)});
  ASSERT_TRUE(problem.ok());
  auto best = exact_search(*problem);
  ASSERT_TRUE(best.ok());
  EXPECT_DOUBLE_EQ(best->total.raw(), 2.0);
}

TEST(ExactSearch, ASharedScalarLeftOutOfOneCandidateCanJoinAnother) {
  // a = multiply(x, s), b = multiply(a, s) with one inlinable scalar s. Once {a} is chosen, s
  // may still go into {s, b}: the search may settle a scalar early only when no candidate can
  // hold it any more.
  using G = testing_ir::ExprGraph;
  G ir;
  const auto* x = ir.var("x");
  const auto* s = ir.scalar();
  const auto* a = ir.call("multiply", {x, s});
  const auto* b = ir.call("multiply", {a, s});
  ir.output(b);
  auto graph = DataflowGraph<G>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  ASSERT_TRUE(g.is_inlinable(g.index_of(s)));
  auto cand = [&](std::initializer_list<const testing_ir::Expr*> nodes, double cost) {
    IndexSet inside(g.size());
    for (const auto* n : nodes) inside.add(g.index_of(n));
    return Candidate{SubGraph(g, inside), "t", "r", Cost::value(cost)};
  };
  auto problem = SearchProblem<G>::build(g, {cand({a}, 1), cand({s, a}, 10), cand({b}, 10), cand({s, b}, 1)});
  ASSERT_TRUE(problem.ok());
  auto best = exact_search(*problem);
  ASSERT_TRUE(best.ok()) << best.error().message;
  EXPECT_DOUBLE_EQ(best->total.raw(), 2.0);
}

TEST(ExactSearch, UncoveredNodeIsAnErrorNamingIt) {
  testing_ir::ExprGraph ir;
  auto x = ir.var("x");
  auto r = ir.call("relu", {x});
  auto s = ir.call("softmax", {r});
  ir.output(s);
  auto graph = DataflowGraph<testing_ir::ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  auto candidates = op_kind<testing_ir::ExprGraph>(OpKind::anchor).all_candidates(*graph, "tvm");
  auto problem = SearchProblem<testing_ir::ExprGraph>::build(*graph, candidates);
  ASSERT_FALSE(problem.ok());
  EXPECT_EQ(problem.error().message, "no rule proposed a candidate for node 'softmax' (targets tried: tvm)");
}

TEST(ExactSearch, HostNodesAndTuplesAreLeftBehindAcyclically) {
  // relu and abs feed a tuple; a projection of the tuple feeds exp. The tuple and projection
  // need no kernel; exp may only run after both relu and abs.
  testing_ir::ExprGraph ir;
  auto x = ir.var("x");
  auto r = ir.call("relu", {x});
  auto a = ir.call("abs", {x});
  auto t = ir.tuple({r, a});
  auto p = ir.get_item(t, 1);
  auto e = ir.call("exp", {p});
  ir.output(e);
  auto graph = DataflowGraph<testing_ir::ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  std::vector<Candidate> candidates;
  for (Candidate c : op_kind<testing_ir::ExprGraph>(OpKind::opaque).all_candidates(*graph, "t")) {
    c.cost = Cost::value(1);
    candidates.push_back(std::move(c));
  }
  auto problem = SearchProblem<testing_ir::ExprGraph>::build(*graph, candidates);
  ASSERT_TRUE(problem.ok());
  auto best = exact_search(*problem);
  ASSERT_TRUE(best.ok());
  EXPECT_DOUBLE_EQ(best->total.raw(), 3.0);
  ASSERT_EQ(best->parts.size(), 3u);
  EXPECT_EQ(best->parts.back().sub_graph.inside(), IndexSet(graph->size(), {graph->index_of(e)}));
  EXPECT_EQ(best->host, (std::vector<std::size_t>{graph->index_of(x), graph->index_of(t), graph->index_of(p)}));
}

TEST(ExactSearch, UnknownCostsAreUsedOnlyWhenNothingKnownCovers) {
  testing_ir::ExprGraph ir;
  auto x = ir.var("x");
  auto r = ir.call("relu", {x});
  auto a = ir.call("abs", {r});
  ir.output(a);
  auto graph = DataflowGraph<testing_ir::ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  auto cand = [&](std::initializer_list<const testing_ir::Expr*> nodes, const char* target, Cost cost) {
    IndexSet s(g.size());
    for (auto n : nodes) s.add(g.index_of(n));
    return Candidate{SubGraph(g, s), target, "r", cost};
  };
  // The fused candidate is Unknown; the known singletons win even though they are expensive.
  auto problem = SearchProblem<testing_ir::ExprGraph>::build(
      g, {cand({r, a}, "lib", Cost::unknown()), cand({r}, "t", Cost::value(100)), cand({a}, "t", Cost::value(100)),
          cand({a}, "u", Cost::invalid())});
  ASSERT_TRUE(problem.ok());
  EXPECT_EQ(problem->size(), 3u);  // the Invalid candidate is gone
  auto best = exact_search(*problem);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->total, Cost::value(200));
  // With only the Unknown candidate covering abs, it is used and the total is Unknown.
  auto only = SearchProblem<testing_ir::ExprGraph>::build(g, {cand({r, a}, "lib", Cost::unknown()), cand({r}, "t", Cost::value(1))});
  ASSERT_TRUE(only.ok());
  auto forced = exact_search(*only);
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->total.is_unknown());
  EXPECT_EQ(forced->parts.size(), 1u);
}

TEST(ExactSearch, PenaltyPerPartition) {
  testing_ir::ExprGraph ir;
  auto x = ir.var("x");
  auto r = ir.call("relu", {x});
  auto a = ir.call("abs", {r});
  ir.output(a);
  auto graph = DataflowGraph<testing_ir::ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  std::vector<Candidate> candidates;
  auto rule = combine(op_kind<testing_ir::ExprGraph>(OpKind::opaque), {Combiner<testing_ir::ExprGraph>::all()}, {0});
  for (Candidate c : rule.all_candidates(*graph, "t")) {
    c.cost = Cost::value(c.sub_graph.size() == 2 ? 2.5 : 1.0);  // fusing costs more...
    candidates.push_back(std::move(c));
  }
  auto cheap = exact_search(*SearchProblem<testing_ir::ExprGraph>::build(*graph, candidates));
  ASSERT_TRUE(cheap.ok());
  EXPECT_EQ(cheap->parts.size(), 2u);
  SearchCosts costs;
  costs.penalty["t"] = 1.0;  // ...until each partition pays a transition penalty
  auto fused = exact_search(*SearchProblem<testing_ir::ExprGraph>::build(*graph, candidates, costs));
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(fused->parts.size(), 1u);
  EXPECT_EQ(fused->total, Cost::value(3.5));
}

TEST(ExactSearch, StateLimitIsAnError) {
  std::mt19937_64 rng(1);
  AdjacencyGraph ir = testing_ir::random_dag(rng, 14, 1, 0);
  auto graph = DataflowGraph<AdjacencyGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  auto problem = SearchProblem<AdjacencyGraph>::build(*graph, random_candidates(*graph, rng, 3));
  ASSERT_TRUE(problem.ok());
  auto limited = exact_search(*problem, {2});
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(limited.error().code, ErrorCode::search_gave_up);
  EXPECT_NE(limited.error().message.find("gave up after 2 states"), std::string::npos);
}

}  // namespace
}  // namespace collage
