#pragma once

/// \file
/// Reports of a partitioning: JSON for tools, Graphviz DOT for people.

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "collage/partitioner.hpp"

namespace collage {

/// What a report includes.
struct ReportOptions {
  /// Include wall-clock seconds (then two runs no longer give identical bytes).
  bool timings = false;
  /// Include each part's alternatives (the explanation).
  bool alternatives = true;
};

namespace detail {

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

/// A cost as JSON: a number, or the string "unknown" / "invalid".
inline std::string json_cost(Cost c) {
  if (!c.is_known()) return "\"" + c.to_string() + "\"";
  std::ostringstream os;
  os.precision(12);
  os << c.raw();
  return os.str();
}

template <class G>
std::string json_labels(const DataflowGraph<G>& graph, const IndexSet& nodes) {
  std::string out = "[";
  for (std::size_t i : nodes) out += (out.size() > 1 ? ", " : "") + json_string(graph.label(i));
  return out + "]";
}

inline std::string dot_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace detail

/// The partitioning as JSON: total cost, parts (target, rule, cost, inside nodes by label, nested
/// groups, alternatives), host nodes, and statistics. Deterministic unless timings are asked for.
template <class G>
std::string to_json(const DataflowGraph<G>& graph, const PartitionResult& result, const ReportOptions& options = {}) {
  using detail::json_cost;
  using detail::json_string;
  const Partitioning& p = result.partitioning;
  std::ostringstream out;
  out << "{\n  \"total_cost\": " << json_cost(p.total) << ",\n";
  out << "  \"effective_total_cost\": " << json_cost(p.effective_total) << ",\n";
  out << "  \"partitions\": [";
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    out << (k ? "," : "") << "\n    {\"target\": " << json_string(c.target) << ", \"rule\": " << json_string(c.rule_name)
        << ", \"cost\": " << json_cost(c.cost.value_or(Cost::unknown()))
        << ", \"inside\": " << detail::json_labels(graph, c.sub_graph.inside()) << ", \"nested\": [";
    for (std::size_t n = 0; n < c.sub_graph.nested().size(); ++n) {
      const NestedSubGraph& group = c.sub_graph.nested()[n];
      out << (n ? ", " : "") << "{\"attrs\": {";
      for (std::size_t a = 0; a < group.attrs.size(); ++a) {
        out << (a ? ", " : "") << json_string(group.attrs[a].first) << ": " << json_string(group.attrs[a].second);
      }
      out << "}, \"inside\": " << detail::json_labels(graph, group.sub_graph.inside()) << "}";
    }
    out << "]";
    if (options.alternatives && k < result.alternatives.size()) {
      out << ", \"alternatives\": [";
      for (std::size_t a = 0; a < result.alternatives[k].size(); ++a) {
        const Candidate& alt = result.candidates[result.alternatives[k][a]];
        out << (a ? ", " : "") << "{\"target\": " << json_string(alt.target) << ", \"rule\": " << json_string(alt.rule_name)
            << ", \"cost\": " << json_cost(alt.cost.value_or(Cost::unknown()))
            << ", \"inside\": " << detail::json_labels(graph, alt.sub_graph.inside()) << "}";
      }
      out << "]";
    }
    out << "}";
  }
  out << "\n  ],\n  \"host\": [";
  for (std::size_t k = 0; k < p.host.size(); ++k) out << (k ? ", " : "") << json_string(graph.label(p.host[k]));
  out << "],\n  \"statistics\": {\"algorithm\": " << json_string(p.stats.algorithm)
      << ", \"candidates\": " << result.candidates.size() << ", \"usable_candidates\": " << p.stats.candidates
      << ", \"states_expanded\": " << p.stats.states_expanded << ", \"states_generated\": " << p.stats.states_generated
      << ", \"oracle_calls\": " << result.oracle.backend_calls << ", \"cache_hits\": " << result.oracle.cache_hits
      << ", \"cache_misses\": " << result.oracle.cache_misses << ", \"oracle_errors\": " << result.oracle_errors.size();
  if (options.timings) {
    out << ", \"seconds\": {\"candidates\": " << result.seconds.candidates << ", \"estimate\": " << result.seconds.estimate
        << ", \"search\": " << result.seconds.search << ", \"total\": " << result.seconds.total << "}";
  }
  out << "}\n}\n";
  return out.str();
}

/// The partitioning as a Graphviz digraph: one filled cluster per part, coloured by target, with
/// the target, rule and cost in its label; host nodes outside any cluster.
template <class G>
std::string to_dot(const DataflowGraph<G>& graph, const PartitionResult& result) {
  static const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                         "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
  const Partitioning& p = result.partitioning;
  std::vector<std::string> targets = result.priority;
  auto colour = [&](const std::string& target) {
    auto it = std::find(targets.begin(), targets.end(), target);
    if (it == targets.end()) {
      targets.push_back(target);
      it = targets.end() - 1;
    }
    return kPalette[static_cast<std::size_t>(it - targets.begin()) % (sizeof kPalette / sizeof kPalette[0])];
  };
  std::ostringstream out;
  out << "digraph collage {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n";
  out << "  label=\"total cost " << detail::dot_escape(p.total.to_string()) << "\";\n";
  auto node = [&](std::size_t i) {
    out << "    n" << i << " [label=\"" << detail::dot_escape(graph.label(i)) << "\"";
    if (!graph.needs_kernel(i)) out << ", shape=ellipse";
    out << "];\n";
  };
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    out << "  subgraph cluster_" << k << " {\n    style=filled; fillcolor=\"" << colour(c.target) << "\";\n";
    out << "    label=\"" << detail::dot_escape(c.target + ": " + c.rule_name) << "\\ncost "
        << detail::dot_escape(c.cost.value_or(Cost::unknown()).to_string()) << "\";\n";
    for (std::size_t i : c.sub_graph.inside()) node(i);
    out << "  }\n";
  }
  for (std::size_t i : p.host) node(i);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    for (std::size_t j : graph.inputs(i)) out << "  n" << j << " -> n" << i << ";\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace collage
