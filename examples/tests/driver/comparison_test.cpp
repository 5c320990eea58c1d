#include "driver/comparison.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "costing/measurement_session.hpp"
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
  backends = make_default_backends(devices.set, nullptr, BackendOptions{2});
  const Backend* onednn = backends.find("onednn");
  if (onednn == nullptr) GTEST_SKIP() << "this build has no onednn backend";
  EXPECT_EQ(onednn->configuration(), "threads=2");
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
  for (const collage::Candidate& c : collage.partition->candidates) unknown += c.cost && c.cost->is_unknown();
  EXPECT_GT(unknown, 0u);
  RunReport report;
  report.results = results;
  EXPECT_NE(format_report(dataflow, report, false).find("tuning budget spent: "), std::string::npos);
  EXPECT_GT(nlohmann::json::parse(report_json(dataflow, report)).at("unmeasured_candidates").get<std::size_t>(), 0u);
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

}  // namespace
}  // namespace tc
