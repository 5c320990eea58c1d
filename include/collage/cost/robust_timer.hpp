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
  const bool timed_cap = options.max_seconds > 0;
  auto prepare = [&] {
    if (options.before_each) options.before_each();
  };
  for (std::size_t w = 0; w < options.warmups; ++w) {
    prepare();
    run();
    if (timed_cap && seconds_since(start, clock.now()) >= options.max_seconds) break;
  }
  const std::size_t max_repeats = std::max<std::size_t>(options.max_repeats, 1);
  const std::size_t min_repeats = std::clamp<std::size_t>(options.min_repeats, 1, max_repeats);
  std::vector<double> samples;
  samples.reserve(std::min<std::size_t>(max_repeats, 1024));
  while (true) {
    prepare();
    const auto t0 = clock.now();
    run();
    const auto t1 = clock.now();
    samples.push_back(seconds_since(t0, t1));
    if (samples.size() >= max_repeats) break;
    if (timed_cap && seconds_since(start, t1) >= options.max_seconds) break;
    if (samples.size() >= min_repeats &&
        detail::summarise_samples(samples, options).spread <= options.target_relative_spread) {
      break;
    }
  }
  return detail::summarise_samples(std::move(samples), options);
}

}  // namespace collage
