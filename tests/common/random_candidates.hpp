#pragma once

// Random search problems for the searchers' tests: candidates of several targets with
// pseudo-random costs.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/combine.hpp"
#include "collage/search/search_problem.hpp"
#include "common/adjacency_ir.hpp"
#include "common/random_dag.hpp"

namespace testing_ir {

/// Candidates of `targets` targets over a graph: singletons and combined runs up to depth 3 (about
/// a third of the larger ones dropped), with pseudo-random costs (deterministic in the seed).
template <class G>
std::vector<collage::Candidate> random_candidates(const collage::DataflowGraph<G>& graph, std::mt19937_64& rng,
                                                  int targets) {
  using collage::Combiner;
  std::vector<collage::Candidate> all;
  for (int t = 0; t < targets; ++t) {
    auto rule = collage::combine(collage::op_kind<G>(collage::OpKind::opaque), {Combiner<G>::all()}, {3});
    for (collage::Candidate c : rule.all_candidates(graph, "t" + std::to_string(t))) {
      if (c.sub_graph.size() > 1 && rng() % 3 == 0) continue;
      const double per_node = 1.0 + static_cast<double>(rng() % 100);
      c.cost = collage::Cost::value(per_node * std::pow(0.8, static_cast<double>(c.sub_graph.size() - 1)) *
                                    static_cast<double>(c.sub_graph.size()));
      all.push_back(std::move(c));
    }
  }
  return all;
}

/// The random problems the searchers are compared on: problem t (of `trials`) is a random DAG of 6
/// to 14 nodes with the random candidates of 2 + t % 3 targets. Calls f(t, graph, problem) for
/// each; the same seed gives the same problems.
template <class F>
void for_each_random_problem(std::uint64_t seed, int trials, F f) {
  using Graph = collage::DataflowGraph<AdjacencyGraph>;
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const std::size_t n = 6 + rng() % 9;
    AdjacencyGraph ir = random_dag(rng, n, 2 + rng() % 2, 0);
    auto graph = Graph::build(ir);
    ASSERT_TRUE(graph.ok());
    auto problem = collage::SearchProblem<AdjacencyGraph>::build(*graph, random_candidates(*graph, rng, 2 + trial % 3));
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    f(trial, *graph, *problem);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace testing_ir
