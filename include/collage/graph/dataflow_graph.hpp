#pragma once

/// \file
/// DataflowGraph<G>: a post-DFS indexed, post-dominator annotated view of a user IR.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_traits.hpp"
#include "collage/graph/fingerprint.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/support/index_set.hpp"
#include "collage/support/index_span.hpp"
#include "collage/support/result.hpp"

namespace collage {

namespace detail {

/// A string per node, each distinct string stored once.
class InternedStrings {
 public:
  const std::string& operator[](std::size_t i) const { return texts_[ids_[i]]; }
  /// The id of node i's string: equal ids, equal strings.
  std::uint32_t id(std::size_t i) const { return ids_[i]; }
  /// Number of distinct strings.
  std::size_t distinct() const { return texts_.size(); }
  /// The string of id `id`.
  const std::string& text(std::size_t id) const { return texts_[id]; }

  /// Fills an InternedStrings of `n` nodes, one set() per node.
  class Builder {
   public:
    Builder(InternedStrings& out, std::size_t n) : out_(out) {
      out_.ids_.assign(n, 0);
      out_.texts_.clear();
    }
    /// Node i's string is `text`; returns its id.
    std::uint32_t set(std::size_t i, std::string text) {
      auto [it, added] = id_of_text_.emplace(std::move(text), static_cast<std::uint32_t>(out_.texts_.size()));
      if (added) out_.texts_.push_back(it->first);
      return out_.ids_[i] = it->second;
    }
    /// Node i's string is make(), a function of `key` alone: made once per distinct key.
    template <class Make>
    void set_by_key(std::size_t i, std::uint64_t key, Make make) {
      auto [it, added] = id_of_key_.emplace(key, 0);
      if (added) it->second = set(i, make());
      out_.ids_[i] = it->second;
    }

   private:
    InternedStrings& out_;
    std::unordered_map<std::string, std::uint32_t> id_of_text_;
    std::unordered_map<std::uint64_t, std::uint32_t> id_of_key_;
  };

 private:
  std::vector<std::uint32_t> ids_;
  std::vector<std::string> texts_;
};

}  // namespace detail

/// An immutable index over the part of a user IR reachable from its result nodes.
///
/// Nodes are numbered in post-DFS order (inputs in argument order, roots in order), so every
/// node's inputs have smaller indexes than the node: index order is a topological order. For each
/// node it records the IR handle, inputs (argument order, repeats kept) and outputs (consumers,
/// ascending, no repeats), whether it is external (a result), its scope, its immediate
/// post-dominator and its depth in the post-dominator tree.
///
/// The post-dominator tree is rooted at a virtual sink that every result node flows into;
/// `ipdom(i) == npos` means the sink. Memory is O(nodes + edges) plus an O(n log n) jump table
/// for post-dominator queries; nothing is n².
///
/// The graph refers to the IR (it keeps `&ir`): the IR must outlive it.
template <class G>
class DataflowGraph {
  // The customisation point, checked one requirement per static_assert (see dataflow_traits.hpp).
  using required = detail::required_members<G, dataflow_traits<G>>;
  static_assert(required::node_handle,
                "collage::dataflow_traits<G> is not specialised for this graph type, or is incomplete. Fix: "
                "specialise collage::dataflow_traits<YourGraph> with `using node_handle = ...;` (hashable, "
                "equality-comparable), `static Range roots(const YourGraph&)` and `static Range inputs(const "
                "YourGraph&, node_handle)`; see collage/graph/dataflow_traits.hpp.");
  static_assert(required::usable_handle,
                "collage::dataflow_traits<G>::node_handle must be equality-comparable (==) and hashable "
                "(std::hash<node_handle>)");
  static_assert(required::roots,
                "collage::dataflow_traits<G>::roots is missing or does not match: expected `static Range roots(const "
                "G&)`, Range a range (begin/end) of node_handle");
  static_assert(required::inputs,
                "collage::dataflow_traits<G>::inputs is missing or does not match: expected `static Range "
                "inputs(const G&, node_handle)`, Range a range (begin/end) of node_handle");

  using optional = detail::optional_members<G, dataflow_traits<G>>;
#define COLLAGE_DETAIL_CHECK_OPTIONAL(name, signature, note)                                                  \
  static_assert(!optional::bad_##name, "collage::dataflow_traits<G>::" #name " does not match: expected `" \
                signature "`" note ", callable with (const G&, const node_handle&)");
  COLLAGE_DETAIL_CHECK_OPTIONAL(kind, "static collage::OpKind kind(const G&, node_handle)", "")
  COLLAGE_DETAIL_CHECK_OPTIONAL(op_name, "static std::string op_name(const G&, node_handle)",
                                " (or returning const std::string&, std::string_view or const char*)")
  COLLAGE_DETAIL_CHECK_OPTIONAL(label, "static std::string label(const G&, node_handle)",
                                " (or returning const std::string&, std::string_view or const char*)")
  COLLAGE_DETAIL_CHECK_OPTIONAL(is_inlinable, "static bool is_inlinable(const G&, node_handle)", "")
  COLLAGE_DETAIL_CHECK_OPTIONAL(is_tuple, "static bool is_tuple(const G&, node_handle)", "")
  COLLAGE_DETAIL_CHECK_OPTIONAL(is_projection, "static bool is_projection(const G&, node_handle)", "")
  COLLAGE_DETAIL_CHECK_OPTIONAL(projection_index, "static std::size_t projection_index(const G&, node_handle)",
                                " (or another integer type)")
  COLLAGE_DETAIL_CHECK_OPTIONAL(is_constant, "static bool is_constant(const G&, node_handle)", "")
  COLLAGE_DETAIL_CHECK_OPTIONAL(needs_kernel, "static bool needs_kernel(const G&, node_handle)", "")
  COLLAGE_DETAIL_CHECK_OPTIONAL(scope, "static Scope scope(const G&, node_handle)",
                                " (Scope hashable and equality-comparable)")
  COLLAGE_DETAIL_CHECK_OPTIONAL(signature, "static std::string signature(const G&, node_handle)",
                                " (or returning const std::string&, std::string_view or const char*)")
#undef COLLAGE_DETAIL_CHECK_OPTIONAL

#define COLLAGE_DETAIL_CHECK_SPELLING(spelling, signature)                                                  \
  static_assert(!detail::declares_##spelling<dataflow_traits<G>>::value,                                  \
                "collage::dataflow_traits<G>::" #spelling " is not a member collage reads: the optional member " \
                "is spelt `" signature "`");
  COLLAGE_DETAIL_OTHER_SPELLINGS(COLLAGE_DETAIL_CHECK_SPELLING)
#undef COLLAGE_DETAIL_CHECK_SPELLING

 public:
  /// The traits in use (a placeholder when G does not model them, so that only the static_asserts
  /// about what is missing fire).
  using traits = std::conditional_t<is_dataflow_graph_v<G>, dataflow_traits<G>, detail::placeholder_traits<G>>;
  using node_handle = typename traits::node_handle;
  using access = detail::traits_access<G, traits>;

  /// Indexes the IR reachable from `ir`'s roots. Fails, naming a node, when the IR has a cycle.
  static Result<DataflowGraph> build(const G& ir) {
    DataflowGraph graph(ir);
    if (Status status = graph.index_nodes(); !status.ok()) return status.error();
    graph.link_outputs();
    graph.annotate_nodes();
    graph.compute_post_dominators();
    graph.compute_fingerprint();
    return graph;
  }

  /// What identifies this graph for the results made over it (see GraphFingerprint).
  const GraphFingerprint& fingerprint() const { return fingerprint_; }

  /// Number of nodes.
  std::size_t size() const { return handles_.size(); }
  const G& ir() const { return *ir_; }

  /// The IR handle of node i.
  const node_handle& handle(std::size_t i) const { return handles_[i]; }
  /// The index of an IR node, or npos when it is not reachable from the roots.
  std::size_t index_of(const node_handle& n) const {
    auto it = index_.find(n);
    return it == index_.end() ? npos : it->second;
  }

  /// Inputs of node i in argument order (an input used twice appears twice).
  IndexSpan inputs(std::size_t i) const { return span(input_offsets_, input_flat_, i); }
  /// Consumers of node i, ascending, each once.
  IndexSpan outputs(std::size_t i) const { return span(output_offsets_, output_flat_, i); }
  /// Result nodes, in the order the traits list them (each once).
  IndexSpan roots() const { return roots_; }

  bool is_external(std::size_t i) const { return flags_[i] & kExternal; }
  bool is_inlinable(std::size_t i) const { return flags_[i] & kInlinable; }
  bool is_tuple(std::size_t i) const { return flags_[i] & kTuple; }
  bool is_projection(std::size_t i) const { return flags_[i] & kProjection; }
  bool is_constant(std::size_t i) const { return flags_[i] & kConstant; }
  /// False for nodes that can be left to the host at no cost (inputs-free helpers, tuples, ...).
  bool needs_kernel(std::size_t i) const { return flags_[i] & kNeedsKernel; }
  OpKind kind(std::size_t i) const { return kinds_[i]; }
  /// The field a projection node selects.
  std::size_t projection_index(std::size_t i) const { return access::projection_index(*ir_, handles_[i]); }
  /// The operator name the traits give (empty when they give none); asked of the traits once per
  /// node when the graph is built.
  const std::string& op_name(std::size_t i) const { return op_names_[i]; }
  /// What makes node i interchangeable with another for costing (traits' signature, else
  /// "op_name/kind"); asked of the traits once per node when the graph is built.
  const std::string& signature(std::size_t i) const { return signatures_[i]; }
  /// A dense id of signature(i) within this graph: two nodes have the same id exactly when they
  /// have the same signature.
  std::uint32_t signature_id(std::size_t i) const { return signatures_.id(i); }
  /// The traits' label, else the op name, else "%i".
  std::string label(std::size_t i) const {
    std::string l = access::label(*ir_, handles_[i]);
    if (l.empty()) {  // appended: "%" + std::string trips g++ 12's bogus -Wrestrict in C++20 (GCC PR 105329)
      l += '%';
      l += std::to_string(i);
    }
    return l;
  }

  /// Dense scope id of node i (0 when the traits define no scopes), numbered by first appearance.
  std::size_t scope(std::size_t i) const { return scopes_[i]; }
  std::size_t num_scopes() const { return num_scopes_; }

  /// Immediate post-dominator of node i, or npos for the virtual sink.
  std::size_t ipdom(std::size_t i) const { return decode(jumps_[i]); }
  /// Depth of node i in the post-dominator tree (the sink is 0; nodes it directly dominates are 1).
  std::size_t pdom_depth(std::size_t i) const { return depth_[i]; }

  /// Whether every path from node b to the results passes through node a (a node post-dominates
  /// itself). O(log n).
  bool post_dominates(std::size_t a, std::size_t b) const {
    if (depth_[b] < depth_[a]) return false;
    return lift(b, depth_[b] - depth_[a]) == a;
  }

  /// The nearest common post-dominator of a and b (npos for the sink). O(log n).
  std::size_t common_post_dominator(std::size_t a, std::size_t b) const { return decode(lca(a, b)); }

  /// Whether there is a dataflow path from `from` to `to` (a node reaches itself). Visits only
  /// nodes with indexes between the two.
  bool reaches(std::size_t from, std::size_t to) const {
    if (from == to) return true;
    if (from > to) return false;
    std::vector<bool> seen(to - from + 1, false);
    std::vector<std::size_t> stack{from};
    while (!stack.empty()) {
      std::size_t n = stack.back();
      stack.pop_back();
      for (std::size_t o : outputs(n)) {
        if (o == to) return true;
        if (o < to && !seen[o - from]) {
          seen[o - from] = true;
          stack.push_back(o);
        }
      }
    }
    return false;
  }

  /// The empty IndexSet over this graph's nodes.
  IndexSet empty_set() const { return IndexSet(size()); }

 private:
  enum Flag : std::uint8_t {
    kExternal = 1,
    kInlinable = 2,
    kTuple = 4,
    kProjection = 8,
    kConstant = 16,
    kNeedsKernel = 32,
  };
  static constexpr std::uint32_t kSink = ~std::uint32_t{0};

  explicit DataflowGraph(const G& ir) : ir_(&ir) {}

  static IndexSpan span(const std::vector<std::size_t>& offsets, const std::vector<std::size_t>& flat,
                        std::size_t i) {
    return IndexSpan(flat.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
  static std::size_t decode(std::uint32_t v) { return v == kSink ? npos : v; }

  /// Iterative post-order DFS from the roots: assigns indexes and records inputs.
  Status index_nodes() {
    constexpr std::size_t kOnStack = npos - 1;
    struct Frame {
      node_handle node;
      std::vector<node_handle> inputs;
      std::size_t next = 0;
    };
    std::vector<Frame> stack;
    auto open = [&](const node_handle& n) {
      index_.emplace(n, kOnStack);
      Frame frame{n, {}, 0};
      for (auto&& in : traits::inputs(*ir_, n)) frame.inputs.push_back(static_cast<node_handle>(in));
      stack.push_back(std::move(frame));
    };
    input_offsets_.push_back(0);
    std::vector<node_handle> root_handles;
    for (auto&& r : traits::roots(*ir_)) root_handles.push_back(static_cast<node_handle>(r));
    for (const node_handle& root : root_handles) {
      if (index_.count(root) != 0) continue;
      open(root);
      while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next < top.inputs.size()) {
          node_handle in = top.inputs[top.next++];
          auto it = index_.find(in);
          if (it == index_.end()) {
            open(in);
          } else if (it->second == kOnStack) {
            return Error{ErrorCode::cycle, "the dataflow graph has a cycle through node '" + describe(in) + "'"};
          }
          continue;
        }
        const std::size_t index = handles_.size();
        index_[top.node] = index;
        for (const node_handle& in : top.inputs) input_flat_.push_back(index_.find(in)->second);
        input_offsets_.push_back(input_flat_.size());
        handles_.push_back(std::move(top.node));
        stack.pop_back();
      }
    }
    if (handles_.size() >= kSink) return Error{ErrorCode::too_large, "the dataflow graph has too many nodes (at most 2^32 - 2)"};
    std::vector<bool> is_root(handles_.size(), false);
    for (const node_handle& root : root_handles) {
      std::size_t i = index_.find(root)->second;
      if (!is_root[i]) roots_.push_back(i);
      is_root[i] = true;
    }
    flags_.assign(handles_.size(), 0);
    for (std::size_t r : roots_) flags_[r] |= kExternal;
    return Status::success();
  }

  /// A name for a node not yet indexed: its label, else its handle when it can be printed.
  std::string describe(const node_handle& n) const {
    std::string name = access::label(*ir_, n);
    if (!name.empty()) return name;
    if constexpr (detail::is_streamable<node_handle>::value) {
      std::ostringstream os;
      os << n;
      return os.str();
    } else {
      return "<unnamed>";
    }
  }

  /// Builds the consumer lists (CSR) from the input lists.
  void link_outputs() {
    const std::size_t n = size();
    std::vector<std::size_t> count(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j : distinct_inputs(i)) ++count[j];
    }
    output_offsets_.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) output_offsets_[i + 1] = output_offsets_[i] + count[i];
    output_flat_.assign(output_offsets_[n], 0);
    std::vector<std::size_t> fill(output_offsets_.begin(), output_offsets_.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j : distinct_inputs(i)) output_flat_[fill[j]++] = i;
    }
  }

  /// The inputs of node i without repeats, in first-appearance order.
  std::vector<std::size_t> distinct_inputs(std::size_t i) const {
    std::vector<std::size_t> result;
    for (std::size_t j : inputs(i)) {
      if (std::find(result.begin(), result.end(), j) == result.end()) result.push_back(j);
    }
    return result;
  }

  /// The fingerprint: the node count and a hash of each node's flags, kind, op name and inputs.
  void compute_fingerprint() {
    std::vector<std::uint64_t> name_hash(op_names_.distinct());
    for (std::size_t id = 0; id < name_hash.size(); ++id) name_hash[id] = detail::fingerprint_text(op_names_.text(id));
    std::uint64_t h = detail::fingerprint_mix(0, size());
    for (std::size_t i = 0; i < size(); ++i) {
      const IndexSpan in = inputs(i);
      h = detail::fingerprint_mix(h, std::uint64_t{flags_[i]} | std::uint64_t(kinds_[i]) << 8 | std::uint64_t{in.size()} << 16);
      h = detail::fingerprint_mix(h, name_hash[op_names_.id(i)]);
      for (std::size_t j : in) h = detail::fingerprint_mix(h, j);
    }
    fingerprint_ = GraphFingerprint{size(), h};
  }

  /// Caches the optional traits answers (kind, flags, scope, signature) per node.
  void annotate_nodes() {
    const std::size_t n = size();
    kinds_.resize(n);
    scopes_.assign(n, 0);
    using ScopeKey = std::decay_t<decltype(scope_key(std::declval<const node_handle&>()))>;
    std::unordered_map<ScopeKey, std::size_t> scope_ids;
    detail::InternedStrings::Builder op_names(op_names_, n);
    detail::InternedStrings::Builder signatures(signatures_, n);
    for (std::size_t i = 0; i < n; ++i) {
      const node_handle& h = handles_[i];
      kinds_[i] = access::kind(*ir_, h);
      if (access::is_inlinable(*ir_, h)) flags_[i] |= kInlinable;
      if (access::is_tuple(*ir_, h)) flags_[i] |= kTuple;
      if (access::is_projection(*ir_, h)) flags_[i] |= kProjection;
      if (access::is_constant(*ir_, h)) flags_[i] |= kConstant;
      if (access::needs_kernel(*ir_, h)) flags_[i] |= kNeedsKernel;
      scopes_[i] = scope_ids.emplace(scope_key(h), scope_ids.size()).first->second;
      const std::uint32_t op = op_names.set(i, access::op_name(*ir_, h));
      if constexpr (access::has_own_signature) {
        signatures.set(i, access::signature(*ir_, h));
      } else {  // "op_name/kind": one string per (op name, kind)
        signatures.set_by_key(i, std::uint64_t{op} << 8 | static_cast<std::uint64_t>(kinds_[i]),
                              [&] { return access::signature(*ir_, h); });
      }
    }
    num_scopes_ = scope_ids.size();
  }
  auto scope_key(const node_handle& h) const {
    if constexpr (access::has_scopes) {
      return traits::scope(*ir_, h);
    } else {
      (void)h;
      return 0;
    }
  }

  /// Immediate post-dominators in one pass from the last index down (consumers come later in
  /// post-DFS order, so theirs are known), with binary-lifting jump tables for O(log n) queries.
  void compute_post_dominators() {
    const std::size_t n = size();
    std::size_t levels = 1;
    while ((std::size_t{1} << levels) < n + 1) ++levels;
    jumps_.assign(n * levels, kSink);
    levels_ = levels;
    depth_.assign(n, 0);
    for (std::size_t i = n; i-- > 0;) {
      std::uint32_t dom = kSink;
      if (!is_external(i)) {
        IndexSpan outs = outputs(i);
        dom = static_cast<std::uint32_t>(outs[0]);
        for (std::size_t k = 1; k < outs.size() && dom != kSink; ++k) dom = lca(dom, outs[k]);
      }
      depth_[i] = dom == kSink ? 1 : depth_[dom] + 1;
      jumps_[i] = dom;
      for (std::size_t k = 1; k < levels; ++k) {
        std::uint32_t mid = jump(k - 1, i);
        jumps_[k * n + i] = mid == kSink ? kSink : jump(k - 1, mid);
      }
    }
  }
  std::uint32_t jump(std::size_t level, std::size_t i) const { return jumps_[level * size() + i]; }
  /// The ancestor of i that is `steps` levels up (kSink past the top).
  std::uint32_t lift(std::size_t i, std::size_t steps) const {
    std::uint32_t v = static_cast<std::uint32_t>(i);
    for (std::size_t k = 0; steps != 0 && v != kSink; ++k, steps >>= 1) {
      if (steps & 1U) v = jump(k, v);
    }
    return v;
  }
  std::uint32_t lca(std::size_t a, std::size_t b) const {
    if (depth_[a] < depth_[b]) std::swap(a, b);
    std::uint32_t x = lift(a, depth_[a] - depth_[b]);
    std::uint32_t y = static_cast<std::uint32_t>(b);
    if (x == y) return x;
    for (std::size_t k = levels_; k-- > 0;) {
      std::uint32_t jx = jump(k, x);
      std::uint32_t jy = jump(k, y);
      if (jx != jy) {
        x = jx;
        y = jy;
      }
    }
    return jump(0, x);
  }

  const G* ir_;
  std::vector<node_handle> handles_;
  std::unordered_map<node_handle, std::size_t> index_;
  std::vector<std::size_t> input_offsets_;
  std::vector<std::size_t> input_flat_;
  std::vector<std::size_t> output_offsets_;
  std::vector<std::size_t> output_flat_;
  std::vector<std::size_t> roots_;
  std::vector<std::uint8_t> flags_;
  std::vector<OpKind> kinds_;
  std::vector<std::size_t> scopes_;
  detail::InternedStrings op_names_;
  detail::InternedStrings signatures_;
  std::size_t num_scopes_ = 0;
  GraphFingerprint fingerprint_;
  std::vector<std::uint32_t> jumps_;  // level-major: jumps_[k * n + i] is the 2^k-th post-dominator of i
  std::size_t levels_ = 0;
  std::vector<std::size_t> depth_;
};

}  // namespace collage
