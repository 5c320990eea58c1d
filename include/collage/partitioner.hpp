#pragma once

/// \file
/// The partitioner: specs -> candidates -> costs -> search -> a partitioning, in one call; plus
/// the refinement of that partitioning by whole-graph cost (the paper's second level), the
/// explanation and the rewrite hand-off. (Traces and replay: collage/trace.hpp; reports:
/// collage/report.hpp.)

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/cost/budgeted_oracle.hpp"
#include "collage/cost/caching_oracle.hpp"
#include "collage/cost/cost_oracle.hpp"
#include "collage/partition/extraction.hpp"
#include "collage/rules/partition_spec.hpp"
#include "collage/rules/rule_context.hpp"
#include "collage/search/beam_search.hpp"
#include "collage/search/evolutionary_search.hpp"
#include "collage/search/exact_search.hpp"
#include "collage/search/greedy_search.hpp"
#include "collage/search/search_problem.hpp"

namespace collage {

/// Which searcher the partitioner runs.
enum class SearchAlgorithm { exact, beam, greedy };

/// "exact", "beam" or "greedy".
constexpr std::string_view to_string(SearchAlgorithm a) {
  switch (a) {
    case SearchAlgorithm::exact: return "exact";
    case SearchAlgorithm::beam: return "beam";
    case SearchAlgorithm::greedy: return "greedy";
  }
  return "exact";
}

/// The algorithm named `name`, or nothing.
inline std::optional<SearchAlgorithm> parse_search_algorithm(std::string_view name) {
  for (SearchAlgorithm a : {SearchAlgorithm::exact, SearchAlgorithm::beam, SearchAlgorithm::greedy}) {
    if (to_string(a) == name) return a;
  }
  return std::nullopt;
}

/// Options of partition().
struct PartitionerOptions {
  SearchAlgorithm algorithm = SearchAlgorithm::exact;
  /// Each searcher's limits, a time budget of a few seconds among them (on by default).
  ExactSearchOptions exact;
  BeamSearchOptions beam;
  GreedySearchOptions greedy;
  /// When the exact search reaches a limit (states, memory, time), run the beam search instead of
  /// failing; the result says so (PartitionResult::exact_gave_up and a warning).
  bool fall_back_to_beam = true;
  /// Remember the oracle's answers by structural key (identical sub-graphs estimated once).
  bool cache = true;
  /// Limits on the oracle; once spent, remaining candidates are Unknown (see SearchProblem).
  OracleBudget budget;
  /// Limits on generating candidates (joins in total and per rule, memory, seconds); a rule that
  /// reaches one stops and says so in PartitionResult::warnings. On by default.
  CandidateBudget candidates;
  /// Where targets run and what moving values between devices costs; the search charges the moves
  /// (see TransferModel). By default every target runs on the host and nothing moves.
  TransferModel transfers;
  /// Told of progress: phases "candidates", "estimate" and "search".
  ProgressCallback progress;
};

/// Wall-clock seconds per phase.
struct PhaseSeconds {
  double candidates = 0;
  double estimate = 0;
  double search = 0;
  double total = 0;
};

/// A candidate the search could have used to cover a chosen part's first kernel node.
struct Alternative {
  /// Index into PartitionResult::candidates.
  std::size_t candidate = 0;
  /// The cost the search compared: the oracle's estimate plus the target's penalty (Unknown when
  /// the oracle could not tell).
  Cost cost;
};

/// Phase 2's answer (collect_candidates()): every candidate of every spec, and what the search
/// needs of the specs besides the candidates' costs.
struct CandidateSet {
  /// Every candidate of every spec, in canonical order; Cost::unknown() unless a rule knows the
  /// cost.
  std::vector<Candidate> candidates;
  /// The specs' non-zero penalties, by target.
  std::map<std::string, double> penalties;
  /// The targets in spec order (the greedy searcher's priority).
  std::vector<std::string> priority;
  /// One line per rule that stopped at the CandidateBudget, naming the target, the rule and the
  /// limit.
  std::vector<std::string> warnings;
  /// Wall-clock seconds it took.
  double seconds = 0;
};

/// What estimate_costs() found out.
struct CostEstimates {
  /// One line per oracle failure (the candidate became Invalid).
  std::vector<std::string> oracle_errors;
  /// The same failures by candidate: (index into the candidate list, the oracle's error),
  /// ascending.
  InvalidReasons invalid_reasons;
  /// What this call asked of the oracle stack.
  OracleStats oracle;
  /// Wall-clock seconds it took.
  double seconds = 0;
};

/// Everything partition() found out.
struct PartitionResult {
  Partitioning partitioning;
  /// Every candidate of every spec, in canonical order, with the oracle's cost (Invalid when the
  /// oracle refused or failed; the target's penalty is not included).
  std::vector<Candidate> candidates;
  /// The explanation. For each chosen part (same order), the candidates that could cover the part's
  /// first kernel node (its first inside node that needs a kernel; a part may begin with a constant
  /// that needs none): every candidate holding that node whose cost is not Invalid, the part itself
  /// among them. Each carries the cost the search compared (oracle + penalty, as the part's own
  /// cost in `partitioning`; transfers, which depend on the rest of the partitioning, are not
  /// included); cheapest first, ties in candidate order.
  std::vector<std::vector<Alternative>> alternatives;
  /// One line per oracle failure (the candidate became Invalid).
  std::vector<std::string> oracle_errors;
  /// The same failures by candidate: (index into `candidates`, the oracle's error), ascending.
  InvalidReasons invalid_reasons;
  /// What a budget cut, one line each: rules stopped by the CandidateBudget (naming the target,
  /// the rule and the limit); a searcher that gave way to another (exact search falling back to
  /// beam search).
  std::vector<std::string> warnings;
  /// What this call asked of the oracle stack (a caller's wrapper reused across calls counts
  /// over its lifetime; these are this call's counts alone).
  OracleStats oracle;
  PhaseSeconds seconds;
  /// Per-target penalties used, by target.
  std::map<std::string, double> penalties;
  /// The transfer model used, tabulated over the graph (empty when nothing moves).
  TransferTable transfers;
  /// Target priority (spec order), used by the greedy searcher.
  std::vector<std::string> priority;
  /// The search settings used (save_trace() records them, so replay() searches the same way).
  SearchAlgorithm algorithm = SearchAlgorithm::exact;
  ExactSearchOptions exact;
  BeamSearchOptions beam;
  bool fall_back_to_beam = true;
  /// Whether the exact search gave up and the beam search answered instead.
  bool exact_gave_up = false;
};

namespace detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// An invalid_argument Error naming the field when `options` are out of their domain.
inline std::optional<Error> check_options(const PartitionerOptions& options) {
  const bool beam_may_run = options.algorithm == SearchAlgorithm::beam ||
                            (options.algorithm == SearchAlgorithm::exact && options.fall_back_to_beam);
  if (beam_may_run) return check_beam_options(options.beam, "PartitionerOptions::beam.width");
  return std::nullopt;
}

/// An ErrorCode::invalid_argument Error when `oracle` and `transfers` both say a unit and the two
/// differ: a sum of kernel costs and copies in different units would steer the search wrongly.
template <class G>
std::optional<Error> check_units(const CostOracle<G>& oracle, const TransferModel& transfers) {
  const std::string unit = oracle.unit();
  if (!transfers.places_off_host() || unit.empty() || transfers.unit.empty() || unit == transfers.unit) {
    return std::nullopt;
  }
  return Error{ErrorCode::invalid_argument, "PartitionerOptions::transfers.unit: the transfer model charges '" +
                                                transfers.unit + "' but cost oracle '" + oracle.name() +
                                                "' answers in '" + unit + "'; give both one unit"};
}

/// Runs the searcher `options` choose over `problem`. When the exact search gives up and the beam
/// search answers, says why in `warnings` (when given) and sets `*exact_gave_up`; when the beam's
/// time budget ran out, says from which layer it kept one state.
template <class G>
Result<Partitioning> run_search(const SearchProblem<G>& problem, const PartitionerOptions& options,
                                const std::vector<std::string>& priority, std::vector<std::string>* warnings = nullptr,
                                bool* exact_gave_up = nullptr) {
  auto narrowed = [&](Result<Partitioning> found) {
    if (found.ok() && found->stats.narrowed_at != npos && warnings != nullptr) {
      warnings->push_back("beam search ran out of its time budget (max_seconds " +
                          format_double(options.beam.max_seconds) + ") with " +
                          std::to_string(found->stats.narrowed_at) + " of " + std::to_string(problem.kernel_nodes()) +
                          " kernel nodes covered: it kept one state per step from there");
    }
    return found;
  };
  switch (options.algorithm) {
    case SearchAlgorithm::greedy: return greedy_search(problem, priority, options.greedy);
    case SearchAlgorithm::beam: return narrowed(beam_search(problem, options.beam));
    case SearchAlgorithm::exact: {
      auto exact = exact_search(problem, options.exact);
      if (exact.ok() || !options.fall_back_to_beam || exact.error().code != ErrorCode::search_gave_up) {
        return exact;
      }
      auto beam = beam_search(problem, options.beam);
      if (!beam.ok()) return beam;
      beam->stats.algorithm = "beam (exact gave up)";
      if (exact_gave_up != nullptr) *exact_gave_up = true;
      if (warnings != nullptr) {
        warnings->push_back(exact.error().message + "; beam search (width " + std::to_string(options.beam.width) +
                            ") answered instead");
      }
      return narrowed(std::move(beam));
    }
  }
  return Error{ErrorCode::invalid_argument, "PartitionerOptions::algorithm is not a SearchAlgorithm"};
}

/// PartitionResult::alternatives of `parts`, from the problem the search ran on (whose items point
/// into `candidates`).
template <class G>
std::vector<std::vector<Alternative>> explain_parts(const SearchProblem<G>& problem,
                                                   const std::vector<Candidate>& candidates,
                                                   const std::vector<Candidate>& parts) {
  std::vector<std::vector<Alternative>> out;
  out.reserve(parts.size());
  for (const Candidate& part : parts) {
    std::vector<Alternative> list;
    const std::size_t first = first_kernel_node(problem.graph(), part.sub_graph);
    if (first != npos) {
      auto [begin, end] = problem.covering(first);
      list.reserve(static_cast<std::size_t>(end - begin));
      for (auto id = begin; id != end; ++id) {
        const auto& item = problem[*id];
        list.push_back(Alternative{static_cast<std::size_t>(item.source - candidates.data()), item.cost});
      }
    }
    std::sort(list.begin(), list.end(), [](const Alternative& a, const Alternative& b) {
      return a.cost < b.cost || (!(b.cost < a.cost) && a.candidate < b.candidate);
    });
    out.push_back(std::move(list));
  }
  return out;
}

}  // namespace detail

namespace detail {

/// An invalid_argument Error when some spec has an empty target name, two specs name the same
/// target, or a penalty is out of its domain.
template <class G>
std::optional<Error> check_specs(const std::vector<PartitionSpec<G>>& specs) {
  for (std::size_t s = 0; s < specs.size(); ++s) {
    const std::string& target = specs[s].target;
    if (target.empty()) {
      return Error{ErrorCode::invalid_argument, "PartitionSpec::target of spec " + std::to_string(s + 1) +
                                                    " is empty: every target needs a name"};
    }
    for (std::size_t t = 0; t < s; ++t) {
      if (specs[t].target == target) {
        return Error{ErrorCode::invalid_argument, "specs " + std::to_string(t + 1) + " and " + std::to_string(s + 1) +
                                                      " both name target '" + target +
                                                      "': give each target one spec (join rules with union_of)"};
      }
    }
    if (auto error = check_penalty(target, specs[s].penalty, "PartitionSpec::penalty")) return error;
  }
  return std::nullopt;
}

}  // namespace detail

/// Phase 2 of collage: every spec's rule proposes its candidates over `graph`, within
/// `options.candidates` (one CandidateBudget shared by all specs; a rule that reaches a limit
/// stops, and the set's `warnings` say which rule and which limit), merged into one canonical
/// list. Progress goes to `options.progress` as phase "candidates" (one step per spec). Fails with
/// ErrorCode::invalid_argument when a spec's target name is empty, two specs name the same target,
/// or a penalty is negative, NaN or infinite.
template <class G>
Result<CandidateSet> collect_candidates(const DataflowGraph<G>& graph, const std::vector<PartitionSpec<G>>& specs,
                                        const PartitionerOptions& options = {}) {
  if (auto error = detail::check_specs(specs)) return std::move(*error);
  const auto started = std::chrono::steady_clock::now();
  CandidateSet set;
  CandidateRun run(options.candidates);
  std::vector<std::vector<Candidate>> lists;
  lists.reserve(specs.size());
  for (std::size_t s = 0; s < specs.size(); ++s) {
    if (options.progress) options.progress("candidates", s, specs.size());
    lists.push_back(specs[s].all_candidates(graph, RuleContext{&run}));
    if (specs[s].penalty != 0) set.penalties[specs[s].target] = specs[s].penalty;
    set.priority.push_back(specs[s].target);
  }
  set.candidates = merge_canonical(std::move(lists));
  if (options.progress) options.progress("candidates", specs.size(), specs.size());
  set.warnings = run.take_warnings();
  set.seconds = detail::seconds_since(started);
  return set;
}

/// The costing step: asks `oracle` for the cost of every candidate of `candidates` whose cost is
/// Cost::unknown(), in one batch, through a structural cache (unless `options.cache` is off) and
/// under `options.budget`, and writes each answer back into its candidate. An oracle failure makes
/// its candidate Invalid and is listed, never fails the call. Progress goes to `options.progress`
/// as phase "estimate" (in chunks of 128 candidates when there is a callback: large enough for an
/// oracle that times a batch's kernels in turns, time_in_turns()).
template <class G>
CostEstimates estimate_costs(const DataflowGraph<G>& graph, std::vector<Candidate>& candidates, CostOracle<G>& oracle,
                             const PartitionerOptions& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  CostEstimates out;
  const OracleStats before = oracle.stats();  // a caller's wrapper counts over its lifetime
  BudgetedOracle<G> budgeted(oracle, options.budget, options.progress);
  budgeted.set_chunk_size(options.progress ? 128 : 0);
  // Held by pointer: CachingOracle's wrap-another-cache constructor takes a non-const reference, which
  // std::optional's defaulted copy constructor cannot use under clang.
  std::unique_ptr<CachingOracle<G>> cache;
  CostOracle<G>* front = &budgeted;
  if (options.cache) {
    cache = std::make_unique<CachingOracle<G>>(static_cast<CostOracle<G>&>(budgeted));
    front = cache.get();
  }
  std::vector<std::size_t> pending;
  std::vector<const Candidate*> batch;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (!candidates[k].cost.is_unknown()) continue;
    pending.push_back(k);
    batch.push_back(&candidates[k]);
  }
  std::vector<SafeEstimate> estimates = safe_estimate_batch(*front, graph, batch);
  for (std::size_t k = 0; k < pending.size(); ++k) {
    candidates[pending[k]].cost = estimates[k].cost;
    if (!estimates[k].failed()) continue;
    out.oracle_errors.push_back(estimates[k].error);
    out.invalid_reasons.emplace_back(pending[k], std::move(estimates[k].error));
  }
  out.oracle = front->stats().since(before);
  out.seconds = detail::seconds_since(started);
  return out;
}

/// Phases 2-3 of collage: collect_candidates() over `specs`, estimate_costs() with `oracle`, then
/// the chosen searcher picks the cheapest valid, acyclic partitioning, and each chosen part is
/// explained by its alternatives. Fails (without aborting) with ErrorCode::invalid_argument,
/// naming the field, on options or specs out of their domain (a beam width of 0 where the beam
/// may run; an empty or repeated target name; a negative, NaN or infinite penalty or transfer
/// cost; a device index of kMaxDevices or more; a transfer model whose unit is not the oracle's, when
/// both say one); with ErrorCode::uncovered when some node cannot
/// be covered, saying whether no rule proposed a candidate for it or all of its candidates are
/// Invalid (with the first oracle error among them); or when the search fails. Oracle failures
/// never fail the call by themselves: they make the candidate Invalid and are listed in
/// `oracle_errors`.
template <class G>
Result<PartitionResult> partition(const DataflowGraph<G>& graph, const std::vector<PartitionSpec<G>>& specs,
                                  CostOracle<G>& oracle, const PartitionerOptions& options = {}) {
  if (auto error = detail::check_options(options)) return std::move(*error);
  if (auto error = detail::check_specs(specs)) return std::move(*error);
  if (auto error = detail::check_units(oracle, options.transfers)) return std::move(*error);
  Result<TransferTable> transfers = tabulate_transfers(graph, options.transfers);
  if (!transfers.ok()) return transfers.error();
  const auto started = std::chrono::steady_clock::now();
  PartitionResult result;
  result.algorithm = options.algorithm;
  result.exact = options.exact;
  result.beam = options.beam;
  result.fall_back_to_beam = options.fall_back_to_beam;

  Result<CandidateSet> collected = collect_candidates(graph, specs, options);
  if (!collected.ok()) return collected.error();
  result.candidates = std::move(collected->candidates);
  result.penalties = std::move(collected->penalties);
  result.priority = std::move(collected->priority);
  result.warnings = std::move(collected->warnings);
  result.seconds.candidates = collected->seconds;

  CostEstimates estimated = estimate_costs(graph, result.candidates, oracle, options);
  result.oracle_errors = std::move(estimated.oracle_errors);
  result.invalid_reasons = std::move(estimated.invalid_reasons);
  result.oracle = estimated.oracle;
  result.seconds.estimate = estimated.seconds;

  // Phase 3: search, and the explanation from the same problem.
  const auto phase = std::chrono::steady_clock::now();
  if (options.progress) options.progress("search", 0, 1);
  SearchCosts costs;
  costs.penalty = result.penalties;
  costs.transfers = std::move(transfers).value();
  result.transfers = costs.transfers;
  auto problem = SearchProblem<G>::build_borrowed(graph, result.candidates, costs, result.invalid_reasons);
  if (!problem.ok()) return problem.error();
  auto found = detail::run_search(*problem, options, result.priority, &result.warnings, &result.exact_gave_up);
  if (!found.ok()) return found.error();
  result.partitioning = std::move(found).value();
  if (options.progress) options.progress("search", 1, 1);
  result.seconds.search = detail::seconds_since(phase);
  result.alternatives = detail::explain_parts(*problem, result.candidates, result.partitioning.parts);
  result.seconds.total = detail::seconds_since(started);
  return result;
}

/// The paper's second level: refines `result.partitioning` (partition()'s answer for `graph`) by
/// evolutionary_refinement over the same candidates, costs and penalties, with `fitness` costing a
/// whole partitioning (e.g. the model's measured latency end to end), which sees what the sum of
/// per-part costs misses. The answer is never worse than the start under `fitness`, and is the
/// start itself when nothing better was found; `stats` says what was tried and gained. Fails as
/// evolutionary_refinement does, or with ErrorCode::wrong_graph when `result` was made over
/// another graph.
template <class G>
Result<Partitioning> refine(const DataflowGraph<G>& graph, const PartitionResult& result, EndToEndOracle<G>& fitness,
                            const EvolutionOptions& options = {}, EvolutionStats* stats = nullptr) {
  if (auto error = detail::check_graph(graph, result.partitioning, "refine: the partition result")) {
    return std::move(*error);
  }
  SearchCosts costs;
  costs.penalty = result.penalties;
  costs.transfers = result.transfers;
  auto problem = SearchProblem<G>::build_borrowed(graph, result.candidates, costs, result.invalid_reasons);
  if (!problem.ok()) return problem.error();
  return evolutionary_refinement(*problem, result.partitioning, fitness, options, stats);
}

/// Phase 4: hands each chosen part to `rewrite(const Candidate&, const ExtractedFunction&)` in
/// reverse dataflow order (consumers before producers), so that rewriting one part leaves the
/// parts still pending valid. Fails with ErrorCode::wrong_graph, before calling `rewrite`, when
/// `partitioning` was made over another graph.
template <class G, class Rewrite>
Status rewrite_partitions(const DataflowGraph<G>& graph, const Partitioning& partitioning, Rewrite&& rewrite) {
  if (auto error = detail::check_graph(graph, partitioning, "rewrite_partitions: the partitioning")) {
    return std::move(*error);
  }
  for (auto it = partitioning.parts.rbegin(); it != partitioning.parts.rend(); ++it) {
    rewrite(*it, extract(graph, it->sub_graph));
  }
  return Status::success();
}

}  // namespace collage
