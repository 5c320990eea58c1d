#pragma once

/// \file
/// What collage-run prints and writes: the comparison table, the explanation, the JSON report,
/// the picture, and the progress line while measuring.

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include <collage/cost/budgeted_oracle.hpp>
#include <collage/support/progress.hpp>

#include "driver/comparison.hpp"

namespace tc {

/// Everything one collage-run reports.
struct RunReport {
  std::string model;
  std::size_t nodes = 0;
  /// What the outputs were checked against.
  std::string data_source;
  std::string device;
  std::string cost_model;
  /// How the search charged moves between the host and a GPU ("" when every backend runs on the host).
  std::string transfers;
  std::vector<ConfigurationResult> results;
  /// Candidates compiled and timed in this run, and answers served from the database.
  std::size_t measurements = 0;
  std::size_t db_hits = 0;
  /// Seconds the configurations spent partitioning (proposing, measuring, searching); the
  /// refinement's time is its configuration's own (ConfigurationResult::refinement).
  double tuning_seconds = 0;
};

/// The table: one row per configuration (fallback, latency, spread, speedup over the best single
/// configuration, estimated latency, output check, partitions per backend), then the summary
/// (which partitioning runs, tuning, additive error) and, with `explain`, the alternatives of
/// each collage partition.
std::string format_report(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report, bool explain);

/// For each configuration that was profiled: each step's time in the model against its
/// partition's cost alone (in the estimate: ConfigurationResult::part_ms), largest difference first.
std::string format_profile(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report);

/// The report as JSON: {"model", "configurations": [{"name", "latency_ms", "matches",
/// "max_abs_error", "partitions", "estimated_ms", "search_estimated_ms", ...}], "measurements",
/// "tuning_seconds", "additive_error", "search_additive_error", ...}.
std::string report_json(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report);

/// The collage configuration's partitioning (else the first that partitioned) as Graphviz DOT at
/// `path`, and as PNG at `path`.png when the `dot` program is installed.
collage::Status write_dot(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report, const std::string& path);

/// Writes `text` to `path`, naming the file on failure.
collage::Status write_text_file(const std::string& path, const std::string& text);

/// `backends` limited to `names` (in their order) plus each one's fallback and native; all of them
/// when `names` is empty.
BackendSet select_backends(BackendSet backends, const std::vector<std::string>& names);

/// "a, b, c".
std::string join(const std::vector<std::string>& items, const std::string& separator);

/// The progress of the measuring phase ("estimate") on stderr: candidates measured / to measure,
/// elapsed seconds and an estimate of what is left. On a terminal it redraws one line; to a file
/// or pipe it prints a line at most every 10 seconds.
inline collage::ProgressOptions measuring_progress(bool terminal) {
  collage::ProgressOptions o;
  o.out = stderr;
  o.terminal = terminal;
  o.prefix = "measuring: ";
  o.only_phase = "estimate";
  o.eta = true;
  o.line_interval_s = 10;
  return o;
}

}  // namespace tc
