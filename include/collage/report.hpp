#pragma once

/// \file
/// Reports of a partitioning: the collage-partition/1 JSON document (the schema the `collage`
/// tool writes and `collage check` reads; docs/formats.md), a text summary with the explanation of
/// each part's choice, and a Graphviz DOT picture. Numbers are
/// written through collage/support/numbers.hpp, so a report has the same bytes under any locale.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "collage/partitioner.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/text.hpp"

namespace collage {

/// The format tag of the JSON report of a partitioning.
inline constexpr std::string_view kPartitionFormat = "collage-partition/1";
/// The format tag of the JSON list of candidates.
inline constexpr std::string_view kCandidatesFormat = "collage-candidates/1";

/// What a report includes.
struct ReportOptions {
  /// JSON: include wall-clock seconds (then two runs no longer give identical bytes).
  bool timings = false;
  /// JSON: include each part's alternatives; text: end with the explanation (explain_text()).
  bool alternatives = true;
  /// JSON: the JSON value naming node `i` (a post-DFS index) in node lists; when empty, the node's
  /// label as a JSON string. (The collage tool writes its graph's ids, integers as integers.)
  std::function<std::string(std::size_t)> node_json;
  /// DOT: the graph's name, for the digraph's name and title ("collage" and no title prefix when
  /// empty).
  std::string name;
  /// Text: the wall-clock seconds shown on the total line; `result.seconds.total` when negative
  /// (a client that timed more than the partitioner, such as reading the graph, passes its own).
  double seconds = -1;
  /// Text: how a cost is written (Cost::to_string() when empty), e.g. with a unit.
  std::function<std::string(const Cost&)> cost_text;
};

namespace detail {

/// `s` as a JSON string (quotes, backslashes and control characters escaped).
inline std::string json_string(std::string_view s) {
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
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[ch >> 4];
          out += kHex[ch & 0xF];
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

/// A cost as JSON: a number with 12 significant digits, or the string "unknown" / "invalid".
inline std::string json_cost(Cost c) {
  if (!c.is_known()) return "\"" + c.to_string() + "\"";
  return c.to_string();
}

/// Writes the JSON report (see to_json()).
template <class G>
class JsonReportWriter {
 public:
  JsonReportWriter(const DataflowGraph<G>& graph, const ReportOptions& options) : graph_(graph), options_(options) {}

  std::string write(const PartitionResult& result) {
    const Partitioning& p = result.partitioning;
    out_ = "{\n  \"format\": " + json_string(kPartitionFormat);
    out_ += ",\n  \"graph\": {\"nodes\": " + std::to_string(graph_.size()) + ", \"fingerprint\": " +
            json_string(graph_.fingerprint().hash_text()) + "}";
    out_ += ",\n  \"total_cost\": " + json_cost(p.total);
    out_ += ",\n  \"effective_total_cost\": " + json_cost(p.effective_total);
    out_ += ",\n  \"partitions\": [";
    for (std::size_t k = 0; k < p.parts.size(); ++k) {
      out_ += k ? ",\n    " : "\n    ";
      part(result, k);
    }
    out_ += p.parts.empty() ? "]" : "\n  ]";
    out_ += ",\n  \"host\": [";
    for (std::size_t k = 0; k < p.host.size(); ++k) {
      if (k) out_ += ", ";
      out_ += node(p.host[k]);
    }
    out_ += "],\n  \"search\": {\"algorithm\": " + json_string(p.stats.algorithm);
    count("candidates", result.candidates.size());
    count("usable_candidates", p.stats.candidates);
    count("states_expanded", p.stats.states_expanded);
    count("states_generated", p.stats.states_generated);
    count("oracle_calls", result.oracle.backend_calls);
    count("cache_hits", result.oracle.cache_hits);
    count("cache_misses", result.oracle.cache_misses);
    count("oracle_errors", result.oracle_errors.size());
    if (options_.timings) {
      out_ += ", \"seconds\": " + collage::format_double(result.seconds.total, 6);
      out_ += ", \"phases\": {\"candidates\": " + collage::format_double(result.seconds.candidates, 6) +
              ", \"estimate\": " + collage::format_double(result.seconds.estimate, 6) +
              ", \"search\": " + collage::format_double(result.seconds.search, 6) + "}";
    }
    out_ += '}';
    if (!result.warnings.empty()) {
      out_ += ",\n  \"warnings\": [";
      for (std::size_t k = 0; k < result.warnings.size(); ++k) out_ += (k ? ", " : "") + json_string(result.warnings[k]);
      out_ += ']';
    }
    out_ += "\n}\n";
    return std::move(out_);
  }

  std::string write(const std::vector<Candidate>& candidates, const std::map<std::string, double>& penalties) {
    out_ = "{\n  \"format\": " + json_string(kCandidatesFormat) + ",\n  \"candidates\": [";
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const Candidate& c = candidates[k];
      Cost cost = c.cost;
      if (auto pen = penalties.find(c.target); pen != penalties.end()) cost += Cost::value(pen->second);
      out_ += k ? ",\n    {" : "\n    {";
      summary(c, cost);
      out_ += ", \"nested\": ";
      groups(c.sub_graph.nested());
      out_ += '}';
    }
    out_ += candidates.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return std::move(out_);
  }

 private:
  std::string node(std::size_t i) const {
    return options_.node_json ? options_.node_json(i) : json_string(graph_.label(i));
  }

  void count(const char* key, std::size_t n) {
    out_ += ", \"";
    out_ += key;
    out_ += "\": " + std::to_string(n);
  }

  void nodes(const IndexSet& set) {
    out_ += '[';
    bool first = true;
    for (std::size_t i : set) {
      if (!first) out_ += ", ";
      first = false;
      out_ += node(i);
    }
    out_ += ']';
  }

  /// `"target": ..., "rule": ..., "cost": ..., "inside": [...]` of a candidate with `cost`.
  void summary(const Candidate& c, Cost cost) {
    out_ += "\"target\": " + json_string(c.target) + ", \"rule\": " + json_string(c.rule_name) +
            ", \"cost\": " + json_cost(cost) + ", \"inside\": ";
    nodes(c.sub_graph.inside());
  }

  /// The groups of `nested`, each with its attrs, inside nodes and (when it has any) own groups.
  void groups(const NestedGroups& nested) {
    out_ += '[';
    for (std::size_t n = 0; n < nested.size(); ++n) {
      const NestedSubGraph& group = nested[n];
      if (n) out_ += ", ";
      out_ += "{\"attrs\": {";
      for (std::size_t a = 0; a < group.attrs.size(); ++a) {
        if (a) out_ += ", ";
        out_ += json_string(group.attrs[a].first) + ": " + json_string(group.attrs[a].second);
      }
      out_ += "}, \"inside\": ";
      nodes(group.sub_graph.inside());
      if (!group.sub_graph.nested().empty()) {
        out_ += ", \"nested\": ";
        groups(group.sub_graph.nested());
      }
      out_ += '}';
    }
    out_ += ']';
  }

  void part(const PartitionResult& result, std::size_t k) {
    const Candidate& c = result.partitioning.parts[k];
    out_ += '{';
    summary(c, c.cost);
    if (k < result.partitioning.transfers.size()) {
      out_ += ", \"transfer_cost\": " + json_cost(Cost::value(result.partitioning.transfers[k]));
    }
    out_ += ", \"nested\": ";
    groups(c.sub_graph.nested());
    if (options_.alternatives && k < result.alternatives.size()) {
      out_ += ", \"alternatives\": [";
      for (std::size_t a = 0; a < result.alternatives[k].size(); ++a) {
        const Alternative& alt = result.alternatives[k][a];
        out_ += a ? ", {" : "{";
        summary(result.candidates[alt.candidate], alt.cost);
        out_ += '}';
      }
      out_ += ']';
    }
    out_ += '}';
  }

  const DataflowGraph<G>& graph_;
  const ReportOptions& options_;
  std::string out_;
};

/// `s` as a DOT string: quoted, with quotes and backslashes escaped, line feeds as "\n" and other
/// control characters dropped.
inline std::string dot_quote(std::string_view s) {
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

/// The labels of `nodes`, one-lined, as "a, b, c".
template <class G>
std::string text_labels(const DataflowGraph<G>& graph, const IndexSet& nodes) {
  std::string out;
  for (std::size_t i : nodes) out += (out.empty() ? "" : ", ") + one_line(graph.label(i));
  return out;
}

/// The Composite groups of `s` (at any depth), each as " [name: labels]".
template <class G>
void append_composites(const DataflowGraph<G>& graph, const SubGraph& s, std::string& out) {
  for (const NestedSubGraph& n : s.nested()) {
    const std::string_view name = n.attr("Composite");
    if (!name.empty()) out += " [" + one_line(name) + ": " + text_labels(graph, n.sub_graph.inside()) + "]";
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

/// The labels of the nodes of `s` that need a kernel: five and a count of the rest when there are
/// more than six.
template <class G>
std::string kernel_labels(const DataflowGraph<G>& graph, const SubGraph& s) {
  std::vector<std::string> names;
  for (std::size_t i : s.inside()) {
    if (graph.needs_kernel(i)) names.push_back(one_line(graph.label(i)));
  }
  if (names.size() > 6) {
    const std::size_t more = names.size() - 5;
    names.resize(5);
    names.push_back("... (" + std::to_string(more) + " more)");
  }
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) out += (k ? ", " : "") + names[k];
  return out;
}

/// The explanation (see explain_text()) of a result known to be over `graph`.
template <class G>
std::string explanation(const DataflowGraph<G>& graph, const PartitionResult& result, const ReportOptions& options) {
  auto cost = [&](const Cost& c) { return options.cost_text ? options.cost_text(c) : c.to_string(); };
  std::string out = "why collage chose each partition (the candidates that could cover its first kernel node):\n";
  const Partitioning& p = result.partitioning;
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& part = p.parts[k];
    out += "  " + std::to_string(k + 1) + ". " + one_line(part.target) + " [" + kernel_labels(graph, part.sub_graph) +
           "] " + cost(part.cost) + "\n";
    if (k >= result.alternatives.size()) continue;
    for (const Alternative& a : result.alternatives[k]) {
      const Candidate& alt = result.candidates[a.candidate];
      if (alt.target == part.target && alt.sub_graph.inside() == part.sub_graph.inside()) continue;
      std::string why;
      if (a.cost.is_unknown()) {
        why = "not measured (tuning budget spent)";
      } else if (alt.sub_graph.inside() == part.sub_graph.inside()) {
        why = "slower: " + cost(a.cost) + " vs " + cost(part.cost);
      } else {
        why = cost(a.cost) + " for other nodes; the cheapest whole partitioning did not use it";
      }
      out += "       - " + one_line(alt.target) + " [" + kernel_labels(graph, alt.sub_graph) + "]: " + why + "\n";
    }
    std::size_t first = collage::first_kernel_node(graph, part.sub_graph);
    if (first == npos) first = part.sub_graph.first_inside();
    for (const auto& [index, reason] : result.invalid_reasons) {
      const Candidate& bad = result.candidates[index];
      if (!bad.sub_graph.inside().contains(first)) continue;
      out += "       - " + one_line(bad.target) + " [" + kernel_labels(graph, bad.sub_graph) +
             "]: cannot run there: " + one_line(reason) + "\n";
    }
  }
  return out;
}

}  // namespace detail

/// The partitioning as a collage-partition/1 JSON document (docs/formats.md): format tag, the
/// graph's size and fingerprint, total and effective total cost; the parts (target, rule, cost, inside nodes, nested groups at every
/// depth, and, unless turned off, the alternatives with the costs the search compared); the host
/// nodes; the search's statistics (with wall-clock seconds when asked for); and the result's
/// warnings, when there are any. One top-level key per line and one part per line. Deterministic
/// unless timings are asked for; the same bytes under any locale. `collage check` reads it. Fails
/// with ErrorCode::wrong_graph when `result` was made over another graph.
template <class G>
Result<std::string> to_json(const DataflowGraph<G>& graph, const PartitionResult& result,
                            const ReportOptions& options = {}) {
  if (auto error = detail::check_graph(graph, result.partitioning, "to_json: the partition result")) {
    return std::move(*error);
  }
  return detail::JsonReportWriter<G>(graph, options).write(result);
}

/// Costed `candidates` as a collage-candidates/1 JSON document (docs/formats.md): one per line,
/// each with its target, rule, cost as the search sees it (the oracle's plus the target's penalty
/// from `penalties`), inside nodes and nested groups at every depth. Uses `options.node_json`.
/// Fails with ErrorCode::wrong_graph when a candidate is over a graph of another size.
template <class G>
Result<std::string> candidates_to_json(const DataflowGraph<G>& graph, const std::vector<Candidate>& candidates,
                                       const std::map<std::string, double>& penalties,
                                       const ReportOptions& options = {}) {
  for (const Candidate& c : candidates) {
    if (c.sub_graph.inside().universe() != graph.size()) {
      return Error{ErrorCode::wrong_graph, "candidates_to_json: a candidate was made over a graph of " +
                                               std::to_string(c.sub_graph.inside().universe()) +
                                               " nodes, not this one of " + std::to_string(graph.size())};
    }
  }
  return detail::JsonReportWriter<G>(graph, options).write(candidates, penalties);
}

/// Why the search chose each part of `result`: for each part (number, target, the labels of its
/// nodes that need a kernel, cost), the candidates that could cover its first kernel node and why
/// each lost: slower for the same nodes, covering other nodes (the cheapest whole partitioning
/// did not use it), not measured (Unknown), or cannot run there (with the oracle's reason). Costs
/// through `options.cost_text`. Fails with ErrorCode::wrong_graph when `result` was made over
/// another graph.
template <class G>
Result<std::string> explain_text(const DataflowGraph<G>& graph, const PartitionResult& result,
                                 const ReportOptions& options = {}) {
  if (auto error = detail::check_graph(graph, result.partitioning, "explain_text: the partition result")) {
    return std::move(*error);
  }
  return detail::explanation(graph, result, options);
}

/// The partitioning as text for people: a line naming the graph (`options.name`, else "graph")
/// with its node, kernel, target and candidate counts; a table with one line per part (number,
/// target, cost, rule, the labels of its nodes, then its Composite groups at any depth as
/// " [name: labels]"); the host nodes; the total cost with the search's algorithm, states
/// expanded, oracle calls and seconds (`options.seconds`, else the result's). With
/// `options.alternatives`, a blank line and explain_text() follow. Labels have control characters
/// escaped; the same bytes under any locale. Fails with ErrorCode::wrong_graph when `result` was
/// made over another graph.
template <class G>
Result<std::string> to_text(const DataflowGraph<G>& graph, const PartitionResult& result,
                            const ReportOptions& options = {}) {
  if (auto error = detail::check_graph(graph, result.partitioning, "to_text: the partition result")) {
    return std::move(*error);
  }
  using detail::pad_right;
  auto cost = [&](const Cost& c) { return options.cost_text ? options.cost_text(c) : c.to_string(); };
  const Partitioning& p = result.partitioning;
  std::size_t kernels = 0;
  for (std::size_t i = 0; i < graph.size(); ++i) kernels += graph.needs_kernel(i) ? 1 : 0;
  std::string out = (options.name.empty() ? std::string("graph") : one_line(options.name)) + ": " +
                    std::to_string(graph.size()) + " nodes (" + std::to_string(kernels) + " need a kernel), " +
                    std::to_string(result.priority.size()) + " targets, " +
                    std::to_string(result.candidates.size()) + " candidates\n";
  std::size_t target_width = 6;
  std::size_t rule_width = 4;
  std::size_t cost_width = 4;
  for (const Candidate& c : p.parts) {
    target_width = std::max(target_width, one_line(c.target).size());
    rule_width = std::max(rule_width, one_line(c.rule_name).size());
    cost_width = std::max(cost_width, cost(c.cost).size());
  }
  const std::size_t num_width = std::to_string(p.parts.size()).size() + 1;
  out += pad_right("#", num_width) + "  " + pad_right("target", target_width) + "  " + pad_right("cost", cost_width) +
         "  " + pad_right("rule", rule_width) + "  nodes\n";
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    std::string line = pad_right(std::to_string(k + 1), num_width) + "  " +
                       pad_right(one_line(c.target), target_width) + "  " +
                       pad_right(cost(c.cost), cost_width) + "  " + pad_right(one_line(c.rule_name), rule_width) +
                       "  " + detail::text_labels(graph, c.sub_graph.inside());
    detail::append_composites(graph, c.sub_graph, line);
    out += line + "\n";
  }
  std::string host;
  for (std::size_t i : p.host) host += (host.empty() ? "" : ", ") + one_line(graph.label(i));
  out += "host: " + (host.empty() ? std::string("(none)") : host) + "\n";
  out += "total cost " + cost(p.total) + " (" + p.stats.algorithm + " search: " + std::to_string(p.stats.states_expanded) +
         " states expanded, " + std::to_string(result.oracle.backend_calls) + " oracle calls, " +
         detail::seconds_text(options.seconds < 0 ? result.seconds.total : options.seconds) + " s)\n";
  if (options.alternatives) out += "\n" + detail::explanation(graph, result, options);
  return out;
}

/// The partitioning as a Graphviz digraph: one filled cluster per part, coloured by target (in
/// priority order) and labelled with its number, target, rule and cost; nodes show their label
/// and, when it differs, their op; nodes that need no kernel are ellipses; host nodes lie outside
/// every cluster. The one DOT writer of the library and the tool. Fails with
/// ErrorCode::wrong_graph when `result` was made over another graph.
template <class G>
Result<std::string> to_dot(const DataflowGraph<G>& graph, const PartitionResult& result,
                           const ReportOptions& options = {}) {
  if (auto error = detail::check_graph(graph, result.partitioning, "to_dot: the partition result")) {
    return std::move(*error);
  }
  using detail::dot_quote;
  static const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                         "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
  constexpr std::size_t kColours = sizeof kPalette / sizeof kPalette[0];
  const Partitioning& p = result.partitioning;
  std::vector<std::string> targets = result.priority;
  auto colour = [&](const std::string& target) {
    auto it = std::find(targets.begin(), targets.end(), target);
    if (it == targets.end()) {
      targets.push_back(target);
      it = targets.end() - 1;
    }
    return kPalette[static_cast<std::size_t>(it - targets.begin()) % kColours];
  };
  auto node = [&](std::size_t i, const char* indent) {
    std::string label = graph.label(i);
    if (graph.op_name(i) != label && !graph.op_name(i).empty()) label += "\n" + graph.op_name(i);
    std::string line = std::string(indent) + "n" + std::to_string(i) + " [label=" + dot_quote(label);
    if (!graph.needs_kernel(i)) line += ", shape=ellipse";
    return line + "];\n";
  };
  std::string out = "digraph " + dot_quote(options.name.empty() ? std::string("collage") : options.name) + " {\n";
  out += "  rankdir=TB;\n  labelloc=t;\n";
  out += "  label=" + dot_quote((options.name.empty() ? std::string() : options.name + ": ") + "total cost " +
                                p.total.to_string()) + ";\n";
  out += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n";
  out += "  graph [fontname=\"Helvetica\"];\n";
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const Candidate& c = p.parts[k];
    out += "  subgraph cluster_" + std::to_string(k) + " {\n";
    out += "    style=\"filled,rounded\";\n    fillcolor=\"" + std::string(colour(c.target)) + "\";\n";
    out += "    label=" + dot_quote(std::to_string(k + 1) + ". " + c.target + " (" + c.rule_name + ")\ncost " +
                                   c.cost.to_string()) + ";\n";
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

}  // namespace collage
