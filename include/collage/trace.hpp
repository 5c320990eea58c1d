#pragma once

/// \file
/// Traces: a partition() run saved as text (the costed candidates and the search settings), and
/// replay(), which repeats the search from it without any oracle and gets the same partitioning.
///
/// Format: one record per line, fields separated by tabs.
///
///     collage-trace/4
///     graph <nodes> <fingerprint: 16 hex digits>
///     search <exact|beam|greedy> <beam width> <max states> <max memory MiB> <fall back to beam: 0|1>
///     exact-gave-up
///     narrowed <layer>
///     priority <target>...
///     penalty <target> <value>
///     device <target> <device index>
///     host-io <inputs start on the host: 0|1> <outputs end on the host: 0|1>
///     transfer <node index> <from device> <to device> <cost>
///     candidate <target> <rule> <cost> <inside indexes> [<group>...]
///
/// - `graph` is the GraphFingerprint of the graph the run was over: replay() refuses another graph.
/// - `exact-gave-up` (only when the exact search gave up and the beam search answered) makes
///   replay() run the beam search at once; `narrowed` (only when a beam search's time budget ran
///   out) is the layer from which it kept one state. replay() runs without time budgets and repeats
///   both, so it gives the same partitioning on any machine.
/// - `device`, `host-io` and `transfer` records are the transfer table (TransferTable): present
///   only when some target runs off the host; a transfer cost not listed is 0, and without a
///   `host-io` record inputs start and outputs end on the host.
/// - A cost is a number >= 0, "unknown" or "invalid"; costs and penalties are written in the
///   shortest form that reads back to the same double (std::to_chars), so replay compares exactly
///   what the search compared. The bytes are the same under every locale.
/// - Indexes are post-DFS indexes of the graph, in decimal, comma-separated.
/// - A group is "<depth>:<attributes>@<indexes>", the attributes "key=value;key=value". The groups
///   of a candidate are listed depth-first: depth 0 for the candidate's own groups, depth d + 1 for
///   a group nested in the nearest group of depth d before it (so a Composite group inside a
///   Primitive one keeps its place).
/// - In targets, rule names, attribute keys and values, the characters '%', tab, line feed,
///   carriage return, ';', '=' and '@' are written as "%XX" (two upper-case hex digits).
///
/// replay() also reads collage-trace/3 (no graph record), collage-trace/2 (nor transfer records)
/// and collage-trace/1 (the first version: no group depths, so groups at depth 0 only; no
/// escapes; "search <algorithm> <beam width>").

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/partitioner.hpp"
#include "collage/search/search_problem.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/index_set.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// The tag on the first line of the traces save_trace() writes.
inline constexpr std::string_view kTraceFormat = "collage-trace/4";

namespace detail {

/// Deepest nesting of groups replay() accepts.
inline constexpr std::size_t kMaxTraceGroupDepth = 64;

/// Whether `ch` is written as "%XX" in a trace's text fields.
constexpr bool trace_escaped(char ch) {
  return ch == '%' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ';' || ch == '=' || ch == '@';
}

/// `text` with the characters trace_escaped() names written as "%XX".
inline std::string trace_escape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (!trace_escaped(ch)) {
      out += ch;
      continue;
    }
    const auto byte = static_cast<unsigned char>(ch);
    out += '%';
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
  }
  return out;
}

/// The text trace_escape() wrote as `text`, or nothing on a malformed escape.
inline std::optional<std::string> trace_unescape(std::string_view text) {
  auto digit = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] != '%') {
      out += text[k];
      continue;
    }
    if (k + 2 >= text.size()) return std::nullopt;
    const int hi = digit(text[k + 1]);
    const int lo = digit(text[k + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    k += 2;
  }
  return out;
}

/// The members of `s`, comma-separated.
inline void append_trace_indexes(std::string& out, const IndexSet& s) {
  bool first = true;
  for (std::size_t i : s) {
    if (!first) out += ',';
    first = false;
    out += std::to_string(i);
  }
}

/// "\t<depth>:<attrs>@<indexes>" for each group of `nested` and, depth-first, its own groups.
inline void append_trace_groups(std::string& out, const NestedGroups& nested, std::size_t depth) {
  for (const NestedSubGraph& n : nested) {
    out += '\t';
    out += std::to_string(depth);
    out += ':';
    for (std::size_t k = 0; k < n.attrs.size(); ++k) {
      if (k != 0) out += ';';
      out += trace_escape(n.attrs[k].first);
      out += '=';
      out += trace_escape(n.attrs[k].second);
    }
    out += '@';
    append_trace_indexes(out, n.sub_graph.inside());
    append_trace_groups(out, n.sub_graph.nested(), depth + 1);
  }
}

/// Reads one trace; see replay().
template <class G>
class TraceReader {
 public:
  explicit TraceReader(const DataflowGraph<G>& graph) : graph_(graph) {}

  /// The candidate of one candidate record (a line of a current trace, without its line feed).
  Result<Candidate> read_candidate(std::string_view record) {
    where_ = "candidate record: ";
    const std::vector<std::string_view> f = split_fields(record, '\t');
    if (f[0] != "candidate" || f.size() < 5) {
      return fail("expected 'candidate <target> <rule> <cost> <indexes> [<group>...]'");
    }
    if (std::optional<Error> error = candidate(f)) return std::move(*error);
    Candidate c = std::move(candidates_.back());
    candidates_.pop_back();
    return c;
  }

  Result<Partitioning> run(std::string_view trace) {
    std::vector<std::string_view> lines = split_fields(trace, '\n');
    if (lines[0] == "collage-trace/1") {
      version_ = 1;
    } else if (lines[0] == "collage-trace/2") {
      version_ = 2;
    } else if (lines[0] == "collage-trace/3") {
      version_ = 3;
    } else if (lines[0] != kTraceFormat) {
      return Error{ErrorCode::parse, "trace: line 1: expected '" + std::string(kTraceFormat) + "'"};
    }
    for (std::size_t n = 1; n < lines.size(); ++n) {
      if (lines[n].empty()) continue;
      where_ = "trace: line " + std::to_string(n + 1) + ": ";
      if (std::optional<Error> error = record(split_fields(lines[n], '\t'))) return std::move(*error);
    }
    where_ = "trace: ";
    if (std::optional<Error> error = tabulate()) return std::move(*error);
    auto problem = SearchProblem<G>::build_borrowed(graph_, candidates_, costs_);
    if (!problem.ok()) return Error{problem.error().code, "trace: " + problem.error().message};
    if (exact_gave_up_ && options_.algorithm == SearchAlgorithm::exact) {
      auto beam = beam_search(*problem, options_.beam);
      if (beam.ok()) beam->stats.algorithm = "beam (exact gave up)";
      return beam;
    }
    return run_search(*problem, options_, priority_);
  }

 private:
  /// A group as read: its depth, attributes and nodes.
  struct Group {
    std::size_t depth;
    Attrs attrs;
    IndexSet inside;
  };

  Error fail(const std::string& problem) const { return Error{ErrorCode::parse, where_ + problem}; }

  /// The searchers' options without their time budgets: a replay does what the trace says, on any
  /// machine.
  static PartitionerOptions without_time_budgets() {
    PartitionerOptions o;
    o.exact.max_seconds = 0;
    o.beam.max_seconds = 0;
    o.greedy.max_seconds = 0;
    return o;
  }

  std::optional<std::string> text(std::string_view field) const {
    if (version_ == 1) return std::string(field);
    return trace_unescape(field);
  }

  std::optional<Error> record(const std::vector<std::string_view>& f) {
    if (f[0] == "search") return search(f);
    if (f[0] == "graph" && version_ >= 4) {
      std::optional<std::size_t> nodes = f.size() == 3 ? collage::parse_index(f[1]) : std::nullopt;
      std::optional<std::uint64_t> hash = f.size() == 3 ? parse_fingerprint_hash(f[2]) : std::nullopt;
      if (!nodes || !hash) return fail("expected 'graph <nodes> <fingerprint: 16 hex digits>'");
      return check_same_graph(GraphFingerprint{*nodes, *hash}, graph_.fingerprint(), "trace: the trace");
    }
    if (f[0] == "priority") {
      priority_.clear();
      for (std::size_t k = 1; k < f.size(); ++k) {
        std::optional<std::string> target = text(f[k]);
        if (!target) return fail("bad escape in target '" + std::string(f[k]) + "'");
        priority_.push_back(std::move(*target));
      }
      return std::nullopt;
    }
    if (f[0] == "penalty") {
      if (f.size() != 3) return fail("expected 'penalty <target> <value>'");
      std::optional<std::string> target = text(f[1]);
      if (!target) return fail("bad escape in target '" + std::string(f[1]) + "'");
      std::optional<double> v = parse_non_negative(f[2]);
      if (!v) {
        return fail("penalty of target '" + *target + "' is '" + std::string(f[2]) +
                    "': it must be a finite number >= 0");
      }
      costs_.penalty[*target] = *v;
      return std::nullopt;
    }
    if (f[0] == "device" && version_ >= 3) {
      if (f.size() != 3) return fail("expected 'device <target> <device index>'");
      std::optional<std::string> target = text(f[1]);
      if (!target) return fail("bad escape in target '" + std::string(f[1]) + "'");
      std::optional<std::size_t> d = collage::parse_index(f[2], kMaxDevices - 1);
      if (!d) {
        return fail("device of target '" + *target + "' is '" + std::string(f[2]) + "': it must be 0 to " +
                    std::to_string(kMaxDevices - 1));
      }
      costs_.transfers.device[*target] = *d;
      return std::nullopt;
    }
    if (f[0] == "transfer" && version_ >= 3) return transfer(f);
    if (f[0] == "exact-gave-up" && version_ >= 4) {
      if (f.size() != 1) return fail("expected 'exact-gave-up'");
      exact_gave_up_ = true;
      return std::nullopt;
    }
    if (f[0] == "narrowed" && version_ >= 4) {
      std::optional<std::size_t> layer = f.size() == 2 ? collage::parse_index(f[1]) : std::nullopt;
      if (!layer) return fail("expected 'narrowed <layer>'");
      options_.beam.narrow_from = *layer;
      return std::nullopt;
    }
    if (f[0] == "host-io" && version_ >= 3) {
      auto flag = [](std::string_view v) { return v == "0" || v == "1"; };
      if (f.size() != 3 || !flag(f[1]) || !flag(f[2])) return fail("expected 'host-io <0|1> <0|1>'");
      costs_.transfers.inputs_start_on_host = f[1] == "1";
      costs_.transfers.outputs_end_on_host = f[2] == "1";
      return std::nullopt;
    }
    if (f[0] == "candidate") {
      if (f.size() < 5) return fail("expected 'candidate <target> <rule> <cost> <indexes> [<group>...]'");
      return candidate(f);
    }
    return fail("unrecognised record '" + std::string(f[0]) + "'");
  }

  std::optional<Error> search(const std::vector<std::string_view>& f) {
    if (f.size() != (version_ == 1 ? 3u : 6u)) {
      return fail(version_ == 1 ? "expected 'search <algorithm> <beam width>'"
                                : "expected 'search <algorithm> <beam width> <max states> <max memory MiB> "
                                  "<fall back to beam>'");
    }
    std::optional<SearchAlgorithm> algorithm = parse_search_algorithm(f[1]);
    if (!algorithm) return fail("unknown search algorithm '" + std::string(f[1]) + "'");
    options_.algorithm = *algorithm;
    std::optional<std::size_t> width = collage::parse_index(f[2]);
    // A width of 0 is what partition() accepts (and save_trace() writes) where the beam never runs.
    auto bad_width = [&] { return fail("beam width '" + std::string(f[2]) + "': it must be an integer >= 1"); };
    if (!width) return bad_width();
    options_.beam.width = *width;
    if (version_ == 1) return *width == 0 && check_options(options_) ? std::optional<Error>(bad_width()) : std::nullopt;
    std::optional<std::size_t> states = collage::parse_index(f[3]);
    if (!states) return fail("max states '" + std::string(f[3]) + "': it must be an integer >= 0");
    std::optional<std::size_t> memory = collage::parse_index(f[4]);
    if (!memory) return fail("max memory '" + std::string(f[4]) + "': it must be an integer >= 0");
    if (f[5] != "0" && f[5] != "1") return fail("fall back to beam '" + std::string(f[5]) + "': it must be 0 or 1");
    options_.exact.max_states = *states;
    options_.exact.max_memory_mib = *memory;
    options_.fall_back_to_beam = f[5] == "1";
    if (*width == 0 && check_options(options_)) return bad_width();
    return std::nullopt;
  }

  /// A transfer cost, kept until the device records are all read (see tabulate()).
  std::optional<Error> transfer(const std::vector<std::string_view>& f) {
    if (f.size() != 5) return fail("expected 'transfer <node index> <from device> <to device> <cost>'");
    const std::size_t last_node = graph_.size() == 0 ? 0 : graph_.size() - 1;
    std::optional<std::size_t> node = collage::parse_index(f[1], last_node);
    if (!node || graph_.size() == 0) return fail("transfer node '" + std::string(f[1]) + "' is not a node of the graph");
    std::optional<std::size_t> from = collage::parse_index(f[2], kMaxDevices - 1);
    std::optional<std::size_t> to = collage::parse_index(f[3], kMaxDevices - 1);
    if (!from || !to || *from == *to) {
      return fail("transfer devices '" + std::string(f[2]) + "' and '" + std::string(f[3]) +
                  "': they must be two different devices, 0 to " + std::to_string(kMaxDevices - 1));
    }
    std::optional<double> cost = parse_non_negative(f[4]);
    if (!cost) return fail("transfer cost '" + std::string(f[4]) + "': it must be a finite number >= 0");
    moves_.push_back(Move{*node, *from, *to, *cost, where_});
    return std::nullopt;
  }

  /// Builds the transfer table from the device and transfer records.
  std::optional<Error> tabulate() {
    TransferTable& table = costs_.transfers;
    if (!detail::places_off_host(table.device)) {
      if (!moves_.empty()) {
        return Error{ErrorCode::parse,
                     moves_[0].where + "a transfer record, but no device record places a target off the host"};
      }
      table = TransferTable{};
      return std::nullopt;
    }
    Result<std::size_t> devices = count_devices(table.device, "transfer device");  // each checked when read
    if (!devices.ok()) return devices.error();
    table.devices = *devices;
    const std::size_t d = table.devices;
    table.cost.assign(graph_.size() * d * d, 0.0);
    for (const Move& m : moves_) {
      if (m.from >= d || m.to >= d) {
        return Error{ErrorCode::parse, m.where + "transfer between devices " + std::to_string(m.from) + " and " +
                                           std::to_string(m.to) + ", but the device records name only 0 to " +
                                           std::to_string(d - 1)};
      }
      table.cost[(m.node * d + m.from) * d + m.to] = m.cost;
    }
    return std::nullopt;
  }

  /// The nodes `field` lists, or nothing when it is empty or not made of indexes of the graph.
  std::optional<IndexSet> indexes(std::string_view field) const {
    if (field.empty() || graph_.size() == 0) return std::nullopt;
    IndexSet s(graph_.size());
    for (std::string_view item : split_fields(field, ',')) {
      std::optional<std::size_t> i = collage::parse_index(item, graph_.size() - 1);
      if (!i) return std::nullopt;
      s.add(*i);
    }
    return s;
  }

  std::optional<Error> candidate(const std::vector<std::string_view>& f) {
    std::optional<std::string> target = text(f[1]);
    std::optional<std::string> rule = text(f[2]);
    if (!target || !rule) return fail("bad escape in the target or rule name");
    std::optional<Cost> cost = parse_cost(f[3]);
    if (!cost) return fail("cost '" + std::string(f[3]) + "': it must be a finite number >= 0, 'unknown' or 'invalid'");
    std::optional<IndexSet> inside = indexes(f[4]);
    if (!inside) {
      return fail("bad node indexes '" + std::string(f[4]) + "' (does the trace belong to this graph of " +
                  std::to_string(graph_.size()) + " nodes?)");
    }
    std::vector<Group> groups;
    if (std::optional<Error> error = read_groups(f, *inside, groups)) return error;
    std::size_t next = 0;
    std::vector<NestedSubGraph> nested = build(groups, next, 0);
    candidates_.push_back(Candidate{SubGraph(graph_, std::move(*inside), std::move(nested)), *target, *rule, *cost});
    return std::nullopt;
  }

  /// The groups in fields 5.. of a candidate record, in order, each checked against the group it is
  /// nested in (or the candidate): non-empty, inside it, disjoint from its siblings, and convex.
  std::optional<Error> read_groups(const std::vector<std::string_view>& f, const IndexSet& inside,
                                   std::vector<Group>& groups) const {
    std::vector<IndexSet> parents{inside};                 // parents[d]: what a group of depth d lies in
    std::vector<IndexSet> taken{IndexSet(graph_.size())};  // taken[d]: its earlier children's nodes
    for (std::size_t k = 5; k < f.size(); ++k) {
      auto fail_group = [&](const std::string& problem) {
        return fail("group " + std::to_string(k - 4) + " '" + std::string(f[k]) + "': " + problem);
      };
      std::string_view field = f[k];
      std::size_t depth = 0;
      if (version_ != 1) {
        const std::size_t colon = field.find(':');
        std::optional<std::size_t> d =
            colon == std::string_view::npos ? std::nullopt : collage::parse_index(field.substr(0, colon));
        if (!d) return fail_group("expected '<depth>:<attributes>@<indexes>'");
        depth = *d;
        field.remove_prefix(colon + 1);
      }
      if (depth >= parents.size()) {
        return fail_group("depth " + std::to_string(depth) + " without an enclosing group of depth " +
                          std::to_string(depth - 1) + " before it");
      }
      if (depth >= kMaxTraceGroupDepth) {
        return fail_group("groups nest more than " + std::to_string(kMaxTraceGroupDepth) + " levels deep");
      }
      const std::size_t at = field.find('@');
      if (at == std::string_view::npos) return fail_group("expected '<attributes>@<indexes>'");
      Group group{depth, {}, IndexSet()};
      if (at != 0) {
        for (std::string_view kv : split_fields(field.substr(0, at), ';')) {
          const std::size_t eq = kv.find('=');
          std::optional<std::string> key = eq == std::string_view::npos ? std::nullopt : text(kv.substr(0, eq));
          std::optional<std::string> value = key ? text(kv.substr(eq + 1)) : std::nullopt;
          if (!value) return fail_group("bad attribute '" + std::string(kv) + "'");
          group.attrs.emplace_back(std::move(*key), std::move(*value));
        }
      }
      std::optional<IndexSet> members = indexes(field.substr(at + 1));
      if (!members) return fail_group("bad node indexes");
      parents.resize(depth + 1);
      taken.resize(depth + 1);
      const char* within = depth == 0 ? "its candidate" : "the group it is nested in";
      if (!members->is_subset_of(parents[depth])) return fail_group("not inside " + std::string(within));
      if (members->intersects(taken[depth])) return fail_group("overlaps another group in " + std::string(within));
      if (!collage::is_convex(graph_, *members)) return fail_group("not convex");
      taken[depth] |= *members;
      parents.push_back(*members);
      taken.push_back(IndexSet(graph_.size()));
      group.inside = std::move(*members);
      groups.push_back(std::move(group));
    }
    return std::nullopt;
  }

  /// The groups of depth `depth` from groups[next] on (until a shallower one), with their own.
  std::vector<NestedSubGraph> build(std::vector<Group>& groups, std::size_t& next, std::size_t depth) const {
    std::vector<NestedSubGraph> out;
    while (next < groups.size() && groups[next].depth == depth) {
      Group& g = groups[next++];
      std::vector<NestedSubGraph> inner = build(groups, next, depth + 1);
      out.push_back(NestedSubGraph{SubGraph(graph_, std::move(g.inside), std::move(inner)), std::move(g.attrs)});
    }
    return out;
  }

  const DataflowGraph<G>& graph_;
  int version_ = 4;
  std::string where_;
  /// A transfer record as read.
  struct Move {
    std::size_t node, from, to;
    double cost;
    std::string where;
  };

  PartitionerOptions options_ = without_time_budgets();
  bool exact_gave_up_ = false;
  SearchCosts costs_;
  std::vector<Move> moves_;
  std::vector<std::string> priority_;
  std::vector<Candidate> candidates_;
};

}  // namespace detail

/// The trace's candidate record of `c` (without a line feed): its target, rule, cost (unknown when
/// it has none), inside nodes and nested groups at every depth. With read_trace_candidate(), how a
/// candidate crosses a process boundary (e.g. to be measured on another machine).
inline std::string trace_candidate_record(const Candidate& c) {
  std::string out = "candidate\t" + detail::trace_escape(c.target) + '\t' + detail::trace_escape(c.rule_name) + '\t';
  out += detail::format_cost(c.cost);
  out += '\t';
  detail::append_trace_indexes(out, c.sub_graph.inside());
  detail::append_trace_groups(out, c.sub_graph.nested(), 0);
  return out;
}

/// `result` as a trace (see the format above): its search settings, target priority, penalties,
/// transfer table, and every candidate with its oracle cost and its nested groups at every depth. Deterministic:
/// the same result gives the same bytes, under any locale.
inline std::string save_trace(const PartitionResult& result) {
  std::string out(kTraceFormat);
  const GraphFingerprint& graph = result.partitioning.graph;
  out += "\ngraph\t" + std::to_string(graph.nodes) + '\t' + graph.hash_text();
  out += "\nsearch\t";
  out += to_string(result.algorithm);
  out += '\t' + std::to_string(result.beam.width) + '\t' + std::to_string(result.exact.max_states) + '\t' +
         std::to_string(result.exact.max_memory_mib) + '\t' + (result.fall_back_to_beam ? "1" : "0");
  if (result.exact_gave_up) out += "\nexact-gave-up";
  if (result.partitioning.stats.narrowed_at != npos) {
    out += "\nnarrowed\t" + std::to_string(result.partitioning.stats.narrowed_at);
  }
  out += "\npriority";
  for (const std::string& t : result.priority) out += '\t' + detail::trace_escape(t);
  out += '\n';
  for (const auto& [target, value] : result.penalties) {
    out += "penalty\t" + detail::trace_escape(target) + '\t' + format_double(value) + '\n';
  }
  const TransferTable& transfers = result.transfers;
  if (transfers.enabled()) {
    for (const auto& [target, d] : transfers.device) {
      out += "device\t" + detail::trace_escape(target) + '\t' + std::to_string(d) + '\n';
    }
    if (!transfers.inputs_start_on_host || !transfers.outputs_end_on_host) {
      out += std::string("host-io\t") + (transfers.inputs_start_on_host ? "1" : "0") + '\t' +
             (transfers.outputs_end_on_host ? "1" : "0") + '\n';
    }
    const std::size_t d = transfers.devices;
    for (std::size_t k = 0; k < transfers.cost.size(); ++k) {
      if (transfers.cost[k] == 0) continue;
      out += "transfer\t" + std::to_string(k / (d * d)) + '\t' + std::to_string(k / d % d) + '\t' +
             std::to_string(k % d) + '\t' + format_double(transfers.cost[k]) + '\n';
    }
  }
  for (const Candidate& c : result.candidates) {
    out += trace_candidate_record(c);
    out += '\n';
  }
  return out;
}

/// The candidate over `graph` that trace_candidate_record() wrote as `record`, equal to the one
/// written (its cost as written: an unknown cost reads back as Cost::unknown()). Fails with
/// ErrorCode::parse, naming the field, as replay() does for a candidate line.
template <class G>
Result<Candidate> read_trace_candidate(const DataflowGraph<G>& graph, std::string_view record) {
  return detail::TraceReader<G>(graph).read_candidate(record);
}

/// Repeats the search saved in `trace` (see save_trace) over `graph` without an oracle: the same
/// partitioning, parts and nested groups as the run that was saved. Fails with ErrorCode::parse,
/// naming the line and the field, on a malformed trace or one that does not fit the graph: an
/// index that is not a node of the graph, a cost or penalty that is negative, NaN or not a number,
/// a beam width of 0, a nested group outside the candidate or group it is nested in, overlapping
/// a sibling, or not convex; with ErrorCode::wrong_graph when the trace's graph record names
/// another graph; and as partition() does when no usable candidate covers some node.
template <class G>
Result<Partitioning> replay(const DataflowGraph<G>& graph, std::string_view trace) {
  return detail::TraceReader<G>(graph).run(trace);
}

}  // namespace collage
