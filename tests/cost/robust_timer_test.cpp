#include "collage/cost/robust_timer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/expr_ir.hpp"

namespace collage {
namespace {

/// A scripted kernel: each run takes the next scripted duration (the last one repeats) on a fake
/// clock.
struct Script {
  std::vector<double> durations;
  std::size_t runs = 0;
  double now = 0.0;

  std::function<void()> kernel() {
    return [this] {
      now += durations[std::min(runs, durations.size() - 1)];
      ++runs;
    };
  }
};

/// Reads the script's time.
struct FakeClock {
  const Script* script;
  std::chrono::duration<double> now() const { return std::chrono::duration<double>(script->now); }
};

Measurement time_script(Script& s, const TimingOptions& options) {
  return time_run(s.kernel(), options, FakeClock{&s});
}

/// Options without the time cap (scripted runs take seconds).
TimingOptions uncapped() {
  TimingOptions o;
  o.max_seconds = 0;
  return o;
}

TEST(RobustTimer, BeforeEachRunsBeforeEveryRunOutsideTheTimedInterval) {
  Script s{{1.0}};
  TimingOptions o = uncapped();
  o.warmups = 2;
  o.min_repeats = 4;
  std::size_t calls = 0;
  std::vector<std::size_t> runs_seen;
  o.before_each = [&] {
    ++calls;
    runs_seen.push_back(s.runs);
    s.now += 100.0;  // slow, but not part of any sample
  };
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 6u);
  EXPECT_EQ(calls, 6u);
  EXPECT_EQ(runs_seen, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(m.cost, Cost::value(1.0));
  EXPECT_EQ(m.spread, 0.0);
}

TEST(RobustTimer, StableRunsStopAtMinRepeatsAfterUntimedWarmups) {
  Script s{{9.0, 9.0, 1.0}};  // two slow warm-ups, then steady
  TimingOptions o = uncapped();
  o.warmups = 2;
  o.min_repeats = 5;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 7u);
  EXPECT_EQ(m.samples, 5u);
  EXPECT_EQ(m.cost, Cost::value(1.0));
  EXPECT_EQ(m.spread, 0.0);
}

TEST(RobustTimer, SlowOutliersAreDropped) {
  Script s{{1.0, 1.0, 1.0, 1.0, 1.01, 50.0, 1.0}};
  TimingOptions o = uncapped();
  o.warmups = 0;
  o.min_repeats = 6;
  o.percentile = 0.9;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 6u);
  EXPECT_EQ(m.samples, 5u);  // 50 is beyond Q3 + 1.5 IQR
  EXPECT_NEAR(m.cost.raw(), 1.006, 1e-12);

  // Without outlier removal the slow run drags the 90th percentile up.
  Script t{{1.0, 1.0, 1.0, 1.0, 1.01, 50.0, 1.0}};
  o.outlier_iqr_factor = 0;
  Measurement all = time_script(t, o);
  EXPECT_EQ(all.samples, 6u);
  EXPECT_NEAR(all.cost.raw(), 25.505, 1e-9);
}

TEST(RobustTimer, FastOutliersAreDroppedToo) {
  Script s{{2.0, 2.0, 0.25, 2.0, 2.0, 2.0}};  // exact in binary, so the fake clock adds up exactly
  TimingOptions o = uncapped();
  o.warmups = 0;
  o.min_repeats = 6;
  o.percentile = 0.0;
  Measurement m = time_script(s, o);
  EXPECT_EQ(m.samples, 5u);
  EXPECT_EQ(m.cost, Cost::value(2.0));
}

TEST(RobustTimer, NoisyRunsStopAtMaxRepeats) {
  Script s;
  for (int k = 0; k < 200; ++k) s.durations.push_back(k % 2 == 0 ? 1.0 : 2.0);
  TimingOptions o = uncapped();
  o.warmups = 1;
  o.min_repeats = 5;
  o.max_repeats = 20;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 21u);
  EXPECT_EQ(m.samples, 20u);
  EXPECT_GT(m.spread, o.target_relative_spread);
  EXPECT_NEAR(m.spread, 1.0 / 1.5, 1e-12);  // IQR 1, median 1.5
  EXPECT_EQ(m.cost, Cost::value(2.0));      // 60th percentile of ten 1s and ten 2s
}

TEST(RobustTimer, NoisyRunsStopAtMaxSeconds) {
  Script s;
  for (int k = 0; k < 100; ++k) s.durations.push_back(k % 2 == 0 ? 0.4 : 0.8);
  TimingOptions o;
  o.warmups = 0;
  o.min_repeats = 5;
  o.max_seconds = 2.0;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 4u);  // 0.4 + 0.8 + 0.4 + 0.8 = 2.4 >= 2
  EXPECT_EQ(m.samples, 4u);
  EXPECT_TRUE(m.cost.is_known());
}

TEST(RobustTimer, WarmupsCountTowardsTheTimeCapButOneRunIsAlwaysTimed) {
  Script s{{3.0}};
  TimingOptions o;
  o.warmups = 5;
  o.max_seconds = 2.0;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 2u);  // one warm-up (past the cap), one timed run
  EXPECT_EQ(m.samples, 1u);
  EXPECT_EQ(m.cost, Cost::value(3.0));
  EXPECT_EQ(m.spread, 0.0);
}

TEST(RobustTimer, ReportsThePercentileAboveTheMedian) {
  Script s{{1.00, 1.01, 1.02, 1.03, 1.04}};
  TimingOptions o = uncapped();
  o.warmups = 0;
  Measurement m = time_script(s, o);
  EXPECT_EQ(m.samples, 5u);
  EXPECT_NEAR(m.spread, 0.02 / 1.02, 1e-9);
  EXPECT_NEAR(m.cost.raw(), 1.024, 1e-9);  // 60th percentile, above the median 1.02
  o.percentile = 0.5;
  Script t{{1.00, 1.01, 1.02, 1.03, 1.04}};
  EXPECT_NEAR(time_script(t, o).cost.raw(), 1.02, 1e-9);
}

TEST(RobustTimer, SpreadIsMeasuredOnTheKeptSamples) {
  // A steady kernel with one hiccup converges once the hiccup is dropped.
  Script s{{1.0, 1.0, 30.0, 1.0, 1.0, 1.0, 1.0}};
  TimingOptions o = uncapped();
  o.warmups = 0;
  o.min_repeats = 5;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 5u);
  EXPECT_EQ(m.samples, 4u);
  EXPECT_EQ(m.spread, 0.0);
  EXPECT_EQ(m.cost, Cost::value(1.0));
}

TEST(RobustTimer, DegenerateOptionsStillTimeOnce) {
  Script s{{0.5}};
  TimingOptions o;
  o.warmups = 0;
  o.min_repeats = 0;
  o.max_repeats = 0;
  Measurement m = time_script(s, o);
  EXPECT_EQ(s.runs, 1u);
  EXPECT_EQ(m.samples, 1u);
  EXPECT_EQ(m.cost, Cost::value(0.5));
}

TEST(RobustTimer, SteadyClockByDefault) {
  volatile double sink = 0;
  TimingOptions o;
  o.max_repeats = 10;
  Measurement m = time_run(
      [&] {
        for (int k = 0; k < 1000; ++k) sink = sink + k;
      },
      o);
  EXPECT_GE(m.samples, 1u);
  EXPECT_LE(m.samples, 10u);
  EXPECT_TRUE(m.cost.is_known());
}

/// A measuring oracle as a backend would write one: each candidate's kernel is timed with
/// time_run() (here a scripted kernel per target on the fake clock).
class TimingOracle final : public CostOracle<testing_ir::ExprGraph> {
 public:
  std::string name() const override { return "timing"; }
  Script fast{{0.5}};
  Script slow{{2.0}};

 private:
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<testing_ir::ExprGraph>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    return measure_each(graph, candidates, [&](const auto&, const Candidate& c, const ExtractedFunction&) {
      Script& script = c.target == "fast" ? fast : slow;
      return time_run(script.kernel(), uncapped(), FakeClock{&script});
    });
  }
};

TEST(RobustTimer, AMeasuringOracleTimesEachCandidate) {
  testing_ir::ExprGraph ir;
  ir.output(ir.call("relu", {ir.var("x")}));
  auto graph = DataflowGraph<testing_ir::ExprGraph>::build(ir);
  ASSERT_TRUE(graph.ok());
  IndexSet relu(graph->size());
  relu.add(1);
  const Candidate fast{SubGraph(*graph, relu), "fast", "rule"};
  const Candidate slow{SubGraph(*graph, relu), "slow", "rule"};
  TimingOracle oracle;
  std::vector<Result<Measurement>> ms = oracle.measure_batch(*graph, {&fast, &slow});
  ASSERT_TRUE(ms[0].ok());
  ASSERT_TRUE(ms[1].ok());
  EXPECT_EQ(ms[0]->cost, Cost::value(0.5));
  EXPECT_EQ(ms[1]->cost, Cost::value(2.0));
  EXPECT_EQ(ms[1]->spread, 0.0);
  EXPECT_EQ(ms[1]->samples, uncapped().min_repeats);
  EXPECT_EQ(oracle.slow.runs, uncapped().warmups + uncapped().min_repeats);
}

/// Runs timed in turns on one fake clock: run i's k-th run takes durations[i][k] (its last
/// one repeating); `order` records which ran, and a run listed in `fails_at` fails on that call.
struct TurnScript {
  explicit TurnScript(std::vector<std::vector<double>> d, std::vector<std::size_t> f = {})
      : durations(std::move(d)), fails_at(std::move(f)), calls(durations.size(), 0) {}

  std::vector<std::vector<double>> durations;
  std::vector<std::size_t> fails_at;
  std::vector<std::size_t> order;
  std::vector<std::size_t> calls;
  double now = 0.0;

  std::vector<Measurement> time(const TimingOptions& options, const TurnHooks& hooks = TurnHooks{}) {
    struct Clock {
      const TurnScript* script;
      std::chrono::duration<double> now() const { return std::chrono::duration<double>(script->now); }
    };
    auto run = [this](std::size_t i) {
      order.push_back(i);
      const std::vector<double>& d = durations[i];
      now += d[std::min(calls[i], d.size() - 1)];
      ++calls[i];
      return i >= fails_at.size() || calls[i] != fails_at[i];
    };
    return time_in_turns(durations.size(), run, options, hooks, Clock{this});
  }
};

TEST(RobustTimer, InTurnsEveryRunRunsOnceARoundUntilEachHasEnough) {
  TurnScript s({{1.0}, {2.0}, {3.0}});
  TimingOptions o = uncapped();
  o.warmups = 1;
  o.min_repeats = 3;
  std::vector<std::vector<std::size_t>> rounds;
  std::size_t befores = 0;
  TurnHooks hooks;
  hooks.before_round = [&](const std::vector<std::size_t>& runs) { rounds.push_back(runs); };
  hooks.before_run = [&](std::size_t) {
    ++befores;
    s.now += 10.0;  // outside every sample
  };
  const std::vector<Measurement> ms = s.time(o, hooks);
  const std::vector<std::size_t> round{0, 1, 2};
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(rounds, (std::vector<std::vector<std::size_t>>(4, round)));
  EXPECT_EQ(befores, 12u);
  ASSERT_EQ(ms.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ms[i].cost, Cost::value(static_cast<double>(i + 1)));
    EXPECT_EQ(ms[i].samples, 3u);
  }
}

TEST(RobustTimer, InTurnsARunThatSettledLeavesTheRoundsAndOneThatFailsIsNotRunAgain) {
  // Run 0 settles after min_repeats, run 1 never does (it alternates), nor run 2, which fails on its
  // third call.
  TurnScript s({{1.0}, {1.0, 3.0, 1.0, 3.0, 1.0, 3.0}, {1.0, 3.0}}, {0, 0, 3});
  TimingOptions o = uncapped();
  o.warmups = 0;
  o.min_repeats = 2;
  o.max_repeats = 6;
  o.outlier_iqr_factor = 0;
  const std::vector<Measurement> ms = s.time(o);
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 1, 2, 0, 1, 2, 1, 2, 1, 1, 1}));
  EXPECT_EQ(ms[0].samples, 2u);
  EXPECT_EQ(ms[1].samples, 6u);
  EXPECT_EQ(ms[2].samples, 2u);  // its failed third run adds no sample
  EXPECT_NEAR(ms[2].cost.raw(), 2.2, 1e-12);  // the 60th percentile of 1 and 3
}

TEST(RobustTimer, InTurnsEachRunsTimeCapCountsItsShareOfTheTimeBetweenRuns) {
  // Noisy runs that never settle; a round's hook takes 100 s, shared by the two runs it precedes.
  TurnScript s({{1.0, 2.0}, {1.0, 2.0}});
  TimingOptions o = uncapped();
  o.warmups = 0;
  o.min_repeats = 2;
  o.max_seconds = 150;
  o.outlier_iqr_factor = 0;
  TurnHooks hooks;
  hooks.before_round = [&](const std::vector<std::size_t>&) { s.now += 100.0; };
  const std::vector<Measurement> ms = s.time(o, hooks);
  // Each run's time after its rounds: 51, 103, then 155 s, past the cap.
  EXPECT_EQ(ms[0].samples, 3u);
  EXPECT_EQ(ms[1].samples, 3u);
}

TEST(RobustTimer, InTurnsARunThatFailsFirstHasNoSamplesAndAnUnknownCost) {
  TurnScript s({{1.0}}, {1});
  const std::vector<Measurement> ms = s.time(uncapped());
  EXPECT_EQ(s.order.size(), 1u);
  EXPECT_TRUE(ms[0].cost.is_unknown());
  EXPECT_EQ(ms[0].samples, 0u);
}

TEST(RobustTimer, InTurnsARunJoinsWhenThereIsRoomAndLeavesWhenItHasItsSamples) {
  // Run 0 never settles (it stops at max_repeats); runs 1 and 2 settle after min_repeats.
  TurnScript s({{1.0, 3.0}, {1.0}, {1.0}, {1.0}}, {});
  TimingOptions o = uncapped();
  o.warmups = 0;
  o.min_repeats = 2;
  o.max_repeats = 4;
  o.outlier_iqr_factor = 0;
  std::vector<std::string> events;
  TurnHooks hooks;
  hooks.room = [](const std::vector<std::size_t>& live) { return live.size() < 2; };
  hooks.start = [&](std::size_t i) {
    events.push_back("start " + std::to_string(i));
    return i != 3;  // run 3 cannot be readied
  };
  hooks.finish = [&](std::size_t i) { events.push_back("finish " + std::to_string(i)); };
  const std::vector<Measurement> ms = s.time(o, hooks);
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 1, 0, 1, 0, 2, 0, 2}));
  EXPECT_EQ(events, (std::vector<std::string>{"start 0", "start 1", "finish 1", "start 2", "finish 0", "finish 2",
                                               "start 3"}));
  EXPECT_EQ(ms[0].samples, 4u);
  EXPECT_EQ(ms[1].samples, 2u);
  EXPECT_EQ(ms[2].samples, 2u);
  EXPECT_EQ(ms[3].samples, 0u);
  EXPECT_TRUE(ms[3].cost.is_unknown());
}

TEST(RobustTimer, InTurnsEachRunsFirstRunsAreItsWarmUps) {
  // With room for one run at a time, each makes its warm-ups then its samples before the next joins.
  TurnScript s({{5.0, 1.0}, {5.0, 2.0}});
  TimingOptions o = uncapped();
  o.warmups = 1;
  o.min_repeats = 3;
  TurnHooks hooks;
  hooks.room = [](const std::vector<std::size_t>&) { return false; };
  const std::vector<Measurement> ms = s.time(o, hooks);
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(ms[0].cost, Cost::value(1.0));
  EXPECT_EQ(ms[1].cost, Cost::value(2.0));
}

}  // namespace
}  // namespace collage
