#pragma once

// A brute-force reference for the searchers: enumerates every set of disjoint candidates covering
// all kernel nodes, keeps those whose quotient graph is acyclic, and returns the cheapest cost
// (branch and bound: a branch already as expensive as the best found is cut).
// Independent of the library's search code; for small graphs only.

#include <functional>
#include <optional>
#include <vector>

#include "collage/search/search_problem.hpp"

namespace testing_ir {

/// Whether the parts (plus every node in no part, as its own vertex) form an acyclic quotient.
template <class G>
bool quotient_is_acyclic(const collage::DataflowGraph<G>& graph, const std::vector<collage::IndexSet>& parts) {
  const std::size_t n = graph.size();
  std::vector<std::size_t> owner(n, collage::npos);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (std::size_t i : parts[p]) owner[i] = p;
  }
  std::size_t vertices = parts.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (owner[i] == collage::npos) owner[i] = vertices++;
  }
  std::vector<std::vector<std::size_t>> succ(vertices);
  std::vector<std::size_t> indegree(vertices, 0);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t u : graph.inputs(v)) {
      if (graph.is_inlinable(u) || owner[u] == owner[v]) continue;
      succ[owner[u]].push_back(owner[v]);
      ++indegree[owner[v]];
    }
  }
  std::vector<std::size_t> queue;
  for (std::size_t v = 0; v < vertices; ++v) {
    if (indegree[v] == 0) queue.push_back(v);
  }
  std::size_t seen = 0;
  while (!queue.empty()) {
    std::size_t v = queue.back();
    queue.pop_back();
    ++seen;
    for (std::size_t w : succ[v]) {
      if (--indegree[w] == 0) queue.push_back(w);
    }
  }
  return seen == vertices;
}

/// The cheapest effective cost of an acyclic partitioning, or nothing when none exists. With
/// `extra`, a complete partitioning (its item ids) costs extra(ids) more: a cost >= 0 that only the
/// whole partitioning determines.
template <class G>
std::optional<double> brute_force_best(
    const collage::SearchProblem<G>& problem,
    const std::function<double(const std::vector<std::size_t>&)>& extra = nullptr) {
  const auto& graph = problem.graph();
  std::optional<double> best;
  std::vector<collage::IndexSet> chosen;
  std::vector<std::size_t> ids;
  collage::IndexSet used(graph.size());
  std::function<void(double)> go = [&](double cost) {
    if (best && cost >= *best) return;  // costs are non-negative: no cheaper completion
    std::size_t k = collage::npos;
    for (std::size_t i = 0; i < graph.size(); ++i) {
      if (graph.needs_kernel(i) && !used.contains(i)) {
        k = i;
        break;
      }
    }
    if (k == collage::npos) {
      if (!quotient_is_acyclic(graph, chosen)) return;
      if (extra) cost += extra(ids);
      if (!best || cost < *best) best = cost;
      return;
    }
    for (std::size_t id = 0; id < problem.size(); ++id) {
      const auto& inside = problem[id].inside;
      if (!inside.contains(k) || inside.intersects(used)) continue;
      chosen.push_back(inside);
      ids.push_back(id);
      used |= inside;
      go(cost + problem[id].effective.raw());
      used -= inside;
      ids.pop_back();
      chosen.pop_back();
    }
  };
  go(0.0);
  return best;
}

}  // namespace testing_ir
