#pragma once

/// \file
/// JsonGraph: the collage tool's own IR, the dataflow graph of a `collage-graph/1` file (see
/// docs/formats.md), and the dataflow_traits that adapt it to collage. graph_reader.hpp reads it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/dataflow_traits.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/support/result.hpp"
#include "json_util.hpp"

namespace collage::cli {

/// What a node is, as far as partitioning cares (derived from its op and shape).
enum class NodeRole : std::uint8_t { op, input, tensor_const, scalar_const, tuple, projection };

/// One node of a graph file.
struct JsonNode {
  /// The id as text (an integer id in decimal).
  std::string id;
  /// Whether the file gave the id as an integer (outputs then write it as one).
  bool integer_id = false;
  NodeRole role = NodeRole::op;
  OpKind kind = OpKind::opaque;
  std::string op;
  /// Positions (in JsonGraph::nodes) of the inputs, in argument order.
  std::vector<std::size_t> inputs;
  /// The `attrs` object, or null.
  Json attrs;
  /// The `shape` array, or null.
  Json shape;
  std::string dtype;
  /// attrs.index of a get_item node.
  std::size_t projection_index = 0;

  /// The role the op, kind and shape give: `input`; `const` (a scalar when its shape is []);
  /// `tuple` or any op of kind tuple; `get_item`; anything else is an operator.
  NodeRole derive_role() const {
    if (op == "input") return NodeRole::input;
    if (op == "const") return shape.is_array() && shape.empty() ? NodeRole::scalar_const : NodeRole::tensor_const;
    if (op == "tuple" || kind == OpKind::tuple) return NodeRole::tuple;
    if (op == "get_item") return NodeRole::projection;
    return NodeRole::op;
  }
  /// False for input, const, tuple and get_item nodes (the host handles them at no cost).
  bool needs_kernel() const { return role == NodeRole::op; }
};

/// Position of each node by id: open addressing over (hash, position) pairs, comparing ids only
/// when hashes agree (a hash map of strings would chase three pointers per lookup).
class IdIndex {
 public:
  /// Indexes the ids of `nodes`; returns the position of the first repeated id (and the position
  /// of its first use), or nothing.
  template <class Nodes>
  std::optional<std::pair<std::size_t, std::size_t>> build(const Nodes& nodes) {
    std::size_t capacity = 16;
    while (capacity < 2 * nodes.size()) capacity *= 2;
    slots_.assign(capacity, Slot{0, kEmpty});
    mask_ = capacity - 1;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const std::uint64_t h = hash(nodes[k].id);
      for (std::size_t s = h & mask_;; s = (s + 1) & mask_) {
        if (slots_[s].position == kEmpty) {
          slots_[s] = Slot{h, static_cast<std::uint32_t>(k)};
          break;
        }
        if (slots_[s].hash == h && nodes[slots_[s].position].id == nodes[k].id) {
          return std::make_pair(k, static_cast<std::size_t>(slots_[s].position));
        }
      }
    }
    return std::nullopt;
  }

  /// The position of the node whose id is `id` among `nodes` (those build saw), or npos.
  template <class Nodes>
  std::size_t find(const Nodes& nodes, std::string_view id) const {
    if (slots_.empty()) return npos;
    const std::uint64_t h = hash(id);
    for (std::size_t s = h & mask_;; s = (s + 1) & mask_) {
      if (slots_[s].position == kEmpty) return npos;
      if (slots_[s].hash == h && nodes[slots_[s].position].id == id) return slots_[s].position;
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  struct Slot {
    std::uint64_t hash;
    std::uint32_t position;
  };
  static std::uint64_t hash(std::string_view id) { return std::hash<std::string_view>{}(id); }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

/// A graph read from a `collage-graph/1` file. Node handles are positions in `nodes`.
struct JsonGraph {
  /// The file it was read from (for messages).
  std::string file;
  /// The graph's `name` (may be empty).
  std::string name;
  std::vector<JsonNode> nodes;
  /// Positions of the result nodes, in file order.
  std::vector<std::size_t> outputs;
  IdIndex by_id;

  /// The position of the node with id text `id`, or npos.
  std::size_t find(std::string_view id) const { return by_id.find(nodes, id); }
  /// Node `n`'s id as JSON (J: nlohmann::json or ordered_json): an integer when the file wrote
  /// it as one, else a string.
  template <class J = Json>
  J id_json(std::size_t n) const {
    const JsonNode& node = nodes[n];
    if (node.integer_id) {
      if (!node.id.empty() && node.id[0] == '-') return J(std::stoll(node.id));
      return J(std::stoull(node.id));
    }
    return J(node.id);
  }
};

namespace detail {

/// A DOM id as text and whether it was an integer, or an error at `path`.
template <class P>
std::optional<std::pair<std::string, bool>> read_id(JsonReader& in, const Json& j, const P& path) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.empty()) {
      in.fail(path, "an id must not be empty");
      return std::nullopt;
    }
    return std::make_pair(s, false);
  }
  if (j.is_number_unsigned()) return std::make_pair(std::to_string(j.get<std::uint64_t>()), true);
  if (j.is_number_integer()) return std::make_pair(std::to_string(j.get<std::int64_t>()), true);
  in.fail(path, "expected an id (a string or an integer), found " + JsonReader::describe(j));
  return std::nullopt;
}

}  // namespace detail

/// The nodes of a JsonGraph that its outputs do not reach, as a graph of their own (so that a
/// cycle among them is found too).
struct UnreachedNodes {
  const JsonGraph* graph = nullptr;
  std::vector<std::size_t> roots;
};

}  // namespace collage::cli

/// JsonGraph as a collage IR: handles are node positions, the roots are the outputs, labels are
/// the ids; kind, constants, tuples and projections as docs/formats.md describes.
template <>
struct collage::dataflow_traits<collage::cli::JsonGraph> {
  using G = collage::cli::JsonGraph;
  using node_handle = std::size_t;
  static const std::vector<std::size_t>& roots(const G& g) { return g.outputs; }
  static const std::vector<std::size_t>& inputs(const G& g, std::size_t n) { return g.nodes[n].inputs; }
  static OpKind kind(const G& g, std::size_t n) { return g.nodes[n].kind; }
  static const std::string& op_name(const G& g, std::size_t n) { return g.nodes[n].op; }
  static const std::string& label(const G& g, std::size_t n) { return g.nodes[n].id; }
  static bool is_constant(const G& g, std::size_t n) { return g.nodes[n].role == collage::cli::NodeRole::tensor_const; }
  static bool is_inlinable(const G& g, std::size_t n) { return g.nodes[n].role == collage::cli::NodeRole::scalar_const; }
  static bool is_tuple(const G& g, std::size_t n) { return g.nodes[n].role == collage::cli::NodeRole::tuple; }
  static bool is_projection(const G& g, std::size_t n) { return g.nodes[n].role == collage::cli::NodeRole::projection; }
  static std::size_t projection_index(const G& g, std::size_t n) { return g.nodes[n].projection_index; }
  static bool needs_kernel(const G& g, std::size_t n) { return g.nodes[n].needs_kernel(); }
  /// Op, attributes, shape and dtype: what the cost of a node depends on.
  static std::string signature(const G& g, std::size_t n) {
    const collage::cli::JsonNode& node = g.nodes[n];
    std::string s = node.op;
    s += '|';
    if (!node.attrs.is_null()) s += node.attrs.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    s += '|';
    if (!node.shape.is_null()) s += node.shape.dump();
    s += '|';
    s += node.dtype;
    return s;
  }
};

/// The unreached part of a JsonGraph (see UnreachedNodes), for cycle detection only.
template <>
struct collage::dataflow_traits<collage::cli::UnreachedNodes> {
  using G = collage::cli::UnreachedNodes;
  using node_handle = std::size_t;
  static const std::vector<std::size_t>& roots(const G& g) { return g.roots; }
  static const std::vector<std::size_t>& inputs(const G& g, std::size_t n) { return g.graph->nodes[n].inputs; }
  static const std::string& label(const G& g, std::size_t n) { return g.graph->nodes[n].id; }
};

namespace collage::cli {

/// Indexes `g` (which must outlive the result) as a DataflowGraph. Fails, naming the file and a
/// node, when the graph has a cycle, also among nodes the outputs do not reach (those nodes are
/// otherwise ignored).
inline Result<DataflowGraph<JsonGraph>> build_graph(const JsonGraph& g) {
  Result<DataflowGraph<JsonGraph>> graph = DataflowGraph<JsonGraph>::build(g);
  if (!graph.ok()) return Error{graph.error().code, g.file + ": " + one_line(graph.error().message)};
  if (graph->size() < g.nodes.size()) {
    UnreachedNodes rest{&g, {}};
    for (std::size_t n = 0; n < g.nodes.size(); ++n) {
      if (graph->index_of(n) == npos) rest.roots.push_back(n);
    }
    Result<DataflowGraph<UnreachedNodes>> check = DataflowGraph<UnreachedNodes>::build(rest);
    if (!check.ok()) return Error{check.error().code, g.file + ": " + one_line(check.error().message)};
  }
  return graph;
}

}  // namespace collage::cli
