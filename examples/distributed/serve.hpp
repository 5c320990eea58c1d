#pragma once

/// \file
/// The serving side of a distributed measurement: a rank other than 0 waits for rank 0's setup,
/// builds what it measures with from it, then answers each candidate rank 0 sends until told to
/// stop, or until rank 0 has been silent too long.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

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
/// (or why `make` failed), then each candidate with Measurer::measure(). Gives up when rank 0 is
/// silent for `silence_timeout_seconds`, with one line in `*why`.
ServeEnd serve(Transport& transport, const MeasurerFactory& make, double silence_timeout_seconds,
               std::string* why = nullptr);

/// This machine's host name ("" when it has none).
std::string host_name();

/// The answer of `oracle` for the candidate over `graph` that `record` (a trace candidate record)
/// describes; an Error naming the problem when the record does not fit the graph.
template <class G>
collage::Result<collage::Measurement> measure_record(collage::CostOracle<G>& oracle, const collage::DataflowGraph<G>& graph,
                                                     std::string_view record) {
  collage::Result<collage::Candidate> candidate = collage::read_trace_candidate(graph, record);
  if (!candidate.ok()) return candidate.error();
  candidate->cost = collage::Cost::unknown();
  return oracle.measure(graph, *candidate);
}

}  // namespace tc
