#pragma once

/// \file
/// Exact search: A* over covered-node states; the cheapest acyclic partitioning over the given
/// candidates.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "collage/search/state_space.hpp"
#include "collage/support/chunked_vector.hpp"
#include "collage/support/identity_index.hpp"
#include "collage/support/indexed_priority_queue.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// Options of the exact search.
struct ExactSearchOptions {
  /// Give up (with an error) after creating this many states; 0 means no limit.
  std::size_t max_states = 1000000;
  /// Give up (with an error) once the states take about this many MiB; 0 means no limit.
  std::size_t max_memory_mib = 1024;
  /// Give up (with an error) after about this many seconds; 0 means no limit.
  double max_seconds = 2.0;
};

/// The cheapest partitioning of `problem` whose quotient is acyclic, by A* over covered-node
/// states (see detail::StateSpace) with the admissible, consistent bound "each uncovered kernel
/// node costs at least its cheapest share of a candidate". Exact over the given candidates.
/// Deterministic: ties go to the state created first. Fails when no complete partitioning exists,
/// and with ErrorCode::search_gave_up when a limit on states, memory or time is reached (the time
/// limit is the one that makes a run depend on the machine).
template <class G>
Result<Partitioning> exact_search(const SearchProblem<G>& problem, const ExactSearchOptions& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  const detail::StateSpace<G> space(problem);
  detail::SearchScratch scratch;  // this run's
  double bound_total = 0;
  for (std::size_t i = 0; i < problem.graph().size(); ++i) bound_total += problem.min_share(i);

  struct Record {
    detail::SearchState state;
    double cost = 0;
    std::uint32_t parent = 0;
    std::uint32_t via = 0;
    bool closed = false;
  };
  detail::ChunkedVector<Record> records;  // stable references while successors are added
  detail::IdentityIndex ids;   // record ids by covered set
  IndexedPriorityQueue<double> open;
  auto estimate = [&](const Record& r) { return r.cost + std::max(0.0, bound_total - r.state.covered_share); };

  constexpr std::size_t kClockStride = 256;  // expansions per reading of the clock
  // Bytes per state besides its sets: the record, the index's slots, the queue's slots.
  constexpr std::size_t kStateOverhead = sizeof(Record) + 64;
  const std::size_t max_bytes = options.max_memory_mib << 20;
  std::size_t bytes = 0;
  records.push_back(Record{space.start(scratch), 0, 0, 0, false});
  ids.push(records[0].state.covered.hash());
  open.push(0, estimate(records[0]));
  SearchStats stats;
  stats.algorithm = "exact";
  while (!open.empty()) {
    const std::size_t id = open.pop().first;
    records[id].closed = true;
    if (space.is_goal(records[id].state)) {
      std::vector<std::size_t> items;
      for (std::size_t at = id; at != 0; at = records[at].parent) items.push_back(records[at].via);
      std::reverse(items.begin(), items.end());
      Partitioning result = space.assemble(items, scratch);
      stats.candidates = problem.size();
      stats.states_generated = records.size();
      stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      result.stats = stats;
      return result;
    }
    ++stats.states_expanded;
    if (options.max_seconds > 0 && stats.states_expanded % kClockStride == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > options.max_seconds) {
      return Error{ErrorCode::search_gave_up,
                   "exact search gave up after " + std::to_string(records.size()) + " states and " +
                       format_double(options.max_seconds) +
                       " s (max_seconds); use beam search for this graph or raise max_seconds"};
    }
    const detail::SearchState& state = records[id].state;
    const double base = records[id].cost;
    bool gave_up = false;
    // want() settles successors whose covered set has a state already; the others are built and
    // handed to add(), right after want() said so (with `hash` and `cost` still theirs).
    std::size_t hash = 0;
    double cost = 0;
    auto want = [&](std::size_t item, const CoveredSet& covered, double step_cost) {
      if (gave_up) return false;
      cost = base + step_cost;
      hash = covered.hash();
      const std::size_t found = ids.find(hash, [&](std::size_t r) { return records[r].state.covered == covered; });
      if (found == npos) return true;
      Record& old = records[found];
      if (!old.closed && cost < old.cost) {
        old.cost = cost;
        old.parent = static_cast<std::uint32_t>(id);
        old.via = static_cast<std::uint32_t>(item);
        open.decrease(found, estimate(old));
      }
      return false;
    };
    auto add = [&](std::size_t item, detail::SearchState next, double) {
      bytes += kStateOverhead + next.covered.settled.heap_bytes() + next.ready_heap_bytes() +
               next.covered.placement.heap_bytes();
      const bool too_many = options.max_states != 0 && records.size() >= options.max_states;
      if (too_many || (max_bytes != 0 && bytes > max_bytes)) {
        gave_up = true;
        return;
      }
      const auto new_id = static_cast<std::uint32_t>(records.size());
      ids.push(hash);
      records.push_back(
          Record{std::move(next), cost, static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(item), false});
      open.push(new_id, estimate(records.back()));
    };
    space.for_each_successor(state, scratch, want, add);
    if (gave_up) {
      return Error{ErrorCode::search_gave_up, "exact search gave up after " + std::to_string(records.size()) + " states (about " +
                   std::to_string(bytes >> 20) +
                   " MiB); use beam search for this graph or raise max_states / max_memory_mib"};
    }
  }
  return Error{ErrorCode::no_solution, "no complete partitioning exists over the given candidates (some node cannot be covered "
               "without a cycle)"};
}

}  // namespace collage
