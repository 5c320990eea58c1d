#include "collage/search/evolutionary_search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "collage/cost/mock_oracle.hpp"
#include "collage/partitioner.hpp"
#include "collage/rules/base_rules.hpp"
#include "collage/rules/combine.hpp"
#include "collage/search/exact_search.hpp"
#include "common/adjacency_ir.hpp"
#include "common/brute_force.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"
#include "common/random_candidates.hpp"
#include "common/random_dag.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;
using testing_ir::ExprGraph;

/// Which part holds each node (npos: the host).
std::vector<std::size_t> owners(std::size_t n, const Partitioning& p) {
  std::vector<std::size_t> owner(n, npos);
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    for (std::size_t i : p.parts[k].sub_graph.inside()) owner[i] = k;
  }
  return owner;
}

/// A non-additive end-to-end cost: the sum of the parts' costs plus `transfer` for every edge
/// between two parts of different targets (a copy between backends). Counts its calls.
template <class G>
class TransferOracle : public EndToEndOracle<G> {
 public:
  explicit TransferOracle(double transfer) : transfer_(transfer) {}
  Result<Cost> evaluate(const DataflowGraph<G>& graph, const Partitioning& p) override {
    ++calls;
    return cost(graph, p);
  }
  Cost cost(const DataflowGraph<G>& graph, const Partitioning& p) const {
    Cost total = Cost::zero();
    for (const Candidate& c : p.parts) total += c.cost;
    const std::vector<std::size_t> owner = owners(graph.size(), p);
    for (std::size_t v = 0; v < graph.size(); ++v) {
      for (std::size_t u : graph.inputs(v)) {
        if (owner[u] == npos || owner[v] == npos || owner[u] == owner[v]) continue;
        if (p.parts[owner[u]].target != p.parts[owner[v]].target) total += Cost::value(transfer_);
      }
    }
    return total;
  }
  std::string name() const override { return "transfer"; }
  std::size_t calls = 0;

 private:
  double transfer_;
};

/// Parts as "target:{inside}" strings, sorted (order-independent identity of a partitioning).
std::vector<std::string> part_names(const Partitioning& p) {
  std::vector<std::string> out;
  for (const Candidate& c : p.parts) out.push_back(c.target + ":" + c.sub_graph.inside().to_string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Checks that `p` is a valid partitioning of `graph`: disjoint parts covering every kernel node,
/// `host` the nodes in no part, parts in a topological order, the quotient acyclic, and `total`
/// the sum of the parts' costs.
template <class G>
void expect_valid(const DataflowGraph<G>& graph, const Partitioning& p) {
  IndexSet used(graph.size());
  std::vector<IndexSet> parts;
  Cost total = Cost::zero();
  for (const Candidate& c : p.parts) {
    EXPECT_FALSE(c.sub_graph.inside().intersects(used)) << c.to_string();
    used |= c.sub_graph.inside();
    parts.push_back(c.sub_graph.inside());
    ASSERT_FALSE(c.cost.is_unknown());
    total += c.cost;
  }
  std::vector<std::size_t> host;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (graph.needs_kernel(i)) {
      EXPECT_TRUE(used.contains(i)) << "kernel node " << i << " uncovered";
    }
    if (!used.contains(i)) host.push_back(i);
  }
  EXPECT_EQ(p.host, host);
  EXPECT_TRUE(testing_ir::quotient_is_acyclic(graph, parts));
  const std::vector<std::size_t> owner = owners(graph.size(), p);
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    for (std::size_t i : p.parts[k].sub_graph.input()) {
      if (owner[i] != npos) {
        EXPECT_LT(owner[i], k) << "part " << k << " reads a later part";
      }
    }
  }
  if (total.is_known()) {
    EXPECT_NEAR(p.total.raw(), total.raw(), 1e-9 * (1 + total.raw()));
  } else {
    EXPECT_EQ(p.total, total);
  }
}

/// A hand-made graph over the adjacency IR with candidates given by node lists.
/// Not movable: the graph points at the IR.
struct HandMade {
  HandMade() = default;
  HandMade(const HandMade&) = delete;
  HandMade& operator=(const HandMade&) = delete;

  AdjacencyGraph ir;
  std::optional<DataflowGraph<AdjacencyGraph>> graph;
  std::vector<Candidate> candidates;

  void build() {
    auto g = DataflowGraph<AdjacencyGraph>::build(ir);
    ASSERT_TRUE(g.ok());
    graph.emplace(std::move(g).value());
  }
  void add(std::initializer_list<int> nodes, const char* target, double cost) {
    IndexSet s(graph->size());
    for (int n : nodes) s.add(graph->index_of(n));
    candidates.push_back(Candidate{SubGraph(*graph, s), target, "r", Cost::value(cost)});
  }
};

/// A chain a -> b -> c -> d with single-node candidates on targets t and u. Per candidate, the
/// targets alternate (t: 1, 2, 1, 1.5; u: 2, 1, 2, 1), so the additive optimum alternates too:
/// t, u, t, u for 4, but with three transfers.
void alternating_chain(HandMade& h) {
  int a = h.ir.add();
  int b = h.ir.add({a});
  int c = h.ir.add({b});
  int d = h.ir.add({c});
  h.ir.roots = {d};
  h.build();
  const double t[] = {1, 2, 1, 1.5};
  const double u[] = {2, 1, 2, 1};
  const int nodes[] = {a, b, c, d};
  for (int k = 0; k < 4; ++k) {
    h.add({nodes[k]}, "t", t[k]);
    h.add({nodes[k]}, "u", u[k]);
  }
}

/// The best end-to-end cost over every target assignment of alternating_chain()'s four singletons
/// accepted by `allowed` (a brute-force reference).
template <class Fitness>
Cost best_assignment(const SearchProblem<AdjacencyGraph>& problem, Fitness&& fitness) {
  Cost best = Cost::invalid();
  for (int mask = 0; mask < 16; ++mask) {
    std::vector<Candidate> parts;
    for (std::size_t node = 0; node < 4; ++node) {
      const std::string target = (mask >> node) & 1 ? "u" : "t";
      for (std::size_t id = 0; id < problem.size(); ++id) {
        const Candidate& c = problem[id].candidate();
        if (c.target == target && c.sub_graph.first_inside() == node) {
          parts.push_back(c);
          parts.back().cost = problem[id].cost;
        }
      }
    }
    Partitioning p;
    p.parts = parts;
    Result<Cost> f = fitness(problem.graph(), p);
    if (f.ok() && *f < best) best = *f;
  }
  return best;
}

/// alternating_chain(), its search problem, and the exact search's answer (where a refinement
/// starts).
struct AlternatingChain : ::testing::Test {
  HandMade h;
  std::optional<SearchProblem<AdjacencyGraph>> problem;
  std::optional<Partitioning> start;

  void SetUp() override {
    alternating_chain(h);
    auto built = SearchProblem<AdjacencyGraph>::build(*h.graph, h.candidates);
    ASSERT_TRUE(built.ok());
    problem.emplace(std::move(built).value());
    auto found = exact_search(*problem);
    ASSERT_TRUE(found.ok());
    start.emplace(std::move(found).value());
  }
};

TEST_F(AlternatingChain, TransferPenaltyBeatsTheAdditiveOptimum) {
  EXPECT_EQ(part_names(*start), (std::vector<std::string>{"t:{0}", "t:{2}", "u:{1}", "u:{3}"}));
  EXPECT_EQ(start->total, Cost::value(4));

  TransferOracle<AdjacencyGraph> oracle(5.0);
  EXPECT_EQ(oracle.cost(*h.graph, *start), Cost::value(4 + 3 * 5));
  // Every mixed assignment pays at least one transfer (>= 4 + 5); all-t costs 5.5, all-u 6.
  // The fitness returns a Result<Cost> itself: converted in best_assignment, g++ 12 with ASan at -O1 sees a
  // maybe-uninitialized Error (-Wmaybe-uninitialized, a false positive).
  auto fitness = [&](const auto& g, const Partitioning& p) -> Result<Cost> { return oracle.cost(g, p); };
  EXPECT_EQ(best_assignment(*problem, fitness), Cost::value(5.5));

  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, oracle, {}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  expect_valid(*h.graph, *refined);
  EXPECT_EQ(part_names(*refined), (std::vector<std::string>{"t:{0}", "t:{1}", "t:{2}", "t:{3}"}));
  EXPECT_TRUE(stats.improved);
  EXPECT_EQ(stats.start_fitness, Cost::value(19));
  EXPECT_EQ(stats.best_fitness, Cost::value(5.5));
  EXPECT_EQ(oracle.cost(*h.graph, *refined), stats.best_fitness);
  // `total` stays additive: worse than the start's by the per-candidate costs.
  EXPECT_EQ(refined->total, Cost::value(5.5));
  EXPECT_EQ(refined->stats.algorithm, "exact + evolutionary");
  EXPECT_EQ(stats.evaluations, oracle.calls);
  // 16 assignments exist; memoisation keeps evaluations at most that many.
  EXPECT_LE(stats.evaluations, 16u);
  EXPECT_GT(stats.duplicates, 0u);
}

TEST_F(AlternatingChain, StopsWhenEveryReachablePartitioningIsSeen) {
  TransferOracle<AdjacencyGraph> oracle(5.0);
  EvolutionOptions options;
  options.generations = 1000000;
  options.max_evaluations = 0;
  options.stall_generations = 5;
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, oracle, options, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  EXPECT_TRUE(stats.stalled);
  EXPECT_FALSE(stats.budget_exhausted);
  EXPECT_LT(stats.generations, 1000000u);
  EXPECT_LE(stats.evaluations, 16u);  // the 16 assignments of the chain
  EXPECT_EQ(stats.best_fitness, Cost::value(5.5));
  // Without the stall rule the generations bound the run.
  options.generations = 200;
  options.stall_generations = 0;
  EvolutionStats unbounded;
  ASSERT_TRUE(evolutionary_refinement(*problem, *start, oracle, options, &unbounded).ok());
  EXPECT_FALSE(unbounded.stalled);
  EXPECT_EQ(unbounded.generations, 200u);
}

TEST(EvolutionarySearch, MergesWhenLaunchesAreExpensive) {
  // a -> b. Per candidate, two singletons (1 + 1) beat the fused pair (2.5); end to end, every
  // part also pays a launch overhead of 1, so the fused pair (3.5) beats the singletons (4).
  HandMade h;
  int a = h.ir.add();
  int b = h.ir.add({a});
  h.ir.roots = {b};
  h.build();
  h.add({a}, "t", 1);
  h.add({b}, "t", 1);
  h.add({a, b}, "t", 2.5);
  auto problem = SearchProblem<AdjacencyGraph>::build(*h.graph, h.candidates);
  ASSERT_TRUE(problem.ok());
  auto start = exact_search(*problem);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(start->parts.size(), 2u);
  auto oracle = make_end_to_end_oracle<AdjacencyGraph>("launch", [](const auto&, const Partitioning& p) {
    return p.total + Cost::value(static_cast<double>(p.parts.size()));
  });
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, *oracle, {}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  expect_valid(*h.graph, *refined);
  EXPECT_EQ(part_names(*refined), std::vector<std::string>{"t:{0,1}"});
  EXPECT_EQ(stats.start_fitness, Cost::value(4));
  EXPECT_EQ(stats.best_fitness, Cost::value(3.5));
  EXPECT_TRUE(stats.improved);
}

TEST(EvolutionarySearch, SplitsWhenLargePartsSpill) {
  // a -> b -> c. Per candidate the fused triple (2) beats everything; end to end, a part of more
  // than one node pays 3 (it spills the cache), so three singletons (3) win.
  HandMade h;
  int a = h.ir.add();
  int b = h.ir.add({a});
  int c = h.ir.add({b});
  h.ir.roots = {c};
  h.build();
  h.add({a}, "t", 1);
  h.add({b}, "t", 1);
  h.add({c}, "t", 1);
  h.add({a, b}, "t", 1.8);
  h.add({a, b, c}, "t", 2);
  auto problem = SearchProblem<AdjacencyGraph>::build(*h.graph, h.candidates);
  ASSERT_TRUE(problem.ok());
  auto start = exact_search(*problem);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(part_names(*start), std::vector<std::string>{"t:{0..2}"});
  auto oracle = make_end_to_end_oracle<AdjacencyGraph>("spill", [](const auto&, const Partitioning& p) {
    Cost total = p.total;
    for (const Candidate& part : p.parts) {
      if (part.sub_graph.size() > 1) total += Cost::value(3);
    }
    return total;
  });
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, *oracle, {}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  expect_valid(*h.graph, *refined);
  EXPECT_EQ(part_names(*refined), (std::vector<std::string>{"t:{0}", "t:{1}", "t:{2}"}));
  EXPECT_EQ(stats.start_fitness, Cost::value(5));
  EXPECT_EQ(stats.best_fitness, Cost::value(3));
}

using testing_ir::random_candidates;

/// A random problem and its exact (additive-optimal) partitioning. Not movable: the graph points
/// at the IR and the problem at the graph.
struct RandomCase {
  RandomCase() = default;
  RandomCase(const RandomCase&) = delete;
  RandomCase& operator=(const RandomCase&) = delete;

  AdjacencyGraph ir;
  std::optional<DataflowGraph<AdjacencyGraph>> graph;
  std::optional<SearchProblem<AdjacencyGraph>> problem;
  Partitioning start;
};

void random_case(RandomCase& rc, std::uint64_t seed, std::size_t nodes, int targets) {
  std::mt19937_64 rng(seed);
  rc.ir = testing_ir::random_dag(rng, nodes, 2 + rng() % 2, 0);
  auto graph = DataflowGraph<AdjacencyGraph>::build(rc.ir);
  EXPECT_TRUE(graph.ok());
  rc.graph.emplace(std::move(graph).value());
  auto problem = SearchProblem<AdjacencyGraph>::build(*rc.graph, random_candidates(*rc.graph, rng, targets));
  EXPECT_TRUE(problem.ok());
  rc.problem.emplace(std::move(problem).value());
  auto start = exact_search(*rc.problem);
  EXPECT_TRUE(start.ok());
  rc.start = std::move(start).value();
}

TEST(EvolutionarySearch, NeverWorseThanStartAndAlwaysValidOnRandomDags) {
  int improved = 0;
  for (std::uint64_t trial = 0; trial < 60; ++trial) {
    RandomCase rc;
    random_case(rc, 1000 + trial, 6 + trial % 9, 2 + static_cast<int>(trial % 3));
    TransferOracle<AdjacencyGraph> oracle(20.0 + static_cast<double>(trial % 4) * 15.0);
    EvolutionOptions options;
    options.seed = trial;
    options.max_evaluations = 80;
    EvolutionStats stats;
    auto refined = evolutionary_refinement(*rc.problem, rc.start, oracle, options, &stats);
    ASSERT_TRUE(refined.ok()) << "trial " << trial << ": " << refined.error().message;
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_valid(*rc.graph, *refined);
    EXPECT_EQ(stats.start_fitness, oracle.cost(*rc.graph, rc.start));
    EXPECT_EQ(stats.best_fitness, oracle.cost(*rc.graph, *refined));
    EXPECT_LE(stats.best_fitness, stats.start_fitness);
    EXPECT_LE(stats.evaluations, 80u);
    EXPECT_EQ(stats.evaluations, oracle.calls);
    if (stats.improved) {
      ++improved;
      EXPECT_LT(stats.best_fitness, stats.start_fitness);
    } else {
      EXPECT_EQ(part_names(*refined), part_names(rc.start));
      EXPECT_EQ(refined->stats.algorithm, rc.start.stats.algorithm);
    }
  }
  // The additive optimum ignores transfers, so refinement usually finds something better.
  EXPECT_GT(improved, 30);
}

TEST(EvolutionarySearch, DeterministicForASeed) {
  RandomCase rc;
  random_case(rc, 77, 14, 3);
  auto run = [&](std::uint64_t seed) {
    TransferOracle<AdjacencyGraph> oracle(40.0);
    EvolutionOptions options;
    options.seed = seed;
    EvolutionStats stats;
    auto refined = evolutionary_refinement(*rc.problem, rc.start, oracle, options, &stats);
    EXPECT_TRUE(refined.ok());
    std::vector<std::string> parts;
    for (const Candidate& c : refined->parts) parts.push_back(c.to_string());  // in result order
    parts.push_back(stats.best_fitness.to_string());
    parts.push_back(std::to_string(stats.evaluations) + "/" + std::to_string(stats.duplicates) + "/" +
                    std::to_string(stats.invalid_offspring) + "/" + std::to_string(stats.offspring));
    return parts;
  };
  const auto first = run(5);
  EXPECT_EQ(run(5), first);
  EXPECT_EQ(run(5), first);
  // Another seed explores differently (its counters differ), yet is deterministic too.
  const auto other = run(6);
  EXPECT_EQ(run(6), other);
  EXPECT_NE(other.back(), first.back());
}

TEST(EvolutionarySearch, RespectsMaxEvaluationsExactly) {
  RandomCase rc;
  random_case(rc, 4242, 14, 3);
  for (std::size_t budget : {1u, 2u, 5u, 17u, 60u}) {
    TransferOracle<AdjacencyGraph> oracle(30.0);
    EvolutionOptions options;
    options.max_evaluations = budget;
    options.generations = 100000;
    EvolutionStats stats;
    auto refined = evolutionary_refinement(*rc.problem, rc.start, oracle, options, &stats);
    ASSERT_TRUE(refined.ok());
    EXPECT_EQ(oracle.calls, budget);
    EXPECT_EQ(stats.evaluations, budget);
    EXPECT_TRUE(stats.budget_exhausted);
    if (budget == 1) {
      EXPECT_FALSE(stats.improved);
      EXPECT_EQ(part_names(*refined), part_names(rc.start));
    }
  }
  // 0 means no evaluation limit: the generations bound the run instead.
  TransferOracle<AdjacencyGraph> oracle(30.0);
  EvolutionOptions options;
  options.max_evaluations = 0;
  options.population = 4;
  options.generations = 3;
  EvolutionStats stats;
  ASSERT_TRUE(evolutionary_refinement(*rc.problem, rc.start, oracle, options, &stats).ok());
  EXPECT_FALSE(stats.budget_exhausted);
  EXPECT_EQ(stats.generations, 3u);
  EXPECT_LE(stats.evaluations, 1u + 3 * 4);
  EXPECT_GT(stats.evaluations, 1u);
}

TEST(EvolutionarySearch, StopsAtMaxSeconds) {
  RandomCase rc;
  random_case(rc, 4242, 14, 3);
  TransferOracle<AdjacencyGraph> oracle(30.0);
  EvolutionOptions options;
  options.max_seconds = 1e-12;  // spent by the start's evaluation
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*rc.problem, rc.start, oracle, options, &stats);
  ASSERT_TRUE(refined.ok());
  EXPECT_EQ(stats.evaluations, 1u);
  EXPECT_TRUE(stats.budget_exhausted);
  EXPECT_EQ(stats.generations, 0u);
  EXPECT_EQ(part_names(*refined), part_names(rc.start));
  options.max_seconds = -1;
  EXPECT_FALSE(evolutionary_refinement(*rc.problem, rc.start, oracle, options).ok());
}

TEST_F(AlternatingChain, ErrorsAndInvalidAnswersAreDiscarded) {
  TransferOracle<AdjacencyGraph> transfer(5.0);
  // d on t fails (an Error); a on u cannot run (Invalid); otherwise the transfer cost.
  auto picky = [&](const DataflowGraph<AdjacencyGraph>& g, const Partitioning& p) -> Result<Cost> {
    for (const Candidate& c : p.parts) {
      if (c.sub_graph.first_inside() == 3 && c.target == "t") return Error{ErrorCode::oracle, "backend t cannot run d"};
      if (c.sub_graph.first_inside() == 0 && c.target == "u") return Cost::invalid();
    }
    return transfer.cost(g, p);
  };
  const Cost expected = best_assignment(*problem, picky);
  ASSERT_EQ(expected, Cost::value(10));  // t, t, t, u and t, u, u, u tie
  auto oracle = make_end_to_end_oracle<AdjacencyGraph>("picky", picky);
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, *oracle, {}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  expect_valid(*h.graph, *refined);
  EXPECT_EQ(stats.best_fitness, expected);
  Result<Cost> again = picky(*h.graph, *refined);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, expected);
  EXPECT_GT(stats.errors, 0u);
  EXPECT_GT(stats.invalid_answers, 0u);
  EXPECT_EQ(stats.last_error, "backend t cannot run d");
}

TEST(EvolutionarySearch, FailingOracleKeepsTheStart) {
  RandomCase rc;
  random_case(rc, 99, 12, 3);
  auto failing = make_end_to_end_oracle<AdjacencyGraph>(
      "down", [](const auto&, const Partitioning&) -> Result<Cost> { return Error{ErrorCode::oracle, "service unavailable"}; });
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*rc.problem, rc.start, *failing, {}, &stats);
  ASSERT_TRUE(refined.ok());
  EXPECT_FALSE(stats.improved);
  EXPECT_EQ(part_names(*refined), part_names(rc.start));
  EXPECT_EQ(refined->total, rc.start.total);
  EXPECT_TRUE(stats.start_fitness.is_invalid());
  EXPECT_EQ(stats.errors, stats.evaluations);
  EXPECT_GT(stats.evaluations, 1u);

  auto throwing = make_end_to_end_oracle<AdjacencyGraph>(
      "boom", [](const auto&, const Partitioning&) -> Cost { throw std::runtime_error("kaboom"); });
  auto kept = evolutionary_refinement(*rc.problem, rc.start, *throwing, {}, &stats);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(part_names(*kept), part_names(rc.start));
  EXPECT_EQ(stats.last_error, "end-to-end oracle 'boom' threw: kaboom");
}

TEST_F(AlternatingChain, UnknownRanksBelowEveryKnownFitness) {
  const std::vector<std::string> start_parts = part_names(*start);
  TransferOracle<AdjacencyGraph> transfer(5.0);
  // Only the start is known (and the worst of all): nothing Unknown may replace it.
  auto only_start = make_end_to_end_oracle<AdjacencyGraph>("only start", [&](const auto& g, const Partitioning& p) {
    return part_names(p) == start_parts ? transfer.cost(g, p) : Cost::unknown();
  });
  EvolutionStats stats;
  auto kept = evolutionary_refinement(*problem, *start, *only_start, {}, &stats);
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(stats.improved);
  EXPECT_EQ(part_names(*kept), start_parts);
  EXPECT_GT(stats.unknown_answers, 0u);
  // Only the start is Unknown: any known partitioning is better.
  auto unknown_start = make_end_to_end_oracle<AdjacencyGraph>("unknown start", [&](const auto& g, const Partitioning& p) {
    return part_names(p) == start_parts ? Cost::unknown() : transfer.cost(g, p);
  });
  auto replaced = evolutionary_refinement(*problem, *start, *unknown_start, {}, &stats);
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(stats.improved);
  EXPECT_TRUE(stats.start_fitness.is_unknown());
  EXPECT_EQ(stats.best_fitness, Cost::value(5.5));
}

TEST_F(AlternatingChain, RejectsBadStartsAndOptions) {
  TransferOracle<AdjacencyGraph> oracle(1.0);

  Partitioning foreign = *start;
  foreign.parts[0].target = "elsewhere";
  auto r = evolutionary_refinement(*problem, foreign, oracle);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is not a candidate of the problem"), std::string::npos) << r.error().message;

  Partitioning incomplete = *start;
  incomplete.parts.pop_back();
  r = evolutionary_refinement(*problem, incomplete, oracle);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a valid partitioning"), std::string::npos) << r.error().message;

  Partitioning doubled = *start;
  doubled.parts.push_back(doubled.parts.front());
  EXPECT_FALSE(evolutionary_refinement(*problem, doubled, oracle).ok());

  EvolutionOptions bad;
  bad.population = 0;
  EXPECT_FALSE(evolutionary_refinement(*problem, *start, oracle, bad).ok());
  bad = EvolutionOptions{};
  bad.mutation_rate = 1.5;
  EXPECT_FALSE(evolutionary_refinement(*problem, *start, oracle, bad).ok());
  EXPECT_EQ(oracle.calls, 0u);
}

TEST(EvolutionarySearch, RefinesCyclicTrapWithoutReturningIt) {
  // a -> d, b -> c, a -> c, b -> d: {a,d} and {b,c} are each convex but depend on each other.
  // The end-to-end oracle loves exactly that pair; refinement must never return it.
  HandMade h;
  int a = h.ir.add();
  int b = h.ir.add();
  int c = h.ir.add({a, b});
  int d = h.ir.add({a, b});
  h.ir.roots = {c, d};
  h.build();
  h.add({a, d}, "t", 5);
  h.add({b, c}, "t", 5);
  for (int n : {a, b, c, d}) h.add({n}, "t", 1);
  auto problem = SearchProblem<AdjacencyGraph>::build(*h.graph, h.candidates);
  ASSERT_TRUE(problem.ok());
  auto start = exact_search(*problem);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(start->parts.size(), 4u);
  auto oracle = make_end_to_end_oracle<AdjacencyGraph>("pairs", [](const auto&, const Partitioning& p) {
    Cost total = Cost::value(100);
    for (const Candidate& part : p.parts) {
      if (part.sub_graph.size() == 2) total = Cost::value(total.raw() - 45);
    }
    return total;
  });
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, *oracle, {}, &stats);
  ASSERT_TRUE(refined.ok());
  expect_valid(*h.graph, *refined);
  EXPECT_EQ(stats.best_fitness, Cost::value(55));  // one pair plus two singletons
  EXPECT_EQ(refined->parts.size(), 3u);
  EXPECT_GT(stats.invalid_offspring, 0u);  // the cyclic pair was proposed and discarded
}

TEST(EvolutionarySearch, OrdersPartsThatShareAPulledInConstant) {
  // add(conv2(x, w), conv1(x, w)): post-DFS x=0 w=1 conv2=2 conv1=3 add=4. The candidate
  // {w, conv1} pulls the weight in; conv2 reads it from there, so conv2's part must be applied
  // after {w, conv1} although its first node comes first. (Applying conv2 first would fix w to
  // the host and make a valid individual look stuck.)
  ExprGraph ir;
  auto x = ir.var("x");
  auto w = ir.constant("w");
  auto conv2 = ir.call("conv2d", {x, w});
  auto conv1 = ir.call("conv2d", {x, w});
  ir.output(ir.call("add", {conv2, conv1}));
  auto graph = DataflowGraph<ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  ASSERT_EQ(g.index_of(w), 1u);
  ASSERT_EQ(g.index_of(conv2), 2u);
  ASSERT_EQ(g.index_of(conv1), 3u);
  auto cand = [&](std::initializer_list<std::size_t> nodes, double cost) {
    IndexSet s(g.size());
    for (std::size_t n : nodes) s.add(n);
    return Candidate{SubGraph(g, s), "t", "r", Cost::value(cost)};
  };
  auto problem = SearchProblem<ExprGraph>::build(g, {cand({2}, 1), cand({3}, 1), cand({1, 3}, 5), cand({4}, 1)});
  ASSERT_TRUE(problem.ok());
  ASSERT_TRUE(problem->contested(1));
  auto start = exact_search(*problem);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(start->parts.size(), 3u);
  // End to end, a weight left on the host costs a transfer of 20.
  auto oracle = make_end_to_end_oracle<ExprGraph>("weights", [](const auto&, const Partitioning& p) {
    const bool on_host = std::find(p.host.begin(), p.host.end(), std::size_t{1}) != p.host.end();
    return p.total + Cost::value(on_host ? 20 : 0);
  });
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, *start, *oracle, {}, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  expect_valid(g, *refined);
  EXPECT_EQ(stats.start_fitness, Cost::value(23));
  EXPECT_EQ(stats.best_fitness, Cost::value(7));
  ASSERT_EQ(refined->parts.size(), 3u);
  EXPECT_EQ(refined->parts[0].sub_graph.inside(), IndexSet(g.size(), {1, 3}));
}

TEST(EvolutionarySearch, BertLikeWithNativeAndOperatorPredicateSpecs) {
  ExprGraph ir;
  testing_ir::models::bert_like(ir, 2, 64);
  auto graph = DataflowGraph<ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  const auto& g = *graph;
  MockOracle<ExprGraph> costs({{"tvm", 1.0}, {"lib", 0.8}});
  std::vector<PartitionSpec<ExprGraph>> specs = {
      native_fusion_spec<ExprGraph>("tvm", 3),
      PartitionSpec<ExprGraph>{"lib",
                               op_predicate_byoc_rule<ExprGraph>("lib",
                                                                 [](const DataflowGraph<ExprGraph>& gg, std::size_t i) {
                                                                   return gg.op_name(i) == "dense" ||
                                                                          gg.op_name(i) == "bias_add" ||
                                                                          gg.op_name(i) == "add";
                                                                 },
                                                                 2),
                               0.1}};
  auto searched = partition(g, specs, costs);
  ASSERT_TRUE(searched.ok()) << searched.error().message;
  auto problem = SearchProblem<ExprGraph>::build(g, searched->candidates, SearchCosts{searched->penalties, searched->transfers});
  ASSERT_TRUE(problem.ok()) << problem.error().message;
  const Partitioning& start = searched->partitioning;

  TransferOracle<ExprGraph> oracle(0.5);
  EvolutionOptions options;
  options.max_evaluations = 150;
  EvolutionStats stats;
  auto refined = evolutionary_refinement(*problem, start, oracle, options, &stats);
  ASSERT_TRUE(refined.ok()) << refined.error().message;
  expect_valid(g, *refined);
  EXPECT_EQ(stats.start_fitness, oracle.cost(g, start));
  EXPECT_EQ(stats.best_fitness, oracle.cost(g, *refined));
  EXPECT_LE(stats.evaluations, 150u);
  EXPECT_TRUE(stats.improved);
  EXPECT_LT(stats.best_fitness, stats.start_fitness);
  // The additive total can only have risen: the start was the additive optimum.
  EXPECT_GE(refined->total.raw() + 1e-9, start.total.raw());
  std::printf("bert_like(2): %zu parts, end-to-end %s -> %s in %zu evaluations (%zu duplicates, %zu invalid), "
              "%.3f s\n",
              refined->parts.size(), stats.start_fitness.to_string().c_str(), stats.best_fitness.to_string().c_str(),
              stats.evaluations, stats.duplicates, stats.invalid_offspring, stats.seconds);
}

}  // namespace
}  // namespace collage
