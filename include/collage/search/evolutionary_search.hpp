#pragma once

/// \file
/// Evolutionary refinement (level two of the Collage paper): a seeded genetic search that starts
/// from a searcher's partitioning and improves it under an end-to-end oracle that costs the whole
/// partitioned graph, so that effects the per-candidate costs cannot see (data transfers between
/// backends, cache effects, launch overheads) are taken into account.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collage/search/state_space.hpp"
#include "collage/search/partitioning.hpp"
#include "collage/search/search_problem.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"

#if defined(__cpp_exceptions)
#include <exception>
#endif

namespace collage {

/// Costs a whole partitioned graph (e.g. by compiling and timing it end to end), so that
/// non-additive effects between parts are captured. The fitness of evolutionary_refinement().
///
/// Answers: a known Cost (lower is better); Unknown (ranked below every known answer, never
/// preferred to a known start); Invalid or an Error (the partitioning is discarded).
template <class G>
class EndToEndOracle {
 public:
  virtual ~EndToEndOracle() = default;

  /// The cost of running `graph` partitioned as `partitioning` (a valid, acyclic partitioning
  /// whose parts are in a topological order of the quotient).
  virtual Result<Cost> evaluate(const DataflowGraph<G>& graph, const Partitioning& partitioning) = 0;

  /// A short name for reports and error messages.
  virtual std::string name() const { return "end-to-end oracle"; }

 protected:
  EndToEndOracle() = default;
  EndToEndOracle(const EndToEndOracle&) = default;
  EndToEndOracle& operator=(const EndToEndOracle&) = default;
};

namespace detail {

template <class F, class G>
using end_to_end_callable_result_t =
    std::decay_t<std::invoke_result_t<F&, const DataflowGraph<G>&, const Partitioning&>>;

/// make_end_to_end_oracle's oracle over a callable.
template <class G, class F>
class FunctionEndToEndOracle final : public EndToEndOracle<G> {
 public:
  FunctionEndToEndOracle(std::string name, F f) : name_(std::move(name)), f_(std::move(f)) {}
  Result<Cost> evaluate(const DataflowGraph<G>& graph, const Partitioning& partitioning) override {
    return f_(graph, partitioning);
  }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  F f_;
};

}  // namespace detail

/// An end-to-end oracle named `name` over a callable `f(const DataflowGraph<G>&, const
/// Partitioning&)` returning Cost or Result<Cost>. The oracle owns `f`; the caller owns the oracle.
template <class G, class F>
std::unique_ptr<EndToEndOracle<G>> make_end_to_end_oracle(std::string name, F f) {
  static_assert(std::is_invocable_v<F&, const DataflowGraph<G>&, const Partitioning&>,
                "make_end_to_end_oracle<G>(name, f): f must be callable as f(const DataflowGraph<G>&, const "
                "Partitioning&)");
  using R = detail::end_to_end_callable_result_t<F, G>;
  static_assert(std::is_same_v<R, Cost> || std::is_same_v<R, Result<Cost>>,
                "make_end_to_end_oracle<G>(name, f): f must return Cost or Result<Cost>");
  return std::make_unique<detail::FunctionEndToEndOracle<G, F>>(std::move(name), std::move(f));
}

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
  /// The result differs from the start (its fitness is strictly better).
  bool improved = false;
  /// The end-to-end cost of the start (Invalid when its evaluation failed).
  Cost start_fitness;
  /// The end-to-end cost of the result (start_fitness when not improved).
  Cost best_fitness;
  /// Wall-clock seconds of the refinement.
  double seconds = 0;
};

namespace detail {

/// A uniform double in [0, 1) from the top 53 bits (the same on every standard library, unlike
/// std::uniform_real_distribution).
inline double unit_random(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

/// A uniform-enough index in [0, n), n > 0 (the same on every standard library).
inline std::size_t random_index(std::mt19937_64& rng, std::size_t n) { return static_cast<std::size_t>(rng() % n); }

/// The moves of the evolutionary search over sets of item ids of a SearchProblem, and their
/// validation by replay through the StateSpace.
template <class G>
class Evolver {
 public:
  Evolver(const SearchProblem<G>& problem, std::uint64_t seed)
      : problem_(problem), graph_(problem.graph()), space_(problem), rng_(seed) {
    const std::size_t n = graph_.size();
    owner_.assign(n, npos);
    stamp_.assign(n, 0);
    status_.assign(problem.size(), kAbsent);
    covering_.resize(n);
    group_of_.resize(problem.size());
    std::map<IndexSet, std::size_t> groups;
    for (std::size_t id = 0; id < problem.size(); ++id) {
      const IndexSet& inside = problem[id].inside;
      for (std::size_t i : inside) {
        if (graph_.needs_kernel(i)) covering_[i].push_back(id);
      }
      auto [it, inserted] = groups.emplace(inside, groups_.size());
      if (inserted) groups_.emplace_back();
      groups_[it->second].push_back(id);
      group_of_[id] = it->second;
    }
    by_inside_ = std::move(groups);
  }

  std::mt19937_64& rng() { return rng_; }

  /// The id of the item equal to `part` (same sub-graph and target; the same rule name preferred).
  std::optional<std::size_t> find_item(const Candidate& part) const {
    std::size_t first_kernel = npos;
    for (std::size_t i : part.sub_graph.inside()) {
      if (i < graph_.size() && graph_.needs_kernel(i)) {
        first_kernel = i;
        break;
      }
    }
    if (first_kernel == npos) return std::nullopt;
    std::optional<std::size_t> found;
    auto [first, last] = problem_.starting_at(first_kernel);
    for (std::size_t id = first; id < last; ++id) {
      const Candidate& c = problem_[id].candidate();
      if (c.target != part.target || c.sub_graph != part.sub_graph) continue;
      if (c.rule_name == part.rule_name) return id;
      if (!found) found = id;
    }
    return found;
  }

  /// The items in an order in which the StateSpace applies each of them (a topological order of
  /// the quotient), or nothing when they overlap, leave a kernel node uncovered or form a cycle.
  std::optional<std::vector<std::size_t>> order(std::vector<std::size_t> items) {
    std::sort(items.begin(), items.end());
    std::optional<std::vector<std::size_t>> result;
    bool disjoint = std::adjacent_find(items.begin(), items.end()) == items.end();
    for (std::size_t k = 0; disjoint && k < items.size(); ++k) {
      for (std::size_t i : inside(items[k])) {
        if (owner_[i] != npos) {
          disjoint = false;
          break;
        }
        set_owner(i, items[k]);
      }
    }
    if (disjoint) {
      for (std::size_t id : items) status_[id] = kPending;
      SearchState state = space_.start();
      std::vector<std::size_t> applied;
      applied.reserve(items.size());
      std::vector<bool> done(items.size(), false);
      bool progress = true;
      while (applied.size() < items.size() && progress) {
        progress = false;
        for (std::size_t k = 0; k < items.size(); ++k) {
          if (done[k] || !inputs_ready(items[k])) continue;
          std::optional<SearchState> next = space_.apply(state, items[k]);
          if (!next) continue;
          state = std::move(*next);
          done[k] = true;
          status_[items[k]] = kApplied;
          applied.push_back(items[k]);
          progress = true;
        }
      }
      if (applied.size() == items.size() && space_.is_goal(state)) result = std::move(applied);
      for (std::size_t id : items) status_[id] = kAbsent;
    }
    clear_owners();
    return result;
  }

  /// Applies one random move to `items` (a valid individual's item ids): change a part's backend,
  /// split a part, merge a part with a touching neighbour, or grow a part by a larger overlapping
  /// item (re-covering what it displaces). Returns false (leaving `items` as it was) when no move
  /// was found after a few tries. The result may be invalid: order() decides.
  bool mutate(std::vector<std::size_t>& items) {
    if (items.empty()) return false;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const std::size_t kind = random_index(rng_, 4);
      const std::size_t at = random_index(rng_, items.size());
      std::vector<std::size_t> next;
      bool done = false;
      switch (kind) {
        case 0: done = change_backend(items, at, next); break;
        case 1: done = split(items, at, next); break;
        case 2: done = merge(items, at, next); break;
        default: done = grow(items, at, next); break;
      }
      clear_owners();
      if (done) {
        items = std::move(next);
        return true;
      }
    }
    return false;
  }

  /// A child of two individuals given in topological order: a random non-empty proper prefix of
  /// `a`, then every item of `b` (in its order) that fits beside it, then random items covering
  /// whatever kernel nodes remain. Empty when the remainder cannot be covered.
  std::vector<std::size_t> crossover(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    if (a.size() < 2) return a;
    const std::size_t cut = 1 + random_index(rng_, a.size() - 1);
    std::vector<std::size_t> child(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(cut));
    for (std::size_t id : child) take(id);
    for (std::size_t id : b) {
      if (fits(id)) {
        take(id);
        child.push_back(id);
      }
    }
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (graph_.needs_kernel(i) && owner_[i] == npos) open.push_back(i);
    }
    const bool covered = fill(open, npos, npos, child);
    clear_owners();
    if (!covered) return {};
    return child;
  }

  /// The partitioning of items given in topological order.
  Partitioning assemble(const std::vector<std::size_t>& ordered) const { return space_.assemble(ordered); }

 private:
  static constexpr unsigned char kAbsent = 0;
  static constexpr unsigned char kPending = 1;
  static constexpr unsigned char kApplied = 2;

  const IndexSet& inside(std::size_t id) const { return problem_[id].inside; }

  void set_owner(std::size_t node, std::size_t id) {
    owner_[node] = id;
    touched_.push_back(node);
  }
  void clear_owners() {
    for (std::size_t i : touched_) owner_[i] = npos;
    touched_.clear();
  }
  /// Marks every node of item `id` as owned by it.
  void take(std::size_t id) {
    for (std::size_t i : inside(id)) set_owner(i, id);
  }
  /// Marks the nodes of item `id` as free again.
  void give_up(std::size_t id) {
    for (std::size_t i : inside(id)) set_owner(i, npos);
  }
  /// Whether every node of item `id` is free.
  bool fits(std::size_t id) const {
    for (std::size_t i : inside(id)) {
      if (owner_[i] != npos) return false;
    }
    return true;
  }

  /// Whether no pending item (of the individual being ordered) owns a node that item `id` reads,
  /// directly or through nodes that stay with the host. Applying an item before such a producer
  /// would fix the producer's shared nodes to the host and wrongly make the individual stuck.
  bool inputs_ready(std::size_t id) {
    ++epoch_;
    std::vector<std::size_t> stack(inside_inputs(id));
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      if (stamp_[n] == epoch_) continue;
      stamp_[n] = epoch_;
      if (graph_.is_inlinable(n)) continue;
      if (owner_[n] != npos) {
        if (status_[owner_[n]] == kPending) return false;
        continue;
      }
      if (graph_.needs_kernel(n)) continue;  // uncovered: apply() refuses
      for (std::size_t j : graph_.inputs(n)) stack.push_back(j);
    }
    return true;
  }
  std::vector<std::size_t> inside_inputs(std::size_t id) const {
    const IndexSet& in = problem_[id].input;
    return std::vector<std::size_t>(in.begin(), in.end());
  }

  /// Covers the free kernel nodes among `nodes` (ascending) with random free items other than
  /// `exclude` of at most `max_kernels` kernel nodes, appending them to `items`.
  bool fill(const std::vector<std::size_t>& nodes, std::size_t exclude, std::size_t max_kernels,
            std::vector<std::size_t>& items) {
    std::vector<std::size_t> options;
    for (std::size_t k : nodes) {
      if (owner_[k] != npos) continue;
      options.clear();
      for (std::size_t id : covering_[k]) {
        if (id != exclude && problem_[id].kernels <= max_kernels && fits(id)) options.push_back(id);
      }
      if (options.empty()) return false;
      const std::size_t chosen = options[random_index(rng_, options.size())];
      take(chosen);
      items.push_back(chosen);
    }
    return true;
  }

  std::vector<std::size_t> kernel_nodes_of(std::size_t id) const {
    std::vector<std::size_t> out;
    for (std::size_t i : inside(id)) {
      if (graph_.needs_kernel(i)) out.push_back(i);
    }
    return out;
  }

  /// items without position `at`, owners taken.
  std::vector<std::size_t> without(const std::vector<std::size_t>& items, std::size_t at) {
    std::vector<std::size_t> rest;
    rest.reserve(items.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k == at) continue;
      rest.push_back(items[k]);
      take(items[k]);
    }
    return rest;
  }

  /// (a) The same inside set, another item (another target, or other nested groups).
  bool change_backend(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    const std::vector<std::size_t>& group = groups_[group_of_[x]];
    if (group.size() < 2) return false;
    std::size_t pick = random_index(rng_, group.size() - 1);
    if (group[pick] == x) pick = group.size() - 1;  // skip x: x is at `pick`, take the last instead
    next = items;
    next[at] = group[pick];
    return true;
  }

  /// (b) A random cover of the part's kernel nodes by items with fewer kernel nodes.
  bool split(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    if (problem_[x].kernels < 2) return false;
    next = without(items, at);
    return fill(kernel_nodes_of(x), x, problem_[x].kernels - 1, next);
  }

  /// (c) The part and a touching neighbour replaced by an item whose inside is their union.
  bool merge(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    for (std::size_t id : items) take(id);
    std::vector<std::size_t> neighbours;
    const SubGraph& sub = problem_[x].candidate().sub_graph;
    for (const IndexSet* side : {&sub.input(), &sub.output()}) {
      for (std::size_t i : *side) {
        if (owner_[i] != npos && owner_[i] != x) neighbours.push_back(owner_[i]);
      }
    }
    std::sort(neighbours.begin(), neighbours.end());
    neighbours.erase(std::unique(neighbours.begin(), neighbours.end()), neighbours.end());
    if (neighbours.empty()) return false;
    const std::size_t y = neighbours[random_index(rng_, neighbours.size())];
    auto found = by_inside_.find(inside(x) | inside(y));
    if (found == by_inside_.end()) return false;
    const std::vector<std::size_t>& group = groups_[found->second];
    next.clear();
    for (std::size_t id : items) {
      if (id != x && id != y) next.push_back(id);
    }
    next.push_back(group[random_index(rng_, group.size())]);
    return true;
  }

  /// (d) An item that contains one of the part's kernel nodes and reaches beyond the part
  /// replaces every part it overlaps; the displaced kernel nodes it does not hold are covered again
  /// at random.
  bool grow(const std::vector<std::size_t>& items, std::size_t at, std::vector<std::size_t>& next) {
    const std::size_t x = items[at];
    const std::vector<std::size_t> kernels = kernel_nodes_of(x);
    const std::size_t k = kernels[random_index(rng_, kernels.size())];
    std::vector<std::size_t> options;
    for (std::size_t id : covering_[k]) {
      if (!inside(id).is_subset_of(inside(x))) options.push_back(id);
    }
    if (options.empty()) return false;
    const std::size_t z = options[random_index(rng_, options.size())];
    for (std::size_t id : items) take(id);
    std::vector<std::size_t> displaced;
    for (std::size_t i : inside(z)) {
      if (owner_[i] != npos) displaced.push_back(owner_[i]);
    }
    std::sort(displaced.begin(), displaced.end());
    displaced.erase(std::unique(displaced.begin(), displaced.end()), displaced.end());
    next.clear();
    for (std::size_t id : items) {
      if (!std::binary_search(displaced.begin(), displaced.end(), id)) next.push_back(id);
    }
    std::vector<std::size_t> open;
    for (std::size_t id : displaced) {
      give_up(id);
      for (std::size_t i : kernel_nodes_of(id)) {
        if (!inside(z).contains(i)) open.push_back(i);
      }
    }
    std::sort(open.begin(), open.end());
    take(z);
    next.push_back(z);
    return fill(open, npos, npos, next);
  }

  const SearchProblem<G>& problem_;
  const DataflowGraph<G>& graph_;
  detail::StateSpace<G> space_;
  std::mt19937_64 rng_;
  /// Per node, the items that hold it (kernel nodes only), ascending.
  std::vector<std::vector<std::size_t>> covering_;
  /// Items with the same inside set, and each item's group.
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<std::size_t> group_of_;
  std::map<IndexSet, std::size_t> by_inside_;
  /// Scratch: the item owning each node (npos when free), and the nodes set since the last clear.
  std::vector<std::size_t> owner_;
  std::vector<std::size_t> touched_;
  /// Scratch: per item, absent / pending / applied while ordering an individual.
  std::vector<unsigned char> status_;
  /// Scratch: visit marks of inputs_ready().
  std::vector<std::size_t> stamp_;
  std::size_t epoch_ = 0;
};

/// Calls the oracle, turning an exception (when exceptions are enabled) into an Error.
template <class G>
Result<Cost> guarded_evaluate(EndToEndOracle<G>& oracle, const DataflowGraph<G>& graph, const Partitioning& p) {
#if defined(__cpp_exceptions)
  try {
    return oracle.evaluate(graph, p);
  } catch (const std::exception& e) {
    return Error{ErrorCode::oracle, "end-to-end oracle '" + oracle.name() + "' threw: " + e.what()};
  } catch (...) {
    return Error{ErrorCode::oracle, "end-to-end oracle '" + oracle.name() + "' threw a non-standard exception"};
  }
#else
  return oracle.evaluate(graph, p);
#endif
}

}  // namespace detail

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

  for (std::size_t generation = 0; generation < options.generations; ++generation) {
    if (!budget_left()) {
      st.budget_exhausted = true;
      break;
    }
    ++st.generations;
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
