#pragma once

/// \file
/// The partitioner: specs -> candidates -> costs -> search -> a partitioning, in one call; plus
/// explanation, replayable traces and the rewrite hand-off.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
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
#include "collage/search/exact_search.hpp"
#include "collage/search/greedy_search.hpp"

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

/// Everything partition() found out.
struct PartitionResult {
  Partitioning partitioning;
  /// Every candidate of every spec, in canonical order, with its cost (Invalid when the oracle
  /// refused or failed).
  std::vector<Candidate> candidates;
  /// For each chosen part (same order), the indexes into `candidates` of the candidates that
  /// start at the same first node, cheapest first: what the search chose among.
  std::vector<std::vector<std::size_t>> alternatives;
  /// One line per oracle failure (the candidate became Invalid).
  std::vector<std::string> oracle_errors;
  OracleStats oracle;
  PhaseSeconds seconds;
  /// Per-target penalties used, by target.
  std::map<std::string, double> penalties;
  /// Target priority (spec order), used by the greedy searcher.
  std::vector<std::string> priority;
  SearchAlgorithm algorithm = SearchAlgorithm::exact;
  std::size_t beam_width = 0;
};

namespace detail {

/// Compares candidates with node indexes by first inside node (for searching canonical lists).
struct FirstInsideOrder {
  bool operator()(const Candidate& c, std::size_t node) const { return c.sub_graph.first_inside() < node; }
  bool operator()(std::size_t node, const Candidate& c) const { return node < c.sub_graph.first_inside(); }
};

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Runs the chosen searcher over costed candidates.
template <class G>
Result<Partitioning> run_search(const DataflowGraph<G>& graph, const std::vector<Candidate>& candidates,
                                const SearchCosts& costs, SearchAlgorithm algorithm, const PartitionerOptions& options,
                                const std::vector<std::string>& priority) {
  auto problem = SearchProblem<G>::build_borrowed(graph, candidates, costs);
  if (!problem.ok()) return problem.error();
  switch (algorithm) {
    case SearchAlgorithm::greedy: return greedy_search(*problem, priority);
    case SearchAlgorithm::beam: return beam_search(*problem, options.beam);
    case SearchAlgorithm::exact: {
      auto exact = exact_search(*problem, options.exact);
      if (exact.ok() || !options.fall_back_to_beam || exact.error().code != ErrorCode::search_gave_up) {
        return exact;
      }
      auto beam = beam_search(*problem, options.beam);
      if (beam.ok()) beam->stats.algorithm = "beam (exact gave up)";
      return beam;
    }
  }
  return Error{ErrorCode::invalid_argument, "unknown search algorithm"};
}

}  // namespace detail

/// Phases 1-3 of collage: every spec's rule proposes candidates over `graph`; `oracle` costs
/// them (through a structural cache and the budget of `options`); the chosen searcher picks the
/// cheapest valid, acyclic partitioning. Fails (without aborting) when some node cannot be covered,
/// naming it and the targets tried, or when the search fails. Oracle failures never fail the call:
/// they make the candidate Invalid and are listed in `oracle_errors`.
template <class G>
Result<PartitionResult> partition(const DataflowGraph<G>& graph, const std::vector<PartitionSpec<G>>& specs,
                                  CostOracle<G>& oracle, const PartitionerOptions& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  auto report = [&](std::string_view phase, std::size_t done, std::size_t total) {
    if (options.progress) options.progress(phase, done, total);
  };
  PartitionResult result;
  result.algorithm = options.algorithm;
  result.beam_width = options.beam.width;

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
  result.seconds.candidates = detail::seconds_since(phase);

  // Costs: candidates without one go to the oracle, in one batch.
  phase = std::chrono::steady_clock::now();
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
    if (!c.cost) pending.push_back(&c);
  }
  std::vector<SafeEstimate> estimates = safe_estimate_batch(*front, graph, pending);
  for (std::size_t k = 0; k < pending.size(); ++k) {
    const_cast<Candidate*>(pending[k])->cost = estimates[k].cost;
    if (estimates[k].failed()) result.oracle_errors.push_back(estimates[k].error);
  }
  result.oracle = front->stats();
  result.seconds.estimate = detail::seconds_since(phase);

  // Phase 3: search.
  phase = std::chrono::steady_clock::now();
  report("search", 0, 1);
  auto found = detail::run_search(graph, result.candidates, costs, options.algorithm, options, result.priority);
  if (!found.ok()) return found.error();
  result.partitioning = std::move(found).value();
  report("search", 1, 1);
  result.seconds.search = detail::seconds_since(phase);

  // Explanation: the alternatives at each chosen part's first node.
  // Canonical order sorts candidates by first inside node, so each part's are one run.
  for (const Candidate& part : result.partitioning.parts) {
    const std::size_t first = part.sub_graph.first_inside();
    auto run = std::equal_range(result.candidates.begin(), result.candidates.end(), first, detail::FirstInsideOrder{});
    std::vector<std::size_t> alternatives;
    for (auto it = run.first; it != run.second; ++it) {
      alternatives.push_back(static_cast<std::size_t>(it - result.candidates.begin()));
    }
    // Cheapest first, ties in candidate order (a stable sort's order, without its buffer).
    std::sort(alternatives.begin(), alternatives.end(), [&](std::size_t a, std::size_t b) {
      const Cost ca = result.candidates[a].cost.value_or(Cost::unknown());
      const Cost cb = result.candidates[b].cost.value_or(Cost::unknown());
      return ca < cb || (!(cb < ca) && a < b);
    });
    result.alternatives.push_back(std::move(alternatives));
  }
  result.seconds.total = detail::seconds_since(started);
  return result;
}

/// Phase 4: hands each chosen part to `rewrite(const Candidate&, const ExtractionView&)` in
/// reverse dataflow order (consumers before producers), so that rewriting one part leaves the
/// parts still pending valid.
template <class G, class Rewrite>
void rewrite_partitions(const DataflowGraph<G>& graph, const Partitioning& partitioning, Rewrite&& rewrite) {
  for (auto it = partitioning.parts.rbegin(); it != partitioning.parts.rend(); ++it) {
    rewrite(*it, extract(graph, it->sub_graph));
  }
}

/// A saved search: the costed candidates and the search settings, as text. replay() repeats the
/// search from it without any oracle and gets the same partitioning.
///
/// Format (one record per line, fields separated by tabs):
///   collage-trace/1
///   search <exact|beam|greedy> <beam width>
///   priority <target>...
///   penalty <target> <value>
///   candidate <target> <rule> <cost> <inside indexes, comma-separated> [<group>...]
/// where a cost is a number, "unknown" or "invalid", and a group is "<k=v;k=v>@<indexes>"
/// (attribute text must not contain tabs, ';', '=' or '@').
inline std::string save_trace(const PartitionResult& result) {
  std::ostringstream out;
  out.precision(17);
  auto indexes = [](const IndexSet& s) {
    std::string text;
    for (std::size_t i : s) {  // appended: "," + std::string trips g++ 12's bogus -Wrestrict in C++20 (GCC PR 105329)
      if (!text.empty()) text += ',';
      text += std::to_string(i);
    }
    return text;
  };
  out << "collage-trace/1\n";
  out << "search\t" << to_string(result.algorithm) << '\t' << result.beam_width << '\n';
  out << "priority";
  for (const std::string& t : result.priority) out << '\t' << t;
  out << '\n';
  for (const auto& [target, value] : result.penalties) out << "penalty\t" << target << '\t' << value << '\n';
  for (const Candidate& c : result.candidates) {
    const Cost cost = c.cost.value_or(Cost::unknown());
    out << "candidate\t" << c.target << '\t' << c.rule_name << '\t';
    if (cost.is_known()) {
      out << cost.raw();
    } else {
      out << cost.to_string();
    }
    out << '\t' << indexes(c.sub_graph.inside());
    for (const NestedSubGraph& n : c.sub_graph.nested()) {
      out << '\t';
      for (std::size_t k = 0; k < n.attrs.size(); ++k) out << (k ? ";" : "") << n.attrs[k].first << '=' << n.attrs[k].second;
      out << '@' << indexes(n.sub_graph.inside());
    }
    out << '\n';
  }
  return out.str();
}

namespace detail {

inline std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(sep, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

inline std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

template <class G>
std::optional<IndexSet> parse_indexes(const DataflowGraph<G>& graph, const std::string& text) {
  IndexSet s(graph.size());
  if (text.empty()) return s;
  for (const std::string& item : split(text, ',')) {
    auto v = parse_number(item);
    if (!v || *v < 0 || *v >= static_cast<double>(graph.size()) || *v != static_cast<double>(static_cast<std::size_t>(*v))) {
      return std::nullopt;
    }
    s.add(static_cast<std::size_t>(*v));
  }
  return s;
}

}  // namespace detail

/// Repeats the search saved in `trace` (see save_trace) over `graph` without an oracle. Fails,
/// naming the line, on a malformed trace or one that does not fit the graph.
template <class G>
Result<Partitioning> replay(const DataflowGraph<G>& graph, std::string_view trace) {
  std::vector<std::string> lines = detail::split(trace, '\n');
  if (lines.empty() || lines[0] != "collage-trace/1") return Error{ErrorCode::parse, "trace: line 1: expected 'collage-trace/1'"};
  PartitionerOptions options;
  SearchCosts costs;
  std::vector<std::string> priority;
  std::vector<Candidate> candidates;
  for (std::size_t n = 1; n < lines.size(); ++n) {
    if (lines[n].empty()) continue;
    const std::string where = "trace: line " + std::to_string(n + 1) + ": ";
    std::vector<std::string> f = detail::split(lines[n], '\t');
    if (f[0] == "search" && f.size() == 3) {
      auto algorithm = parse_search_algorithm(f[1]);
      auto width = detail::parse_number(f[2]);
      if (!algorithm || !width) return Error{ErrorCode::parse, where + "bad search line"};
      options.algorithm = *algorithm;
      options.beam.width = static_cast<std::size_t>(*width);
    } else if (f[0] == "priority") {
      priority.assign(f.begin() + 1, f.end());
    } else if (f[0] == "penalty" && f.size() == 3) {
      auto v = detail::parse_number(f[2]);
      if (!v) return Error{ErrorCode::parse, where + "bad penalty"};
      costs.penalty[f[1]] = *v;
    } else if (f[0] == "candidate" && f.size() >= 5) {
      Cost cost = f[3] == "unknown" ? Cost::unknown() : f[3] == "invalid" ? Cost::invalid() : Cost::invalid();
      if (f[3] != "unknown" && f[3] != "invalid") {
        auto v = detail::parse_number(f[3]);
        if (!v) return Error{ErrorCode::parse, where + "bad cost '" + f[3] + "'"};
        cost = Cost::value(*v);
      }
      auto inside = detail::parse_indexes(graph, f[4]);
      if (!inside) return Error{ErrorCode::parse, where + "bad node indexes (does the trace belong to this graph?)"};
      std::vector<NestedSubGraph> nested;
      for (std::size_t g = 5; g < f.size(); ++g) {
        const std::size_t at = f[g].find('@');
        if (at == std::string::npos) return Error{ErrorCode::parse, where + "bad group '" + f[g] + "'"};
        Attrs attrs;
        for (const std::string& kv : detail::split(std::string_view(f[g]).substr(0, at), ';')) {
          const std::size_t eq = kv.find('=');
          if (eq == std::string::npos) return Error{ErrorCode::parse, where + "bad attribute '" + kv + "'"};
          attrs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        }
        auto members = detail::parse_indexes(graph, f[g].substr(at + 1));
        if (!members) return Error{ErrorCode::parse, where + "bad group indexes"};
        nested.push_back(NestedSubGraph{SubGraph(graph, std::move(*members)), std::move(attrs)});
      }
      candidates.push_back(Candidate{SubGraph(graph, std::move(*inside), std::move(nested)), f[1], f[2], cost});
    } else {
      return Error{ErrorCode::parse, where + "unrecognised record '" + f[0] + "'"};
    }
  }
  options.fall_back_to_beam = true;
  return detail::run_search(graph, candidates, costs, options.algorithm, options, priority);
}

}  // namespace collage
