#pragma once

/// \file
/// check_partition: validates a collage-partition/1 document against its graph (every compute
/// node in exactly one partition, each partition a valid sub-graph, the partitions acyclic) and
/// recomputes its cost, from a spec when one is given.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"
#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/fingerprint.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/partition/quotient.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"
#include "json_graph.hpp"
#include "json_util.hpp"
#include "outputs.hpp"
#include "spec_reader.hpp"

namespace collage::cli {

/// What check_partition found for a valid partitioning.
struct CheckSummary {
  std::size_t partitions = 0;
  std::size_t host = 0;
  /// The total cost: recomputed with the spec when one was given, else the sum of the recorded
  /// partition costs.
  Cost total;
  bool recomputed = false;
};

namespace detail {

/// Deepest nesting of groups accepted in a partition file.
inline constexpr std::size_t kMaxGroupDepth = 64;

/// Two recorded costs that agree up to rounding.
inline bool same_cost(Cost a, Cost b) {
  if (!a.is_known() || !b.is_known()) return a == b;
  return std::fabs(a.raw() - b.raw()) <= 1e-9 * std::max({1.0, std::fabs(a.raw()), std::fabs(b.raw())});
}

class PartitionChecker {
 public:
  PartitionChecker(const DataflowGraph<JsonGraph>& graph, const std::string& file, const ToolSpec<JsonGraph>* spec)
      : graph_(graph), in_(file), spec_(spec) {}

  Result<CheckSummary> run(const Json& doc) {
    const JsonPath root;
    if (!in_.expect_format(doc, kPartitionFormat)) return in_.error();
    if (!same_graph(doc, root)) return in_.error();
    const Json* parts = in_.member(doc, "partitions", root, true);
    if (parts == nullptr) return in_.error();
    if (!parts->is_array()) return fail_at(root / "partitions", "expected an array of partitions");

    const std::size_t n = graph_.size();
    owner_.assign(n, npos);
    std::vector<Candidate> candidates;
    std::vector<std::optional<Cost>> recorded;
    Cost transfers = Cost::zero();
    for (std::size_t k = 0; k < parts->size(); ++k) {
      const JsonPath path = root / "partitions" / k;
      std::optional<Candidate> c = part((*parts)[k], k, path);
      if (!c) return in_.error();
      std::optional<Cost> cost = recorded_cost((*parts)[k], path);
      if (in_.failed()) return in_.error();
      if (const Json* moved = in_.member((*parts)[k], "transfer_cost", path, false)) {
        std::optional<double> t = in_.cost(*moved, path / "transfer_cost");
        if (!t) return in_.error();
        transfers += Cost::value(*t);
      }
      candidates.push_back(std::move(*c));
      recorded.push_back(cost);
    }

    for (std::size_t i = 0; i < n; ++i) {
      if (graph_.needs_kernel(i) && owner_[i] == npos) {
        return fail_at(root / "partitions", "node " + node_name(i) + " needs a kernel but is in no partition");
      }
    }
    if (!host(doc)) return in_.error();
    if (!acyclic(candidates)) return in_.error();

    CheckSummary summary;
    summary.partitions = candidates.size();
    for (std::size_t i = 0; i < n; ++i) summary.host += owner_[i] == npos ? 1 : 0;
    summary.recomputed = spec_ != nullptr;
    summary.total = Cost::zero();
    std::unique_ptr<CostOracle<JsonGraph>> oracle = spec_ != nullptr ? spec_->make_oracle() : nullptr;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const JsonPath path = root / "partitions" / k;
      Cost cost = recorded[k].value_or(Cost::unknown());
      if (spec_ != nullptr) {
        std::optional<Cost> fresh = recompute(*oracle, candidates[k], path);
        if (!fresh) return in_.error();
        if (recorded[k] && !same_cost(*recorded[k], *fresh)) {
          return fail_at(path / "cost", "recorded cost " + recorded[k]->to_string() + " but " + spec_->file +
                                            " gives " + fresh->to_string());
        }
        cost = *fresh;
      }
      summary.total += cost;
    }
    summary.total += transfers;
    if (const Json* total = in_.member(doc, "total_cost", root, false)) {
      std::optional<Cost> t = cost_value(*total, root / "total_cost");
      if (!t) return in_.error();
      if (!same_cost(*t, summary.total)) {
        return fail_at(root / "total_cost", "recorded total " + t->to_string() + " but the partitions add up to " +
                                                summary.total.to_string());
      }
    }
    return summary;
  }

 private:
  /// Checks the "graph" key, when there is one: the partitioning must have been made over this
  /// graph (its node count and fingerprint).
  bool same_graph(const Json& doc, const JsonPath& root) {
    const Json* g = in_.member(doc, "graph", root, false);
    if (g == nullptr) return true;
    const JsonPath path = root / "graph";
    if (!in_.expect_object(*g, path, {"nodes", "fingerprint"})) return false;
    const Json* nodes = in_.member(*g, "nodes", path, true);
    const Json* print = nodes != nullptr ? in_.member(*g, "fingerprint", path, true) : nullptr;
    if (print == nullptr) return false;
    std::optional<std::size_t> n = in_.size(*nodes, path / "nodes");
    std::optional<std::string> text = n ? in_.string(*print, path / "fingerprint") : std::nullopt;
    if (!text) return false;
    std::optional<std::uint64_t> hash = parse_fingerprint_hash(*text);
    if (!hash) return in_.fail(path / "fingerprint", "expected 16 lower-case hex digits");
    if (auto error = check_same_graph(GraphFingerprint{*n, *hash}, graph_.fingerprint(), "the partitioning")) {
      return in_.fail(path, error->message);
    }
    return true;
  }

  Error fail_at(const JsonPath& path, const std::string& problem) {
    in_.fail(path, problem);
    return in_.error();
  }

  std::string node_name(std::size_t i) const { return quote_text(one_line(graph_.label(i))); }

  /// The graph index of the node an id names (it must be reached from the outputs).
  std::optional<std::size_t> node(const Json& id, const JsonPath& path) {
    std::optional<std::pair<std::string, bool>> text = read_id(in_, id, path);
    if (!text) return std::nullopt;
    const std::size_t position = graph_.ir().find(text->first);
    if (position == npos) {
      in_.fail(path, "no node has id " + quote_text(one_line(text->first)) + " in " + graph_.ir().file);
      return std::nullopt;
    }
    const std::size_t i = graph_.index_of(position);
    if (i == npos) {
      in_.fail(path, "node " + quote_text(one_line(text->first)) + " is not reached from the graph's outputs");
      return std::nullopt;
    }
    return i;
  }

  /// The set of nodes an `inside` array names (non-empty, no repeats).
  std::optional<IndexSet> inside(const Json& j, const JsonPath& path) {
    const Json* list = in_.member(j, "inside", path, true);
    if (list == nullptr) return std::nullopt;
    if (!list->is_array() || list->empty()) {
      in_.fail(path / "inside", "expected a non-empty array of node ids");
      return std::nullopt;
    }
    IndexSet set(graph_.size());
    for (std::size_t k = 0; k < list->size(); ++k) {
      std::optional<std::size_t> i = node((*list)[k], path / "inside" / k);
      if (!i) return std::nullopt;
      if (set.contains(*i)) {
        in_.fail(path / "inside" / k, "node " + node_name(*i) + " is listed twice");
        return std::nullopt;
      }
      set.add(*i);
    }
    return set;
  }

  /// The nested groups of `j` (recursively).
  std::optional<std::vector<NestedSubGraph>> groups(const Json& j, const JsonPath& path, std::size_t depth) {
    std::vector<NestedSubGraph> out;
    const Json* list = in_.member(j, "nested", path, false);
    if (list == nullptr) return out;
    if (depth >= kMaxGroupDepth) {
      in_.fail(path / "nested", "groups nest more than " + std::to_string(kMaxGroupDepth) + " levels deep");
      return std::nullopt;
    }
    if (!list->is_array()) {
      in_.fail(path / "nested", "expected an array of groups");
      return std::nullopt;
    }
    for (std::size_t k = 0; k < list->size(); ++k) {
      const JsonPath at = path / "nested" / k;
      const Json& g = (*list)[k];
      if (!in_.expect_object(g, at, {"attrs", "inside", "nested"})) return std::nullopt;
      Attrs attrs;
      if (const Json* a = in_.member(g, "attrs", at, false)) {
        if (!in_.expect_object(*a, at / "attrs")) return std::nullopt;
        for (auto it = a->begin(); it != a->end(); ++it) {
          std::optional<std::string> v = in_.string(it.value(), at / "attrs" / it.key());
          if (!v) return std::nullopt;
          attrs.emplace_back(it.key(), std::move(*v));
        }
      }
      std::optional<IndexSet> members = inside(g, at);
      if (!members) return std::nullopt;
      std::optional<std::vector<NestedSubGraph>> sub = groups(g, at, depth + 1);
      if (!sub) return std::nullopt;
      out.push_back(NestedSubGraph{SubGraph(graph_, std::move(*members), std::move(*sub)), std::move(attrs)});
    }
    return out;
  }

  std::optional<Candidate> part(const Json& j, std::size_t k, const JsonPath& path) {
    if (!in_.expect_object(j, path)) return std::nullopt;
    const Json* target = in_.member(j, "target", path, true);
    if (target == nullptr) return std::nullopt;
    std::optional<std::string> name = in_.string(*target, path / "target");
    if (!name) return std::nullopt;
    std::string rule_name;
    if (const Json* r = in_.member(j, "rule", path, false)) {
      std::optional<std::string> text = in_.string(*r, path / "rule");
      if (!text) return std::nullopt;
      rule_name = std::move(*text);
    }
    std::optional<IndexSet> nodes = inside(j, path);
    if (!nodes) return std::nullopt;
    for (std::size_t i : *nodes) {
      if (owner_[i] != npos) {
        in_.fail(path / "inside", "node " + node_name(i) + " is also in partition " + std::to_string(owner_[i]));
        return std::nullopt;
      }
      owner_[i] = k;
    }
    std::optional<std::vector<NestedSubGraph>> nested = groups(j, path, 0);
    if (!nested) return std::nullopt;
    Candidate c{SubGraph(graph_, std::move(*nodes), std::move(*nested)), std::move(*name), std::move(rule_name)};
    if (const char* why = structural_problem(c.sub_graph)) {
      in_.fail(path, "partition " + std::to_string(k) + " (" + one_line(c.target) + ") is not a valid sub-graph: " + why);
      return std::nullopt;
    }
    return c;
  }

  /// Why `s` cannot be one partition (nullptr when it can): it must be convex, and so must each
  /// nested group, which must lie inside it and be disjoint from its siblings. Exits and taps are
  /// the business of the target's rule (checked against the spec's candidates when one is given);
  /// SubGraph::check would also apply its default no-tap config to the nested groups.
  const char* structural_problem(const SubGraph& s) const {
    if (s.empty()) return "it is empty";
    for (std::size_t i : s.inside()) {
      if (graph_.scope(i) != graph_.scope(s.first_inside())) return to_string(Validity::multiple_scopes).data();
    }
    if (!collage::is_convex(graph_, s.inside())) return to_string(Validity::not_convex).data();
    IndexSet seen(graph_.size());
    for (const NestedSubGraph& n : s.nested()) {
      const IndexSet& sub = n.sub_graph.inside();
      if (sub.empty() || !sub.is_subset_of(s.inside())) return to_string(Validity::nested_not_inside).data();
      if (sub.intersects(seen)) return to_string(Validity::nested_overlap).data();
      seen |= sub;
      if (structural_problem(n.sub_graph) != nullptr) return to_string(Validity::nested_invalid).data();
    }
    return nullptr;
  }

  std::optional<Cost> cost_value(const Json& j, const JsonPath& path) {
    if (j.is_string()) {
      const std::string& s = j.get_ref<const std::string&>();
      if (s == "unknown") return Cost::unknown();
      if (s == "invalid") return Cost::invalid();
    }
    if (!j.is_number()) {
      in_.fail(path, "expected a cost (a number, \"unknown\" or \"invalid\"), found " + JsonReader::describe(j));
      return std::nullopt;
    }
    return in_.cost(j, path).has_value() ? std::optional<Cost>(Cost::value(j.get<double>())) : std::nullopt;
  }

  std::optional<Cost> recorded_cost(const Json& j, const JsonPath& path) {
    const Json* c = in_.member(j, "cost", path, false);
    if (c == nullptr) return std::nullopt;
    return cost_value(*c, path / "cost");
  }

  /// When "host" is given it must list exactly the nodes in no partition.
  bool host(const Json& doc) {
    const JsonPath root;
    const Json* list = in_.member(doc, "host", root, false);
    if (list == nullptr) return true;
    if (!list->is_array()) return in_.fail(root / "host", "expected an array of node ids");
    IndexSet seen(graph_.size());
    for (std::size_t k = 0; k < list->size(); ++k) {
      std::optional<std::size_t> i = node((*list)[k], root / "host" / k);
      if (!i) return false;
      if (owner_[*i] != npos) {
        return in_.fail(root / "host" / k,
                        "node " + node_name(*i) + " is in partition " + std::to_string(owner_[*i]) + ", not the host");
      }
      if (seen.contains(*i)) return in_.fail(root / "host" / k, "node " + node_name(*i) + " is listed twice");
      seen.add(*i);
    }
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      if (owner_[i] == npos && !seen.contains(i)) {
        return in_.fail(root / "host", "node " + node_name(i) + " is in no partition and not in the host list");
      }
    }
    return true;
  }

  /// The partitions, with each node outside them as a group of its own, must form an acyclic
  /// graph.
  bool acyclic(const std::vector<Candidate>& parts) {
    const QuotientOrder order = quotient_order(graph_, owner_, parts.size());
    if (order.acyclic()) return true;
    const std::size_t p = parts.size();
    auto name = [&](std::size_t q) {
      if (q < p) return "partition " + std::to_string(q) + " (" + one_line(parts[q].target) + ")";
      return "node " + node_name(q - p);
    };
    std::string text;
    for (std::size_t q : order.cycle) text += name(q) + " -> ";
    text += name(order.cycle.front());
    return in_.fail(JsonPath() / "partitions", "the partitions form a cycle: " + text);
  }

  /// The cost of `c` under the spec (oracle + penalty); it must be a candidate of its target.
  std::optional<Cost> recompute(CostOracle<JsonGraph>& oracle, const Candidate& c, const JsonPath& path) {
    const PartitionSpec<JsonGraph>* target = spec_->find(c.target);
    if (target == nullptr) {
      in_.fail(path / "target", "no target " + quote_text(one_line(c.target)) + " in " + spec_->file);
      return std::nullopt;
    }
    auto it = candidate_sets_.find(c.target);
    if (it == candidate_sets_.end()) {
      std::unordered_set<SubGraph> set;
      for (Candidate& found : target->all_candidates(graph_)) set.insert(std::move(found.sub_graph));
      it = candidate_sets_.emplace(c.target, std::move(set)).first;
    }
    if (it->second.count(c.sub_graph) == 0) {
      in_.fail(path, "not a candidate of target " + quote_text(one_line(c.target)) + " under " + spec_->file);
      return std::nullopt;
    }
    SafeEstimate e = safe_estimate(oracle, graph_, c);
    if (e.failed()) {
      in_.fail(path, one_line(e.error));
      return std::nullopt;
    }
    if (e.cost.is_invalid()) {
      in_.fail(path, "target " + quote_text(one_line(c.target)) + " cannot run this partition (its cost is invalid)");
      return std::nullopt;
    }
    Cost cost = e.cost;
    if (target->penalty != 0) cost += Cost::value(target->penalty);
    return cost;
  }

  const DataflowGraph<JsonGraph>& graph_;
  JsonReader in_;
  const ToolSpec<JsonGraph>* spec_;
  std::vector<std::size_t> owner_;
  std::map<std::string, std::unordered_set<SubGraph>> candidate_sets_;
};

}  // namespace detail

/// Checks the collage-partition/1 document `doc` (from `file`) against `graph`: every node that
/// needs a kernel is in exactly one partition, every partition is a valid sub-graph (convex,
/// nested groups inside and disjoint), the host list (when given) holds exactly the other nodes,
/// and the partitions form an acyclic graph. With `spec`, each partition must also be a
/// candidate of its target and its cost is recomputed; recorded costs must agree.
inline Result<CheckSummary> check_partition(const DataflowGraph<JsonGraph>& graph, const Json& doc,
                                            const std::string& file, const ToolSpec<JsonGraph>* spec) {
  try {
    return detail::PartitionChecker(graph, file, spec).run(doc);
  } catch (const std::exception& e) {
    return located_error(file, "", std::string("cannot check the partition: ") + e.what());
  }
}

}  // namespace collage::cli
