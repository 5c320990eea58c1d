#pragma once

// Random search problems for the searchers' tests: candidates of several targets with
// pseudo-random costs.

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/combine.hpp"

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

}  // namespace testing_ir
