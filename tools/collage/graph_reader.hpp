#pragma once

/// \file
/// read_graph: reads a `collage-graph/1` text (see docs/formats.md) into a JsonGraph, in one pass
/// of a SAX parser, with errors that name the file, the place and the problem.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/op_kind.hpp"
#include "collage/support/result.hpp"
#include "json_graph.hpp"
#include "json_util.hpp"
#include "op_kind_table.hpp"

namespace collage::cli {

/// The format tag of graph files.
inline constexpr std::string_view kGraphFormat = "collage-graph/1";

/// Deepest nesting accepted inside a node's `attrs`.
inline constexpr std::size_t kMaxAttrsDepth = 32;

namespace detail {

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

}  // namespace collage::cli
