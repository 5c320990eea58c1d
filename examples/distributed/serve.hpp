#pragma once

/// \file
/// The serving side of a distributed measurement: a rank other than 0 waits for rank 0's setup,
/// builds what it measures with from it, then answers each candidate rank 0 sends until told to
/// stop, or until rank 0 has been silent too long.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <collage/cost/cost_oracle.hpp>
#include <collage/graph/dataflow_graph.hpp>
#include <collage/support/result.hpp>
#include <collage/trace.hpp>

#include "distributed/transport.hpp"

namespace tc {

/// What a serving rank measures with, made from rank 0's setup.
class Measurer {
 public:
  virtual ~Measurer() = default;
  /// What its measurements depend on (method, devices, configurations); rank 0 uses only ranks
  /// whose identity is its own.
  virtual std::string identity() const = 0;
  /// The answer for the candidate of a trace record.
  virtual collage::Result<collage::Measurement> measure(std::string_view record) = 0;
  /// The answers for the candidates of several records, in order, measured together as one
  /// process measures a batch; by default one after the other.
  virtual std::vector<collage::Result<collage::Measurement>> measure_batch(const std::vector<std::string>& records) {
    std::vector<collage::Result<collage::Measurement>> answers;
    answers.reserve(records.size());
    for (const std::string& record : records) answers.push_back(measure(record));
    return answers;
  }

 protected:
  Measurer() = default;
  Measurer(const Measurer&) = default;
  Measurer& operator=(const Measurer&) = default;
};

/// Builds a Measurer from rank 0's setup, or says why it cannot (one line).
using MeasurerFactory = std::function<collage::Result<std::unique_ptr<Measurer>>(std::string_view setup)>;

/// How serve() ended.
enum class ServeEnd {
  stopped,     ///< rank 0 said stop, and was told bye
  rank0_lost,  ///< rank 0 was silent for longer than the timeout
};

/// Serves rank 0 over `transport` until it says stop: answers its setup with `make`'s identity
/// (or why `make` failed), then the candidates it sends with Measurer::measure_batch(), those that
/// have come when one is taken up measured together. Gives up when rank 0 is silent for
/// `silence_timeout_seconds`, with one line in `*why`.
ServeEnd serve(Transport& transport, const MeasurerFactory& make, double silence_timeout_seconds,
               std::string* why = nullptr);

/// This machine's host name ("" when it has none).
std::string host_name();

/// The answers of `oracle` for the candidates over `graph` that `records` (trace candidate records)
/// describe, measured as one batch, in order; an Error naming the problem for a record that does
/// not fit the graph.
template <class G>
std::vector<collage::Result<collage::Measurement>> measure_records(collage::CostOracle<G>& oracle,
                                                                   const collage::DataflowGraph<G>& graph,
                                                                   const std::vector<std::string>& records) {
  std::vector<std::optional<collage::Result<collage::Measurement>>> answers(records.size());
  std::vector<collage::Candidate> candidates;
  std::vector<std::size_t> at;
  candidates.reserve(records.size());
  for (std::size_t k = 0; k < records.size(); ++k) {
    collage::Result<collage::Candidate> candidate = collage::read_trace_candidate(graph, records[k]);
    if (!candidate.ok()) {
      answers[k] = candidate.error();
      continue;
    }
    candidate->cost = collage::Cost::unknown();
    candidates.push_back(std::move(candidate).value());
    at.push_back(k);
  }
  std::vector<const collage::Candidate*> batch;
  batch.reserve(candidates.size());
  for (const collage::Candidate& c : candidates) batch.push_back(&c);
  std::vector<collage::Result<collage::Measurement>> measured = oracle.measure_batch(graph, batch);
  for (std::size_t k = 0; k < at.size(); ++k) answers[at[k]] = std::move(measured[k]);
  std::vector<collage::Result<collage::Measurement>> out;
  out.reserve(records.size());
  for (auto& answer : answers) out.push_back(std::move(*answer));
  return out;
}

/// measure_records() for one record.
template <class G>
collage::Result<collage::Measurement> measure_record(collage::CostOracle<G>& oracle, const collage::DataflowGraph<G>& graph,
                                                     std::string_view record) {
  return std::move(measure_records(oracle, graph, {std::string(record)}).front());
}

}  // namespace tc
