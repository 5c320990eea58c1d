#pragma once

/// \file
/// Evolutionary refinement (level two of the Collage paper): a seeded genetic search that starts
/// from a searcher's partitioning and improves it under an end-to-end oracle that costs the whole
/// partitioned graph, so that effects the per-candidate costs cannot see (data transfers between
/// backends, cache effects, launch overheads) are taken into account.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/cost/end_to_end_oracle.hpp"
#include "collage/search/evolver.hpp"
#include "collage/search/partitioning.hpp"
#include "collage/search/search_problem.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// Options of evolutionary_refinement().
struct EvolutionOptions {
  /// Individuals kept between generations (at least 1); also the number of new individuals each
  /// generation tries to evaluate.
  std::size_t population = 16;
  /// Generations to run at most.
  std::size_t generations = 20;
  /// Calls to the end-to-end oracle at most, the start's included; 0 means no limit.
  std::size_t max_evaluations = 200;
  /// Wall-clock limit in seconds, checked before each evaluation; 0 means none. (A time limit
  /// makes the result depend on the machine's speed; the evaluation limit does not.)
  double max_seconds = 0;
  /// Seed of the random generator: the same seed, problem, start and oracle answers give the same
  /// result.
  std::uint64_t seed = 1;
  /// After an offspring's first mutation, the probability of each further one (at most 7 more).
  double mutation_rate = 0.5;
  /// The probability that an offspring is made by crossover of two parents rather than by
  /// mutating one (it may then still be mutated, with probability mutation_rate per mutation).
  double crossover_rate = 0.25;
  /// Stop once this many generations in a row found no partitioning not seen before (the
  /// reachable ones are used up, as on a small graph); 0 means never.
  std::size_t stall_generations = 20;
};

/// What evolutionary_refinement() did.
struct EvolutionStats {
  /// Calls to the end-to-end oracle (the start's included).
  std::size_t evaluations = 0;
  /// Generations begun.
  std::size_t generations = 0;
  /// Offspring made (before validation and de-duplication).
  std::size_t offspring = 0;
  /// Offspring discarded without evaluation because they are not a valid partitioning.
  std::size_t invalid_offspring = 0;
  /// Offspring already seen (evaluated or discarded before): no evaluation spent.
  std::size_t duplicates = 0;
  /// Evaluations that failed (an Error, or an exception when exceptions are enabled).
  std::size_t errors = 0;
  /// Evaluations answered Invalid.
  std::size_t invalid_answers = 0;
  /// Evaluations answered Unknown.
  std::size_t unknown_answers = 0;
  /// The last evaluation error's message (empty when none).
  std::string last_error;
  /// The run stopped because max_evaluations or max_seconds was reached.
  bool budget_exhausted = false;
  /// The run stopped because stall_generations generations in a row found nothing new.
  bool stalled = false;
  /// The result differs from the start (its fitness is strictly better).
  bool improved = false;
  /// The end-to-end cost of the start (Invalid when its evaluation failed).
  Cost start_fitness;
  /// The end-to-end cost of the result (start_fitness when not improved).
  Cost best_fitness;
  /// Wall-clock seconds of the refinement.
  double seconds = 0;
};

/// Refines `start` (a searcher's partitioning of `problem`, e.g. exact_search's) under the
/// end-to-end oracle `fitness`, by a seeded genetic search over per-partition choices.
///
/// An individual is a set of the problem's candidates (start's parts are mapped back to them by
/// sub-graph and target). Offspring are made by mutation — (a) another target for a part's inside
/// set; (b) split a part into a random cover by smaller candidates; (c) merge a part with a
/// touching neighbour into the candidate equal to their union; (d) grow a part into a larger
/// overlapping candidate, re-covering the parts it displaces — and by crossover (a prefix of one
/// parent in topological order, completed from the other). Every offspring is validated by
/// replaying it through detail::StateSpace, so everything evaluated (and returned) is a disjoint,
/// covering, acyclic partitioning; invalid ones are discarded unevaluated. Fitness is memoised
/// by the set of candidates, so a duplicate costs no evaluation. Survivors: the best `population`
/// of parents and offspring (Unknown after every known fitness; Invalid and failed evaluations
/// discarded; ties to the older individual).
///
/// The start is evaluated first; the result replaces it only with a strictly better fitness, so
/// the result is never worse than the start, and when nothing better is found it is `start`
/// itself, unchanged. A start whose evaluation fails ranks as Invalid. An improved result is
/// assembled like the searchers' (parts in topological order): its `total` stays the sum of the
/// parts' per-candidate costs, and its end-to-end cost is `stats->best_fitness`; its
/// stats.algorithm gets " + evolutionary" appended and stats.seconds the refinement's time.
///
/// Deterministic for a given seed (with max_seconds 0). Fails when the options are out of range,
/// or when `start` is not a valid partitioning over the problem's candidates; an oracle failure
/// never fails the call.
template <class G>
Result<Partitioning> evolutionary_refinement(const SearchProblem<G>& problem, const Partitioning& start,
                                             EndToEndOracle<G>& fitness, const EvolutionOptions& options = {},
                                             EvolutionStats* stats = nullptr) {
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  if (options.population == 0) return Error{ErrorCode::invalid_argument, "evolutionary refinement: population must be at least 1"};
  auto probability = [](double p) { return p >= 0.0 && p <= 1.0; };
  if (!probability(options.mutation_rate) || !probability(options.crossover_rate)) {
    return Error{ErrorCode::invalid_argument, "evolutionary refinement: mutation_rate and crossover_rate must lie in [0, 1]"};
  }
  if (!(options.max_seconds >= 0.0)) return Error{ErrorCode::invalid_argument, "evolutionary refinement: max_seconds must not be negative"};

  const DataflowGraph<G>& graph = problem.graph();
  detail::Evolver<G> evolver(problem, options.seed);
  std::vector<std::size_t> start_items;
  for (const Candidate& part : start.parts) {
    std::optional<std::size_t> id = evolver.find_item(part);
    if (!id) {
      return Error{ErrorCode::invalid_argument, "evolutionary refinement: start part '" + part.to_string(graph) + "' is not a candidate of the problem"};
    }
    start_items.push_back(*id);
  }
  std::optional<std::vector<std::size_t>> start_order = evolver.order(start_items);
  if (!start_order) {
    return Error{ErrorCode::invalid_argument, "evolutionary refinement: the start is not a valid partitioning of the problem (parts overlap, "
                 "leave a node uncovered or depend on each other cyclically)"};
  }

  EvolutionStats st;
  auto evaluate = [&](const Partitioning& p) {
    ++st.evaluations;
    Result<Cost> answer = detail::guarded_evaluate(fitness, graph, p);
    if (!answer.ok()) {
      ++st.errors;
      st.last_error = answer.error().message;
      return Cost::invalid();
    }
    if (answer->is_invalid()) ++st.invalid_answers;
    if (answer->is_unknown()) ++st.unknown_answers;
    return *answer;
  };
  auto budget_left = [&] {
    if (options.max_evaluations != 0 && st.evaluations >= options.max_evaluations) return false;
    return options.max_seconds <= 0.0 || elapsed() < options.max_seconds;
  };

  struct Individual {
    std::vector<std::size_t> key;    // sorted item ids
    std::vector<std::size_t> order;  // the same ids in topological order
    Cost fitness;
    std::size_t serial;
  };
  auto better = [](const Individual& a, const Individual& b) {
    if (a.fitness != b.fitness) return a.fitness < b.fitness;
    return a.serial < b.serial;
  };
  std::size_t serial = 0;
  std::map<std::vector<std::size_t>, Cost> seen;  // every set met: its fitness (Invalid: discarded)

  Individual first{start_items, *start_order, evaluate(start), serial++};
  std::sort(first.key.begin(), first.key.end());
  st.start_fitness = first.fitness;
  seen.emplace(first.key, first.fitness);
  Individual best = first;
  std::vector<Individual> population{first};

  constexpr std::size_t kMaxMutations = 8;
  auto tournament = [&]() -> const Individual& {
    const std::size_t a = detail::random_index(evolver.rng(), population.size());
    const std::size_t b = detail::random_index(evolver.rng(), population.size());
    return population[std::min(a, b)];  // the population is sorted best first
  };

  std::size_t stalled_generations = 0;
  for (std::size_t generation = 0; generation < options.generations; ++generation) {
    if (!budget_left()) {
      st.budget_exhausted = true;
      break;
    }
    if (options.stall_generations != 0 && stalled_generations >= options.stall_generations) {
      st.stalled = true;
      break;
    }
    ++st.generations;
    const std::size_t seen_before = seen.size();
    std::vector<Individual> offspring;
    for (std::size_t attempt = 0; attempt < 4 * options.population && offspring.size() < options.population;
         ++attempt) {
      const Individual& a = tournament();
      std::vector<std::size_t> child;
      std::size_t mutations = 1;
      if (population.size() >= 2 && detail::unit_random(evolver.rng()) < options.crossover_rate) {
        const Individual& b = tournament();
        child = evolver.crossover(a.order, b.order);
        mutations = 0;
      } else {
        child = a.order;
      }
      while (mutations < kMaxMutations && detail::unit_random(evolver.rng()) < options.mutation_rate) ++mutations;
      for (std::size_t m = 0; m < mutations && !child.empty(); ++m) evolver.mutate(child);
      ++st.offspring;
      if (child.empty()) {
        ++st.invalid_offspring;
        continue;
      }
      std::vector<std::size_t> key = child;
      std::sort(key.begin(), key.end());
      if (seen.count(key) != 0) {
        ++st.duplicates;
        continue;
      }
      std::optional<std::vector<std::size_t>> order = evolver.order(child);
      if (!order) {
        ++st.invalid_offspring;
        seen.emplace(std::move(key), Cost::invalid());
        continue;
      }
      if (!budget_left()) {
        st.budget_exhausted = true;
        break;
      }
      const Cost f = evaluate(evolver.assemble(*order));
      seen.emplace(key, f);
      if (f.is_invalid()) continue;
      Individual born{std::move(key), std::move(*order), f, serial++};
      if (born.fitness < best.fitness) best = born;
      offspring.push_back(std::move(born));
    }
    for (Individual& o : offspring) population.push_back(std::move(o));
    std::stable_sort(population.begin(), population.end(), better);
    if (population.size() > options.population) population.resize(options.population);
    stalled_generations = seen.size() == seen_before ? stalled_generations + 1 : 0;
    if (st.budget_exhausted) break;
  }

  st.improved = best.serial != first.serial;
  st.best_fitness = best.fitness;
  st.seconds = elapsed();
  Partitioning result = start;
  if (st.improved) {
    result = evolver.assemble(best.order);
    result.stats = start.stats;
    result.stats.algorithm = (start.stats.algorithm.empty() ? std::string("search") : start.stats.algorithm) +
                             " + evolutionary";
    result.stats.candidates = problem.size();
    result.stats.seconds = start.stats.seconds + st.seconds;
  }
  if (stats != nullptr) *stats = std::move(st);
  return result;
}

}  // namespace collage
