#include "driver/comparison.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/native/native_backend.hpp"
#include "backends/reference/reference_backend.hpp"
#include "backends/registry.hpp"
#include "costing/measurement_session.hpp"
#include "driver/configurations.hpp"
#include "collage_run/run_report.hpp"
#include "tensor/reference.hpp"
#include "tests/support/refusing_backend.hpp"
#include "tests/support/test_models.hpp"

namespace tc {
namespace {

/// The residual block, its inputs and reference outputs, the default CPU backends and a
/// measurement database in a fresh temporary file.
struct ComparisonFixture : ::testing::Test {
  Graph model = testing::residual_block();
  collage::DataflowGraph<Graph> dataflow = std::move(collage::DataflowGraph<Graph>::build(model)).value();
  std::vector<Tensor> inputs = testing::random_inputs(model, 7);
  std::vector<Tensor> expected = std::move(evaluate(model, inputs)).value();
  DefaultDevices devices = make_default_devices();
  BackendSet backends = make_default_backends(devices.set);
  std::string db = (std::filesystem::temp_directory_path() /
                    ("tc_comparison_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                       .string();

  void SetUp() override { std::filesystem::remove(db); }
  void TearDown() override { std::filesystem::remove(db); }

  static KernelTimingOptions quick_kernels() {
    KernelTimingOptions t;
    t.timing.warmups = 0;
    t.timing.min_repeats = 2;
    t.timing.max_repeats = 3;
    return t;
  }
  static ComparisonOptions quick_comparison() {
    ComparisonOptions o;
    o.rounds = 1;
    o.timing.warmups = 0;
    o.timing.min_repeats = 2;
    o.timing.max_repeats = 3;
    o.refine_timing = o.timing;
    return o;
  }
  std::unique_ptr<MeasurementSession> session(bool cold_caches = false) {
    KernelTimingOptions timing = quick_kernels();
    timing.cold_caches = cold_caches;
    auto s = MeasurementSession::open(backends, devices.set, timing, db);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return std::move(s).value();
  }
  std::vector<ConfigurationResult> compare(MeasurementSession& measurements, const ComparisonOptions& options) {
    return compare_configurations(dataflow, inputs, expected, standard_configurations(backends), backends, devices.set,
                                  measurements.oracle(), options);
  }
};

void expect_all_ran_and_matched(const std::vector<ConfigurationResult>& results) {
  for (const ConfigurationResult& r : results) {
    EXPECT_TRUE(r.error.empty()) << r.name << ": " << r.error;
    EXPECT_TRUE(r.matches) << r.name << ": " << r.mismatch;
    EXPECT_GT(r.latency_ms, 0.0) << r.name;
    EXPECT_FALSE(r.partitions.empty()) << r.name;
  }
}

TEST_F(ComparisonFixture, EveryConfigurationMatchesAndTheSecondRunMeasuresNothing) {
  auto first = session();
  std::vector<ConfigurationResult> results = compare(*first, quick_comparison());
  ASSERT_EQ(results.size(), standard_configurations(backends).size());
  expect_all_ran_and_matched(results);
  EXPECT_EQ(results.back().name, "collage");
  EXPECT_GT(first->measured(), 0u);
  first.reset();

  auto second = session();
  expect_all_ran_and_matched(compare(*second, quick_comparison()));
  EXPECT_EQ(second->measured(), 0u);
  EXPECT_GT(second->stored_hits(), 0u);
}

TEST_F(ComparisonFixture, ColdCacheMeasurementsAreKeptApartFromWarmOnes) {
  auto warm = session();
  expect_all_ran_and_matched(compare(*warm, quick_comparison()));
  const std::size_t measured_warm = warm->measured();
  warm.reset();
  auto cold = session(true);
  EXPECT_NE(cold->describe().find("caches evicted"), std::string::npos) << cold->describe();
  expect_all_ran_and_matched(compare(*cold, quick_comparison()));
  EXPECT_EQ(cold->measured(), measured_warm);  // nothing served from the warm entries
  EXPECT_EQ(cold->stored_hits(), 0u);
  cold.reset();
  auto cold_again = session(true);
  expect_all_ran_and_matched(compare(*cold_again, quick_comparison()));
  EXPECT_EQ(cold_again->measured(), 0u);
}

TEST_F(ComparisonFixture, OnednnOnSeveralThreadsMatchesAndIsMeasuredApart) {
  auto one_thread = session();
  expect_all_ran_and_matched(compare(*one_thread, quick_comparison()));
  const std::size_t measured_on_one = one_thread->measured();
  one_thread.reset();
  backends = make_default_backends(devices.set, nullptr, BackendOptions{2, false});
  const Backend* onednn = backends.find("onednn");
  if (onednn == nullptr) GTEST_SKIP() << "this build has no onednn backend";
  EXPECT_EQ(onednn->configuration(), "threads=2, own swish");
  auto two_threads = session();
  expect_all_ran_and_matched(compare(*two_threads, quick_comparison()));
  EXPECT_EQ(two_threads->measured(), measured_on_one);
  EXPECT_EQ(two_threads->stored_hits(), 0u);
}

TEST_F(ComparisonFixture, TheJsonReportHasTheDocumentedShape) {
  auto measurements = session();
  RunReport report;
  report.model = "residual_block";
  report.nodes = model.size();
  report.results = compare(*measurements, quick_comparison());
  report.measurements = measurements->measured();
  const nlohmann::json j = nlohmann::json::parse(report_json(dataflow, report));
  EXPECT_EQ(j.at("model"), "residual_block");
  EXPECT_EQ(j.at("measurements"), report.measurements);
  EXPECT_TRUE(j.at("tuning_seconds").is_number());
  ASSERT_EQ(j.at("configurations").size(), report.results.size());
  for (const nlohmann::json& c : j.at("configurations")) {
    EXPECT_TRUE(c.at("name").is_string());
    EXPECT_GT(c.at("latency_ms").get<double>(), 0.0);
    EXPECT_EQ(c.at("matches"), true);
    EXPECT_TRUE(c.at("max_abs_error").is_number());
    EXPECT_GT(c.at("partitions").get<int>(), 0);
    EXPECT_TRUE(c.at("partitions_by_backend").is_object());
    EXPECT_TRUE(c.at("estimated_ms").is_number());
  }
  EXPECT_TRUE(j.contains("collage_speedup_over_best_single"));
  EXPECT_TRUE(j.contains("additive_error"));
}

TEST_F(ComparisonFixture, AnExhaustedBudgetLeavesCandidatesUnknownAndEveryConfigurationStillRuns) {
  auto measurements = session();
  ComparisonOptions options = quick_comparison();
  options.partitioner.budget.max_calls = 3;
  std::vector<ConfigurationResult> results = compare(*measurements, options);
  expect_all_ran_and_matched(results);
  EXPECT_LE(measurements->measured(), 3u * standard_configurations(backends).size());  // each partitions under the budget
  const ConfigurationResult& collage = results.back();
  ASSERT_TRUE(collage.partition);
  EXPECT_GT(collage.partition->oracle.budget_refusals, 0u);
  std::size_t unknown = 0;
  for (const collage::Candidate& c : collage.partition->candidates) unknown += c.cost.is_unknown();
  EXPECT_GT(unknown, 0u);
  RunReport report;
  report.results = results;
  EXPECT_NE(format_report(dataflow, report, false).find("tuning budget spent: "), std::string::npos);
  EXPECT_GT(nlohmann::json::parse(report_json(dataflow, report)).at("unmeasured_candidates").get<std::size_t>(), 0u);
}

TEST_F(ComparisonFixture, UnderABudgetCollageFindsTheSingleConfigurationsCandidatesMeasured) {
  // A budget as large as the largest single configuration's candidate list, smaller than
  // collage's (partitioned first, collage would leave the nodes its budget did not reach with no
  // measured candidate): partitioned last, it finds every single configuration's candidates
  // known, so no part it chooses is Unknown.
  auto unit = collage::make_oracle<Graph>(
      "unit", [](const collage::DataflowGraph<Graph>&, const collage::Candidate&, const auto&) { return 1.0; });
  std::size_t largest_single = 0, collage_candidates = 0;
  for (const Configuration& config : standard_configurations(backends)) {
    auto r = partition_model(dataflow, backends, config, *unit);
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (config.single) largest_single = std::max(largest_single, r->candidates.size());
    if (config.name == "collage") collage_candidates = r->candidates.size();
  }
  ASSERT_LT(largest_single, collage_candidates);
  auto measurements = session();
  ComparisonOptions options = quick_comparison();
  options.partitioner.budget.max_calls = largest_single;
  std::vector<ConfigurationResult> results = compare(*measurements, options);
  expect_all_ran_and_matched(results);
  const ConfigurationResult& collage = results.back();
  ASSERT_EQ(collage.name, "collage");
  ASSERT_TRUE(collage.partition);
  for (const collage::Candidate& part : collage.partition->partitioning.parts) {
    EXPECT_TRUE(part.cost.is_known()) << part.target << ": " << part.sub_graph.label(dataflow);
  }
}

TEST_F(ComparisonFixture, TheSearchsWarningsAreInTheReport) {
  auto measurements = session();
  ComparisonOptions options = quick_comparison();
  options.partitioner.candidates.max_candidates_per_rule = 1;
  std::vector<ConfigurationResult> results = compare(*measurements, options);
  expect_all_ran_and_matched(results);
  const ConfigurationResult& collage = results.back();
  ASSERT_TRUE(collage.partition);
  ASSERT_FALSE(collage.partition->warnings.empty());
  RunReport report;
  report.results = results;
  EXPECT_NE(format_report(dataflow, report, false).find("collage: " + collage.partition->warnings.front()), std::string::npos);
}

TEST_F(ComparisonFixture, AFailingBackendsCandidatesAreInvalidAndTheModelStillRuns) {
  backends.add(std::make_unique<testing::RefusingBackend>("failing", 3));
  auto measurements = session();
  std::vector<ConfigurationResult> results = compare(*measurements, quick_comparison());
  expect_all_ran_and_matched(results);
  const ConfigurationResult& collage = results.back();
  ASSERT_TRUE(collage.partition);
  ASSERT_FALSE(collage.partition->invalid_reasons.empty());
  EXPECT_NE(collage.partition->invalid_reasons.front().second.find("injected failure"), std::string::npos);
  EXPECT_EQ(collage.partitions.count("failing"), 0u);
}

TEST_F(ComparisonFixture, RefinementIsItsOwnConfigurationAfterCollage) {
  auto measurements = session();
  ComparisonOptions options = quick_comparison();
  options.refine_seconds = 2;
  std::vector<ConfigurationResult> results = compare(*measurements, options);
  expect_all_ran_and_matched(results);
  ASSERT_GE(results.size(), 2u);
  const ConfigurationResult& collage = results[results.size() - 2];
  const ConfigurationResult& evo = results.back();
  EXPECT_EQ(collage.name, "collage");
  ASSERT_EQ(evo.name, "collage+evo");
  ASSERT_TRUE(evo.refinement);
  EXPECT_GE(evo.refinement->evaluations, 1u);
  EXPECT_TRUE(evo.refinement->start_fitness.is_known()) << evo.refinement->last_error;
  EXPECT_LE(evo.refinement->best_fitness, evo.refinement->start_fitness);
  EXPECT_LE(evo.refinement->seconds, 2.0 + 1.0);  // the budget, and one evaluation begun before it ran out
  ASSERT_TRUE(evo.partition);
  if (!evo.refinement->improved) {
    EXPECT_EQ(evo.partition->partitioning.parts.size(), collage.partition->partitioning.parts.size());
  }
  RunReport report;
  report.results = results;
  EXPECT_NE(format_report(dataflow, report, false).find("refinement (collage+evo): "), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(report_json(dataflow, report)).at("configurations").back().contains("refinement"));
}

/// A backend that runs what the reference interpreter runs, each kernel sleeping 2 ms first: a
/// target whose candidates an oracle can be made to think cheap while it is slow.
class SleepyBackend final : public Backend {
 public:
  SleepyBackend() : Backend("sleepy", DeviceKind::cpu), inner_(make_reference_backend("sleepy", 3)) {}
  collage::PartitionSpec<Graph> spec() const override { return inner_->spec(); }

 private:
  class SleepyKernel final : public Kernel {
   public:
    explicit SleepyKernel(std::unique_ptr<Kernel> inner) : inner_(std::move(inner)) {}
    collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return inner_->run(inputs, outputs);
    }

   private:
    std::unique_ptr<Kernel> inner_;
  };
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    collage::Result<std::unique_ptr<Kernel>> inner = inner_->compile(function, device);
    if (!inner.ok()) return inner.error();
    return std::unique_ptr<Kernel>(std::make_unique<SleepyKernel>(std::move(inner).value()));
  }
  std::unique_ptr<Backend> inner_;
};

/// An oracle that believes `cheap`'s candidates cost 1e-3 ms per operator and everyone else's 1 ms.
std::unique_ptr<collage::CostOracle<Graph>> believing_cheap(std::string cheap) {
  return collage::make_oracle<Graph>("believes " + cheap, [cheap](const collage::DataflowGraph<Graph>&,
                                                                  const collage::Candidate& c,
                                                                  const collage::ExtractedFunction& fn) {
    return collage::Cost::value((std::string(c.target) == cheap ? 1e-3 : 1.0) * static_cast<double>(fn.body.size()));
  });
}

TEST_F(ComparisonFixture, TheGuardRunsTheBestSingleConfigurationWhenCollagesChoiceIsSlower) {
  backends = BackendSet();
  backends.add(std::make_unique<SleepyBackend>());
  backends.add(std::make_unique<NativeBackend>());
  auto oracle = believing_cheap("sleepy");
  std::vector<ConfigurationResult> results = compare_configurations(
      dataflow, inputs, expected, standard_configurations(backends), backends, devices.set, *oracle, quick_comparison());
  expect_all_ran_and_matched(results);
  std::optional<GuardDecision> guard = decide_guard(results);
  ASSERT_TRUE(guard);
  EXPECT_TRUE(guard->fired);
  EXPECT_EQ(guard->runs, "native");
  EXPECT_EQ(guard->best_single, "native");
  EXPECT_GT(guard->collage_ms, guard->best_single_ms);
  EXPECT_NE(guard->summary.find("native alone"), std::string::npos) << guard->summary;
  RunReport report;
  report.results = results;
  EXPECT_NE(format_report(dataflow, report, false).find("runs: native alone"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(report_json(dataflow, report));
  EXPECT_EQ(j.at("guard").at("runs"), "native");
  EXPECT_EQ(j.at("guard").at("fired"), true);
}

TEST_F(ComparisonFixture, TheGuardKeepsCollagesChoiceWhenItIsFaster) {
  backends = BackendSet();
  backends.add(std::make_unique<SleepyBackend>());
  backends.add(std::make_unique<NativeBackend>());
  auto oracle = believing_cheap("native");
  std::vector<ConfigurationResult> results = compare_configurations(
      dataflow, inputs, expected, standard_configurations(backends), backends, devices.set, *oracle, quick_comparison());
  expect_all_ran_and_matched(results);
  std::optional<GuardDecision> guard = decide_guard(results);
  ASSERT_TRUE(guard);
  EXPECT_FALSE(guard->fired);
  EXPECT_EQ(guard->runs, "collage");
  EXPECT_EQ(guard->best_single, "native");
}

TEST_F(ComparisonFixture, TheEstimateSumsThePartsTimedAgainAfterTheSearchNotTheCostsItChoseBy) {
  backends = BackendSet();
  backends.add(std::make_unique<SleepyBackend>());
  backends.add(std::make_unique<NativeBackend>());
  auto oracle = believing_cheap("sleepy");
  ComparisonOptions options = quick_comparison();
  options.remeasure_parts = quick_kernels();
  std::vector<ConfigurationResult> results = compare_configurations(
      dataflow, inputs, expected, standard_configurations(backends), backends, devices.set, *oracle, options);
  expect_all_ran_and_matched(results);
  std::size_t sleepy_parts = 0;
  for (const ConfigurationResult& r : results) {
    ASSERT_TRUE(r.partition) << r.name;
    const collage::Partitioning& p = r.partition->partitioning;
    EXPECT_TRUE(r.parts_remeasured) << r.name;
    ASSERT_EQ(r.part_ms.size(), p.parts.size()) << r.name;
    double moves = 0;
    for (double m : p.transfers) moves += m;
    double searched = moves;
    double timed_again = moves;
    for (std::size_t k = 0; k < p.parts.size(); ++k) {
      if (p.parts[k].cost.is_known()) searched += p.parts[k].cost.raw();
      timed_again += r.part_ms[k];
      if (std::string(p.parts[k].target) != "sleepy") continue;
      ++sleepy_parts;
      EXPECT_LT(p.parts[k].cost.raw(), 1.0) << r.name;  // what the oracle believed
      EXPECT_GE(r.part_ms[k], 2.0) << r.name;           // each sleepy kernel sleeps 2 ms
    }
    EXPECT_NEAR(r.search_estimated_ms, searched, 1e-9) << r.name;
    EXPECT_NEAR(r.estimated_ms, timed_again, 1e-9) << r.name;
  }
  EXPECT_GT(sleepy_parts, 0u);
  RunReport report;
  report.results = results;
  const std::string text = format_report(dataflow, report, false);
  EXPECT_NE(text.find("timed again together after the search"), std::string::npos) << text;
  EXPECT_NE(text.find("the costs the search chose them by sum to"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(report_json(dataflow, report));
  EXPECT_TRUE(j.contains("search_additive_error"));
  const nlohmann::json& collage = j.at("configurations").back();
  EXPECT_EQ(collage.at("parts_remeasured"), true);
  EXPECT_GT(collage.at("estimated_ms").get<double>(), collage.at("search_estimated_ms").get<double>() + 1.9);
  EXPECT_TRUE(collage.at("parts").at(0).contains("remeasured_ms"));
}

TEST_F(ComparisonFixture, SearchingAgainWithPooledCostsDropsThePartsChosenForALowCost) {
  backends = BackendSet();
  backends.add(std::make_unique<SleepyBackend>());
  backends.add(std::make_unique<NativeBackend>());
  // Sleepy's kernels believed nearly free and native's cheap; each sleepy kernel sleeps 2 ms.
  auto oracle = collage::make_oracle<Graph>(
      "believes sleepy nearly free",
      [](const collage::DataflowGraph<Graph>&, const collage::Candidate& c, const collage::ExtractedFunction& fn) {
        return collage::Cost::value((std::string(c.target) == "sleepy" ? 1e-3 : 0.05) * static_cast<double>(fn.body.size()));
      });
  ComparisonOptions options = quick_comparison();
  options.remeasure_parts = quick_kernels();
  auto collage_result = [&](std::size_t pooled_searches) {
    options.pooled_searches = pooled_searches;
    std::vector<ConfigurationResult> results = compare_configurations(
        dataflow, inputs, expected, standard_configurations(backends), backends, devices.set, *oracle, options);
    expect_all_ran_and_matched(results);
    for (const ConfigurationResult& r : results) {
      if (r.single) {
        EXPECT_EQ(r.searches, 1u) << r.name;
      }
    }
    return results.back();
  };
  const ConfigurationResult once = collage_result(0);
  ASSERT_EQ(once.name, "collage");
  EXPECT_EQ(once.searches, 1u);
  EXPECT_GT(once.partitions.count("sleepy"), 0u);

  const ConfigurationResult pooled = collage_result(50);
  ASSERT_TRUE(pooled.partition);
  EXPECT_EQ(pooled.partitions.count("sleepy"), 0u);
  EXPECT_GT(pooled.searches, 1u);
  EXPECT_LE(pooled.searches, 51u);
  for (const collage::Candidate& part : pooled.partition->partitioning.parts) {
    EXPECT_EQ(std::string(part.target), "native");
  }
  RunReport report;
  report.results = {pooled};
  const std::string text = format_report(dataflow, report, false);
  EXPECT_NE(text.find("(in the last of " + std::to_string(pooled.searches) + " searches, pooled)"), std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(report_json(dataflow, report));
  EXPECT_EQ(j.at("configurations").back().at("searches"), pooled.searches);
}

TEST_F(ComparisonFixture, WithoutTimingAgainTheEstimateIsTheSearchs) {
  auto measurements = session();
  const std::vector<ConfigurationResult> results = compare(*measurements, quick_comparison());
  expect_all_ran_and_matched(results);
  for (const ConfigurationResult& r : results) {
    EXPECT_FALSE(r.parts_remeasured) << r.name;
    EXPECT_DOUBLE_EQ(r.estimated_ms, r.search_estimated_ms) << r.name;
    EXPECT_GT(r.estimated_ms, 0.0) << r.name;
  }
}

TEST_F(ComparisonFixture, WithoutComparingEverythingOnlyTheSingleConfigurationEstimatedCheapestIsTimed) {
  backends = BackendSet();
  backends.add(std::make_unique<SleepyBackend>());
  backends.add(std::make_unique<NativeBackend>());
  auto oracle = believing_cheap("sleepy");
  std::vector<Configuration> configurations;
  for (const std::string& name : backends.names()) configurations.push_back(single_backend_configuration(name, backends));
  configurations.push_back(collage_configuration(backends));
  ComparisonOptions options = quick_comparison();
  options.time_cheapest_single_only = true;
  std::vector<ConfigurationResult> results =
      compare_configurations(dataflow, inputs, expected, configurations, backends, devices.set, *oracle, options);
  expect_all_ran_and_matched(results);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].name, "sleepy");  // the search believes it cheapest
  EXPECT_TRUE(results[0].single);
  EXPECT_EQ(results[1].name, "collage");
  ASSERT_TRUE(decide_guard(results));
}

TEST_F(ComparisonFixture, EachConfigurationNamesItsFallback) {
  auto measurements = session();
  RunReport report;
  report.results = compare(*measurements, quick_comparison());
  for (const ConfigurationResult& r : report.results) {
    EXPECT_EQ(r.fallback, r.single ? "native" : "") << r.name;
  }
  const nlohmann::json j = nlohmann::json::parse(report_json(dataflow, report));
  for (const nlohmann::json& c : j.at("configurations")) {
    EXPECT_EQ(c.at("fallback").is_null(), !c.at("single").get<bool>()) << c.at("name");
  }
  EXPECT_NE(format_report(dataflow, report, false).find("fallback"), std::string::npos);
}

TEST_F(ComparisonFixture, TheTablesColumnsLineUpUnderALongConfigurationName) {
  auto measurements = session();
  RunReport report;
  report.results = compare(*measurements, quick_comparison());
  ASSERT_FALSE(report.results.empty());
  report.results.front().name = "a_configuration_named_at_length";
  std::istringstream text(format_report(dataflow, report, false));
  std::size_t column = std::string::npos;
  std::size_t rows = 0;
  for (std::string line; std::getline(text, line);) {
    if (line.rfind("configuration ", 0) == 0) column = line.find("fallback");
    for (const ConfigurationResult& r : report.results) {
      if (line.rfind(r.name + " ", 0) != 0) continue;
      ASSERT_NE(column, std::string::npos) << "a row before the header: " << line;
      EXPECT_EQ(line.substr(column, std::max<std::size_t>(r.fallback.size(), 1)), r.fallback.empty() ? "-" : r.fallback)
          << line;
      ++rows;
    }
  }
  EXPECT_EQ(rows, report.results.size());
}

}  // namespace
}  // namespace tc
