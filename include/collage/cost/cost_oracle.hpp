#pragma once

/// \file
/// CostOracle<G>: what tells the search how much a candidate costs on its target.
///
/// An oracle answers with a Cost (see collage/support/cost.hpp):
///  - a known value: the candidate's cost;
///  - Cost::invalid(): the target cannot compile or run the candidate. The search drops the
///    candidate, exactly as if its rule had never proposed it;
///  - Cost::unknown(): the oracle cannot tell (for instance its budget is spent). Unknown orders
///    after every known cost, so the search picks an Unknown candidate only where no candidate
///    with a known cost covers the same nodes;
///  - an Error: the oracle failed. safe_estimate() turns it into Invalid with a message, so a
///    failing backend never stops the search.
///
/// The wrappers (CachingOracle, PersistentOracle, BudgetedOracle) stack over any oracle; the
/// suggested order, outermost first, is Caching(Persistent(Budgeted(backend))). Oracles are not
/// thread-safe: a search calls them from one thread (an oracle may parallelise inside
/// estimate_batch).

#include <cassert>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions)
#include <exception>
#endif

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/extraction.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// A cost and how much it varied: what a measuring oracle reports and a MeasurementDb stores.
struct Measurement {
  Cost cost;
  /// Relative spread of the samples behind `cost` (the timer uses IQR / median); 0 for a cost
  /// that was estimated rather than measured.
  double spread = 0.0;
  /// Number of samples behind `cost`: 1 for an estimate, 0 when nothing was run.
  std::size_t samples = 1;
};

/// Counters of an oracle and of every oracle it wraps (see CostOracle::stats()).
struct OracleStats {
  /// Candidates the oracle was asked to estimate (each candidate of a batch counts once).
  std::size_t calls = 0;
  /// Answers a CachingOracle served from memory (also repeats within one batch).
  std::size_t cache_hits = 0;
  /// Candidates a CachingOracle passed on to the oracle it wraps.
  std::size_t cache_misses = 0;
  /// Answers a PersistentOracle served from its MeasurementDb.
  std::size_t db_hits = 0;
  /// Errors (and exceptions) raised by the backend oracle at the bottom of the stack.
  std::size_t errors = 0;
  /// Estimates a BudgetedOracle answered with Unknown because its budget was spent.
  std::size_t budget_refusals = 0;
  /// Candidates that reached the backend oracle at the bottom of the stack.
  std::size_t backend_calls = 0;
};

/// Estimates the cost of running a candidate on its target.
///
/// Implement estimate(); the other members have working defaults. The batch forms let an oracle
/// measure many candidates at once (in parallel, or on other machines); by default they loop.
/// An oracle that measures (and so knows the spread of its samples) derives from
/// MeasuringOracle instead.
template <class G>
class CostOracle {
 public:
  virtual ~CostOracle() = default;

  /// The cost of `candidate` over `graph`; `view` is extract(graph, candidate.sub_graph).
  virtual Result<Cost> estimate(const DataflowGraph<G>& graph, const Candidate& candidate,
                                const ExtractionView& view) = 0;

  /// One answer per candidate, in order. By default calls estimate() for each.
  virtual std::vector<Result<Cost>> estimate_batch(const DataflowGraph<G>& graph,
                                                   const std::vector<const Candidate*>& candidates) {
    std::vector<Result<Cost>> out;
    out.reserve(candidates.size());
    for (const Candidate* c : candidates) out.push_back(estimate(graph, *c, extract(graph, c->sub_graph)));
    return out;
  }

  /// The cost with its spread and sample count. By default estimate() as one sample, spread 0.
  virtual Result<Measurement> measure(const DataflowGraph<G>& graph, const Candidate& candidate,
                                      const ExtractionView& view) {
    Result<Cost> cost = estimate(graph, candidate, view);
    if (!cost.ok()) return cost.error();
    return Measurement{*cost, 0.0, 1};
  }

  /// measure() for many candidates. By default estimate_batch(), each answer one sample.
  virtual std::vector<Result<Measurement>> measure_batch(const DataflowGraph<G>& graph,
                                                         const std::vector<const Candidate*>& candidates) {
    std::vector<Result<Cost>> costs = estimate_batch(graph, candidates);
    std::vector<Result<Measurement>> out;
    out.reserve(candidates.size());
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (k >= costs.size()) {
        out.emplace_back(Error{ErrorCode::oracle, batch_size_message(costs.size(), candidates.size())});
      } else if (costs[k].ok()) {
        out.emplace_back(Measurement{*costs[k], 0.0, 1});
      } else {
        out.emplace_back(costs[k].error());
      }
    }
    return out;
  }

  /// A short name for reports and error messages.
  virtual std::string name() const { return "oracle"; }

  /// Counters of this oracle and of the oracles it wraps; all zero for a plain oracle.
  virtual OracleStats stats() const { return OracleStats{}; }

  /// The oracle this one wraps, or nullptr for a backend oracle.
  virtual const CostOracle* wrapped() const { return nullptr; }

 protected:
  CostOracle() = default;
  CostOracle(const CostOracle&) = default;
  CostOracle& operator=(const CostOracle&) = default;

  /// The error for a batch answer of the wrong length.
  std::string batch_size_message(std::size_t got, std::size_t expected) const {
    return "cost oracle '" + name() + "' returned " + std::to_string(got) + " answers for " +
           std::to_string(expected) + " candidates";
  }
};

/// A CostOracle that measures: implement measure(); estimate() and the batch forms follow.
/// Override measure_batch() to measure a batch at once.
template <class G>
class MeasuringOracle : public CostOracle<G> {
 public:
  /// The measured cost, its relative spread and the number of samples.
  Result<Measurement> measure(const DataflowGraph<G>& graph, const Candidate& candidate,
                              const ExtractionView& view) override = 0;

  /// measure() for each candidate.
  std::vector<Result<Measurement>> measure_batch(const DataflowGraph<G>& graph,
                                                 const std::vector<const Candidate*>& candidates) override {
    std::vector<Result<Measurement>> out;
    out.reserve(candidates.size());
    for (const Candidate* c : candidates) out.push_back(measure(graph, *c, extract(graph, c->sub_graph)));
    return out;
  }

  /// The cost of measure().
  Result<Cost> estimate(const DataflowGraph<G>& graph, const Candidate& candidate,
                        const ExtractionView& view) override {
    Result<Measurement> m = measure(graph, candidate, view);
    if (!m.ok()) return m.error();
    return m->cost;
  }

  /// The costs of measure_batch().
  std::vector<Result<Cost>> estimate_batch(const DataflowGraph<G>& graph,
                                           const std::vector<const Candidate*>& candidates) override {
    std::vector<Result<Measurement>> ms = measure_batch(graph, candidates);
    std::vector<Result<Cost>> out;
    out.reserve(candidates.size());
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (k >= ms.size()) {
        out.emplace_back(Error{ErrorCode::oracle, this->batch_size_message(ms.size(), candidates.size())});
      } else if (ms[k].ok()) {
        out.emplace_back(ms[k]->cost);
      } else {
        out.emplace_back(ms[k].error());
      }
    }
    return out;
  }

 protected:
  MeasuringOracle() = default;
  MeasuringOracle(const MeasuringOracle&) = default;
  MeasuringOracle& operator=(const MeasuringOracle&) = default;
};

namespace detail {

/// Calls `f` (returning a Result), turning an exception thrown by user code into an Error that
/// names `oracle`. Without exceptions, just calls `f`.
template <class G, class F>
auto guarded_call(const CostOracle<G>& oracle, F&& f) -> decltype(f()) {
#if defined(__cpp_exceptions)
  try {
    return f();
  } catch (const std::exception& e) {
    return Error{ErrorCode::oracle, "cost oracle '" + oracle.name() + "' threw: " + e.what()};
  } catch (...) {
    return Error{ErrorCode::oracle, "cost oracle '" + oracle.name() + "' threw a non-standard exception"};
  }
#else
  (void)oracle;
  return f();
#endif
}

/// Calls a batch form through `f`, turning an exception into one Error per candidate and a
/// batch of the wrong length into Errors for the missing (or all surplus-discarded) answers.
template <class T, class G, class F>
std::vector<Result<T>> guarded_batch(const CostOracle<G>& oracle, std::size_t expected, F&& f) {
  std::vector<Result<T>> out;
#if defined(__cpp_exceptions)
  try {
    out = f();
  } catch (const std::exception& e) {
    out.assign(expected, Result<T>(Error{ErrorCode::oracle, "cost oracle '" + oracle.name() + "' threw: " + e.what()}));
    return out;
  } catch (...) {
    out.assign(expected, Result<T>(Error{ErrorCode::oracle, "cost oracle '" + oracle.name() + "' threw a non-standard exception"}));
    return out;
  }
#else
  out = f();
#endif
  if (out.size() != expected) {
    Error error{ErrorCode::oracle, "cost oracle '" + oracle.name() + "' returned " + std::to_string(out.size()) + " answers for " +
                std::to_string(expected) + " candidates"};
    out.assign(expected, Result<T>(error));
  }
  return out;
}

/// Base of the wrappers: holds the wrapped oracle (borrowed or owned), forwards to it with
/// exceptions caught, and merges statistics along the stack.
template <class G>
class OracleWrapper : public MeasuringOracle<G> {
 public:
  OracleWrapper(const OracleWrapper&) = delete;
  OracleWrapper& operator=(const OracleWrapper&) = delete;

  const CostOracle<G>* wrapped() const override { return inner_; }

  /// This wrapper's counters added to those of the oracles below it; `calls` is this wrapper's.
  OracleStats stats() const override {
    OracleStats s = inner_->stats();
    s.calls = own_.calls;
    s.cache_hits += own_.cache_hits;
    s.cache_misses += own_.cache_misses;
    s.db_hits += own_.db_hits;
    s.budget_refusals += own_.budget_refusals;
    if (inner_->wrapped() == nullptr) {
      s.errors += own_.errors;
      s.backend_calls = forwarded_;
    }
    return s;
  }

 protected:
  explicit OracleWrapper(CostOracle<G>& inner) : inner_(&inner) {}
  explicit OracleWrapper(std::unique_ptr<CostOracle<G>> inner) : owned_(std::move(inner)), inner_(owned_.get()) {
    assert(inner_ != nullptr && "a wrapper needs an oracle to wrap");
  }

  CostOracle<G>& inner() const { return *inner_; }

  /// inner().measure(), with exceptions turned into Errors and counted.
  Result<Measurement> forward(const DataflowGraph<G>& graph, const Candidate& candidate, const ExtractionView& view) {
    ++forwarded_;
    Result<Measurement> m = guarded_call(*inner_, [&] { return inner_->measure(graph, candidate, view); });
    if (!m.ok()) ++own_.errors;
    return m;
  }

  /// inner().measure_batch() as one batch, with exceptions and a wrong length turned into Errors.
  std::vector<Result<Measurement>> forward_batch(const DataflowGraph<G>& graph,
                                                 const std::vector<const Candidate*>& candidates) {
    if (candidates.empty()) return {};
    forwarded_ += candidates.size();
    std::vector<Result<Measurement>> ms = guarded_batch<Measurement>(
        *inner_, candidates.size(), [&] { return inner_->measure_batch(graph, candidates); });
    for (const Result<Measurement>& m : ms) own_.errors += m.ok() ? 0 : 1;
    return ms;
  }

  /// The counters this wrapper keeps itself (merged by stats()).
  OracleStats own_;

 private:
  std::unique_ptr<CostOracle<G>> owned_;
  CostOracle<G>* inner_;
  std::size_t forwarded_ = 0;
};

template <class F, class G>
using oracle_callable_result_t = std::decay_t<
    std::invoke_result_t<F&, const DataflowGraph<G>&, const Candidate&, const ExtractionView&>>;

template <class R>
inline constexpr bool is_cost_answer_v = std::is_same_v<R, Cost> || std::is_same_v<R, Result<Cost>>;
template <class R>
inline constexpr bool is_measurement_answer_v =
    std::is_same_v<R, Measurement> || std::is_same_v<R, Result<Measurement>>;

/// make_oracle's oracle over a callable that returns Cost or Result<Cost>.
template <class G, class F>
class FunctionOracle final : public CostOracle<G> {
 public:
  FunctionOracle(std::string name, F f) : name_(std::move(name)), f_(std::move(f)) {}
  Result<Cost> estimate(const DataflowGraph<G>& graph, const Candidate& candidate,
                        const ExtractionView& view) override {
    return f_(graph, candidate, view);
  }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  F f_;
};

/// make_oracle's oracle over a callable that returns Measurement or Result<Measurement>.
template <class G, class F>
class FunctionMeasuringOracle final : public MeasuringOracle<G> {
 public:
  FunctionMeasuringOracle(std::string name, F f) : name_(std::move(name)), f_(std::move(f)) {}
  Result<Measurement> measure(const DataflowGraph<G>& graph, const Candidate& candidate,
                              const ExtractionView& view) override {
    return f_(graph, candidate, view);
  }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  F f_;
};

}  // namespace detail

/// An oracle named `name` over a callable `f(const DataflowGraph<G>&, const Candidate&, const
/// ExtractionView&)` returning Cost, Result<Cost>, Measurement or Result<Measurement> (the last
/// two make a MeasuringOracle). The oracle owns `f`; the caller owns the oracle.
template <class G, class F>
std::unique_ptr<CostOracle<G>> make_oracle(std::string name, F f) {
  static_assert(std::is_invocable_v<F&, const DataflowGraph<G>&, const Candidate&, const ExtractionView&>,
                "make_oracle<G>(name, f): f must be callable as f(const DataflowGraph<G>&, const Candidate&, "
                "const ExtractionView&)");
  using R = detail::oracle_callable_result_t<F, G>;
  static_assert(detail::is_cost_answer_v<R> || detail::is_measurement_answer_v<R>,
                "make_oracle<G>(name, f): f must return Cost, Result<Cost>, Measurement or Result<Measurement>");
  if constexpr (detail::is_measurement_answer_v<R>) {
    return std::make_unique<detail::FunctionMeasuringOracle<G, F>>(std::move(name), std::move(f));
  } else {
    return std::make_unique<detail::FunctionOracle<G, F>>(std::move(name), std::move(f));
  }
}

/// A cost that is safe to search with, and why it is Invalid when the oracle failed.
struct SafeEstimate {
  Cost cost;
  /// Empty unless the oracle returned an Error or threw; then `cost` is Invalid.
  std::string error;

  /// Whether the oracle failed (so `cost` is Invalid and `error` says why).
  bool failed() const { return !error.empty(); }
};

namespace detail {

template <class G>
SafeEstimate to_safe_estimate(const CostOracle<G>& oracle, const DataflowGraph<G>& graph, const Candidate& candidate,
                              const Result<Cost>& cost) {
  if (cost.ok()) return SafeEstimate{*cost, {}};
  const std::string& why = cost.error().message;
  return SafeEstimate{Cost::invalid(), "cost oracle '" + oracle.name() + "' failed on candidate '" +
                                           candidate.to_string(graph) + "': " + (why.empty() ? "no message" : why)};
}

}  // namespace detail

/// Asks `oracle` for the cost of `candidate` and never fails: an Error, or an exception thrown
/// by the oracle (when exceptions are enabled), becomes Cost::invalid() with the reason in
/// `error`. An Invalid cost removes the candidate from the search.
template <class G>
SafeEstimate safe_estimate(CostOracle<G>& oracle, const DataflowGraph<G>& graph, const Candidate& candidate,
                           const ExtractionView& view) {
  Result<Cost> cost = detail::guarded_call(oracle, [&] { return oracle.estimate(graph, candidate, view); });
  return detail::to_safe_estimate(oracle, graph, candidate, cost);
}

/// safe_estimate() with the extraction view computed here.
template <class G>
SafeEstimate safe_estimate(CostOracle<G>& oracle, const DataflowGraph<G>& graph, const Candidate& candidate) {
  return safe_estimate(oracle, graph, candidate, extract(graph, candidate.sub_graph));
}

/// safe_estimate() over a batch, through the oracle's estimate_batch(): one answer per candidate,
/// in order. A batch answer of the wrong length fails every candidate of the batch.
template <class G>
std::vector<SafeEstimate> safe_estimate_batch(CostOracle<G>& oracle, const DataflowGraph<G>& graph,
                                              const std::vector<const Candidate*>& candidates) {
  std::vector<Result<Cost>> costs = detail::guarded_batch<Cost>(
      oracle, candidates.size(), [&] { return oracle.estimate_batch(graph, candidates); });
  std::vector<SafeEstimate> out;
  out.reserve(candidates.size());
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    out.push_back(detail::to_safe_estimate(oracle, graph, *candidates[k], costs[k]));
  }
  return out;
}

}  // namespace collage
