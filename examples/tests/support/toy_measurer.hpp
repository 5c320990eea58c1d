#pragma once

/// \file
/// A deterministic stand-in for measuring, for the tests of distributed measurement (over threads
/// and over mpirun): the toy oracle over the residual block, and a serving rank's Measurer that
/// can be told to die or stall.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <collage/cost/cost_oracle.hpp>

#include "backends/reference/reference_backend.hpp"
#include "distributed/serve.hpp"
#include "driver/configurations.hpp"
#include "tests/support/refusing_backend.hpp"
#include "tests/support/test_models.hpp"

namespace tc::testing {

/// A cost from the nodes and the target, with a discount for fusing; the "refusing" target fails.
/// Each answer takes `pace_seconds` (sleeping: a device that takes that long).
inline std::unique_ptr<collage::CostOracle<Graph>> toy_oracle(double pace_seconds = 0) {
  return collage::make_oracle<Graph>(
      "toy", [pace_seconds](const collage::DataflowGraph<Graph>&, const collage::Candidate& c,
                            const collage::ExtractedFunction& fn) -> collage::Result<collage::Measurement> {
        if (pace_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pace_seconds));
        if (c.target == "refusing") return collage::Error{collage::ErrorCode::oracle, "refusing: injected failure"};
        double sum = 0;
        for (std::size_t i : fn.body) sum += static_cast<double>(1 + (i * 37) % 11) / 3.0;
        const double n = static_cast<double>(fn.body.size());
        return collage::Measurement{collage::Cost::value(sum * std::pow(0.7, n - 1)), 0.01 * n, fn.body.size()};
      });
}

/// The backends whose rules the toy tests partition with: "general" (a reference backend) and
/// "refusing".
inline BackendSet toy_backends() {
  BackendSet backends;
  backends.add(make_reference_backend("general"));
  backends.add(std::make_unique<RefusingBackend>());
  return backends;
}

/// What a toy rank does wrong.
struct Faults {
  /// Calls `die` during its n-th candidate (1-based; 0: never).
  int die_on = 0;
  /// Sleeps this long in its first candidate.
  double stall_seconds = 0;
  /// Refuses the setup.
  bool refuse = false;
  std::string identity = "toy";
  /// Seconds every candidate takes.
  double pace_seconds = 0;
};

/// A toy rank's measurer: the residual block and the toy oracle, with `faults`.
class ToyMeasurer final : public Measurer {
 public:
  ToyMeasurer(Faults faults, std::function<void()> die)
      : faults_(std::move(faults)), die_(std::move(die)), model_(residual_block()),
        dataflow_(*collage::DataflowGraph<Graph>::build(model_)), oracle_(toy_oracle(faults_.pace_seconds)) {}
  std::string identity() const override { return faults_.identity; }
  collage::Result<collage::Measurement> measure(std::string_view record) override {
    ++calls_;
    if (calls_ == faults_.die_on) die_();
    if (calls_ == 1 && faults_.stall_seconds > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(faults_.stall_seconds));
    }
    return measure_record(*oracle_, dataflow_, record);
  }

 private:
  Faults faults_;
  std::function<void()> die_;
  Graph model_;
  collage::DataflowGraph<Graph> dataflow_;
  std::unique_ptr<collage::CostOracle<Graph>> oracle_;
  int calls_ = 0;
};

/// What partitioning the residual block over toy_backends() gave: every candidate's answer, the
/// oracle's errors, the parts.
struct ToyAnswers {
  std::vector<std::string> costs;
  std::vector<std::string> errors;
  std::string parts;
};

/// Partitions the residual block over toy_backends() with `oracle`.
inline ToyAnswers toy_partition(collage::CostOracle<Graph>& oracle) {
  static const Graph model = residual_block();
  static const collage::DataflowGraph<Graph> dataflow = *collage::DataflowGraph<Graph>::build(model);
  static const BackendSet backends = toy_backends();
  ToyAnswers out;
  Configuration config{"collage", {"refusing", "general"}, collage::SearchAlgorithm::exact};
  auto r = partition_model(dataflow, backends, config, oracle);
  if (!r.ok()) {
    out.parts = "error: " + r.error().message;
    return out;
  }
  for (const collage::Candidate& c : r->candidates) out.costs.push_back(c.to_string() + " " + c.cost.to_string());
  for (const collage::Candidate& c : r->partitioning.parts) out.parts += c.to_string() + "; ";
  out.parts += "total " + r->partitioning.total.to_string();
  out.errors = r->oracle_errors;
  return out;
}

/// "" when `spread` has the answers of `alone` but, when `victim` > 0, the one candidate that rank
/// was given up on, whose error names it and says `reason`; else what differs.
inline std::string differences(const ToyAnswers& alone, const ToyAnswers& spread, int victim,
                               const std::string& reason = "") {
  if (spread.costs.size() != alone.costs.size()) return "another number of candidates";
  std::size_t differ = 0;
  for (std::size_t k = 0; k < alone.costs.size(); ++k) differ += alone.costs[k] != spread.costs[k] ? 1 : 0;
  // The candidate given up differs unless the refusing backend fails it anyway.
  if (differ > (victim > 0 ? 1u : 0u)) return std::to_string(differ) + " answers differ";
  const std::string given_up =
      "rank " + std::to_string(victim) + " (" + host_name() + ") was given up while measuring it: " + reason;
  std::size_t named = 0;
  for (const std::string& e : spread.errors) {
    if (victim > 0 && e.find(given_up) != std::string::npos) {
      ++named;
    } else if (std::find(alone.errors.begin(), alone.errors.end(), e) == alone.errors.end()) {
      return "an error one process did not have: " + e;
    }
  }
  if (named != (victim > 0 ? 1u : 0u)) return std::to_string(named) + " errors say '" + given_up + "'";
  return spread.parts.rfind("error", 0) == 0 ? spread.parts : "";
}

}  // namespace tc::testing
