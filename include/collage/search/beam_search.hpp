#pragma once

/// \file
/// Beam search: a bounded-width search for graphs whose exact state space is too large.

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collage/search/state_space.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// Options of the beam search.
struct BeamSearchOptions {
  /// States kept per step; at least 1.
  std::size_t width = 64;
  /// Once about this many seconds have passed, keep one state per layer for the rest of the
  /// search, which then ends in time linear in the layers left (0: no limit). The partitioning's
  /// SearchStats::narrowed_at says from which layer.
  double max_seconds = 3.0;
  /// Keep one state per layer from this layer on regardless of time (npos: never): how replay()
  /// repeats a search whose time budget ran out.
  std::size_t narrow_from = static_cast<std::size_t>(-1);
};

namespace detail {

/// An invalid_argument Error naming `field` when the beam options are out of their domain.
inline std::optional<Error> check_beam_options(const BeamSearchOptions& options, std::string_view field) {
  if (options.width >= 1) return std::nullopt;
  return Error{ErrorCode::invalid_argument, std::string(field) + " is 0: the beam must keep at least 1 state"};
}

}  // namespace detail

/// A bounded-width search over the exact search's state space. States are layered by how many
/// kernel nodes they cover and layers are processed in ascending order; of each layer the `width`
/// best states (cost so far plus the A* bound) are expanded by every applicable candidate. Each
/// expansion covers at least one more kernel node, so there are at most as many layers as kernel
/// nodes. Results are acyclic and valid, optimal when the beam never drops the optimal path.
/// Deterministic, but for the time budget (`options.max_seconds`): once it runs out the beam keeps
/// one state per layer (recorded in SearchStats::narrowed_at, which `options.narrow_from` repeats).
/// Fails when no kept state can be completed, and with ErrorCode::invalid_argument when
/// `options.width` is 0.
template <class G>
Result<Partitioning> beam_search(const SearchProblem<G>& problem, const BeamSearchOptions& options = {}) {
  if (auto error = detail::check_beam_options(options, "BeamSearchOptions::width")) return std::move(*error);
  const auto started = std::chrono::steady_clock::now();
  const detail::StateSpace<G> space(problem);
  detail::SearchScratch scratch;  // this run's
  double bound_total = 0;
  for (std::size_t i = 0; i < problem.graph().size(); ++i) bound_total += problem.min_share(i);

  // The chosen items of expanded states, as a tree of (parent, item) links: one entry per
  // expanded state, so memory stays proportional to width times steps.
  struct Link {
    std::size_t parent;
    std::size_t item;
  };
  std::vector<Link> links{Link{npos, npos}};
  struct Node {
    detail::SearchState state;
    double cost = 0;
    std::size_t parent_link = 0;
    std::size_t item = npos;  // the last choice (npos for the start)
  };
  auto score = [&](const Node& n) { return n.cost + std::max(0.0, bound_total - n.state.covered_share); };
  // Layers by kernel nodes covered; within a layer, one node per covered set.
  std::map<std::size_t, std::vector<Node>> groups;
  std::map<std::size_t, std::unordered_map<CoveredSet, std::size_t>> group_index;
  auto add = [&](Node n) {
    const std::size_t v = n.state.kernels_covered;
    auto& members = groups[v];
    auto& index = group_index[v];
    auto [it, inserted] = index.emplace(n.state.covered, members.size());
    if (inserted) {
      members.push_back(std::move(n));
    } else if (n.cost < members[it->second].cost) {
      members[it->second] = std::move(n);
    }
  };
  SearchStats stats;
  stats.algorithm = "beam";
  add(Node{space.start(scratch), 0, 0, npos});
  auto link_of = [&](const Node& n) {
    if (n.item == npos) return n.parent_link;
    links.push_back(Link{n.parent_link, n.item});
    return links.size() - 1;
  };
  while (!groups.empty()) {
    auto group = groups.begin();
    const std::size_t v = group->first;
    std::vector<Node> members = std::move(group->second);
    groups.erase(group);
    group_index.erase(v);
    stats.states_generated += members.size();
    std::stable_sort(members.begin(), members.end(),
                     [&](const Node& a, const Node& b) { return score(a) < score(b); });
    if (stats.narrowed_at == npos &&
        (v >= options.narrow_from ||
         (options.max_seconds > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > options.max_seconds))) {
      stats.narrowed_at = v;
    }
    const std::size_t width = stats.narrowed_at == npos ? options.width : 1;
    if (members.size() > width) members.resize(width);
    if (v == problem.kernel_nodes()) {  // every kernel node covered: the best member wins
      std::vector<std::size_t> path;
      for (std::size_t at = link_of(members.front()); links[at].item != npos; at = links[at].parent) {
        path.push_back(links[at].item);
      }
      std::reverse(path.begin(), path.end());
      Partitioning result = space.assemble(path, scratch);
      stats.candidates = problem.size();
      stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      result.stats = stats;
      return result;
    }
    for (const Node& member : members) {
      ++stats.states_expanded;
      const std::size_t link = link_of(member);
      space.for_each_successor(member.state, scratch, [&](std::size_t item, detail::SearchState next, double step_cost) {
        add(Node{std::move(next), member.cost + step_cost, link, item});
      });
    }
  }
  return Error{ErrorCode::no_solution, "beam search found no complete partitioning (no kept state could be completed); try a wider "
               "beam or exact search"};
}

}  // namespace collage
