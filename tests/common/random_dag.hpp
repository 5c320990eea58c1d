#pragma once

// Random DAGs for property tests, as adjacency graphs: node i draws its inputs from nodes < i,
// the results are every node without consumers plus, sometimes, a few others.

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "common/adjacency_ir.hpp"

namespace testing_ir {

/// A random DAG of `n` nodes; each node has up to `max_inputs` inputs (duplicates possible) taken
/// from the `window` nodes before it (0: any earlier node). Node order is scrambled in the IR so the
/// post-DFS order differs from the construction order.
inline AdjacencyGraph random_dag(std::mt19937_64& rng, std::size_t n, std::size_t max_inputs = 3,
                                 std::size_t window = 0) {
  std::vector<int> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = static_cast<int>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  AdjacencyGraph g;
  g.inputs.resize(n);
  std::vector<bool> used(n, false);
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t k = std::uniform_int_distribution<std::size_t>(0, max_inputs)(rng);
    std::size_t lo = (window == 0 || i < window) ? 0 : i - window;
    for (std::size_t a = 0; a < k; ++a) {
      std::size_t j = std::uniform_int_distribution<std::size_t>(lo, i - 1)(rng);
      g.inputs[static_cast<std::size_t>(perm[i])].push_back(perm[j]);
      used[j] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!used[i] || std::uniform_int_distribution<int>(0, 9)(rng) == 0) g.roots.push_back(perm[i]);
  }
  return g;
}

/// A chain 0 <- 1 <- ... <- n-1 with node n-1 the only result.
inline AdjacencyGraph chain(std::size_t n) {
  AdjacencyGraph g;
  g.inputs.resize(n);
  for (std::size_t i = 1; i < n; ++i) g.inputs[i].push_back(static_cast<int>(i - 1));
  if (n > 0) g.roots.push_back(static_cast<int>(n - 1));
  return g;
}

/// The trap of DESIGN.md: a -> c, a -> d, b -> c, b -> d (IR nodes 0, 1, 2, 3 are a, b, c, d).
/// The parts {a, d} and {b, c} are each convex but feed each other.
inline AdjacencyGraph crossed_pairs() {
  AdjacencyGraph g;
  const int a = g.add();
  const int b = g.add();
  g.roots = {g.add({a, b}), g.add({a, b})};
  return g;
}

}  // namespace testing_ir
