#pragma once

/// \file
/// The end-to-end comparison: partition a model under each configuration, compile and run it,
/// check its outputs against the expected ones, and time the whole model robustly.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <collage/cost/robust_timer.hpp>
#include <collage/partitioner.hpp>
#include <collage/search/evolutionary_search.hpp>

#include "backends/registry.hpp"
#include "costing/kernel_timing.hpp"
#include "driver/configurations.hpp"
#include "executor/executable.hpp"

namespace tc {

/// What one configuration did.
struct ConfigurationResult {
  std::string name;
  /// The configuration's fallback backend ("" for none) and whether it is one backend alone.
  std::string fallback;
  bool single = false;
  /// Empty when the configuration ran; otherwise why it did not (one line).
  std::string error;
  /// Median-ish (the timer's percentile) end-to-end latency and its relative spread.
  double latency_ms = 0;
  double spread = 0;
  std::size_t samples = 0;
  bool matches = false;
  double max_abs_error = 0;
  /// When !matches: the worst element, as all_close names it.
  std::string mismatch;
  /// Partitions per backend.
  std::map<std::string, std::size_t> partitions;
  /// The additive cost model's estimate (ms): the parts' costs and the copies and reorders the
  /// search charged between them. With ComparisonOptions::remeasure_parts, the parts' costs are
  /// those timed again after the search; else the search's.
  double estimated_ms = 0;
  /// What the search believed (ms): the costs it chose the parts by, and the moves it charged.
  double search_estimated_ms = 0;
  /// Each part's cost in estimated_ms (ms; 0 where Unknown), in the partitioning's order.
  std::vector<double> part_ms;
  /// Whether part_ms were timed again after the search (ComparisonOptions::remeasure_parts).
  bool parts_remeasured = false;
  /// How many times the configuration was searched (ComparisonOptions::pooled_searches).
  std::size_t searches = 1;
  /// The partitioning and everything the search knew (for explanations and pictures).
  std::optional<collage::PartitionResult> partition;
  std::vector<ArenaStats> memory;
  /// How the run was split into segments, and why a segment could not be recorded (one line each).
  std::vector<SegmentInfo> segments;
  std::vector<std::string> notes;
  /// With ComparisonOptions::profile: each step's mean time (ms) in the model as it runs, and
  /// what each step is (a partition or a copy).
  std::vector<double> step_ms;
  std::vector<StepInfo> steps;
  /// For "collage+evo": what the evolutionary refinement of collage's partitioning did (its
  /// fitness: the whole model's latency in ms, measured with ComparisonOptions::refine_timing).
  std::optional<collage::EvolutionStats> refinement;
};

/// Settings of compare_configurations.
struct ComparisonOptions {
  /// How each configuration is timed in one round.
  collage::TimingOptions timing;
  /// How each configuration's executable runs (whether it records and replays segments).
  ExecutableOptions executable;
  /// Rounds of timing; each round times every configuration once, in turn, so that a slow spell
  /// of a shared machine hits them all alike. The latency is the median of the rounds.
  std::size_t rounds = 3;
  /// Runs each configuration this many more times with a synchronisation after every step, to
  /// profile its partitions in place (0: no profile).
  std::size_t profile_runs = 0;
  double rtol = 1e-3;
  double atol = 1e-4;
  collage::PartitionerOptions partitioner;
  /// Seconds for the evolutionary refinement of collage's partitioning (the paper's second level),
  /// reported as the configuration "collage+evo" after "collage"; 0: none.
  double refine_seconds = 0;
  /// How the refinement times one candidate partitioning of the whole model.
  collage::TimingOptions refine_timing;
  std::uint64_t refine_seed = 1;
  /// When set, each configuration's parts are timed again under these options once the search is
  /// done, together (CPU parts in turns with one another, as they follow one another in the
  /// model), and estimated_ms sums those fresh costs. The costs a search chooses by are the
  /// lowest of many noisy measurements of overlapping candidates, so the parts it picks lean
  /// towards draws below their true cost and its own sum is optimistic; fresh samples of the
  /// chosen parts are not picked for being low. Unset: the search's costs.
  std::optional<KernelTimingOptions> remeasure_parts;
  /// With remeasure_parts, a configuration of several backends is searched again, up to this
  /// many more times: each time the parts the last search chose are timed again, each part's
  /// cost becomes the mean of its samples so far (the one it was chosen by and those timed
  /// again), and the search runs with those costs, until it chooses the same parts twice. So a
  /// part chosen for one low draw loses to the alternatives it beat by luck; parts chosen for a
  /// real advantage stay. 0: one search.
  std::size_t pooled_searches = 0;
  /// Among the single-backend configurations, compile, check and time only the one whose
  /// partitioning the search estimates cheapest (the others are partitioned too, measuring what
  /// collage then finds known, and left out of the results): what
  /// the guard needs when not every configuration is compared.
  bool time_cheapest_single_only = false;
};

/// Runs every configuration on `dataflow`'s model with `inputs`, checking the outputs against
/// `expected` and timing the whole model. The configuration named "collage" is partitioned last:
/// its candidates include every other configuration's, so under a tuning budget each of those
/// measures its own candidates first and collage finds them known, spending its budget on the
/// candidates only it has (partitioned first, it would leave the nodes its budget did not reach
/// with no measured candidate at all). Results are in `configurations` order, with "collage+evo" after "collage" when options.refine_seconds > 0.
/// A configuration that cannot partition, compile or run reports why and the others go on.
std::vector<ConfigurationResult> compare_configurations(const collage::DataflowGraph<Graph>& dataflow,
                                                        const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& expected,
                                                        const std::vector<Configuration>& configurations,
                                                        const BackendSet& backends, const DeviceSet& devices,
                                                        collage::CostOracle<Graph>& oracle,
                                                        const ComparisonOptions& options);

/// The single-backend configuration with the lowest latency that ran and matched, or nullptr.
const ConfigurationResult* best_single(const std::vector<ConfigurationResult>& results);

/// Which partitioning runs: collage's choice, unless the best single-backend configuration was
/// measured faster end to end with another partitioning, or collage's choice did not run or match
/// (a guard, not the fix: the costs should make it rarely fire).
struct GuardDecision {
  /// The configuration that runs: "collage" or the best single configuration's name.
  std::string runs;
  std::string best_single;
  double collage_ms = 0;
  double best_single_ms = 0;
  /// The best single configuration runs instead of collage's choice.
  bool fired = false;
  /// One line: which runs and by how much ("collage's choice: 1.29x faster than cudnn alone").
  std::string summary;
};

/// The guard's decision over `results`; nothing without a "collage" result and a single-backend
/// configuration that ran and matched.
std::optional<GuardDecision> decide_guard(const std::vector<ConfigurationResult>& results);

/// A configuration compiled and checked, ready to be timed.
struct PreparedRun {
  ConfigurationResult result;
  std::optional<Executable> executable;
  std::vector<double> round_latencies_ms;
};

/// Compiles `partitioning`, runs it once and checks its outputs against `expected` (fills the
/// result's partitions, estimate, memory, output check, or error).
PreparedRun prepare_partitioning(const collage::DataflowGraph<Graph>& dataflow, const collage::Partitioning& partitioning,
                                 const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                                 const BackendSet& backends, const DeviceSet& devices, const ComparisonOptions& options);

/// Times the prepared runs that have an executable in `options.rounds` interleaved rounds and
/// fills their latency (median of the rounds), spread ((max - min) / median of the rounds, or the
/// timer's spread with one round) and sample count.
void time_prepared(std::vector<PreparedRun*> runs, const ComparisonOptions& options);

}  // namespace tc
