#pragma once

/// \file
/// The collage tool's outputs: collage-partition/1 and collage-candidates/1 JSON and the Graphviz
/// DOT picture and the text summary, through the library's report writers (collage/report.hpp).

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/partitioner.hpp"
#include "collage/report.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/numbers.hpp"
#include "json_graph.hpp"
#include "json_util.hpp"

namespace collage::cli {

/// JSON with keys in insertion order, for outputs people read.
using OrderedJson = nlohmann::ordered_json;

/// Wall-clock seconds of the tool's phases (reading and writing files excluded).
struct Timings {
  double build = 0;
  double candidates = 0;
  double estimate = 0;
  double search = 0;
  /// build + candidates + estimate + search, as measured around them.
  double total = 0;
};

/// The report options of the tool: nodes by their ids in `graph`'s file (integers stay integers).
inline ReportOptions report_options(const DataflowGraph<JsonGraph>& graph) {
  ReportOptions options;
  options.node_json = [&graph](std::size_t i) { return graph.ir().id_json<OrderedJson>(graph.handle(i)).dump(); };
  options.name = graph.ir().name;
  return options;
}

/// The collage-partition/1 document of `result`: the library's report (to_json, without the
/// alternatives) with the tool's timings, which add the build phase.
inline OrderedJson partition_json(const DataflowGraph<JsonGraph>& graph, const PartitionResult& result,
                                  const Timings& t) {
  ReportOptions options = report_options(graph);
  options.alternatives = false;
  OrderedJson doc = OrderedJson::parse(*to_json(graph, result, options));  // the result is over `graph`
  OrderedJson& search = doc["search"];
  search["seconds"] = t.total;
  search["phases"] = {{"build", t.build}, {"candidates", t.candidates}, {"estimate", t.estimate}, {"search", t.search}};
  return doc;
}

/// The partitioning as a Graphviz digraph: the library's to_dot(), named after the graph.
inline std::string partition_dot(const DataflowGraph<JsonGraph>& graph, const PartitionResult& result) {
  return *to_dot(graph, result, report_options(graph));  // the result is over `graph`
}

/// The collage-candidates/1 document of costed `candidates` (the library's candidates_to_json:
/// cost = the oracle's plus the target's penalty, as the search sees it).
inline OrderedJson candidates_json(const DataflowGraph<JsonGraph>& graph, const std::vector<Candidate>& candidates,
                                   const std::map<std::string, double>& penalties) {
  return OrderedJson::parse(*candidates_to_json(graph, candidates, penalties, report_options(graph)));
}

/// A text summary of `result`: the library's to_text() without the explanation, with the tool's
/// total seconds (which include building the graph).
inline std::string partition_text(const DataflowGraph<JsonGraph>& graph, const PartitionResult& result,
                                  const Timings& t) {
  ReportOptions options = report_options(graph);
  options.alternatives = false;
  options.seconds = t.total;
  return *to_text(graph, result, options);  // the result is over `graph`
}

}  // namespace collage::cli
