#pragma once

/// \file
/// Greedy baseline: targets in priority order claim the largest regions they support.

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "collage/partition/quotient.hpp"
#include "collage/search/state_space.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// Options of the greedy search.
struct GreedySearchOptions {
  /// Give up (with an error) after about this many seconds; 0 means no limit.
  double max_seconds = 5.0;
};

/// The partitioning a priority-driven partitioner would choose, the way TVM's BYOC annotation and
/// merging or ONNX Runtime's execution-provider assignment work: each target in `priority` order
/// (targets not listed follow, by name) claims its candidates from the largest (most kernel nodes)
/// down, skipping any that overlaps what is claimed or would close a cycle among the parts claimed
/// so far. Costs play no part in the choice. For comparison with the cost-driven searchers, and as
/// a fallback. Fails, naming the node, when some kernel node ends unclaimed, and with
/// ErrorCode::search_gave_up when `options.max_seconds` run out.
template <class G>
Result<Partitioning> greedy_search(const SearchProblem<G>& problem, const std::vector<std::string>& priority,
                                   const GreedySearchOptions& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  const DataflowGraph<G>& graph = problem.graph();
  auto rank = [&](const std::string& target) {
    auto it = std::find(priority.begin(), priority.end(), target);
    return static_cast<std::size_t>(it - priority.begin());
  };
  std::vector<std::size_t> order(problem.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Candidate& ca = problem[a].candidate();
    const Candidate& cb = problem[b].candidate();
    const std::size_t ra = rank(ca.target);
    const std::size_t rb = rank(cb.target);
    if (ra != rb) return ra < rb;
    if (ra == priority.size() && ca.target != cb.target) return ca.target < cb.target;
    if (problem[a].kernels != problem[b].kernels) return problem[a].kernels > problem[b].kernels;
    return ca < cb;
  });

  // owner[i]: the claimed item holding node i, or npos. Unclaimed nodes count as parts of their own.
  std::vector<std::size_t> owner(graph.size(), npos);
  std::vector<std::size_t> claimed;
  QuotientCycleCheck quotient;
  auto sub_graph_of = [&](std::size_t id) -> const SubGraph& { return problem[id].candidate().sub_graph; };
  constexpr std::size_t kClockStride = 256;  // candidates per reading of the clock
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (options.max_seconds > 0 && k % kClockStride == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > options.max_seconds) {
      return Error{ErrorCode::search_gave_up, "greedy search gave up after " + std::to_string(k) + " of " +
                                                  std::to_string(order.size()) + " candidates and " +
                                                  format_double(options.max_seconds) + " s (max_seconds)"};
    }
    const std::size_t id = order[k];
    const IndexSet& inside = problem[id].inside;
    bool free = true;
    for (std::size_t i : inside) free = free && owner[i] == npos;
    if (!free || quotient.closes_cycle(graph, sub_graph_of(id), owner, problem.size(), sub_graph_of)) continue;
    for (std::size_t i : inside) owner[i] = id;
    claimed.push_back(id);
  }
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (graph.needs_kernel(i) && owner[i] == npos) {
      return Error{ErrorCode::no_solution, "greedy search left node '" + graph.label(i) + "' unclaimed: every candidate covering it overlaps "
                   "a larger claimed region or would close a cycle"};
    }
  }
  // Emit the parts in a topological order of the quotient (acyclic: every claim was checked).
  std::vector<std::size_t> part_of(graph.size(), npos);
  for (std::size_t k = 0; k < claimed.size(); ++k) {
    for (std::size_t i : problem[claimed[k]].inside) part_of[i] = k;
  }
  const QuotientOrder order_of_parts = quotient_order(graph, part_of, claimed.size());
  if (!order_of_parts.acyclic()) return Error{ErrorCode::internal, "greedy search: the claimed regions form a cycle (a bug)"};
  std::vector<std::size_t> items;
  for (std::size_t k : order_of_parts.parts) items.push_back(claimed[k]);
  Partitioning result = detail::StateSpace<G>(problem).assemble(items);
  result.stats.algorithm = "greedy";
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace collage
