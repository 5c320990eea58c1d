#pragma once

/// \file
/// SubGraph: a set of nodes of a DataflowGraph with its boundary, depth, kind and nested groups.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/partition/convexity.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/support/index_set.hpp"

#include <boost/container/small_vector.hpp>

namespace collage {

/// Attributes as (key, value) pairs, e.g. {"Composite", "cutlass.dense_bias"}: what callers build
/// and pass in.
using Attrs = std::vector<std::pair<std::string, std::string>>;

/// The attributes of a nested group: an immutable list of (key, value) pairs in sorted order,
/// shared by copies. A rule that wraps thousands of candidates in the same attributes makes one
/// list, and every group refers to it.
class AttrList {
 public:
  using value_type = Attrs::value_type;
  using const_iterator = Attrs::const_iterator;
  using iterator = const_iterator;

  AttrList() = default;
  AttrList(Attrs attrs)  // NOLINT: implicit, so {{"Composite", "x"}} and Attrs values convert
      : list_(attrs.empty() ? nullptr : sorted(std::move(attrs))) {}
  AttrList(std::initializer_list<value_type> attrs) : AttrList(Attrs(attrs)) {}

  const_iterator begin() const { return list().begin(); }
  const_iterator end() const { return list().end(); }
  std::size_t size() const { return list_ ? list_->size() : 0; }
  bool empty() const { return size() == 0; }
  const value_type& operator[](std::size_t k) const { return list()[k]; }
  /// The pairs as a vector.
  const Attrs& list() const { return list_ ? *list_ : none(); }
  /// The value of attribute `key`, or "" when absent.
  std::string_view find(std::string_view key) const {
    for (const auto& [k, v] : list()) {
      if (k == key) return v;
    }
    return {};
  }

  friend bool operator==(const AttrList& a, const AttrList& b) { return a.list_ == b.list_ || a.list() == b.list(); }
  friend bool operator!=(const AttrList& a, const AttrList& b) { return !(a == b); }
  /// Lexicographic by (key, value) pairs, a shorter list first on a tie: negative, zero or positive.
  static int compare(const AttrList& a, const AttrList& b);

 private:
  static std::shared_ptr<const Attrs> sorted(Attrs attrs) {
    std::sort(attrs.begin(), attrs.end());
    return std::make_shared<const Attrs>(std::move(attrs));
  }
  static const Attrs& none() {
    static const Attrs empty;
    return empty;
  }

  std::shared_ptr<const Attrs> list_;  // null when empty
};

class SubGraph;

/// A group inside a sub-graph that carries attributes (a composite function, a primitive
/// partition and its compiler).
struct NestedSubGraph;

/// The nested groups of a sub-graph, sorted. Most sub-graphs that have groups have one, which is
/// held inline.
using NestedGroups = boost::container::small_vector<NestedSubGraph, 1>;

/// A set of nodes ("inside") of one DataflowGraph, with cached boundary sets:
///  - entry:  inside nodes with a (non-inlinable) input outside;
///  - exit:   inside nodes with an output outside, or external (result) nodes;
///  - input:  outside, non-inlinable nodes that feed an inside node;
///  - output: outside nodes fed by an inside node.
/// Inlinable nodes (op references, scalar constants) are copied into a partition rather than
/// passed in, so they are never inputs. Also cached: the depth (how many nodes lie on the longest
/// path inside from an entry, as TVM's Collage counts: one operator is 1, a chain of k operators
/// is k, a split and the projection read from it 2; a constant pulled in, which no entry reaches,
/// adds nothing), the kind (the largest OpKind of
/// inside nodes that execute: inlinable nodes and constants do not count, tuples and projections
/// count as injective), and nested groups. A label (the op names inside) is derived from the graph
/// on demand, for messages and reports.
///
/// A SubGraph does not point at its graph; operations that need the graph take it as an argument,
/// which must be the graph the sub-graph was made over.
///
/// A SubGraph is immutable. The inside set and what is cached about it (boundary sets, depth, kind)
/// live in one shared block, and the nested groups in another (one allocation when there is
/// one group), so copies are cheap and a sub-graph wrapped in a nested group (with_attrs) shares its
/// blocks with the group instead of holding second copies.
class SubGraph {
 public:
  SubGraph() = default;

  /// Computes the cached sets of `inside` over `graph`. (Overloads rather than a default argument:
  /// NestedSubGraph is incomplete here.)
  template <class G>
  SubGraph(const DataflowGraph<G>& graph, IndexSet inside, std::vector<NestedSubGraph> nested);
  template <class G>
  SubGraph(const DataflowGraph<G>& graph, IndexSet inside);

  const IndexSet& inside() const { return core().inside; }
  const IndexSet& entry() const { return core().entry; }
  const IndexSet& exit() const { return core().exit; }
  const IndexSet& input() const { return core().input; }
  const IndexSet& output() const { return core().output; }
  std::size_t depth() const { return core().depth; }
  OpKind kind() const { return core().kind; }
  /// The op names of the inside nodes that need a kernel (of all inside nodes when none does),
  /// joined with '+', e.g. "conv2d+add+relu". `graph` is the one the sub-graph was made over.
  template <class G>
  std::string label(const DataflowGraph<G>& graph) const;
  const NestedGroups& nested() const;

  bool empty() const { return inside().empty(); }
  /// Number of inside nodes.
  std::size_t size() const { return inside().count(); }
  /// The smallest inside index (npos when empty): where the search indexes candidates.
  std::size_t first_inside() const { return first_; }
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
  bool feeds_into(const SubGraph& that) const { return output().intersects(that.entry()); }

  /// Disjoint, one feeds the other, and their union is convex: the pair could become one kernel.
  template <class G>
  bool are_touching(const DataflowGraph<G>& graph, const SubGraph& that) const;

  /// The union of two disjoint sub-graphs, keeping both sets of nested groups.
  template <class G>
  SubGraph disjoint_union(const DataflowGraph<G>& graph, const SubGraph& that) const;

  /// The same inside set, wrapped whole in one nested group carrying `attrs`.
  template <class G>
  SubGraph with_attrs(const DataflowGraph<G>& graph, AttrList attrs) const;

  /// This sub-graph carried into `new_graph` through `index_map` (old index -> new index).
  template <class H>
  SubGraph subst(const DataflowGraph<H>& new_graph, const std::vector<std::size_t>& index_map) const;

  /// The inside set plus nested groups, e.g. "{3,4}[Composite=d:{3,4}]".
  std::string to_string() const;
  /// As to_string() with each set preceded by its label, e.g. "dense+add{3,4}[Composite=d:dense+add{3,4}]".
  template <class G>
  std::string to_string(const DataflowGraph<G>& graph) const;

  /// Identity: the inside set and the nested groups (with their attributes).
  friend bool operator==(const SubGraph& a, const SubGraph& b);
  friend bool operator!=(const SubGraph& a, const SubGraph& b) { return !(a == b); }
  /// A total order consistent with ==: by first inside index, then inside set, then nesting.
  friend bool operator<(const SubGraph& a, const SubGraph& b) { return compare(a, b) < 0; }
  /// The order of operator< as a three-way comparison: negative, zero (equal) or positive.
  static int compare(const SubGraph& a, const SubGraph& b);
  std::size_t hash() const;
  /// About how many bytes this sub-graph holds on the heap (its shared blocks counted whole): what
  /// budgets on memory add up.
  std::size_t heap_bytes() const;

 private:
  /// The inside set and what is derived from it; shared by copies and by with_attrs.
  struct Core {
    Core() = default;
    Core(std::size_t universe, IndexSet inside_set)
        : inside(std::move(inside_set)), entry(universe), exit(universe), input(universe), output(universe) {}

    IndexSet inside;
    IndexSet entry;
    IndexSet exit;
    IndexSet input;
    IndexSet output;
    std::size_t depth = 0;
    OpKind kind = OpKind::elemwise;
  };

  template <class G>
  static std::shared_ptr<const Core> make_core(const DataflowGraph<G>& graph, IndexSet inside);
  SubGraph(std::shared_ptr<const Core> core, NestedGroups nested);
  /// `nested` sorted already, or null.
  SubGraph(std::shared_ptr<const Core> core, std::shared_ptr<const NestedGroups> nested);
  /// Sorts `nested` and shares it (null when empty).
  static std::shared_ptr<const NestedGroups> share_nested(NestedGroups nested);
  /// to_string() with `label_of(sub_graph)` before each inside set.
  template <class LabelOf>
  std::string describe(LabelOf label_of) const;

  const Core& core() const { return core_ ? *core_ : empty_core(); }
  static const Core& empty_core() {
    static const Core empty{};
    return empty;
  }

  std::shared_ptr<const Core> core_;  // null for the default (empty) sub-graph
  std::shared_ptr<const NestedGroups> nested_;  // null when there are none
  std::size_t first_ = npos;  // inside().first_inside(), kept here for sorting without reading the core
};

namespace detail {

/// Three-way lexicographic comparison of two sequences whose elements `compare` orders three-way:
/// negative, zero (equal) or positive.
template <class Sequence, class Compare>
int compare_lexicographic(const Sequence& x, const Sequence& y, Compare compare) {
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t k = 0; k < n; ++k) {
    if (int c = compare(x[k], y[k])) return c;
  }
  return x.size() == y.size() ? 0 : x.size() < y.size() ? -1 : 1;
}

/// The depth value of inside node i, from the values of its inside inputs (`value_of(j)`): the
/// number of nodes on the longest path inside that ends at i and starts at an entry or at a node
/// without (non-inlinable) inputs; 0 for a constant or an inlinable node, and for a node no such
/// path reaches (an operator reading only constants pulled in), which TVM's Collage does not count
/// either. The largest value of a set is its depth.
template <class G, class ValueOf>
std::size_t depth_value(const DataflowGraph<G>& graph, const IndexSet& inside, std::size_t i, ValueOf value_of) {
  if (graph.is_constant(i) || graph.is_inlinable(i)) return 0;
  std::size_t best = 0;
  bool entry = false;
  bool inside_input = false;
  for (std::size_t j : graph.inputs(i)) {
    if (inside.contains(j)) {
      best = std::max<std::size_t>(best, value_of(j));
      inside_input = true;
    } else if (!graph.is_inlinable(j)) {
      entry = true;
    }
  }
  return best != 0 || entry || !inside_input ? best + 1 : 0;
}

/// Whether the depth of an inside set never drops when nodes are added to it: true unless some
/// operator reads only constants and inlinable nodes (once such constants are inside, depth_value
/// gives the operator 0 and stops counting the paths through it).
template <class G>
bool depth_grows_with_inside(const DataflowGraph<G>& graph) {
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (graph.is_constant(i) || graph.is_inlinable(i) || graph.inputs(i).empty()) continue;
    const IndexSpan inputs = graph.inputs(i);
    if (std::all_of(inputs.begin(), inputs.end(), [&](std::size_t j) { return graph.is_constant(j) || graph.is_inlinable(j); })) {
      return false;
    }
  }
  return true;
}

/// The depth values (depth_value()) of the nodes of an inside set, visited in ascending index
/// order.
class DepthScan {
 public:
  /// The value of inside node i; every inside node below i must have been visited.
  template <class G>
  std::size_t visit(const DataflowGraph<G>& graph, const IndexSet& inside, std::size_t i) {
    const std::size_t d = depth_value(graph, inside, i, [&](std::size_t j) {
      std::size_t pos = visited_.size() - 1;  // j was visited: inputs have smaller indexes
      if (visited_[pos].node != j) {
        pos = static_cast<std::size_t>(
            std::lower_bound(visited_.begin(), visited_.end(), j,
                             [](const Visited& v, std::size_t node) { return v.node < node; }) -
            visited_.begin());
      }
      return visited_[pos].depth;
    });
    visited_.push_back(Visited{i, d});
    return d;
  }

 private:
  struct Visited {
    std::size_t node;
    std::size_t depth;
  };
  boost::container::small_vector<Visited, 16> visited_;
};

/// Inside sets spanning fewer indexes than this keep their depths in an array on the stack
/// (inside_depth, SubGraph::make_core); wider ones use a DepthScan.
constexpr std::size_t kDenseDepthRange = 512;

/// The depth a SubGraph over `inside` would have, without building it; once some path is found to
/// be longer than `limit`, the length found so far (which exceeds `limit`).
template <class G>
std::size_t inside_depth(const DataflowGraph<G>& graph, const IndexSet& inside, std::size_t limit = npos) {
  const std::size_t lo = inside.first_inside();
  if (lo == npos) return 0;
  std::size_t depth = 0;
  if (inside.last_inside() - lo < kDenseDepthRange) {
    // depth_at[i - lo]: set for each inside node i once visited (only those are read).
    std::uint32_t depth_at[kDenseDepthRange];
    for (std::size_t i : inside) {
      const std::size_t d = depth_value(graph, inside, i, [&](std::size_t j) { return depth_at[j - lo]; });
      depth_at[i - lo] = static_cast<std::uint32_t>(d);
      depth = std::max<std::size_t>(depth, d);
      if (depth > limit) return depth;
    }
    return depth;
  }
  DepthScan scan;
  for (std::size_t i : inside) {
    depth = std::max(depth, scan.visit(graph, inside, i));
    if (depth > limit) return depth;
  }
  return depth;
}

}  // namespace detail

struct NestedSubGraph {
  SubGraph sub_graph;
  AttrList attrs;

  /// The value of attribute `key`, or "" when absent.
  std::string_view attr(std::string_view key) const { return attrs.find(key); }
  friend bool operator==(const NestedSubGraph& a, const NestedSubGraph& b) {
    return a.attrs == b.attrs && a.sub_graph == b.sub_graph;
  }
  /// By sub-graph, then attributes.
  friend bool operator<(const NestedSubGraph& a, const NestedSubGraph& b) { return compare(a, b) < 0; }
  /// The order of operator< as a three-way comparison.
  static int compare(const NestedSubGraph& a, const NestedSubGraph& b) {
    if (int c = SubGraph::compare(a.sub_graph, b.sub_graph)) return c;
    return AttrList::compare(a.attrs, b.attrs);
  }
};

/// Whether `joined`, the union of sub-graphs `a` and `b`, is convex: is_convex, walking from the
/// outputs of the two (their cached sets) instead of visiting the nodes of the union.
template <class G>
bool is_convex_union(const DataflowGraph<G>& graph, const IndexSet& joined, const SubGraph& a, const SubGraph& b) {
  return detail::is_convex_from(graph, joined, [&](auto reach) {
    for (std::size_t o : a.output()) reach(o);
    for (std::size_t o : b.output()) reach(o);
  });
}

namespace detail {

/// One step of SubGraph::hash: `seed` (the hash of the inside set and the groups before) with
/// nested group `group` mixed in. Code that hashes a sub-graph before building it (combine's join
/// keys) folds its groups, in SubGraph's order, through this too, so both hashes agree.
inline std::size_t hash_nested_group(std::size_t seed, const NestedSubGraph& group) {
  std::size_t h = seed * 31 + group.sub_graph.hash();
  for (const auto& [k, v] : group.attrs) h = h * 31 + std::hash<std::string>{}(k) * 7 + std::hash<std::string>{}(v);
  return h;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Implementation.

inline int AttrList::compare(const AttrList& a, const AttrList& b) {
  if (a.list_ == b.list_) return 0;
  return detail::compare_lexicographic(a.list(), b.list(), [](const value_type& x, const value_type& y) {
    const int c = x.first.compare(y.first);
    return c != 0 ? c : x.second.compare(y.second);
  });
}

template <class G>
SubGraph::SubGraph(const DataflowGraph<G>& graph, IndexSet inside, std::vector<NestedSubGraph> nested)
    : SubGraph(make_core(graph, std::move(inside)),
               NestedGroups(std::make_move_iterator(nested.begin()), std::make_move_iterator(nested.end()))) {}

inline SubGraph::SubGraph(std::shared_ptr<const Core> core, NestedGroups nested)
    : SubGraph(std::move(core), share_nested(std::move(nested))) {}

inline SubGraph::SubGraph(std::shared_ptr<const Core> core, std::shared_ptr<const NestedGroups> nested)
    : core_(std::move(core)), nested_(std::move(nested)), first_(core_->inside.first_inside()) {}

inline std::shared_ptr<const NestedGroups> SubGraph::share_nested(NestedGroups nested) {
  if (nested.empty()) return nullptr;
  std::sort(nested.begin(), nested.end());
  return std::make_shared<const NestedGroups>(std::move(nested));
}

inline const NestedGroups& SubGraph::nested() const {
  static const NestedGroups none;
  return nested_ ? *nested_ : none;
}

template <class G>
std::string SubGraph::label(const DataflowGraph<G>& graph) const {
  const bool any_kernel = compute_size(graph) != 0;
  std::string label;
  for (std::size_t i : inside()) {
    if (any_kernel && !graph.needs_kernel(i)) continue;
    if (!label.empty()) label += '+';
    label += graph.op_name(i);
  }
  return label;
}

template <class G>
std::shared_ptr<const SubGraph::Core> SubGraph::make_core(const DataflowGraph<G>& graph, IndexSet inside) {
  auto core = std::make_shared<Core>(graph.size(), std::move(inside));
  Core& c = *core;
  bool any_kind = false;
  // The depth as detail::inside_depth finds it, in the same pass when the set is narrow enough.
  const std::size_t lo = c.inside.first_inside();
  const bool dense = lo != npos && c.inside.last_inside() - lo < detail::kDenseDepthRange;
  std::uint32_t depth_at[detail::kDenseDepthRange];  // depth_at[i - lo]: set once i is visited
  std::size_t depth = 0;
  for (std::size_t i : c.inside) {
    bool entry = false;
    bool inside_input = false;
    std::uint32_t best = 0;  // as detail::depth_value
    for (std::size_t j : graph.inputs(i)) {
      if (c.inside.contains(j)) {
        if (dense) best = std::max(best, depth_at[j - lo]);
        inside_input = true;
      } else if (!graph.is_inlinable(j)) {
        entry = true;
        c.input.add(j);
      }
    }
    if (dense) {
      const bool counted = !graph.is_constant(i) && !graph.is_inlinable(i) && (best != 0 || entry || !inside_input);
      const std::uint32_t d = counted ? best + 1 : 0;
      depth_at[i - lo] = d;
      depth = std::max<std::size_t>(depth, d);
    }
    if (entry) c.entry.add(i);
    bool exit = graph.is_external(i);
    for (std::size_t o : graph.outputs(i)) {
      if (!c.inside.contains(o)) {
        exit = true;
        c.output.add(o);
      }
    }
    if (exit) c.exit.add(i);
    if (!graph.is_inlinable(i) && !graph.is_constant(i)) {
      // As in TVM's Collage, building or projecting a tuple counts as injective work.
      const OpKind k = (graph.is_tuple(i) || graph.is_projection(i)) ? OpKind::injective : graph.kind(i);
      c.kind = any_kind ? std::max(c.kind, k) : k;
      any_kind = true;
    }
  }
  c.depth = dense ? depth : detail::inside_depth(graph, c.inside);
  return core;
}

template <class G>
SubGraph::SubGraph(const DataflowGraph<G>& graph, IndexSet inside)
    : SubGraph(graph, std::move(inside), std::vector<NestedSubGraph>{}) {}

template <class G>
std::size_t SubGraph::compute_size(const DataflowGraph<G>& graph) const {
  std::size_t n = 0;
  for (std::size_t i : inside()) n += graph.needs_kernel(i) ? 1 : 0;
  return n;
}

/// The first inside node of `sub_graph` that needs a kernel (npos when none does): where the
/// search indexes a candidate, and the node a part's alternatives are the candidates of (a part
/// may begin with a constant, which needs none).
template <class G>
std::size_t first_kernel_node(const DataflowGraph<G>& graph, const SubGraph& sub_graph) {
  for (std::size_t i : sub_graph.inside()) {
    if (graph.needs_kernel(i)) return i;
  }
  return npos;
}

template <class G>
Validity SubGraph::check(const DataflowGraph<G>& graph, const SubGraphConfig& config) const {
  const Core& c = core();
  if (c.inside.empty()) return Validity::empty;
  if (c.inside.universe() != graph.size()) return Validity::other_graph;
  if (config.max_exits != 0 && c.exit.count() > config.max_exits) return Validity::too_many_exits;
  if (!config.allow_taps) {
    for (std::size_t e : c.exit) {
      for (std::size_t o : graph.outputs(e)) {
        if (c.inside.contains(o)) return Validity::tap;
      }
    }
  }
  if (config.max_depth != 0 && c.depth > config.max_depth) return Validity::too_deep;
  const std::size_t scope = graph.scope(c.inside.first_inside());
  for (std::size_t i : c.inside) {
    if (graph.scope(i) != scope) return Validity::multiple_scopes;
  }
  IndexSet seen(graph.size());
  for (const NestedSubGraph& n : nested()) {
    const IndexSet& sub = n.sub_graph.inside();
    if (sub.empty() || !sub.is_subset_of(c.inside)) return Validity::nested_not_inside;
    if (sub.intersects(seen)) return Validity::nested_overlap;
    seen |= sub;
    // A nested group is a grouping inside one kernel (e.g. a composite): it must be convex and in one
    // scope, but the outer kernel's limits on exits, taps and depth do not apply to it.
    SubGraphConfig nested_config;
    nested_config.allow_taps = true;
    if (n.sub_graph.check(graph, nested_config) != Validity::valid) return Validity::nested_invalid;
  }
  if (!is_convex(graph, c.inside, c.output)) return Validity::not_convex;
  return Validity::valid;
}

template <class G>
bool SubGraph::are_touching(const DataflowGraph<G>& graph, const SubGraph& that) const {
  return inside().is_disjoint(that.inside()) && (feeds_into(that) || that.feeds_into(*this)) &&
         is_convex_union(graph, inside() | that.inside(), *this, that);
}

template <class G>
SubGraph SubGraph::disjoint_union(const DataflowGraph<G>& graph, const SubGraph& that) const {
  NestedGroups groups;
  groups.reserve(nested().size() + that.nested().size());
  groups.insert(groups.end(), nested().begin(), nested().end());
  groups.insert(groups.end(), that.nested().begin(), that.nested().end());
  return SubGraph(make_core(graph, inside() | that.inside()), std::move(groups));
}

template <class G>
SubGraph SubGraph::with_attrs(const DataflowGraph<G>& graph, AttrList attrs) const {
  auto group = std::make_shared<NestedGroups>();  // made in place: one group needs no sorting
  group->push_back(NestedSubGraph{*this, std::move(attrs)});
  // Same inside set over the same graph: the cached sets are this sub-graph's.
  return SubGraph(core_ ? core_ : make_core(graph, inside()), std::move(group));
}

template <class H>
SubGraph SubGraph::subst(const DataflowGraph<H>& new_graph, const std::vector<std::size_t>& index_map) const {
  NestedGroups groups;
  groups.reserve(nested().size());
  for (const NestedSubGraph& n : nested()) {
    groups.push_back(NestedSubGraph{n.sub_graph.subst(new_graph, index_map), n.attrs});
  }
  return SubGraph(make_core(new_graph, inside().subst(new_graph.size(), index_map)), std::move(groups));
}

inline std::string SubGraph::to_string() const {
  return describe([](const SubGraph&) { return std::string(); });
}

template <class G>
std::string SubGraph::to_string(const DataflowGraph<G>& graph) const {
  return describe([&](const SubGraph& s) { return s.label(graph); });
}

template <class LabelOf>
std::string SubGraph::describe(LabelOf label_of) const {
  std::string out = label_of(*this) + inside().to_string();
  for (const NestedSubGraph& n : nested()) {
    out += '[';
    for (std::size_t k = 0; k < n.attrs.size(); ++k) {
      if (k != 0) out += ',';
      out += n.attrs[k].first + "=" + n.attrs[k].second;
    }
    out += ':';
    out += n.sub_graph.describe(label_of);
    out += ']';
  }
  return out;
}

inline bool operator==(const SubGraph& a, const SubGraph& b) {
  return (a.core_ == b.core_ || a.inside() == b.inside()) && (a.nested_ == b.nested_ || a.nested() == b.nested());
}

inline int SubGraph::compare(const SubGraph& a, const SubGraph& b) {
  if (a.core_ != b.core_) {
    const std::size_t fa = a.first_inside();
    const std::size_t fb = b.first_inside();
    if (fa != fb) return fa < fb ? -1 : 1;
    if (int c = IndexSet::compare(a.inside(), b.inside())) return c;
  }
  if (a.nested_ == b.nested_) return 0;
  return detail::compare_lexicographic(a.nested(), b.nested(), NestedSubGraph::compare);
}

inline std::size_t SubGraph::heap_bytes() const {
  constexpr std::size_t kBlockOverhead = 32;  // a shared block's control part and the allocator's header
  std::size_t bytes = 0;
  if (core_) {
    const Core& c = *core_;
    bytes += sizeof(Core) + kBlockOverhead + c.inside.heap_bytes() + c.entry.heap_bytes() + c.exit.heap_bytes() +
             c.input.heap_bytes() + c.output.heap_bytes();
  }
  if (nested_) {
    bytes += sizeof(NestedGroups) + kBlockOverhead;
    for (const NestedSubGraph& n : *nested_) bytes += n.sub_graph.heap_bytes();
  }
  return bytes;
}

inline std::size_t SubGraph::hash() const {
  std::size_t h = inside().hash();
  for (const NestedSubGraph& n : nested()) h = detail::hash_nested_group(h, n);
  return h;
}

}  // namespace collage

namespace std {
template <>
struct hash<collage::SubGraph> {
  std::size_t operator()(const collage::SubGraph& s) const noexcept { return s.hash(); }
};
}  // namespace std
