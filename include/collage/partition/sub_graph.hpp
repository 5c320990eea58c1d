#pragma once

/// \file
/// SubGraph: a set of nodes of a DataflowGraph with its boundary, depth, kind and nested groups.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/support/index_set.hpp"

namespace collage {

/// Attributes of a nested group, e.g. {"Composite", "cutlass.dense_bias"}, kept sorted by key.
using Attrs = std::vector<std::pair<std::string, std::string>>;

class SubGraph;

/// A group inside a sub-graph that carries attributes (a composite function, a primitive
/// partition and its compiler).
struct NestedSubGraph;

/// A set of nodes ("inside") of one DataflowGraph, with cached boundary sets:
///  - entry:  inside nodes with a (non-inlinable) input outside;
///  - exit:   inside nodes with an output outside, or external (result) nodes;
///  - input:  outside, non-inlinable nodes that feed an inside node;
///  - output: outside nodes fed by an inside node.
/// Inlinable nodes (op references, scalar constants) are copied into a partition rather than
/// passed in, so they are never inputs. Also cached: the depth (nodes on the longest path inside:
/// a singleton is 1, a chain of k nodes is k), the kind (the largest OpKind of inside nodes that
/// execute: inlinable nodes and constants do not count, tuples and projections count as
/// injective), a label, and nested groups.
///
/// A SubGraph does not point at its graph; operations that need the graph take it as an argument,
/// which must be the graph the sub-graph was made over.
class SubGraph {
 public:
  SubGraph() = default;

  /// Computes the cached sets of `inside` over `graph`. An empty label is replaced by the op names
  /// of the inside nodes that need a kernel (of all inside nodes when none does), joined with '+'. (Overloads rather than default
  /// arguments: NestedSubGraph is incomplete here.)
  template <class G>
  SubGraph(const DataflowGraph<G>& graph, IndexSet inside, std::string label,
           std::vector<NestedSubGraph> nested);
  template <class G>
  SubGraph(const DataflowGraph<G>& graph, IndexSet inside, std::string label = {});

  const IndexSet& inside() const { return inside_; }
  const IndexSet& entry() const { return entry_; }
  const IndexSet& exit() const { return exit_; }
  const IndexSet& input() const { return input_; }
  const IndexSet& output() const { return output_; }
  std::size_t depth() const { return depth_; }
  OpKind kind() const { return kind_; }
  const std::string& label() const { return label_; }
  const std::vector<NestedSubGraph>& nested() const { return nested_; }

  bool empty() const { return inside_.empty(); }
  /// Number of inside nodes.
  std::size_t size() const { return inside_.count(); }
  /// The smallest inside index (npos when empty): where the search indexes candidates.
  std::size_t first_inside() const { return inside_.first_inside(); }
  /// Number of inside nodes that need a kernel.
  template <class G>
  std::size_t compute_size(const DataflowGraph<G>& graph) const;

  /// Why this sub-graph is or is not valid under `config` (see Validity).
  template <class G>
  Validity check(const DataflowGraph<G>& graph, const SubGraphConfig& config) const;
  template <class G>
  bool is_valid(const DataflowGraph<G>& graph, const SubGraphConfig& config) const {
    return check(graph, config) == Validity::valid;
  }

  /// Some output of this sub-graph is an entry of `that` (this feeds that).
  bool feeds_into(const SubGraph& that) const { return output_.intersects(that.entry_); }

  /// Disjoint, one feeds the other, and their union is convex: the pair could become one kernel.
  template <class G>
  bool are_touching(const DataflowGraph<G>& graph, const SubGraph& that) const {
    return inside_.is_disjoint(that.inside_) && (feeds_into(that) || that.feeds_into(*this)) &&
           graph.is_convex(inside_ | that.inside_);
  }

  /// The union of two disjoint sub-graphs, keeping both sets of nested groups.
  template <class G>
  SubGraph disjoint_union(const DataflowGraph<G>& graph, const SubGraph& that) const;

  /// The same inside set, wrapped whole in one nested group carrying `attrs`.
  template <class G>
  SubGraph with_attrs(const DataflowGraph<G>& graph, Attrs attrs) const;

  /// This sub-graph carried into `new_graph` through `index_map` (old index -> new index).
  template <class H>
  SubGraph subst(const DataflowGraph<H>& new_graph, const std::vector<std::size_t>& index_map) const;

  /// "label{0,2..4}" plus nested groups, e.g. "dense+add{3,4}[Composite=d:dense+add{3,4}]".
  std::string to_string() const;

  /// Identity: the inside set and the nested groups (with their attributes).
  friend bool operator==(const SubGraph& a, const SubGraph& b);
  friend bool operator!=(const SubGraph& a, const SubGraph& b) { return !(a == b); }
  /// A total order consistent with ==: by first inside index, then inside set, then nesting.
  friend bool operator<(const SubGraph& a, const SubGraph& b);
  std::size_t hash() const;

 private:
  IndexSet inside_;
  IndexSet entry_;
  IndexSet exit_;
  IndexSet input_;
  IndexSet output_;
  std::size_t depth_ = 0;
  OpKind kind_ = OpKind::elemwise;
  std::string label_;
  std::vector<NestedSubGraph> nested_;
};

struct NestedSubGraph {
  SubGraph sub_graph;
  Attrs attrs;

  /// The value of attribute `key`, or "" when absent.
  std::string_view attr(std::string_view key) const {
    for (const auto& [k, v] : attrs) {
      if (k == key) return v;
    }
    return {};
  }
  friend bool operator==(const NestedSubGraph& a, const NestedSubGraph& b) {
    return a.attrs == b.attrs && a.sub_graph == b.sub_graph;
  }
  friend bool operator<(const NestedSubGraph& a, const NestedSubGraph& b) {
    if (a.sub_graph != b.sub_graph) return a.sub_graph < b.sub_graph;
    return a.attrs < b.attrs;
  }
};

// ---------------------------------------------------------------------------------------------
// Implementation.

template <class G>
SubGraph::SubGraph(const DataflowGraph<G>& graph, IndexSet inside, std::string label,
                   std::vector<NestedSubGraph> nested)
    : inside_(std::move(inside)),
      entry_(graph.size()),
      exit_(graph.size()),
      input_(graph.size()),
      output_(graph.size()),
      label_(std::move(label)),
      nested_(std::move(nested)) {
  std::sort(nested_.begin(), nested_.end());
  // depth_of[k]: nodes on the longest inside path ending at the k-th inside node.
  std::vector<std::size_t> depth_of;
  std::vector<std::size_t> inside_order;
  bool any_kind = false;
  std::string derived_label;
  for (std::size_t i : inside_) {
    std::size_t d = 1;
    for (std::size_t j : graph.inputs(i)) {
      if (inside_.contains(j)) {
        auto pos = std::lower_bound(inside_order.begin(), inside_order.end(), j) - inside_order.begin();
        d = std::max(d, depth_of[static_cast<std::size_t>(pos)] + 1);
      } else if (!graph.is_inlinable(j)) {
        entry_.add(i);
        input_.add(j);
      }
    }
    inside_order.push_back(i);
    depth_of.push_back(d);
    depth_ = std::max(depth_, d);
    if (graph.is_external(i)) exit_.add(i);
    for (std::size_t o : graph.outputs(i)) {
      if (!inside_.contains(o)) {
        exit_.add(i);
        output_.add(o);
      }
    }
    if (!graph.is_inlinable(i) && !graph.is_constant(i)) {
      // As in TVM's Collage, building or projecting a tuple counts as injective work.
      const OpKind k = (graph.is_tuple(i) || graph.is_projection(i)) ? OpKind::injective : graph.kind(i);
      kind_ = any_kind ? std::max(kind_, k) : k;
      any_kind = true;
    }
    if (label_.empty() && graph.needs_kernel(i)) {
      if (!derived_label.empty()) derived_label += '+';
      derived_label += graph.op_name(i);
    }
  }
  if (label_.empty() && derived_label.empty()) {  // no kernel inside: name what is there
    for (std::size_t i : inside_) {
      if (!derived_label.empty()) derived_label += '+';
      derived_label += graph.op_name(i);
    }
  }
  if (label_.empty()) label_ = std::move(derived_label);
}

template <class G>
SubGraph::SubGraph(const DataflowGraph<G>& graph, IndexSet inside, std::string label)
    : SubGraph(graph, std::move(inside), std::move(label), std::vector<NestedSubGraph>{}) {}

template <class G>
std::size_t SubGraph::compute_size(const DataflowGraph<G>& graph) const {
  std::size_t n = 0;
  for (std::size_t i : inside_) n += graph.needs_kernel(i) ? 1 : 0;
  return n;
}

template <class G>
Validity SubGraph::check(const DataflowGraph<G>& graph, const SubGraphConfig& config) const {
  if (inside_.empty()) return Validity::empty;
  if (config.max_exits != 0 && exit_.count() > config.max_exits) return Validity::too_many_exits;
  if (!config.allow_taps) {
    for (std::size_t e : exit_) {
      for (std::size_t o : graph.outputs(e)) {
        if (inside_.contains(o)) return Validity::tap;
      }
    }
  }
  if (config.max_depth != 0 && depth_ > config.max_depth) return Validity::too_deep;
  const std::size_t scope = graph.scope(inside_.first_inside());
  for (std::size_t i : inside_) {
    if (graph.scope(i) != scope) return Validity::multiple_scopes;
  }
  IndexSet seen(graph.size());
  for (const NestedSubGraph& n : nested_) {
    const IndexSet& sub = n.sub_graph.inside();
    if (sub.empty() || !sub.is_subset_of(inside_)) return Validity::nested_not_inside;
    if (sub.intersects(seen)) return Validity::nested_overlap;
    seen |= sub;
    if (n.sub_graph.check(graph, SubGraphConfig{}) != Validity::valid) return Validity::nested_invalid;
  }
  if (!graph.is_convex(inside_)) return Validity::not_convex;
  return Validity::valid;
}

template <class G>
SubGraph SubGraph::disjoint_union(const DataflowGraph<G>& graph, const SubGraph& that) const {
  std::vector<NestedSubGraph> nested = nested_;
  nested.insert(nested.end(), that.nested_.begin(), that.nested_.end());
  return SubGraph(graph, inside_ | that.inside_, {}, std::move(nested));
}

template <class G>
SubGraph SubGraph::with_attrs(const DataflowGraph<G>& graph, Attrs attrs) const {
  std::sort(attrs.begin(), attrs.end());
  std::vector<NestedSubGraph> nested;
  nested.push_back(NestedSubGraph{*this, std::move(attrs)});
  return SubGraph(graph, inside_, label_, std::move(nested));
}

template <class H>
SubGraph SubGraph::subst(const DataflowGraph<H>& new_graph, const std::vector<std::size_t>& index_map) const {
  std::vector<NestedSubGraph> nested;
  nested.reserve(nested_.size());
  for (const NestedSubGraph& n : nested_) nested.push_back(NestedSubGraph{n.sub_graph.subst(new_graph, index_map), n.attrs});
  return SubGraph(new_graph, inside_.subst(new_graph.size(), index_map), label_, std::move(nested));
}

inline std::string SubGraph::to_string() const {
  std::string out = label_ + inside_.to_string();
  for (const NestedSubGraph& n : nested_) {
    out += '[';
    for (std::size_t k = 0; k < n.attrs.size(); ++k) {
      if (k != 0) out += ',';
      out += n.attrs[k].first + "=" + n.attrs[k].second;
    }
    out += ':';
    out += n.sub_graph.to_string();
    out += ']';
  }
  return out;
}

inline bool operator==(const SubGraph& a, const SubGraph& b) { return a.inside_ == b.inside_ && a.nested_ == b.nested_; }

inline bool operator<(const SubGraph& a, const SubGraph& b) {
  const std::size_t fa = a.first_inside();
  const std::size_t fb = b.first_inside();
  if (fa != fb) return fa < fb;
  if (a.inside_ != b.inside_) return a.inside_ < b.inside_;
  return std::lexicographical_compare(a.nested_.begin(), a.nested_.end(), b.nested_.begin(), b.nested_.end());
}

inline std::size_t SubGraph::hash() const {
  std::size_t h = inside_.hash();
  for (const NestedSubGraph& n : nested_) {
    h = h * 31 + n.sub_graph.hash();
    for (const auto& [k, v] : n.attrs) h = h * 31 + std::hash<std::string>{}(k) * 7 + std::hash<std::string>{}(v);
  }
  return h;
}

}  // namespace collage

namespace std {
template <>
struct hash<collage::SubGraph> {
  std::size_t operator()(const collage::SubGraph& s) const noexcept { return s.hash(); }
};
}  // namespace std
