#pragma once

/// \file
/// The collage tool's outputs: collage-partition/1 and collage-candidates/1 JSON and the Graphviz
/// DOT picture, through the library's report writers (collage/report.hpp); and a text summary.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <map>
#include <string>
#include <system_error>
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

namespace detail {

inline std::string join_ids(const DataflowGraph<JsonGraph>& graph, const IndexSet& nodes) {
  std::string out;
  for (std::size_t i : nodes) out += (out.empty() ? "" : ", ") + one_line(graph.label(i));
  return out;
}

/// The Composite groups of `s` (at any depth), as " [name: ids]".
inline void append_composites(const DataflowGraph<JsonGraph>& graph, const SubGraph& s, std::string& out) {
  for (const NestedSubGraph& n : s.nested()) {
    const std::string_view name = n.attr("Composite");
    if (!name.empty()) {
      out += " [" + one_line(std::string(name)) + ": " + join_ids(graph, n.sub_graph.inside()) + "]";
    }
    append_composites(graph, n.sub_graph, out);
  }
}

inline std::string pad_right(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

/// `s` with three decimals ("0.004"), the same under every locale.
inline std::string seconds_text(double s) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, s, std::chars_format::fixed, 3);
  return ec == std::errc() ? std::string(buf, end) : format_double(s);
}

}  // namespace detail

/// A text summary of `result`: one line per partition (target, cost, rule, node ids), the host
/// nodes and the total.
inline std::string partition_text(const DataflowGraph<JsonGraph>& graph, const PartitionResult& result,
                                  const Timings& t) {
  const Partitioning& p = result.partitioning;
  const JsonGraph& ir = graph.ir();
  std::size_t kernels = 0;
  for (std::size_t i = 0; i < graph.size(); ++i) kernels += graph.needs_kernel(i) ? 1 : 0;
  std::string out = (ir.name.empty() ? std::string("graph") : one_line(ir.name)) + ": " +
                    std::to_string(graph.size()) + " nodes (" + std::to_string(kernels) + " need a kernel), " +
                    std::to_string(result.priority.size()) + " targets, " +
                    std::to_string(result.candidates.size()) + " candidates\n";
  std::size_t target_width = 6;
  std::size_t rule_width = 4;
  std::size_t cost_width = 4;
  for (const Candidate& c : p.parts) {
    target_width = std::max(target_width, c.target.size());
    rule_width = std::max(rule_width, c.rule_name.size());
    cost_width = std::max(cost_width, c.cost.to_string().size());
  }
  const std::size_t num_width = std::to_string(p.parts.size()).size() + 1;
  out += detail::pad_right("#", num_width) + "  " + detail::pad_right("target", target_width) + "  " +
         detail::pad_right("cost", cost_width) + "  " + detail::pad_right("rule", rule_width) + "  nodes\n";
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    std::string line = detail::pad_right(std::to_string(k + 1), num_width) + "  " +
                       detail::pad_right(one_line(c.target), target_width) + "  " +
                       detail::pad_right(c.cost.to_string(), cost_width) + "  " +
                       detail::pad_right(one_line(c.rule_name), rule_width) + "  " +
                       detail::join_ids(graph, c.sub_graph.inside());
    detail::append_composites(graph, c.sub_graph, line);
    out += line + "\n";
  }
  std::string host;
  for (std::size_t i : p.host) host += (host.empty() ? "" : ", ") + one_line(graph.label(i));
  out += "host: " + (host.empty() ? std::string("(none)") : host) + "\n";
  out += "total cost " + p.total.to_string() + " (" + p.stats.algorithm + " search: " +
         std::to_string(p.stats.states_expanded) + " states expanded, " +
         std::to_string(result.oracle.backend_calls) + " oracle calls, " + detail::seconds_text(t.total) + " s)\n";
  return out;
}

}  // namespace collage::cli
