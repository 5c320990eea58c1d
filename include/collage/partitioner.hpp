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
  ExactSearchOptions exact;
  BeamSearchOptions beam;
  /// When the exact search reaches its state limit, run the beam search instead of failing.
  bool fall_back_to_beam = true;
  /// Remember the oracle's answers by structural key (identical sub-graphs estimated once).
  bool cache = true;
  /// Limits on the oracle; once spent, remaining candidates are Unknown (see SearchProblem).
  OracleBudget budget;
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

/// Runs the searcher `options` choose over `problem`.
template <class G>
Result<Partitioning> run_search(const SearchProblem<G>& problem, const PartitionerOptions& options,
                                const std::vector<std::string>& priority) {
  switch (options.algorithm) {
    case SearchAlgorithm::greedy: return greedy_search(problem, priority);
    case SearchAlgorithm::beam: return beam_search(problem, options.beam);
    case SearchAlgorithm::exact: {
      auto exact = exact_search(problem, options.exact);
      if (exact.ok() || !options.fall_back_to_beam || exact.error().code != ErrorCode::search_gave_up) {
        return exact;
      }
      auto beam = beam_search(problem, options.beam);
      if (beam.ok()) beam->stats.algorithm = "beam (exact gave up)";
      return beam;
    }
  }
  return Error{ErrorCode::invalid_argument, "PartitionerOptions::algorithm is not a SearchAlgorithm"};
}

/// The first inside node of `sub_graph` that needs a kernel (npos when none does).
template <class G>
std::size_t first_kernel_node(const DataflowGraph<G>& graph, const SubGraph& sub_graph) {
  for (std::size_t i : sub_graph.inside()) {
    if (graph.needs_kernel(i)) return i;
  }
  return npos;
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

/// Phases 1-3 of collage: every spec's rule proposes candidates over `graph`; `oracle` costs
/// them (through a structural cache and the budget of `options`); the chosen searcher picks the
/// cheapest valid, acyclic partitioning, and each chosen part is explained by its alternatives.
/// Fails (without aborting) with ErrorCode::invalid_argument, naming the field, on options or a
/// spec penalty out of their domain (a beam width of 0 where the beam may run; a negative, NaN or
/// infinite penalty or transfer cost; a device index of kMaxDevices or more); with ErrorCode::uncovered when some node cannot be covered, saying whether no
/// rule proposed a candidate for it or all of its candidates are Invalid (with the first oracle
/// error among them); or when the search fails. Oracle failures never fail the call by
/// themselves: they make the candidate Invalid and are listed in `oracle_errors`.
template <class G>
Result<PartitionResult> partition(const DataflowGraph<G>& graph, const std::vector<PartitionSpec<G>>& specs,
                                  CostOracle<G>& oracle, const PartitionerOptions& options = {}) {
  if (auto error = detail::check_options(options)) return std::move(*error);
  for (const PartitionSpec<G>& spec : specs) {
    if (auto error = detail::check_penalty(spec.target, spec.penalty, "PartitionSpec::penalty")) {
      return std::move(*error);
    }
  }
  Result<TransferTable> transfers = tabulate_transfers(graph, options.transfers);
  if (!transfers.ok()) return transfers.error();
  const auto started = std::chrono::steady_clock::now();
  auto report = [&](std::string_view phase, std::size_t done, std::size_t total) {
    if (options.progress) options.progress(phase, done, total);
  };
  PartitionResult result;
  result.algorithm = options.algorithm;
  result.exact = options.exact;
  result.beam = options.beam;
  result.fall_back_to_beam = options.fall_back_to_beam;

  // Phase 2: candidates.
  auto phase = std::chrono::steady_clock::now();
  SearchCosts costs;
  std::vector<std::vector<Candidate>> lists;
  for (std::size_t s = 0; s < specs.size(); ++s) {
    report("candidates", s, specs.size());
    lists.push_back(specs[s].all_candidates(graph));
    if (specs[s].penalty != 0) costs.penalty[specs[s].target] = specs[s].penalty;
    if (std::find(result.priority.begin(), result.priority.end(), specs[s].target) == result.priority.end()) {
      result.priority.push_back(specs[s].target);
    }
  }
  result.candidates = merge_canonical(std::move(lists));
  report("candidates", specs.size(), specs.size());
  result.penalties = costs.penalty;
  costs.transfers = std::move(transfers).value();
  result.transfers = costs.transfers;
  result.seconds.candidates = detail::seconds_since(phase);

  // Costs: candidates without one go to the oracle, in one batch.
  phase = std::chrono::steady_clock::now();
  const OracleStats before = oracle.stats();  // a caller's wrapper counts over its lifetime
  BudgetedOracle<G> budgeted(oracle, options.budget, options.progress);
  budgeted.set_chunk_size(options.progress ? 16 : 0);
  // Held by pointer: CachingOracle's wrap-another-cache constructor takes a non-const reference, which
  // std::optional's defaulted copy constructor cannot use under clang.
  std::unique_ptr<CachingOracle<G>> cache;
  CostOracle<G>* front = &budgeted;
  if (options.cache) {
    cache = std::make_unique<CachingOracle<G>>(static_cast<CostOracle<G>&>(budgeted));
    front = cache.get();
  }
  std::vector<const Candidate*> pending;
  for (const Candidate& c : result.candidates) {
    if (c.cost.is_unknown()) pending.push_back(&c);
  }
  std::vector<SafeEstimate> estimates = safe_estimate_batch(*front, graph, pending);
  for (std::size_t k = 0; k < pending.size(); ++k) {
    const_cast<Candidate*>(pending[k])->cost = estimates[k].cost;
    if (!estimates[k].failed()) continue;
    result.oracle_errors.push_back(estimates[k].error);
    result.invalid_reasons.emplace_back(static_cast<std::size_t>(pending[k] - result.candidates.data()),
                                        estimates[k].error);
  }
  result.oracle = front->stats().since(before);
  result.seconds.estimate = detail::seconds_since(phase);

  // Phase 3: search, and the explanation from the same problem.
  phase = std::chrono::steady_clock::now();
  report("search", 0, 1);
  auto problem = SearchProblem<G>::build_borrowed(graph, result.candidates, costs, result.invalid_reasons);
  if (!problem.ok()) return problem.error();
  auto found = detail::run_search(*problem, options, result.priority);
  if (!found.ok()) return found.error();
  result.partitioning = std::move(found).value();
  report("search", 1, 1);
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
/// evolutionary_refinement does, or when `result` does not belong to `graph`.
template <class G>
Result<Partitioning> refine(const DataflowGraph<G>& graph, const PartitionResult& result, EndToEndOracle<G>& fitness,
                            const EvolutionOptions& options = {}, EvolutionStats* stats = nullptr) {
  for (const Candidate& c : result.candidates) {
    if (c.sub_graph.inside().universe() != graph.size()) {
      return Error{ErrorCode::invalid_argument, "refine: the partition result is over a graph of " +
                                                    std::to_string(c.sub_graph.inside().universe()) +
                                                    " nodes, not this one of " + std::to_string(graph.size())};
    }
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
/// parts still pending valid.
template <class G, class Rewrite>
void rewrite_partitions(const DataflowGraph<G>& graph, const Partitioning& partitioning, Rewrite&& rewrite) {
  for (auto it = partitioning.parts.rbegin(); it != partitioning.parts.rend(); ++it) {
    rewrite(*it, extract(graph, it->sub_graph));
  }
}

}  // namespace collage
