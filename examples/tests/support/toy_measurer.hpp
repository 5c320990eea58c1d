#pragma once

/// \file
/// A deterministic stand-in for measuring, for the tests of distributed measurement (over threads
/// and over mpirun): the toy oracle over the residual block, and a serving rank's Measurer that
/// can be told to die or stall.

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <collage/cost/cost_oracle.hpp>

#include "backends/reference/reference_backend.hpp"
#include "distributed/serve.hpp"
#include "tests/support/refusing_backend.hpp"
#include "tests/support/test_models.hpp"

namespace tc::testing {

/// A cost from the nodes and the target, with a discount for fusing; the "refusing" target fails.
inline std::unique_ptr<collage::CostOracle<Graph>> toy_oracle() {
  return collage::make_oracle<Graph>(
      "toy", [](const collage::DataflowGraph<Graph>&, const collage::Candidate& c,
                const collage::ExtractedFunction& fn) -> collage::Result<collage::Measurement> {
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
};

/// A toy rank's measurer: the residual block and the toy oracle, with `faults`.
class ToyMeasurer final : public Measurer {
 public:
  ToyMeasurer(Faults faults, std::function<void()> die)
      : faults_(std::move(faults)), die_(std::move(die)), model_(residual_block()),
        dataflow_(*collage::DataflowGraph<Graph>::build(model_)), oracle_(toy_oracle()) {}
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

}  // namespace tc::testing
