#pragma once

/// \file
/// BudgetedOracle<G>: caps the calls and the wall-clock time spent on an oracle, and reports
/// progress through a batch.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"

namespace collage {

/// Limits on the work handed to an oracle; 0 means no limit.
struct OracleBudget {
  /// Candidates that may reach the backend oracle (each candidate of a batch counts once). When
  /// the wrapped oracle is itself a wrapper (a cache, a measurement database), the answers it gives
  /// without its backend do not count.
  std::size_t max_calls = 0;
  /// Seconds from the first estimate after which the wrapped oracle is no longer asked to measure.
  double max_seconds = 0;
};

/// Told how far a long phase has got: `done` of `total` items of `phase` (e.g. "estimate").
using ProgressCallback = std::function<void(std::string_view phase, std::size_t done, std::size_t total)>;

/// Wraps an oracle under an OracleBudget. Once the budget is spent, the wrapped oracle is asked
/// only for what it knows without measuring (known_batch(): a cache's or a database's answers),
/// and the other answers are Cost::unknown() (0 samples, counted as budget_refusals), so the
/// search still finishes, preferring candidates whose cost is known. The budget is checked before
/// each chunk: a chunk that is running when time runs out finishes.
///
/// A batch is passed on in chunks (set_chunk_size(); 1 by default, 0 for the whole batch at once),
/// with the progress callback called with phase "estimate" before the first chunk (0 of total)
/// and after each chunk. The wrapped oracle is borrowed or owned, as for CachingOracle.
template <class G>
class BudgetedOracle final : public detail::OracleWrapper<G> {
 public:
  /// Limits `inner` (which must outlive this oracle) to `budget`.
  BudgetedOracle(CostOracle<G>& inner, OracleBudget budget, ProgressCallback progress = {})
      : detail::OracleWrapper<G>(inner), budget_(budget), progress_(std::move(progress)) {}
  /// Limits `inner` (owned) to `budget`.
  BudgetedOracle(std::unique_ptr<CostOracle<G>> inner, OracleBudget budget, ProgressCallback progress = {})
      : detail::OracleWrapper<G>(std::move(inner)), budget_(budget), progress_(std::move(progress)) {}

  /// "budgeted(<wrapped oracle>)".
  std::string name() const override { return "budgeted(" + this->inner().name() + ")"; }

  /// Candidates per call of the wrapped oracle's batch form; 0 passes each batch whole.
  void set_chunk_size(std::size_t n) { chunk_size_ = n; }
  /// Replaces the clock (seconds since any fixed point); for tests.
  void set_clock(std::function<double()> now_seconds) { now_ = std::move(now_seconds); }
  /// Replaces the progress callback.
  void set_progress(ProgressCallback progress) { progress_ = std::move(progress); }
  /// Starts a fresh budget: no calls used, the clock restarts at the next estimate.
  void reset() {
    used_calls_ = 0;
    started_ = false;
  }

  /// Whether the next estimate would be refused.
  bool exhausted() const {
    if (budget_.max_calls != 0 && used_calls_ >= budget_.max_calls) return true;
    return budget_.max_seconds > 0 && seconds_used() >= budget_.max_seconds;
  }
  /// Candidates that reached the backend oracle under the current budget.
  std::size_t calls_used() const { return used_calls_; }
  /// Seconds since the first estimate under the current budget (0 before it).
  double seconds_used() const { return started_ ? now() - start_ : 0.0; }
  /// The limits this oracle enforces.
  const OracleBudget& budget() const { return budget_; }

 private:
  /// The batch passed on in chunks while the budget lasts, with progress reports; Unknown (0
  /// samples) for the rest.
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    const std::size_t total = candidates.size();
    this->own_.calls += total;
    start_clock();
    report(0, total);
    std::vector<Result<Measurement>> out;
    out.reserve(total);
    std::size_t done = 0;
    while (done < total) {
      if (exhausted()) {
        // The rest costs no measurement where the oracles below already know it.
        const auto rest = candidates.begin() + static_cast<std::ptrdiff_t>(done);
        for (Result<Measurement>& known :
             this->inner().known_batch(graph, std::vector<const Candidate*>(rest, candidates.end()))) {
          if (known.ok() && known->cost.is_unknown()) {
            ++this->own_.budget_refusals;
            known = refused();
          }
          out.push_back(std::move(known));
        }
        done = total;
        report(done, total);
        break;
      }
      std::size_t chunk = chunk_size_ == 0 ? total - done : std::min(chunk_size_, total - done);
      if (budget_.max_calls != 0) chunk = std::min(chunk, budget_.max_calls - used_calls_);
      const bool stacked = this->inner().wrapped() != nullptr;
      const std::size_t backend_before = stacked ? this->inner().stats().backend_calls : 0;
      // A chunk that is the whole batch is passed as it is, without a copy of the list.
      const auto first = candidates.begin() + static_cast<std::ptrdiff_t>(done);
      std::vector<Result<Measurement>> answers =
          chunk == total ? this->forward_batch(graph, candidates)
                         : this->forward_batch(graph, std::vector<const Candidate*>(
                                                          first, first + static_cast<std::ptrdiff_t>(chunk)));
      used_calls_ += stacked ? this->inner().stats().backend_calls - backend_before : chunk;
      out.insert(out.end(), std::make_move_iterator(answers.begin()), std::make_move_iterator(answers.end()));
      done += chunk;
      report(done, total);
    }
    return out;
  }

  static Measurement refused() { return Measurement{Cost::unknown(), 0.0, 0}; }

  double now() const {
    if (now_) return now_();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void start_clock() {
    if (started_) return;
    started_ = true;
    start_ = now();
  }
  void report(std::size_t done, std::size_t total) const {
    if (progress_) progress_("estimate", done, total);
  }

  OracleBudget budget_;
  ProgressCallback progress_;
  std::function<double()> now_;
  std::size_t chunk_size_ = 1;
  std::size_t used_calls_ = 0;
  bool started_ = false;
  double start_ = 0.0;
};

}  // namespace collage
