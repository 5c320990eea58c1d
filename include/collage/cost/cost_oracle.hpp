#pragma once

/// \file
/// CostOracle<G>: what tells the search how much a candidate costs on its target.
///
/// An oracle answers each candidate with a Result<Measurement> whose cost is one of:
///  - a known value: a number >= 0 in the oracle's unit (the same unit for every candidate);
///  - Cost::invalid() (or the number +inf): the target cannot compile or run the candidate. The
///    search drops the candidate, exactly as if its rule had never proposed it;
///  - Cost::unknown(): the oracle cannot tell (for instance its budget is spent). Unknown orders
///    after every known cost, so the search picks an Unknown candidate only where no candidate
///    with a known cost covers the same nodes;
/// or with an Error: the oracle failed. safe_estimate() turns an Error into Invalid with a message
/// naming the oracle and the candidate, so a failing backend never stops the search.
///
/// A negative number, NaN or -inf is not a cost but a mistake of the oracle, and its candidate
/// gets an Error naming the value: given as a number (a double from the callable of
/// make_oracle() or measure_each(), or make_measurement()), or, for a negative number or -inf,
/// as Cost::value() of it (whichever way it is answered: a Cost, a Measurement). Cost::value()
/// of NaN is Unknown, the same as Cost::unknown().
///
/// Writing an oracle: make_oracle() over a callable that answers one candidate; or a class
/// derived from CostOracle<G> that overrides do_measure_batch(), the one function an oracle
/// implements (measure_each() answers a batch one candidate at a time). Callers use the
/// non-virtual measure_batch(), measure(), estimate_batch() and estimate(), which check the
/// answers.
///
/// The wrappers (CachingOracle, PersistentOracle, BudgetedOracle) stack over any oracle; the
/// suggested order, outermost first, is Caching(Persistent(Budgeted(backend))). Oracles are not
/// thread-safe: a search calls them from one thread (an oracle may parallelise inside
/// do_measure_batch()).

#include <cassert>
#include <cstddef>
#include <memory>
#include <optional>
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
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// An oracle's answer for one candidate: its cost and how much it varied. What a measuring
/// oracle reports and a MeasurementDb stores.
struct Measurement {
  Cost cost;
  /// Relative spread of the samples behind `cost` (the timer uses IQR / median), >= 0; 0 for a
  /// cost that was estimated rather than measured.
  double spread = 0.0;
  /// Number of samples behind `cost`: 1 for an estimate, 0 when nothing was run.
  std::size_t samples = 1;
};

namespace detail {

/// The Error for an answer whose `field` is `value`, which breaks `rule`.
inline Error bad_answer(const char* field, double value, const char* rule) {
  return Error{ErrorCode::oracle, std::string("answered a ") + field + " of " + format_double(value) + ": " + rule};
}

inline constexpr const char* kCostRule =
    "a cost is a number >= 0 (+inf or Cost::invalid() when the target cannot run the candidate, Cost::unknown() "
    "when the oracle cannot tell)";
inline constexpr const char* kSpreadRule = "a spread is a number >= 0";

}  // namespace detail

/// The answer for a cost the oracle found as a number, checked: `cost` >= 0 is a known cost and
/// +inf is Invalid; a negative `cost`, NaN or -inf, or a `spread` that is negative or NaN, is the
/// oracle's mistake and gives an Error (ErrorCode::oracle) naming the value.
inline Result<Measurement> make_measurement(double cost, double spread = 0.0, std::size_t samples = 1) {
  if (!(cost >= 0.0)) return detail::bad_answer("cost", cost, detail::kCostRule);
  if (!(spread >= 0.0)) return detail::bad_answer("spread", spread, detail::kSpreadRule);
  return Measurement{Cost::value(cost), spread, samples};
}

/// Counters of an oracle and of every oracle it wraps (see CostOracle::stats()).
struct OracleStats {
  /// Candidates the oracle was asked about (each candidate of a batch counts once).
  std::size_t calls = 0;
  /// Answers a CachingOracle served from memory (also repeats within one batch).
  std::size_t cache_hits = 0;
  /// Candidates a CachingOracle passed on to the oracle it wraps.
  std::size_t cache_misses = 0;
  /// Answers a PersistentOracle served from its MeasurementDb.
  std::size_t db_hits = 0;
  /// Errors (and exceptions) raised by the backend oracle at the bottom of the stack.
  std::size_t errors = 0;
  /// Answers a BudgetedOracle gave as Unknown because its budget was spent.
  std::size_t budget_refusals = 0;
  /// Candidates that reached the backend oracle at the bottom of the stack.
  std::size_t backend_calls = 0;

  /// What was counted since `before` (an earlier stats() of the same stack): every counter's
  /// increase, and `calls` as it is now (it is the outermost oracle's own).
  OracleStats since(const OracleStats& before) const {
    OracleStats d = *this;
    d.cache_hits -= before.cache_hits;
    d.cache_misses -= before.cache_misses;
    d.db_hits -= before.db_hits;
    d.errors -= before.errors;
    d.budget_refusals -= before.budget_refusals;
    d.backend_calls -= before.backend_calls;
    return d;
  }
};

/// Tells the cost of running candidates on their targets.
///
/// An oracle implements one function, do_measure_batch(): one answer per candidate of a batch
/// (measured at once, in parallel or on other machines, or one at a time through
/// measure_each()). name(), stats() and wrapped() describe the oracle. One that holds answers it
/// gives without measuring (a cache, a database) also implements do_known_batch(). Callers ask
/// through the non-virtual members, which check what these return.
template <class G>
class CostOracle {
 public:
  virtual ~CostOracle() = default;

  /// One answer per candidate, in order (none for an empty batch, without asking the oracle).
  /// Never throws: an exception thrown by the oracle (when exceptions are enabled), or a list of
  /// answers of the wrong length, fails every candidate of the batch with an Error; an answer
  /// whose cost was made from a negative number or -inf (Cost::value(-1), see
  /// Cost::not_a_cost()), or whose spread is negative or NaN, fails its candidate with an Error
  /// naming the value.
  std::vector<Result<Measurement>> measure_batch(const DataflowGraph<G>& graph,
                                                 const std::vector<const Candidate*>& candidates) {
    return checked(candidates.size(), [&] { return do_measure_batch(graph, candidates); });
  }

  /// The answers this oracle gives without measuring anything: what a cache or a measurement
  /// database along its stack already holds, one per candidate, in order; Cost::unknown() (0
  /// samples) for the others. A spent budget (BudgetedOracle) still serves these. Checked as
  /// measure_batch() checks its answers.
  std::vector<Result<Measurement>> known_batch(const DataflowGraph<G>& graph,
                                               const std::vector<const Candidate*>& candidates) {
    return checked(candidates.size(), [&] { return do_known_batch(graph, candidates); });
  }

  /// measure_batch() for one candidate.
  Result<Measurement> measure(const DataflowGraph<G>& graph, const Candidate& candidate) {
    return std::move(measure_batch(graph, {&candidate}).front());
  }

  /// The costs of measure_batch().
  std::vector<Result<Cost>> estimate_batch(const DataflowGraph<G>& graph,
                                           const std::vector<const Candidate*>& candidates) {
    std::vector<Result<Measurement>> answers = measure_batch(graph, candidates);
    std::vector<Result<Cost>> out;
    out.reserve(answers.size());
    for (Result<Measurement>& m : answers) {
      if (m.ok()) {
        out.emplace_back(m->cost);
      } else {
        out.emplace_back(m.error());
      }
    }
    return out;
  }

  /// The cost of measure().
  Result<Cost> estimate(const DataflowGraph<G>& graph, const Candidate& candidate) {
    Result<Measurement> m = measure(graph, candidate);
    if (!m.ok()) return m.error();
    return m->cost;
  }

  /// A short name for reports and error messages (and, for a backend oracle, the name its
  /// measurements are stored under in a MeasurementDb).
  virtual std::string name() const { return "oracle"; }

  /// The unit of the costs this oracle answers in (e.g. "ms"), or empty when it does not say.
  /// partition() refuses a transfer model that declares another unit, so that copies between
  /// devices are never charged in seconds beside kernels in milliseconds.
  virtual std::string unit() const { return {}; }

  /// Counters of this oracle and of the oracles it wraps; all zero for a plain oracle.
  virtual OracleStats stats() const { return OracleStats{}; }

  /// The oracle this one wraps, or nullptr for a backend oracle.
  virtual const CostOracle* wrapped() const { return nullptr; }

 protected:
  CostOracle() = default;
  CostOracle(const CostOracle&) = default;
  CostOracle& operator=(const CostOracle&) = default;

 private:
  /// The one function an oracle implements: an answer for each of `candidates` (never empty), in
  /// order, over `graph`. May throw (measure_batch() catches).
  virtual std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                            const std::vector<const Candidate*>& candidates) = 0;

  /// What this oracle answers without measuring (known_batch()): nothing, unless it overrides this.
  virtual std::vector<Result<Measurement>> do_known_batch(const DataflowGraph<G>& /*graph*/,
                                                          const std::vector<const Candidate*>& candidates) {
    return std::vector<Result<Measurement>>(candidates.size(), Measurement{Cost::unknown(), 0.0, 0});
  }

  /// The answers `ask()` gives for `expected` candidates (none, without asking, when there are
  /// none), with what it throws, a wrong count and values that are no cost turned into Errors.
  template <class Ask>
  std::vector<Result<Measurement>> checked(std::size_t expected, Ask&& ask) {
    if (expected == 0) return {};
    std::vector<Result<Measurement>> answers;
#if defined(__cpp_exceptions)
    try {
      answers = ask();
    } catch (const std::exception& e) {
      return failed_batch(expected, std::string("threw: ") + e.what());
    } catch (...) {
      return failed_batch(expected, "threw a non-standard exception");
    }
#else
    answers = ask();
#endif
    if (answers.size() != expected) {
      return failed_batch(expected, "returned " + std::to_string(answers.size()) + " answers for " +
                                        std::to_string(expected) + " candidates");
    }
    for (Result<Measurement>& answer : answers) {
      if (!answer.ok()) continue;
      if (std::optional<double> bad = answer->cost.not_a_cost()) {
        answer = detail::bad_answer("cost", *bad, detail::kCostRule);
      } else if (!(answer->spread >= 0.0)) {
        answer = detail::bad_answer("spread", answer->spread, detail::kSpreadRule);
      }
    }
    return answers;
  }

  /// `expected` copies of an Error that names this oracle and says `what` it did.
  std::vector<Result<Measurement>> failed_batch(std::size_t expected, const std::string& what) const {
    return std::vector<Result<Measurement>>(expected, Error{ErrorCode::oracle, "cost oracle '" + name() + "' " + what});
  }
};

namespace detail {

/// Base of the wrappers: holds the wrapped oracle (borrowed or owned), passes batches on to it,
/// and merges statistics along the stack.
template <class G>
class OracleWrapper : public CostOracle<G> {
 public:
  OracleWrapper(const OracleWrapper&) = delete;
  OracleWrapper& operator=(const OracleWrapper&) = delete;

  const CostOracle<G>* wrapped() const override { return inner_; }
  std::string unit() const override { return inner_->unit(); }

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

  /// inner().measure_batch(), with its Errors counted.
  std::vector<Result<Measurement>> forward_batch(const DataflowGraph<G>& graph,
                                                 const std::vector<const Candidate*>& candidates) {
    forwarded_ += candidates.size();
    std::vector<Result<Measurement>> answers = inner_->measure_batch(graph, candidates);
    for (const Result<Measurement>& m : answers) own_.errors += m.ok() ? 0 : 1;
    return answers;
  }

  /// For a wrapper that answers some candidates itself: the others (`misses`) measured below
  /// (forward_batch()) when `measuring`, else what the oracles below know without measuring.
  std::vector<Result<Measurement>> ask_below(const DataflowGraph<G>& graph,
                                             const std::vector<const Candidate*>& misses, bool measuring) {
    return measuring ? forward_batch(graph, misses) : inner_->known_batch(graph, misses);
  }

  /// The counters this wrapper keeps itself (merged by stats()).
  OracleStats own_;

 private:
  /// What the wrapped oracle knows; a wrapper that holds answers itself overrides this.
  std::vector<Result<Measurement>> do_known_batch(const DataflowGraph<G>& graph,
                                                  const std::vector<const Candidate*>& candidates) override {
    return inner_->known_batch(graph, candidates);
  }

  std::unique_ptr<CostOracle<G>> owned_;
  CostOracle<G>* inner_;
  std::size_t forwarded_ = 0;
};

template <class F, class G>
inline constexpr bool is_oracle_callable_v =
    std::is_invocable_v<F&, const DataflowGraph<G>&, const Candidate&, const ExtractedFunction&>;

/// What a callable that is_oracle_callable_v returns (decayed), else void.
template <class F, class G, class = void>
struct oracle_callable_result {
  using type = void;
};
template <class F, class G>
struct oracle_callable_result<F, G, std::enable_if_t<is_oracle_callable_v<F, G>>> {
  using type =
      std::decay_t<std::invoke_result_t<F&, const DataflowGraph<G>&, const Candidate&, const ExtractedFunction&>>;
};

/// Whether a callable's answer of type R is one make_oracle() and measure_each() take.
template <class R>
inline constexpr bool is_oracle_answer_v =
    std::is_same_v<R, double> || std::is_same_v<R, Result<double>> || std::is_same_v<R, Cost> ||
    std::is_same_v<R, Result<Cost>> || std::is_same_v<R, Measurement> || std::is_same_v<R, Result<Measurement>>;

inline Result<Measurement> to_answer(double cost) { return make_measurement(cost); }
inline Result<Measurement> to_answer(Cost cost) { return Measurement{cost, 0.0, 1}; }
inline Result<Measurement> to_answer(Measurement m) { return m; }
template <class T>
Result<Measurement> to_answer(Result<T> r) {
  if (!r.ok()) return r.error();
  return to_answer(std::move(r).value());
}

}  // namespace detail

/// Answers each of `candidates` through `f(graph, candidate, view)`, with view = extract(graph,
/// candidate.sub_graph): the body of do_measure_batch() for an oracle that answers one candidate
/// at a time. `f` returns double (checked as make_measurement() does), Cost, Measurement, or a
/// Result of one of them.
template <class G, class F>
std::vector<Result<Measurement>> measure_each(const DataflowGraph<G>& graph,
                                              const std::vector<const Candidate*>& candidates, F&& f) {
  static_assert(detail::is_oracle_callable_v<F, G>,
                "measure_each(graph, candidates, f): f must be callable as f(const DataflowGraph<G>&, "
                "const Candidate&, const ExtractedFunction&)");
  static_assert(!detail::is_oracle_callable_v<F, G> ||
                    detail::is_oracle_answer_v<typename detail::oracle_callable_result<F, G>::type>,
                "measure_each(graph, candidates, f): f must return double, Cost, Measurement, or a Result of one "
                "of them");
  std::vector<Result<Measurement>> out;
  out.reserve(candidates.size());
  for (const Candidate* c : candidates) {
    out.push_back(detail::to_answer(f(graph, *c, extract(graph, c->sub_graph))));
  }
  return out;
}

namespace detail {

/// make_oracle's oracle: a name and a callable that answers one candidate.
template <class G, class F>
class FunctionOracle final : public CostOracle<G> {
 public:
  FunctionOracle(std::string name, std::string unit, F f)
      : name_(std::move(name)), unit_(std::move(unit)), f_(std::move(f)) {}
  std::string name() const override { return name_; }
  std::string unit() const override { return unit_; }

 private:
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    return measure_each(graph, candidates, f_);
  }

  std::string name_;
  std::string unit_;
  F f_;
};

}  // namespace detail

/// An oracle named `name` over a callable `f(const DataflowGraph<G>&, const Candidate&, const
/// ExtractedFunction&)` that answers one candidate with double, Cost, Measurement or a Result of one
/// of them (see measure_each()), in `unit` (CostOracle::unit(); empty: not said). The oracle owns
/// `f`; the caller owns the oracle.
template <class G, class F>
std::unique_ptr<CostOracle<G>> make_oracle(std::string name, std::string unit, F f) {
  static_assert(detail::is_oracle_callable_v<F, G>,
                "make_oracle<G>(name, f): f must be callable as f(const DataflowGraph<G>&, const Candidate&, "
                "const ExtractedFunction&)");
  static_assert(!detail::is_oracle_callable_v<F, G> ||
                    detail::is_oracle_answer_v<typename detail::oracle_callable_result<F, G>::type>,
                "make_oracle<G>(name, f): f must return double, Cost, Measurement, or a Result of one of them");
  return std::make_unique<detail::FunctionOracle<G, F>>(std::move(name), std::move(unit), std::move(f));
}

/// make_oracle(name, unit, f) with no unit said.
template <class G, class F>
std::unique_ptr<CostOracle<G>> make_oracle(std::string name, F f) {
  return make_oracle<G>(std::move(name), std::string(), std::move(f));
}

/// A cost that is safe to search with, and why it is Invalid when the oracle failed.
struct SafeEstimate {
  Cost cost;
  /// Empty unless the oracle failed (returned an Error or threw); then `cost` is Invalid.
  std::string error;

  /// Whether the oracle failed (so `cost` is Invalid and `error` says why).
  bool failed() const { return !error.empty(); }
};

namespace detail {

/// The oracle at the bottom of `oracle`'s stack of wrappers: the one whose answers the wrappers
/// pass on, and the one to name when an answer is an error.
template <class G>
const CostOracle<G>& backend_oracle(const CostOracle<G>& oracle) {
  const CostOracle<G>* at = &oracle;
  while (at->wrapped() != nullptr) at = at->wrapped();
  return *at;
}

template <class G>
SafeEstimate to_safe_estimate(const CostOracle<G>& oracle, const DataflowGraph<G>& graph, const Candidate& candidate,
                              const Result<Measurement>& answer) {
  if (answer.ok()) return SafeEstimate{answer->cost, {}};
  const std::string& why = answer.error().message;
  return SafeEstimate{Cost::invalid(), "cost oracle '" + backend_oracle(oracle).name() + "' failed on candidate '" +
                                           candidate.to_string(graph) + "': " + (why.empty() ? "no message" : why)};
}

}  // namespace detail

/// Asks `oracle` for the cost of `candidate` and never fails: an Error (an exception thrown by
/// the oracle, a number that is not a cost, ...) becomes Cost::invalid() with the reason, naming
/// the oracle (the one at the bottom of a stack of wrappers: the caller's, not the caching or
/// budget around it) and the candidate, in `error`. An Invalid cost removes the candidate from the
/// search.
template <class G>
SafeEstimate safe_estimate(CostOracle<G>& oracle, const DataflowGraph<G>& graph, const Candidate& candidate) {
  return detail::to_safe_estimate(oracle, graph, candidate, oracle.measure(graph, candidate));
}

/// safe_estimate() over a batch, asked of the oracle as one batch: one answer per candidate, in
/// order.
template <class G>
std::vector<SafeEstimate> safe_estimate_batch(CostOracle<G>& oracle, const DataflowGraph<G>& graph,
                                              const std::vector<const Candidate*>& candidates) {
  std::vector<Result<Measurement>> answers = oracle.measure_batch(graph, candidates);
  std::vector<SafeEstimate> out;
  out.reserve(candidates.size());
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    out.push_back(detail::to_safe_estimate(oracle, graph, *candidates[k], answers[k]));
  }
  return out;
}

}  // namespace collage
