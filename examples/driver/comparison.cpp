#include "driver/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <collage/cost/structural_key.hpp>
#include <collage/support/numbers.hpp>

#include "costing/measuring_oracle.hpp"
#include "tensor/compare.hpp"

namespace tc {

namespace {

/// Times the parts of `partitioning` whose search cost is known again, together under `timing`
/// (the measuring oracle, with nothing cached), into `part_ms` (ms, in the partitioning's order);
/// a part that cannot be timed keeps the search's cost.
void remeasure(const collage::DataflowGraph<Graph>& dataflow, const collage::Partitioning& partitioning,
               const BackendSet& backends, const DeviceSet& devices, const KernelTimingOptions& timing,
               std::vector<double>& part_ms) {
  std::vector<const collage::Candidate*> known;
  std::vector<std::size_t> timed;
  for (std::size_t k = 0; k < partitioning.parts.size(); ++k) {
    if (!partitioning.parts[k].cost.is_known()) continue;
    known.push_back(&partitioning.parts[k]);
    timed.push_back(k);
  }
  const std::vector<collage::Result<collage::Measurement>> costs =
      make_measuring_oracle(backends, devices, timing)->measure_batch(dataflow, known);
  for (std::size_t j = 0; j < costs.size(); ++j) {
    if (costs[j].ok() && costs[j]->cost.is_known()) part_ms[timed[j]] = costs[j]->cost.raw();
  }
}

/// Answers a candidate whose structure has pooled samples with their mean, every other one from
/// the oracle it wraps: the search's costs of the parts it chose, corrected by their times taken
/// again.
class PooledOracle final : public collage::CostOracle<Graph> {
 public:
  explicit PooledOracle(collage::CostOracle<Graph>& inner) : inner_(inner) {}

  /// Pools `again_ms`, a new time of `part`, with its samples so far; the first time a part's
  /// structure is pooled, with the cost the search chose it by.
  void pool(const collage::DataflowGraph<Graph>& dataflow, const collage::Candidate& part, double again_ms) {
    auto [it, fresh] = pools_.try_emplace(collage::structural_key(dataflow, part));
    if (fresh) it->second = Pool{part.cost.raw(), 1};
    it->second.sum += again_ms;
    ++it->second.samples;
  }

  std::string name() const override { return "pooled(" + inner_.name() + ")"; }
  std::string unit() const override { return inner_.unit(); }
  collage::OracleStats stats() const override { return inner_.stats(); }
  const collage::CostOracle<Graph>* wrapped() const override { return &inner_; }

 private:
  struct Pool {
    double sum = 0;
    std::size_t samples = 0;
  };

  std::vector<collage::Result<collage::Measurement>> do_measure_batch(
      const collage::DataflowGraph<Graph>& graph, const std::vector<const collage::Candidate*>& candidates) override {
    return answer(graph, candidates, [&](const std::vector<const collage::Candidate*>& rest) {
      return inner_.measure_batch(graph, rest);
    });
  }
  std::vector<collage::Result<collage::Measurement>> do_known_batch(
      const collage::DataflowGraph<Graph>& graph, const std::vector<const collage::Candidate*>& candidates) override {
    return answer(graph, candidates, [&](const std::vector<const collage::Candidate*>& rest) {
      return inner_.known_batch(graph, rest);
    });
  }

  /// The pooled means, and what `ask_inner` answers for the candidates without a pool.
  template <class AskInner>
  std::vector<collage::Result<collage::Measurement>> answer(const collage::DataflowGraph<Graph>& graph,
                                                            const std::vector<const collage::Candidate*>& candidates,
                                                            AskInner ask_inner) {
    std::vector<collage::Result<collage::Measurement>> out(candidates.size(), collage::Measurement{});
    std::vector<const collage::Candidate*> rest;
    std::vector<std::size_t> rest_at;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      auto it = pools_.empty() ? pools_.end() : pools_.find(collage::structural_key(graph, *candidates[k]));
      if (it == pools_.end()) {
        rest.push_back(candidates[k]);
        rest_at.push_back(k);
        continue;
      }
      const Pool& p = it->second;
      out[k] = collage::Measurement{collage::Cost::value(p.sum / static_cast<double>(p.samples)), 0.0, p.samples};
    }
    if (!rest.empty()) {
      std::vector<collage::Result<collage::Measurement>> answers = ask_inner(rest);
      for (std::size_t j = 0; j < answers.size(); ++j) out[rest_at[j]] = std::move(answers[j]);
    }
    return out;
  }

  collage::CostOracle<Graph>& inner_;
  std::unordered_map<std::string, Pool> pools_;
};

/// Whether two partitionings chose the same parts for the same targets.
bool same_parts(const collage::Partitioning& a, const collage::Partitioning& b) {
  return std::equal(a.parts.begin(), a.parts.end(), b.parts.begin(), b.parts.end(),
                    [](const collage::Candidate& x, const collage::Candidate& y) {
                      return x.target == y.target && x.sub_graph.inside() == y.sub_graph.inside();
                    });
}

/// `first`, `configuration`'s partitioning under `oracle`, searched again (at most
/// options.pooled_searches more times) with the costs of the parts each search chose pooled with
/// their times taken again (remeasure), until a search chooses the parts it chose before.
/// `searches` counts the searches, the first included.
collage::PartitionResult search_with_pooled_costs(const collage::DataflowGraph<Graph>& dataflow,
                                                  collage::PartitionResult first, const Configuration& configuration,
                                                  const BackendSet& backends, const DeviceSet& devices,
                                                  collage::CostOracle<Graph>& oracle, const ComparisonOptions& options,
                                                  std::size_t& searches) {
  PooledOracle pooled(oracle);
  collage::PartitionResult chosen = std::move(first);
  searches = 1;
  for (std::size_t round = 0; round < options.pooled_searches; ++round) {
    const std::vector<collage::Candidate>& parts = chosen.partitioning.parts;
    std::vector<double> again(parts.size(), -1.0);
    remeasure(dataflow, chosen.partitioning, backends, devices, *options.remeasure_parts, again);
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].cost.is_known() && again[k] >= 0) pooled.pool(dataflow, parts[k], again[k]);
    }
    collage::Result<collage::PartitionResult> next =
        partition_model(dataflow, backends, configuration, pooled, options.partitioner);
    if (!next.ok()) break;
    ++searches;
    const bool settled = same_parts(next->partitioning, chosen.partitioning);
    chosen = std::move(next).value();
    if (settled) break;
  }
  return chosen;
}

}  // namespace

PreparedRun prepare_partitioning(const collage::DataflowGraph<Graph>& dataflow, const collage::Partitioning& partitioning,
                                 const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                                 const BackendSet& backends, const DeviceSet& devices, const ComparisonOptions& options) {
  PreparedRun run;
  ConfigurationResult& r = run.result;
  for (const collage::Candidate& part : partitioning.parts) {
    ++r.partitions[std::string(part.target)];
    r.part_ms.push_back(part.cost.is_known() ? part.cost.raw() : 0.0);
  }
  double moves_ms = 0;
  for (double moves : partitioning.transfers) moves_ms += moves;
  r.search_estimated_ms = std::accumulate(r.part_ms.begin(), r.part_ms.end(), moves_ms);
  if (options.remeasure_parts) {
    remeasure(dataflow, partitioning, backends, devices, *options.remeasure_parts, r.part_ms);
    r.parts_remeasured = true;
  }
  r.estimated_ms = std::accumulate(r.part_ms.begin(), r.part_ms.end(), moves_ms);
  collage::Result<Executable> exe = Executable::compile(dataflow, partitioning, backends, devices, options.executable);
  if (!exe.ok()) {
    r.error = exe.error().message;
    return run;
  }
  r.memory = exe->memory();
  collage::Result<std::vector<Tensor>> outputs = exe->run(inputs);
  if (!outputs.ok()) {
    r.error = outputs.error().message;
    return run;
  }
  r.segments = exe->segments();
  r.notes = exe->notes();
  r.matches = outputs->size() == expected.size();
  for (std::size_t k = 0; k < outputs->size() && k < expected.size(); ++k) {
    const Tensor& got = (*outputs)[k];
    std::string worst;
    if (!all_close(got, expected[k], options.rtol, options.atol, &worst)) {
      if (r.matches) r.mismatch = "output " + std::to_string(k) + ": " + worst;
      r.matches = false;
    }
    if (got.data.size() == expected[k].data.size()) {
      for (std::size_t i = 0; i < got.data.size(); ++i) {
        const double d = std::fabs(static_cast<double>(got.data[i]) - expected[k].data[i]);
        r.max_abs_error = std::max(r.max_abs_error, std::isnan(d) ? INFINITY : d);
      }
    }
  }
  run.executable = std::move(exe).value();
  return run;
}

void time_prepared(std::vector<PreparedRun*> runs, const ComparisonOptions& options) {
  const std::size_t rounds = std::max<std::size_t>(options.rounds, 1);
  for (std::size_t round = 0; round < rounds; ++round) {
    for (PreparedRun* run : runs) {
      if (!run->executable || !run->result.error.empty()) continue;
      collage::Status failure;
      collage::Measurement m = collage::time_run(
          [&] {
            if (failure.ok()) failure = run->executable->execute();
          },
          options.timing);
      if (!failure.ok()) {
        run->result.error = failure.message();
        continue;
      }
      run->round_latencies_ms.push_back(m.cost.raw() * 1e3);
      run->result.samples += m.samples;
      if (rounds == 1) run->result.spread = m.spread;
    }
  }
  for (PreparedRun* run : runs) {
    if (options.profile_runs == 0 || !run->executable || !run->result.error.empty()) continue;
    std::vector<double> seconds;
    for (std::size_t k = 0; k < options.profile_runs; ++k) {
      if (collage::Status st = run->executable->execute(&seconds); !st.ok()) {
        run->result.error = st.message();
        break;
      }
    }
    run->result.steps = run->executable->steps();
    for (double s : seconds) run->result.step_ms.push_back(s * 1e3 / static_cast<double>(options.profile_runs));
  }
  for (PreparedRun* run : runs) {
    std::vector<double> v = run->round_latencies_ms;
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    run->result.latency_ms = median;
    if (v.size() > 1 && median > 0) run->result.spread = (v.back() - v.front()) / median;
  }
}

namespace {

/// "collage+evo": `start` (the collage configuration's result) refined with the whole model's
/// measured latency as fitness; a partitioning that fails to compile or run, or whose outputs
/// differ from `expected`, is Invalid to it.
PreparedRun refine_collage(const collage::DataflowGraph<Graph>& dataflow, const collage::PartitionResult& start,
                           const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                           const BackendSet& backends, const DeviceSet& devices, const ComparisonOptions& options) {
  ComparisonOptions once = options;
  once.rounds = 1;
  once.profile_runs = 0;
  once.remeasure_parts.reset();
  once.timing = options.refine_timing;
  auto measure_whole_model = [&](const collage::DataflowGraph<Graph>&,
                                 const collage::Partitioning& p) -> collage::Result<collage::Cost> {
    PreparedRun run = prepare_partitioning(dataflow, p, inputs, expected, backends, devices, once);
    if (run.result.error.empty() && !run.result.matches) return collage::Cost::invalid();
    if (run.result.error.empty()) time_prepared({&run}, once);
    if (!run.result.error.empty()) return collage::Error{collage::ErrorCode::oracle, run.result.error};
    return collage::Cost::value(run.result.latency_ms);
  };
  auto fitness = collage::make_end_to_end_oracle<Graph>("whole-model latency", measure_whole_model);
  collage::EvolutionOptions evolution;
  evolution.max_seconds = options.refine_seconds;
  evolution.max_evaluations = 0;
  evolution.generations = std::numeric_limits<std::size_t>::max();
  evolution.seed = options.refine_seed;
  collage::EvolutionStats stats;
  collage::Result<collage::Partitioning> refined = collage::refine(dataflow, start, *fitness, evolution, &stats);
  PreparedRun run;
  if (refined.ok()) {
    run = prepare_partitioning(dataflow, *refined, inputs, expected, backends, devices, options);
    collage::PartitionResult shown = start;
    shown.partitioning = std::move(refined).value();
    run.result.partition = std::move(shown);
  } else {
    run.result.error = refined.error().message;
  }
  run.result.name = "collage+evo";
  run.result.refinement = std::move(stats);
  return run;
}

}  // namespace

std::vector<ConfigurationResult> compare_configurations(const collage::DataflowGraph<Graph>& dataflow,
                                                        const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& expected,
                                                        const std::vector<Configuration>& configurations,
                                                        const BackendSet& backends, const DeviceSet& devices,
                                                        collage::CostOracle<Graph>& oracle,
                                                        const ComparisonOptions& options) {
  std::vector<std::size_t> order(configurations.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t k) { return configurations[k].name != "collage"; });
  std::vector<PreparedRun> prepared(configurations.size());
  std::vector<std::optional<collage::PartitionResult>> partitions(configurations.size());
  std::vector<std::size_t> searches(configurations.size(), 1);
  for (std::size_t k : order) {
    collage::Result<collage::PartitionResult> partitioned =
        partition_model(dataflow, backends, configurations[k], oracle, options.partitioner);
    if (partitioned.ok() && options.remeasure_parts && options.pooled_searches > 0 && !configurations[k].single) {
      partitions[k] = search_with_pooled_costs(dataflow, std::move(partitioned).value(), configurations[k], backends,
                                               devices, oracle, options, searches[k]);
    } else if (partitioned.ok()) {
      partitions[k] = std::move(partitioned).value();
    } else {
      prepared[k].result.error = partitioned.error().message;
    }
  }
  std::vector<bool> skipped(configurations.size(), false);
  if (options.time_cheapest_single_only) {
    std::optional<std::size_t> cheapest;
    auto estimate = [&](std::size_t k) { return partitions[k]->partitioning.total; };
    for (std::size_t k = 0; k < configurations.size(); ++k) {
      if (!configurations[k].single) continue;
      skipped[k] = true;
      if (partitions[k] && (!cheapest || estimate(k) < estimate(*cheapest))) cheapest = k;
    }
    if (cheapest) skipped[*cheapest] = false;
  }
  for (std::size_t k : order) {
    const Configuration& config = configurations[k];
    if (partitions[k] && !skipped[k]) {
      prepared[k] = prepare_partitioning(dataflow, partitions[k]->partitioning, inputs, expected, backends, devices, options);
      prepared[k].result.partition = std::move(partitions[k]);
      // What the search gave up on (a rule stopped by the candidate budget, the exact search
      // replaced by the beam) is said with the configuration's other notes.
      const std::vector<std::string>& warnings = prepared[k].result.partition->warnings;
      prepared[k].result.notes.insert(prepared[k].result.notes.end(), warnings.begin(), warnings.end());
    }
    prepared[k].result.name = config.name;
    prepared[k].result.fallback = config.fallback;
    prepared[k].result.single = config.single;
    prepared[k].result.searches = searches[k];
  }
  for (std::size_t k = 0; k < prepared.size() && options.refine_seconds > 0; ++k) {
    if (configurations[k].name != "collage" || !prepared[k].result.partition || !prepared[k].executable) continue;
    PreparedRun evo = refine_collage(dataflow, *prepared[k].result.partition, inputs, expected, backends, devices, options);
    prepared.insert(prepared.begin() + static_cast<std::ptrdiff_t>(k) + 1, std::move(evo));
    skipped.insert(skipped.begin() + static_cast<std::ptrdiff_t>(k) + 1, false);
    break;
  }
  std::vector<PreparedRun*> runs;
  for (std::size_t k = 0; k < prepared.size(); ++k) {
    if (!skipped[k]) runs.push_back(&prepared[k]);
  }
  time_prepared(runs, options);
  std::vector<ConfigurationResult> results;
  for (PreparedRun* p : runs) results.push_back(std::move(p->result));
  return results;
}

const ConfigurationResult* best_single(const std::vector<ConfigurationResult>& results) {
  const ConfigurationResult* best = nullptr;
  for (const ConfigurationResult& r : results) {
    if (!r.single || !r.error.empty() || !r.matches) continue;
    if (best == nullptr || r.latency_ms < best->latency_ms) best = &r;
  }
  return best;
}

namespace {

/// Whether `a` and `b` chose the same parts for the same targets.
bool same_partitioning(const ConfigurationResult& a, const ConfigurationResult& b) {
  return a.partition && b.partition && same_parts(a.partition->partitioning, b.partition->partitioning);
}

}  // namespace

std::optional<GuardDecision> decide_guard(const std::vector<ConfigurationResult>& results) {
  const ConfigurationResult* best = best_single(results);
  auto collage = std::find_if(results.begin(), results.end(), [](const ConfigurationResult& r) { return r.name == "collage"; });
  if (best == nullptr || collage == results.end()) return std::nullopt;
  GuardDecision d;
  d.best_single = best->name;
  d.best_single_ms = best->latency_ms;
  d.collage_ms = collage->latency_ms;
  const std::string alone = best->name + " alone";
  if (!collage->error.empty() || !collage->matches) {
    d.fired = true;
    d.summary = alone + " (collage's choice " + (collage->error.empty() ? "did not match" : "did not run") + ")";
  } else if (best->latency_ms < collage->latency_ms && !same_partitioning(*best, *collage)) {
    d.fired = true;
    d.summary = alone + ": collage's choice measured " + collage::format_double(collage->latency_ms, 4) + " ms, " +
                collage::format_double(collage->latency_ms / best->latency_ms, 3) + "x its " +
                collage::format_double(best->latency_ms, 4) + " ms";
  } else {
    d.summary = "collage's choice, " + collage::format_double(best->latency_ms / collage->latency_ms, 3) + "x as fast as " + alone;
  }
  d.runs = d.fired ? best->name : "collage";
  return d;
}

}  // namespace tc
