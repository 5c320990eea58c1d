#include "onnx/functions.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <google/protobuf/unknown_field_set.h>

#include "onnx/definitions.hpp"
#include "onnx/proto_node.hpp"

namespace tc::detail {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

/// FunctionProto.attribute_proto (IR 9: attributes with default values), which the protobuf
/// definitions of ONNX 1.12 do not have: it arrives as an unknown field.
constexpr int kAttributeDefaultsField = 11;
/// How deep calls may nest inside bodies (a recursive one is caught before this).
constexpr std::size_t kMaxNesting = 64;
/// The most nodes the expanded graph may have, counted before anything is expanded: nested calls
/// multiply (a function calling another twice, 30 deep, is a billion nodes).
constexpr std::uint64_t kMaxExpandedNodes = std::uint64_t{1} << 22;

using FunctionKey = std::pair<std::string, std::string>;  // (domain, name)

int default_domain_opset(const google::protobuf::RepeatedPtrField<::onnx::OperatorSetIdProto>& ids) {
  for (const ::onnx::OperatorSetIdProto& id : ids) {
    if (id.domain().empty() || id.domain() == "ai.onnx") return static_cast<int>(std::min<std::int64_t>(id.version(), 1 << 20));
  }
  return 0;
}

bool has_unknown_field(const google::protobuf::Message& message, int number) {
  const google::protobuf::UnknownFieldSet& unknown = message.GetReflection()->GetUnknownFields(message);
  for (int k = 0; k < unknown.field_count(); ++k) {
    if (unknown.field(k).number() == number) return true;
  }
  return false;
}

class Inliner {
 public:
  explicit Inliner(::onnx::ModelProto& model) : model_(model), opset_(default_domain_opset(model.opset_import())) {}

  Status run() {
    for (const ::onnx::FunctionProto& f : model_.functions()) {
      if (!functions_.emplace(FunctionKey{f.domain(), f.name()}, &f).second) {
        return Error{ErrorCode::parse, "function '" + label(f) + "' is defined twice (overloads, IR 10, are not read)"};
      }
    }
    ::onnx::GraphProto& g = *model_.mutable_graph();
    bool any_call = false;
    for (const ::onnx::NodeProto& node : g.node()) any_call = any_call || callee(node) != nullptr;
    if (!any_call) return Status::success();
    std::uint64_t nodes = 0;
    for (const ::onnx::NodeProto& node : g.node()) {
      std::uint64_t n = 1;
      if (const ::onnx::FunctionProto* f = callee(node)) {
        Result<Expansion> e = expansion(*f, node, 1);
        if (!e.ok()) return e.error();
        n = e->nodes;
      }
      nodes = std::min(nodes + n, kMaxExpandedNodes + 1);
    }
    if (nodes > kMaxExpandedNodes) {
      return Error{ErrorCode::invalid_argument, "the model's functions expand to more than " + std::to_string(kMaxExpandedNodes) + " nodes"};
    }
    collect_names(g);
    google::protobuf::RepeatedPtrField<::onnx::NodeProto> expanded;
    for (::onnx::NodeProto& node : *g.mutable_node()) {
      if (callee(node) == nullptr) {
        *expanded.Add() = std::move(node);
        continue;
      }
      if (Status s = expand(node, expanded); !s.ok()) return s;
    }
    *g.mutable_node() = std::move(expanded);
    return Status::success();
  }

 private:
  static std::string label(const ::onnx::FunctionProto& f) { return f.domain().empty() ? f.name() : f.domain() + "." + f.name(); }
  static std::string node_label(const ::onnx::NodeProto& node) {
    std::string name = node_name(node);
    return name.empty() ? node.op_type() : name;
  }

  const ::onnx::FunctionProto* callee(const ::onnx::NodeProto& node) const {
    if (node.domain().empty() || node.domain() == "ai.onnx") return nullptr;
    const auto it = functions_.find(FunctionKey{node.domain(), node.op_type()});
    return it == functions_.end() ? nullptr : it->second;
  }

  void collect_names(const ::onnx::GraphProto& g) {
    for (const auto& v : g.input()) taken_.insert(v.name());
    for (const auto& v : g.output()) taken_.insert(v.name());
    for (const auto& t : g.initializer()) taken_.insert(t.name());
    for (const auto& node : g.node()) {
      taken_.insert(node.name());
      for (const std::string& in : node.input()) taken_.insert(in);
      for (const std::string& out : node.output()) taken_.insert(out);
    }
  }

  /// A name the graph does not use yet, after `base`.
  std::string fresh(const std::string& base) {
    std::string name = base;
    while (!taken_.insert(name).second) name = base + "_" + std::to_string(++suffix_);
    return name;
  }

  /// What the body of `f` expands to: its nodes (at most kMaxExpandedNodes + 1) and how many calls
  /// deep it nests, itself included.
  struct Expansion {
    std::uint64_t nodes = 0;
    std::size_t depth = 0;
  };

  /// The Expansion of `f`, which `call` calls `depth` calls deep; an error when `f` calls itself,
  /// directly or not, or calls nest deeper than kMaxNesting.
  Result<Expansion> expansion(const ::onnx::FunctionProto& f, const ::onnx::NodeProto& call, std::size_t depth) {
    const std::string where = "function '" + label(f) + "' called by node '" + node_label(call) + "'";
    const auto known = expansions_.find(&f);
    if (known != expansions_.end() && known->second.depth == 0) {  // still being counted
      return Error{ErrorCode::invalid_argument, where + ": it calls itself (recursion is not allowed)"};
    }
    if (known == expansions_.end()) {
      if (depth > kMaxNesting) return too_deep(where);
      expansions_[&f] = Expansion{};
      Expansion e{0, 1};
      for (const ::onnx::NodeProto& node : f.node()) {
        Expansion inner{1, 0};
        if (const ::onnx::FunctionProto* g = callee(node)) {
          Result<Expansion> r = expansion(*g, node, depth + 1);
          if (!r.ok()) return r.error();
          inner = *r;
        }
        e.nodes = std::min(e.nodes + inner.nodes, kMaxExpandedNodes + 1);
        e.depth = std::max(e.depth, inner.depth + 1);
      }
      expansions_[&f] = e;
    }
    const Expansion& e = expansions_[&f];
    if (depth - 1 + e.depth > kMaxNesting) return too_deep(where);
    return e;
  }

  static Error too_deep(const std::string& where) {
    return Error{ErrorCode::invalid_argument, where + ": calls nest deeper than " + std::to_string(kMaxNesting)};
  }

  /// Appends the body of the function `call` calls to `out` (expansion() has ruled out
  /// recursion and deep nesting).
  Status expand(const ::onnx::NodeProto& call, google::protobuf::RepeatedPtrField<::onnx::NodeProto>& out) {
    const ::onnx::FunctionProto& f = *callee(call);
    const std::string where = "function '" + label(f) + "' called by node '" + node_label(call) + "'";
    if (call.input_size() > f.input_size() || call.output_size() > f.output_size()) {
      return Error{ErrorCode::invalid_argument, where + ": " + std::to_string(call.input_size()) + " inputs and " +
                                                    std::to_string(call.output_size()) + " outputs given, the function has " +
                                                    std::to_string(f.input_size()) + " and " + std::to_string(f.output_size())};
    }
    // The body's value names as the graph sees them: the call's for its inputs and outputs (an
    // output the call omits gets a new name), a new name for every other.
    std::unordered_map<std::string, std::string> renamed;
    for (int k = 0; k < f.input_size(); ++k) renamed[f.input(k)] = k < call.input_size() ? call.input(k) : std::string();
    const std::string prefix = node_label(call) + "/";
    for (int k = 0; k < f.output_size(); ++k) {
      const bool given = k < call.output_size() && !call.output(k).empty();
      renamed[f.output(k)] = given ? call.output(k) : fresh(prefix + f.output(k));
    }
    const int function_opset = default_domain_opset(f.opset_import());
    for (const ::onnx::NodeProto& body_node : f.node()) {
      ::onnx::NodeProto node = body_node;
      for (std::string& in : *node.mutable_input()) {
        if (in.empty()) continue;
        const auto it = renamed.find(in);
        if (it == renamed.end()) return Error{ErrorCode::parse, where + ": value '" + in + "' is read but not defined in its body"};
        in = it->second;
      }
      for (std::string& o : *node.mutable_output()) {
        if (o.empty()) continue;
        auto [it, is_new] = renamed.try_emplace(o);
        if (is_new) it->second = fresh(prefix + o);
        o = it->second;
      }
      node.set_name(fresh(prefix + node_label(body_node)));
      if (Status s = resolve_attribute_refs(call, f, where, node); !s.ok()) return s;
      if (callee(node) != nullptr) {
        if (Status s = expand(node, out); !s.ok()) return s;
        continue;
      }
      if (Status s = same_definition(node, function_opset, where); !s.ok()) return s;
      *out.Add() = std::move(node);
    }
    for (int k = 0; k < f.output_size(); ++k) {
      if (!produced(f, f.output(k))) {
        return Error{ErrorCode::parse, where + ": its output '" + f.output(k) + "' is not produced by its body"};
      }
    }
    return Status::success();
  }

  static bool produced(const ::onnx::FunctionProto& f, const std::string& value) {
    for (const ::onnx::NodeProto& node : f.node()) {
      for (const std::string& o : node.output()) {
        if (o == value) return true;
      }
    }
    return false;
  }

  /// Replaces each attribute of `node` given by reference (ref_attr_name) by the call's
  /// attribute of that name, or leaves it out when the call has none.
  static Status resolve_attribute_refs(const ::onnx::NodeProto& call, const ::onnx::FunctionProto& f, const std::string& where,
                                       ::onnx::NodeProto& node) {
    google::protobuf::RepeatedPtrField<::onnx::AttributeProto> attrs;
    for (::onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.ref_attr_name().empty()) {
        *attrs.Add() = std::move(a);
        continue;
      }
      const ::onnx::AttributeProto* given = nullptr;
      for (const ::onnx::AttributeProto& c : call.attribute()) {
        if (c.name() == a.ref_attr_name()) given = &c;
      }
      if (given != nullptr) {
        ::onnx::AttributeProto copy = *given;
        copy.set_name(a.name());
        *attrs.Add() = std::move(copy);
      } else if (has_unknown_field(f, kAttributeDefaultsField)) {
        return Error{ErrorCode::invalid_argument, where + ": attribute '" + a.ref_attr_name() +
                                                      "' is not given, and the function's default values (IR 9) are not read"};
      }
    }
    *node.mutable_attribute() = std::move(attrs);
    return Status::success();
  }

  /// An error when `node` of the default domain, read at the model's opset, would follow another
  /// definition than at the opset its function imports.
  Status same_definition(const ::onnx::NodeProto& node, int function_opset, const std::string& where) const {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!default_domain || function_opset == 0 || function_opset == opset_ || function_opset > kMaxOpset || opset_ > kMaxOpset) {
      return Status::success();
    }
    collage::Result<int> in_function = definition_version(node.op_type(), function_opset);
    collage::Result<int> in_model = definition_version(node.op_type(), opset_);
    if (!in_function.ok() || !in_model.ok() || *in_function == *in_model) return Status::success();
    return Error{ErrorCode::invalid_argument, where + ": " + node.op_type() + " is " + node.op_type() + "-" +
                                                  std::to_string(*in_function) + " at the function's opset " +
                                                  std::to_string(function_opset) + " but " + node.op_type() + "-" +
                                                  std::to_string(*in_model) + " at the model's " + std::to_string(opset_)};
  }

  ::onnx::ModelProto& model_;
  int opset_;
  std::map<FunctionKey, const ::onnx::FunctionProto*> functions_;
  std::map<const ::onnx::FunctionProto*, Expansion> expansions_;  // by function; depth 0 while counted
  std::unordered_set<std::string> taken_;
  std::size_t suffix_ = 0;
};

}  // namespace

Status inline_local_functions(::onnx::ModelProto& model) {
  if (model.functions_size() == 0) return Status::success();
  return Inliner(model).run();
}

}  // namespace tc::detail
