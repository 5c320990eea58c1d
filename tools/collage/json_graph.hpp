#pragma once

/// \file
/// JsonGraph: dataflow graphs read from `collage-graph/1` JSON files (see docs/formats.md), and
/// the dataflow_traits that adapt them to collage: the tool's own IR.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/dataflow_traits.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/support/result.hpp"
#include "json_util.hpp"

namespace collage::cli {

/// The format tag of graph files.
inline constexpr std::string_view kGraphFormat = "collage-graph/1";

/// Deepest nesting accepted inside a node's `attrs`.
inline constexpr std::size_t kMaxAttrsDepth = 32;

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

/// The built-in kind of common operator names (TVM's TOpPattern), or nothing. A dotted name
/// (`nn.conv2d`) is looked up by its last component when the whole name is not in the table.
inline std::optional<OpKind> builtin_op_kind(std::string_view op) {
  static const std::unordered_map<std::string_view, OpKind> table = [] {
    std::unordered_map<std::string_view, OpKind> t;
    for (std::string_view name :
         {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "negative", "clip", "cast", "erf", "round",
          "floor", "ceil", "sin", "cos", "copy", "leaky_relu", "silu", "gelu", "fast_exp", "fast_tanh", "logical_not"}) {
      t.emplace(name, OpKind::elemwise);
    }
    for (std::string_view name :
         {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "bias_add", "where", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "mod",
          "floor_divide", "floor_mod", "prelu"}) {
      t.emplace(name, OpKind::broadcast);
    }
    for (std::string_view name :
         {"reshape", "transpose", "squeeze", "expand_dims", "concatenate", "strided_slice", "pad", "layout_transform",
          "take", "split", "flatten", "batch_flatten", "broadcast_to", "tile", "repeat", "reverse", "slice", "gather",
          "upsampling", "resize2d", "get_item"}) {
      t.emplace(name, OpKind::injective);
    }
    for (std::string_view name : {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "variance", "all", "any"}) {
      t.emplace(name, OpKind::reduce);
    }
    for (std::string_view name :
         {"conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose", "dense", "matmul", "batch_matmul",
          "max_pool2d", "avg_pool2d", "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d"}) {
      t.emplace(name, OpKind::anchor);
    }
    t.emplace("tuple", OpKind::tuple);
    for (std::string_view name : {"softmax", "log_softmax", "layer_norm", "batch_norm", "group_norm", "input", "const"}) {
      t.emplace(name, OpKind::opaque);
    }
    return t;
  }();
  auto it = table.find(op);
  if (it == table.end()) {
    const std::size_t dot = op.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    it = table.find(op.substr(dot + 1));
    if (it == table.end()) return std::nullopt;
  }
  return it->second;
}

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

/// One scalar event of the SAX parser.
struct Scalar {
  enum Type { null, boolean, integer, unsigned_integer, floating, string, other } type = null;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
  std::string* s = nullptr;

  bool is_id() const { return (type == string && !s->empty()) || type == integer || type == unsigned_integer; }
  /// The id text of an id scalar (an integer in decimal).
  std::string id_text() const {
    if (type == integer) return std::to_string(i);
    if (type == unsigned_integer) return std::to_string(u);
    return *s;
  }
  /// "a string \"x\"", "an integer 3", ... for messages.
  std::string describe() const {
    switch (type) {
      case null: return "null";
      case boolean: return b ? "a boolean true" : "a boolean false";
      case integer: return "an integer " + std::to_string(i);
      case unsigned_integer: return "an integer " + std::to_string(u);
      case floating: return "a number " + Json(f).dump();
      case string: return "a string " + JsonReader::short_dump(Json(*s));
      case other: return "binary data";
    }
    return "a value";
  }
};

/// An id used before it can be resolved (ids may be defined after their use).
struct IdRef {
  std::size_t node;  // the using node, or npos for an output
  std::size_t arg;   // the argument (or output) position
  std::string id;
};

/// Reads a collage-graph/1 text in one pass of nlohmann's SAX parser, without building a DOM
/// (only `attrs` objects become JSON values), then resolves ids. Errors carry JSON pointers.
class GraphReader {
 public:
  GraphReader(std::string_view text, const std::string& file, JsonGraph& g) : text_(text), in_(file), g_(g) {}

  Result<JsonGraph> run() {
    const bool ok = Json::sax_parse(text_.begin(), text_.end(), this);
    if (!ok || in_.failed()) return in_.error();
    if (!seen(top_seen_, kFormat)) return fail(JsonPath() / "format", "missing; expected \"" + std::string(kGraphFormat) + "\"");
    if (!seen(top_seen_, kNodes)) return fail(JsonPath() / "nodes", "missing");
    if (!seen(top_seen_, kOutputs)) return fail(JsonPath() / "outputs", "missing");
    if (!resolve()) return in_.error();
    return std::move(g_);
  }

  // nlohmann SAX interface.
  bool null() { return scalar(Scalar{}); }
  bool boolean(bool v) {
    Scalar s;
    s.type = Scalar::boolean;
    s.b = v;
    return scalar(s);
  }
  bool number_integer(std::int64_t v) {
    Scalar s;
    s.type = Scalar::integer;
    s.i = v;
    return scalar(s);
  }
  bool number_unsigned(std::uint64_t v) {
    Scalar s;
    s.type = Scalar::unsigned_integer;
    s.u = v;
    return scalar(s);
  }
  bool number_float(double v, const std::string&) {
    Scalar s;
    s.type = Scalar::floating;
    s.f = v;
    return scalar(s);
  }
  bool string(std::string& v) {
    Scalar s;
    s.type = Scalar::string;
    s.s = &v;
    return scalar(s);
  }
  bool binary(Json::binary_t&) {
    Scalar s;
    s.type = Scalar::other;
    return scalar(s);
  }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k);
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    in_.set_error(malformed_json(text_, in_.file(), position, e.what()));
    return false;
  }

 private:
  enum class State { start, top, nodes, node, inputs, shape, outputs, attrs, skip, end };
  enum TopKey : unsigned { kFormat, kName, kNodes, kOutputs, kMetadata };
  enum NodeKey : unsigned { kId, kOp, kInputs, kKind, kAttrs, kShape, kDtype };
  static constexpr std::string_view kTopKeys[] = {"format", "name", "nodes", "outputs", "metadata"};
  static constexpr std::string_view kNodeKeys[] = {"id", "op", "inputs", "kind", "attrs", "shape", "dtype"};

  static bool seen(unsigned mask, unsigned key) { return (mask >> key) & 1U; }

  Error fail(const JsonPath& path, const std::string& problem) {
    in_.fail(path, problem);
    return in_.error();
  }
  /// Records an error (the first one wins) and stops the parser.
  bool stop(const JsonPath& path, const std::string& problem) { return in_.fail(path, problem); }

  std::size_t node_index() const { return g_.nodes.size() - 1; }
  JsonPath node_path() const { return JsonPath() / "nodes" / node_index(); }
  JsonPath node_key_path() const { return node_path() / kNodeKeys[node_key_]; }
  /// "(node 'x') " once the current node's id is known.
  std::string context() const {
    const JsonNode& n = g_.nodes.back();
    return n.id.empty() ? std::string() : "(node " + quote_text(one_line(n.id)) + ") ";
  }

  static std::string found(bool is_object) { return is_object ? "an object" : "an array"; }

  bool open(bool is_object) {
    switch (state_) {
      case State::start:
        if (!is_object) return stop(JsonPath(), "expected an object, found an array");
        state_ = State::top;
        return true;
      case State::top:
        switch (top_key_) {
          case kNodes:
            if (is_object) return stop(JsonPath() / "nodes", "expected an array, found an object");
            state_ = State::nodes;
            return true;
          case kOutputs:
            if (is_object) return stop(JsonPath() / "outputs", "expected an array of ids, found an object");
            state_ = State::outputs;
            item_ = 0;
            return true;
          case kMetadata:
            state_ = State::skip;
            skip_depth_ = 1;
            return true;
          case kFormat:
            return stop(JsonPath() / "format", "wrong format tag (" + found(is_object) + "); expected \"" +
                                                   std::string(kGraphFormat) + "\"");
          default:
            return stop(JsonPath() / kTopKeys[top_key_], "expected a string, found " + found(is_object));
        }
      case State::nodes:
        if (!is_object) {
          return stop(JsonPath() / "nodes" / g_.nodes.size(), "expected an object, found an array");
        }
        g_.nodes.emplace_back();
        node_seen_ = 0;
        state_ = State::node;
        return true;
      case State::node:
        if (node_key_ == kInputs && !is_object) {
          state_ = State::inputs;
          item_ = 0;
          return true;
        }
        if (node_key_ == kShape && !is_object) {
          state_ = State::shape;
          g_.nodes.back().shape = Json::array();
          item_ = 0;
          return true;
        }
        if (node_key_ == kAttrs && is_object) {
          state_ = State::attrs;
          g_.nodes.back().attrs = Json::object();
          attrs_stack_.assign(1, &g_.nodes.back().attrs);
          return true;
        }
        return stop(node_key_path(), context() + "expected " + expected_node_value() + ", found " + found(is_object));
      case State::inputs:
        return stop(node_path() / "inputs" / item_, context() + "expected an id, found " + found(is_object));
      case State::shape:
        return stop(node_path() / "shape" / item_,
                    context() + "expected a dimension (an integer or a name), found " + found(is_object));
      case State::outputs:
        return stop(JsonPath() / "outputs" / item_, "expected an id, found " + found(is_object));
      case State::attrs: {
        if (attrs_stack_.size() >= kMaxAttrsDepth) {
          return stop(node_path() / "attrs", context() + "nested more than " + std::to_string(kMaxAttrsDepth) +
                                                  " levels deep");
        }
        Json* child = add_attr(is_object ? Json::object() : Json::array());
        attrs_stack_.push_back(child);
        return true;
      }
      case State::skip:
        ++skip_depth_;
        return true;
      case State::end:
        break;
    }
    return stop(JsonPath(), "unexpected content");
  }

  bool close() {
    switch (state_) {
      case State::top:
        state_ = State::end;
        return true;
      case State::nodes:
        state_ = State::top;
        return true;
      case State::node:
        return finish_node();
      case State::inputs:
      case State::shape:
        state_ = State::node;
        return true;
      case State::outputs:
        state_ = State::top;
        return true;
      case State::attrs:
        attrs_stack_.pop_back();
        if (attrs_stack_.empty()) state_ = State::node;
        return true;
      case State::skip:
        if (--skip_depth_ == 0) state_ = State::top;
        return true;
      case State::start:
      case State::end:
        break;
    }
    return stop(JsonPath(), "unexpected content");
  }

  /// Adds `value` to the innermost open attrs container; returns where it went.
  Json* add_attr(Json value) {
    Json& parent = *attrs_stack_.back();
    if (parent.is_object()) return &(parent[attrs_key_] = std::move(value));
    parent.push_back(std::move(value));
    return &parent.back();
  }

  static Json scalar_json(const Scalar& v) {
    switch (v.type) {
      case Scalar::boolean: return Json(v.b);
      case Scalar::integer: return Json(v.i);
      case Scalar::unsigned_integer: return Json(v.u);
      case Scalar::floating: return Json(v.f);
      case Scalar::string: return Json(std::move(*v.s));
      case Scalar::null:
      case Scalar::other: break;
    }
    return Json();
  }

  std::string expected_node_value() const {
    switch (node_key_) {
      case kId: return "an id (a string or an integer)";
      case kInputs: return "an array of ids";
      case kAttrs: return "an object";
      case kShape: return "an array";
      default: return "a string";
    }
  }

  bool scalar(const Scalar& v) {
    switch (state_) {
      case State::start:
        return stop(JsonPath(), "expected an object, found " + v.describe());
      case State::top:
        switch (top_key_) {
          case kFormat:
            if (v.type != Scalar::string || *v.s != kGraphFormat) {
              return stop(JsonPath() / "format",
                          "wrong format tag " + one_line(v.type == Scalar::string ? JsonReader::short_dump(Json(*v.s))
                                                                                  : v.describe()) +
                              "; expected \"" + std::string(kGraphFormat) + "\"");
            }
            return true;
          case kName:
            if (v.type != Scalar::string) return stop(JsonPath() / "name", "expected a string, found " + v.describe());
            g_.name = std::move(*v.s);
            return true;
          case kNodes:
            return stop(JsonPath() / "nodes", "expected an array, found " + v.describe());
          case kOutputs:
            return stop(JsonPath() / "outputs", "expected an array of ids, found " + v.describe());
          default:
            return true;
        }
      case State::nodes:
        return stop(JsonPath() / "nodes" / g_.nodes.size(), "expected an object, found " + v.describe());
      case State::node:
        return node_value(v);
      case State::inputs:
        if (!v.is_id()) {
          return stop(node_path() / "inputs" / item_,
                      context() + "expected an id (a string or an integer), found " + v.describe());
        }
        refs_.push_back(IdRef{node_index(), item_++, v.id_text()});
        g_.nodes.back().inputs.push_back(npos);
        return true;
      case State::shape:
        if (v.type != Scalar::integer && v.type != Scalar::unsigned_integer && v.type != Scalar::string) {
          return stop(node_path() / "shape" / item_,
                      context() + "expected a dimension (an integer or a name), found " + v.describe());
        }
        ++item_;
        g_.nodes.back().shape.push_back(scalar_json(v));
        return true;
      case State::outputs:
        if (!v.is_id()) return stop(JsonPath() / "outputs" / item_, "expected an id, found " + v.describe());
        refs_.push_back(IdRef{npos, item_++, v.id_text()});
        return true;
      case State::attrs:
        add_attr(scalar_json(v));
        return true;
      case State::skip:
        return true;
      case State::end:
        break;
    }
    return stop(JsonPath(), "unexpected content");
  }

  bool node_value(const Scalar& v) {
    JsonNode& node = g_.nodes.back();
    switch (node_key_) {
      case kId:
        if (!v.is_id()) {
          return stop(node_key_path(), v.type == Scalar::string ? std::string("an id must not be empty")
                                                                 : "expected an id (a string or an integer), found " +
                                                                       v.describe());
        }
        node.integer_id = v.type != Scalar::string;
        node.id = v.type == Scalar::string ? std::move(*v.s) : v.id_text();
        return true;
      case kOp:
        if (v.type != Scalar::string) return stop(node_key_path(), "expected a string, found " + v.describe());
        if (v.s->empty()) return stop(node_key_path(), "an op name must not be empty");
        node.op = std::move(*v.s);
        return true;
      case kKind: {
        if (v.type != Scalar::string) return stop(node_key_path(), "expected a string, found " + v.describe());
        std::optional<OpKind> parsed = parse_op_kind(*v.s);
        if (!parsed) {
          return stop(node_key_path(), context() + "bad kind " + quote_text(one_line(*v.s)) +
                                           " (expected one of elemwise, broadcast, injective, reduce, anchor, tuple, "
                                           "opaque)");
        }
        node.kind = *parsed;
        return true;
      }
      case kDtype:
        if (v.type != Scalar::string) return stop(node_key_path(), "expected a string, found " + v.describe());
        node.dtype = std::move(*v.s);
        return true;
      default:
        return stop(node_key_path(), context() + "expected " + expected_node_value() + ", found " + v.describe());
    }
  }

  bool finish_node() {
    JsonNode& node = g_.nodes.back();
    if (!seen(node_seen_, kId)) return stop(node_path() / "id", "missing");
    if (!seen(node_seen_, kOp)) return stop(node_path() / "op", context() + "missing");
    if (!seen(node_seen_, kKind)) node.kind = builtin_op_kind(node.op).value_or(OpKind::opaque);
    node.role = node.derive_role();
    if ((node.role == NodeRole::input || node.role == NodeRole::tensor_const ||
         node.role == NodeRole::scalar_const) && !node.inputs.empty()) {
      return stop(node_path() / "inputs",
                  context() + (node.role == NodeRole::input ? "an input" : "a const") + " node takes no inputs");
    }
    if (node.role == NodeRole::projection) {
      if (node.inputs.size() != 1) {
        return stop(node_path() / "inputs", context() + "a get_item node takes exactly one input");
      }
      const JsonPath at = node_path() / "attrs" / "index";
      auto it = node.attrs.is_object() ? node.attrs.find("index") : node.attrs.end();
      if (!node.attrs.is_object() || it == node.attrs.end()) {
        return stop(at, context() + "a get_item node needs attrs.index");
      }
      std::optional<std::size_t> index = in_.size(*it, at);
      if (!index) return false;
      node.projection_index = *index;
    }
    state_ = State::nodes;
    return true;
  }

  /// Builds the id index and resolves every id reference.
  bool resolve() {
    if (g_.nodes.size() >= std::size_t{0xffffffff}) return in_.fail(JsonPath() / "nodes", "too many nodes");
    if (auto repeat = g_.by_id.build(g_.nodes)) {
      const std::size_t k = repeat->first;
      return in_.fail(JsonPath() / "nodes" / k / "id", "duplicate id " + quote_text(one_line(g_.nodes[k].id)) +
                                                            " (first used by /nodes/" + std::to_string(repeat->second) +
                                                            ")");
    }
    for (const IdRef& r : refs_) {
      const std::size_t n = g_.find(r.id);
      if (r.node == npos) {
        if (n == npos) return in_.fail(JsonPath() / "outputs" / r.arg, "no node has id " + quote_text(one_line(r.id)));
        g_.outputs.push_back(n);
        continue;
      }
      if (n == npos) {
        return in_.fail(JsonPath() / "nodes" / r.node / "inputs" / r.arg,
                        "(node " + quote_text(one_line(g_.nodes[r.node].id)) + ") no node has id " +
                            quote_text(one_line(r.id)));
      }
      g_.nodes[r.node].inputs[r.arg] = n;
    }
    return true;
  }

  std::string_view text_;
  JsonReader in_;
  JsonGraph& g_;
  State state_ = State::start;
  TopKey top_key_ = kFormat;
  NodeKey node_key_ = kId;
  unsigned top_seen_ = 0;
  unsigned node_seen_ = 0;
  std::size_t item_ = 0;
  std::size_t skip_depth_ = 0;
  std::vector<Json*> attrs_stack_;
  std::string attrs_key_;
  std::vector<IdRef> refs_;
};

inline bool GraphReader::key(std::string& k) {
  switch (state_) {
    case State::top: {
      for (unsigned t = 0; t < 5; ++t) {
        if (std::string_view(k) != kTopKeys[t]) continue;
        if (seen(top_seen_, t)) return stop(JsonPath() / k, "duplicate key");
        top_seen_ |= 1U << t;
        top_key_ = static_cast<TopKey>(t);
        return true;
      }
      return stop(JsonPath() / k, "unknown key " + quote_text(one_line(k)) +
                                      " (expected one of: format, name, nodes, outputs, metadata)");
    }
    case State::node: {
      for (unsigned t = 0; t < 7; ++t) {
        if (std::string_view(k) != kNodeKeys[t]) continue;
        if (seen(node_seen_, t)) return stop(node_path() / k, context() + "duplicate key");
        node_seen_ |= 1U << t;
        node_key_ = static_cast<NodeKey>(t);
        return true;
      }
      return stop(node_path() / k, context() + "unknown key " + quote_text(one_line(k)) +
                                       " (expected one of: id, op, inputs, kind, attrs, shape, dtype)");
    }
    case State::attrs:
      attrs_key_ = std::move(k);
      return true;
    default:
      return true;
  }
}

}  // namespace detail

/// Reads a `collage-graph/1` text (see docs/formats.md). Errors are "FILE: PLACE: PROBLEM" with
/// PLACE a JSON pointer or a line and column. Cycles are found later, by build_graph.
inline Result<JsonGraph> read_graph(std::string_view text, const std::string& file) {
  try {
    JsonGraph g;
    g.file = file;
    return detail::GraphReader(text, file, g).run();
  } catch (const std::exception& e) {
    return located_error(file, "", std::string("cannot read the graph: ") + e.what());
  }
}

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
