#pragma once

/// \file
/// The collage tool's outputs: collage-partition/1 and collage-candidates/1 JSON, a text summary
/// and a Graphviz DOT picture of a partitioning.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/partitioner.hpp"
#include "collage/support/cost.hpp"
#include "json_graph.hpp"
#include "json_util.hpp"

namespace collage::cli {

/// The format tags of the outputs.
inline constexpr std::string_view kPartitionFormat = "collage-partition/1";
inline constexpr std::string_view kCandidatesFormat = "collage-candidates/1";

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

/// A cost as JSON: a number, or "unknown" / "invalid".
inline OrderedJson cost_json(Cost c) {
  if (c.is_known()) return OrderedJson(c.raw());
  return OrderedJson(c.to_string());
}

/// The ids of `nodes` (post-DFS indexes of `graph`), ascending: a topological order.
inline OrderedJson ids_json(const DataflowGraph<JsonGraph>& graph, const IndexSet& nodes) {
  OrderedJson out = OrderedJson::array();
  for (std::size_t i : nodes) out.push_back(graph.ir().id_json<OrderedJson>(graph.handle(i)));
  return out;
}

/// The nested groups of `s`, each with its attrs, its inside ids and (when it has any) its own
/// nested groups.
inline OrderedJson nested_json(const DataflowGraph<JsonGraph>& graph, const SubGraph& s) {
  OrderedJson out = OrderedJson::array();
  for (const NestedSubGraph& n : s.nested()) {
    OrderedJson attrs = OrderedJson::object();
    for (const auto& [k, v] : n.attrs) attrs[k] = v;
    OrderedJson group = {{"attrs", std::move(attrs)}, {"inside", ids_json(graph, n.sub_graph.inside())}};
    if (!n.sub_graph.nested().empty()) group["nested"] = nested_json(graph, n.sub_graph);
    out.push_back(std::move(group));
  }
  return out;
}

/// The collage-partition/1 document of `result`.
inline OrderedJson partition_json(const DataflowGraph<JsonGraph>& graph, const PartitionResult& result,
                                  const Timings& t) {
  const Partitioning& p = result.partitioning;
  OrderedJson parts = OrderedJson::array();
  for (const Candidate& c : p.parts) {
    parts.push_back({{"target", c.target},
                     {"rule", c.rule_name},
                     {"inside", ids_json(graph, c.sub_graph.inside())},
                     {"cost", cost_json(c.cost.value_or(Cost::unknown()))},
                     {"nested", nested_json(graph, c.sub_graph)}});
  }
  OrderedJson host = OrderedJson::array();
  for (std::size_t i : p.host) host.push_back(graph.ir().id_json<OrderedJson>(graph.handle(i)));
  OrderedJson search = {{"algorithm", p.stats.algorithm},
                        {"candidates", result.candidates.size()},
                        {"states_expanded", p.stats.states_expanded},
                        {"oracle_calls", result.oracle.backend_calls},
                        {"seconds", t.total},
                        {"phases",
                         {{"build", t.build}, {"candidates", t.candidates}, {"estimate", t.estimate}, {"search", t.search}}}};
  return OrderedJson{{"format", kPartitionFormat},
                     {"total_cost", cost_json(p.total)},
                     {"partitions", std::move(parts)},
                     {"host", std::move(host)},
                     {"search", std::move(search)}};
}

/// The collage-candidates/1 document of costed `candidates` (cost = the oracle's plus the
/// target's penalty, as the search sees it).
inline OrderedJson candidates_json(const DataflowGraph<JsonGraph>& graph, const std::vector<Candidate>& candidates,
                                   const std::map<std::string, double>& penalties) {
  OrderedJson list = OrderedJson::array();
  for (const Candidate& c : candidates) {
    Cost cost = c.cost.value_or(Cost::unknown());
    auto pen = penalties.find(c.target);
    if (pen != penalties.end()) cost += Cost::value(pen->second);
    list.push_back({{"target", c.target},
                    {"rule", c.rule_name},
                    {"inside", ids_json(graph, c.sub_graph.inside())},
                    {"cost", cost_json(cost)},
                    {"nested", nested_json(graph, c.sub_graph)}});
  }
  return OrderedJson{{"format", kCandidatesFormat}, {"candidates", std::move(list)}};
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

inline std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
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
    cost_width = std::max(cost_width, c.cost.value_or(Cost::unknown()).to_string().size());
  }
  const std::size_t num_width = std::to_string(p.parts.size()).size() + 1;
  out += detail::pad_right("#", num_width) + "  " + detail::pad_right("target", target_width) + "  " +
         detail::pad_right("cost", cost_width) + "  " + detail::pad_right("rule", rule_width) + "  nodes\n";
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    std::string line = detail::pad_right(std::to_string(k + 1), num_width) + "  " +
                       detail::pad_right(one_line(c.target), target_width) + "  " +
                       detail::pad_right(c.cost.value_or(Cost::unknown()).to_string(), cost_width) + "  " +
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

namespace detail {

inline std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(ch) >= 0x20) {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace detail

/// The partitioning as a Graphviz digraph: a filled cluster per partition, coloured by target
/// (in spec order) and labelled with target, rule and cost; nodes show id and op; host nodes
/// (ellipses) stay outside the clusters.
inline std::string partition_dot(const DataflowGraph<JsonGraph>& graph, const PartitionResult& result) {
  static const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                         "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
  constexpr std::size_t kColours = sizeof kPalette / sizeof kPalette[0];
  const Partitioning& p = result.partitioning;
  const JsonGraph& ir = graph.ir();
  auto colour = [&](const std::string& target) {
    auto it = std::find(result.priority.begin(), result.priority.end(), target);
    return kPalette[static_cast<std::size_t>(it - result.priority.begin()) % kColours];
  };
  auto node = [&](std::size_t i, const char* indent) {
    std::string line = std::string(indent) + "n" + std::to_string(i) + " [label=" +
                       detail::dot_quote(graph.label(i) + "\n" + graph.op_name(i));
    if (!graph.needs_kernel(i)) line += ", shape=ellipse";
    return line + "];\n";
  };
  std::string out = "digraph " + detail::dot_quote(ir.name.empty() ? std::string("collage") : ir.name) + " {\n";
  out += "  rankdir=TB;\n  labelloc=t;\n";
  out += "  label=" + detail::dot_quote((ir.name.empty() ? std::string() : ir.name + ": ") + "total cost " +
                                        p.total.to_string()) + ";\n";
  out += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n";
  out += "  graph [fontname=\"Helvetica\"];\n";
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    out += "  subgraph cluster_" + std::to_string(k) + " {\n";
    out += "    style=\"filled,rounded\";\n    fillcolor=\"" + std::string(colour(c.target)) + "\";\n";
    out += "    label=" + detail::dot_quote(std::to_string(k + 1) + ". " + c.target + " (" + c.rule_name + ")\ncost " +
                                           c.cost.value_or(Cost::unknown()).to_string()) + ";\n";
    for (std::size_t i : c.sub_graph.inside()) out += node(i, "    ");
    out += "  }\n";
  }
  for (std::size_t i : p.host) out += node(i, "  ");
  for (std::size_t i = 0; i < graph.size(); ++i) {
    for (std::size_t j : graph.inputs(i)) out += "  n" + std::to_string(j) + " -> n" + std::to_string(i) + ";\n";
  }
  out += "}\n";
  return out;
}

}  // namespace collage::cli
