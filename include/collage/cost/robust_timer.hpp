#pragma once

/// \file
/// Robust timing of a kernel run: warm-ups, repeats until the samples agree (or a cap), outlier
/// removal and a percentile, for oracles that measure real kernels.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include "collage/cost/cost_oracle.hpp"
#include "collage/support/cost.hpp"

namespace collage {

/// How time_run() times a run.
struct TimingOptions {
  /// Untimed runs first (caches, lazy compilation, clocks ramping up).
  std::size_t warmups = 2;
  /// Timed runs before the spread is looked at.
  std::size_t min_repeats = 5;
  /// Timed runs at most.
  std::size_t max_repeats = 100;
  /// Stop once the relative spread (IQR / median of the kept samples) is at most this.
  double target_relative_spread = 0.05;
  /// The percentile (0..1) of the kept samples reported as the cost; slightly above the median
  /// by default, which leans towards the slower half without chasing the tail.
  double percentile = 0.6;
  /// Samples beyond Q3 + f*IQR or below Q1 - f*IQR are outliers and dropped (once there are at
  /// least 4 samples); f <= 0 keeps all.
  double outlier_iqr_factor = 1.5;
  /// Wall-clock cap in seconds for the whole measurement, warm-ups included; <= 0 means none.
  /// At least one timed run is always made.
  double max_seconds = 2.0;
  /// Called before every run, warm-ups included, outside the timed interval (e.g. to evict the
  /// caches, so that each run starts as cold as it would inside a larger program); empty: nothing.
  /// Its time counts towards max_seconds.
  std::function<void()> before_each;
};

namespace detail {

/// The p-quantile of sorted, non-empty `xs`, interpolating linearly between neighbours.
inline double quantile_sorted(const std::vector<double>& xs, double p) {
  if (xs.size() == 1) return xs[0];
  const double pos = std::clamp(p, 0.0, 1.0) * static_cast<double>(xs.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (pos - static_cast<double>(lo)) * (xs[hi] - xs[lo]);
}

/// The measurement `samples` (seconds, non-empty) give under `options`.
inline Measurement summarise_samples(std::vector<double> samples, const TimingOptions& options) {
  std::sort(samples.begin(), samples.end());
  std::vector<double> kept;
  if (options.outlier_iqr_factor > 0 && samples.size() >= 4) {
    const double q1 = quantile_sorted(samples, 0.25);
    const double q3 = quantile_sorted(samples, 0.75);
    const double reach = options.outlier_iqr_factor * (q3 - q1);
    for (double s : samples) {
      if (s >= q1 - reach && s <= q3 + reach) kept.push_back(s);
    }
  } else {
    kept = samples;
  }
  const double median = quantile_sorted(kept, 0.5);
  const double iqr = quantile_sorted(kept, 0.75) - quantile_sorted(kept, 0.25);
  double spread = 0.0;
  if (iqr > 0) spread = median > 0 ? iqr / median : std::numeric_limits<double>::infinity();
  const double p = std::isnan(options.percentile) ? 0.5 : options.percentile;
  return Measurement{Cost::value(quantile_sorted(kept, p)), spread, kept.size()};
}

}  // namespace detail

/// The samples of one timed run and the stopping rules of TimingOptions over them: what
/// time_run() keeps for its run and time_in_turns() for each of its runs. It refers to the options
/// it was made with, which must outlive it.
class SampleSeries {
 public:
  explicit SampleSeries(const TimingOptions& options) : options_(options) {
    max_repeats_ = std::max<std::size_t>(options.max_repeats, 1);
    min_repeats_ = std::clamp<std::size_t>(options.min_repeats, 1, max_repeats_);
    samples_.reserve(std::min<std::size_t>(max_repeats_, 1024));
  }

  /// Adds a sample of `seconds`, `elapsed` seconds after the measurement began (for max_seconds).
  void add(double seconds, double elapsed) {
    samples_.push_back(seconds);
    if (samples_.size() >= max_repeats_ || (options_.max_seconds > 0 && elapsed >= options_.max_seconds)) {
      done_ = true;
    } else if (samples_.size() >= min_repeats_) {
      done_ = detail::summarise_samples(samples_, options_).spread <= options_.target_relative_spread;
    }
  }

  /// Whether no more samples are wanted: max_repeats reached, max_seconds passed, or the spread
  /// settled after min_repeats.
  bool done() const { return done_; }

  /// The measurement the samples give (an Unknown cost of no samples while there are none).
  Measurement result() const {
    if (samples_.empty()) return Measurement{Cost::unknown(), 0.0, 0};
    return detail::summarise_samples(samples_, options_);
  }

 private:
  const TimingOptions& options_;
  std::size_t max_repeats_ = 1;
  std::size_t min_repeats_ = 1;
  std::vector<double> samples_;
  bool done_ = false;
};

/// Times `run` under `options` and returns the cost in seconds (the configured percentile of the
/// samples that are not outliers), their relative spread (IQR / median) and how many were kept.
///
/// Makes `warmups` untimed runs, then timed runs until at least `min_repeats` were made and the
/// spread is at most `target_relative_spread`, or `max_repeats` runs were made, or `max_seconds`
/// passed. `clock` is anything whose `now()` returns time points whose differences convert to
/// std::chrono::duration<double> (a fake clock in tests). Exceptions thrown by `run` pass through.
template <class Clock = std::chrono::steady_clock>
Measurement time_run(const std::function<void()>& run, const TimingOptions& options = TimingOptions{},
                     Clock clock = Clock{}) {
  const auto start = clock.now();
  auto seconds_since = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
  auto prepare = [&] {
    if (options.before_each) options.before_each();
  };
  for (std::size_t w = 0; w < options.warmups; ++w) {
    prepare();
    run();
    if (options.max_seconds > 0 && seconds_since(start, clock.now()) >= options.max_seconds) break;
  }
  SampleSeries series(options);
  while (!series.done()) {
    prepare();
    const auto t0 = clock.now();
    run();
    const auto t1 = clock.now();
    series.add(seconds_since(t0, t1), seconds_since(start, t1));
  }
  return series.result();
}

/// What time_in_turns() calls around the runs; none of it is timed, and each may be empty.
struct TurnHooks {
  /// Readies run `i` as it joins the turns; false: it cannot run, and gets no samples.
  std::function<bool(std::size_t i)> start;
  /// Run `i` leaves the turns (it has its samples, or failed): what start() readied may go.
  std::function<void(std::size_t i)> finish;
  /// Whether one more run may join the runs in turns now (`live`, never empty); empty: all runs
  /// are in turns from the first round.
  std::function<bool(const std::vector<std::size_t>& live)> room;
  /// Before each round, with the runs it makes (ascending).
  std::function<void(const std::vector<std::size_t>& runs)> before_round;
  /// Before each run of run `i` (after options.before_each).
  std::function<void(std::size_t i)> before_run;
};

/// Times runs 0 to `count` - 1 in turns and returns each one's Measurement (seconds, as time_run's).
///
/// Each round runs every run in turns once, in order, so that between two runs of one all the
/// others ran: each finds the caches and the branch predictors as other work left them, as a part
/// of a larger program does, rather than as its own previous run did. Runs join the turns in index
/// order while hooks.room says there is room (at least one is always in turns), each's first
/// `warmups` runs untimed, and leave them once their samples stop under `options` as time_run's
/// do, its max_seconds counting its own runs and its share of the time around them (the hooks
/// and options.before_each, none of them timed). `run(i)` returns false when run i failed: it
/// leaves the turns, and its Measurement holds the samples it had (an Unknown cost of no samples
/// where it had none). `clock` as time_run's.
template <class Clock = std::chrono::steady_clock>
std::vector<Measurement> time_in_turns(std::size_t count, const std::function<bool(std::size_t i)>& run,
                                       const TimingOptions& options = TimingOptions{},
                                       const TurnHooks& hooks = TurnHooks{}, Clock clock = Clock{}) {
  auto seconds_since = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
  std::vector<SampleSeries> series(count, SampleSeries(options));
  std::vector<double> elapsed(count, 0.0);
  std::vector<std::size_t> runs_made(count, 0);
  std::vector<std::size_t> live;
  std::size_t next = 0;
  while (true) {
    while (next < count && (live.empty() || !hooks.room || hooks.room(live))) {
      const std::size_t i = next++;
      if (!hooks.start || hooks.start(i)) live.push_back(i);
    }
    if (live.empty()) break;
    const auto round_start = clock.now();
    if (hooks.before_round) hooks.before_round(live);
    const double shared = seconds_since(round_start, clock.now()) / static_cast<double>(live.size());
    std::vector<std::size_t> staying;
    for (std::size_t i : live) {
      const auto prepared = clock.now();
      if (options.before_each) options.before_each();
      if (hooks.before_run) hooks.before_run(i);
      const auto t0 = clock.now();
      const bool ran = run(i);
      const auto t1 = clock.now();
      elapsed[i] += shared + seconds_since(prepared, t1);
      if (ran && ++runs_made[i] > options.warmups) series[i].add(seconds_since(t0, t1), elapsed[i]);
      if (ran && !series[i].done()) {
        staying.push_back(i);
      } else if (hooks.finish) {
        hooks.finish(i);
      }
    }
    live = std::move(staying);
  }
  std::vector<Measurement> out;
  out.reserve(count);
  for (const SampleSeries& s : series) out.push_back(s.result());
  return out;
}

}  // namespace collage
