#include "onnx/model.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "onnx/proto_tensor.hpp"

namespace tc {

int ir_version_for_opset(int opset) {
  return opset >= 25 ? 13 : opset >= 24 ? 12 : opset >= 23 ? 11 : opset >= 21 ? 10 : opset >= 19 ? 9 : 8;
}

namespace {

using collage::Error;
using collage::ErrorCode;

void fill_value_info(const OnnxValueInfo& v, ::onnx::ValueInfoProto* proto) {
  proto->set_name(v.name);
  ::onnx::TypeProto::Tensor* type = proto->mutable_type()->mutable_tensor_type();
  type->set_elem_type(static_cast<int>(v.type));
  if (!v.has_shape) return;
  ::onnx::TensorShapeProto* shape = type->mutable_shape();
  for (const OnnxDim& d : v.dims) {
    ::onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (const auto* size = std::get_if<std::int64_t>(&d)) dim->set_dim_value(*size);
    else dim->set_dim_param(std::get<std::string>(d));
  }
}

collage::Status fill_attr(const std::string& name, const OnnxAttr& value, ::onnx::AttributeProto* a) {
  a->set_name(name);
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(*i);
  } else if (const auto* f = std::get_if<float>(&value)) {
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(*f);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(*s);
  } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&value)) {
    a->set_type(::onnx::AttributeProto::INTS);
    for (std::int64_t v : *is) a->add_ints(v);
  } else if (const auto* fs = std::get_if<std::vector<float>>(&value)) {
    a->set_type(::onnx::AttributeProto::FLOATS);
    for (float v : *fs) a->add_floats(v);
  } else {
    a->set_type(::onnx::AttributeProto::TENSOR);
    return detail::tensor_to_proto(std::get<OnnxTensor>(value), "", a->mutable_t());
  }
  return collage::Status::success();
}

OnnxValueInfo value_info_from(const ::onnx::ValueInfoProto& proto) {
  OnnxValueInfo v;
  v.name = proto.name();
  v.is_tensor = proto.type().has_tensor_type();
  if (!v.is_tensor) {
    v.type = ElemType::undefined;
    v.has_shape = false;
    return v;
  }
  const ::onnx::TypeProto::Tensor& type = proto.type().tensor_type();
  v.type = static_cast<ElemType>(type.elem_type());
  v.has_shape = type.has_shape();
  for (const auto& dim : type.shape().dim()) {
    if (dim.has_dim_value()) v.dims.emplace_back(dim.dim_value());
    else v.dims.emplace_back(dim.dim_param());
  }
  return v;
}

/// The attribute `a` as an OnnxAttr; nothing for kinds it cannot hold.
std::optional<OnnxAttr> attr_from(const ::onnx::AttributeProto& a) {
  switch (a.type()) {
    case ::onnx::AttributeProto::INT: return OnnxAttr(std::int64_t{a.i()});
    case ::onnx::AttributeProto::FLOAT: return OnnxAttr(a.f());
    case ::onnx::AttributeProto::STRING: return OnnxAttr(a.s());
    case ::onnx::AttributeProto::INTS: return OnnxAttr(std::vector<std::int64_t>(a.ints().begin(), a.ints().end()));
    case ::onnx::AttributeProto::FLOATS: return OnnxAttr(std::vector<float>(a.floats().begin(), a.floats().end()));
    case ::onnx::AttributeProto::TENSOR: {
      collage::Result<OnnxTensor> t = detail::tensor_from_proto(a.t());
      if (t.ok()) return OnnxAttr(std::move(t).value());
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

/// Moves `t`'s raw_data to the end of `file_bytes`, where `t` now refers to it in `location`.
void move_to_external(const std::string& location, ::onnx::TensorProto& t, std::string& file_bytes) {
  auto add = [&t](const std::string& key, const std::string& value) {
    ::onnx::StringStringEntryProto* entry = t.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(file_bytes.size()));
  add("length", std::to_string(t.raw_data().size()));
  file_bytes += t.raw_data();
  t.clear_raw_data();
  t.set_data_location(::onnx::TensorProto::EXTERNAL);
}

collage::Status fill_node(const OnnxNode& node, ::onnx::NodeProto* n) {
  n->set_op_type(node.op_type);
  n->set_name(node.name);
  if (!node.domain.empty()) n->set_domain(node.domain);
  for (const std::string& in : node.inputs) n->add_input(in);
  for (const std::string& out : node.outputs) n->add_output(out);
  for (const auto& [name, value] : node.attrs) {
    if (collage::Status s = fill_attr(name, value, n->add_attribute()); !s.ok()) return s;
  }
  return collage::Status::success();
}

collage::Status fill_function(const OnnxFunction& function, ::onnx::FunctionProto* f) {
  f->set_domain(function.domain);
  f->set_name(function.name);
  for (const std::string& in : function.inputs) f->add_input(in);
  for (const std::string& out : function.outputs) f->add_output(out);
  for (const std::string& a : function.attributes) f->add_attribute(a);
  for (const OnnxNode& node : function.nodes) {
    if (collage::Status s = fill_node(node, f->add_node()); !s.ok()) return s;
  }
  for (const OnnxFunction::AttrRef& ref : function.attr_refs) {
    if (ref.node >= function.nodes.size()) return Error{ErrorCode::invalid_argument, "function " + function.name + ": an attribute reference names no node"};
    ::onnx::AttributeProto* a = f->mutable_node(static_cast<int>(ref.node))->add_attribute();
    a->set_name(ref.name);
    a->set_ref_attr_name(ref.ref);
  }
  if (function.opset != 0) {
    ::onnx::OperatorSetIdProto* id = f->add_opset_import();
    id->set_domain("");
    id->set_version(function.opset);
  }
  return collage::Status::success();
}

}  // namespace

OnnxValueInfo float_value_info(const std::string& name, const Shape& shape) {
  OnnxValueInfo v;
  v.name = name;
  v.dims.assign(shape.begin(), shape.end());
  return v;
}

collage::Result<std::string> serialize(const OnnxModel& model, std::string* external_bytes) {
  if (!model.external_data.empty() && external_bytes == nullptr) {
    return Error{ErrorCode::invalid_argument, "a model with external data is written by save()"};
  }
  ::onnx::ModelProto proto;
  proto.set_ir_version(model.ir_version);
  proto.set_producer_name("collage tc");
  ::onnx::OperatorSetIdProto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(model.opset);
  ::onnx::GraphProto* g = proto.mutable_graph();
  g->set_name(model.graph_name);
  for (const OnnxValueInfo& v : model.inputs) fill_value_info(v, g->add_input());
  for (const OnnxValueInfo& v : model.outputs) fill_value_info(v, g->add_output());
  for (const auto& [name, tensor] : model.initializers) {
    ::onnx::TensorProto* t = g->add_initializer();
    if (collage::Status s = detail::tensor_to_proto(tensor, name, t); !s.ok()) return s.error();
    if (!model.external_data.empty()) move_to_external(model.external_data, *t, *external_bytes);
  }
  for (const OnnxNode& node : model.nodes) {
    if (collage::Status s = fill_node(node, g->add_node()); !s.ok()) return s.error();
  }
  std::set<std::string> function_domains;
  for (const OnnxFunction& function : model.functions) {
    if (collage::Status s = fill_function(function, proto.add_functions()); !s.ok()) return s.error();
    function_domains.insert(function.domain);
  }
  for (const std::string& domain : function_domains) {
    ::onnx::OperatorSetIdProto* id = proto.add_opset_import();
    id->set_domain(domain);
    id->set_version(1);
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) return Error{ErrorCode::internal, "cannot serialise the model"};
  return bytes;
}

collage::Result<OnnxModel> parse_model(std::string_view bytes) {
  ::onnx::ModelProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Error{ErrorCode::parse, "not an ONNX ModelProto (malformed or truncated)"};
  }
  OnnxModel model;
  model.opset = 0;
  model.ir_version = static_cast<int>(std::min<std::int64_t>(proto.ir_version(), std::numeric_limits<int>::max()));
  for (const ::onnx::OperatorSetIdProto& id : proto.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") model.opset = static_cast<int>(id.version());
  }
  const ::onnx::GraphProto& g = proto.graph();
  model.graph_name = g.name();
  for (const auto& v : g.input()) model.inputs.push_back(value_info_from(v));
  for (const auto& v : g.output()) model.outputs.push_back(value_info_from(v));
  for (const auto& t : g.initializer()) {
    collage::Result<OnnxTensor> value = detail::tensor_from_proto(t);
    if (!value.ok()) return Error{value.error().code, "initializer '" + t.name() + "': " + value.error().message};
    model.initializers.emplace_back(t.name(), std::move(value).value());
  }
  for (const auto& n : g.node()) {
    OnnxNode node{n.op_type(), {n.input().begin(), n.input().end()}, {n.output().begin(), n.output().end()}, {}, n.name(), n.domain()};
    const std::string node_name = n.name().empty() && n.output_size() > 0 ? n.output(0) : n.name();
    for (const auto& a : n.attribute()) {
      if (std::optional<OnnxAttr> value = attr_from(a)) node.attrs.emplace_back(a.name(), std::move(*value));
      else model.left_out.push_back("node '" + node_name + "' (" + n.op_type() + "): attribute '" + a.name() + "'");
    }
    model.nodes.push_back(std::move(node));
  }
  for (const ::onnx::FunctionProto& f : proto.functions()) {
    model.left_out.push_back("local function '" + (f.domain().empty() ? f.name() : f.domain() + "." + f.name()) + "'");
  }
  return model;
}

collage::Status save(const OnnxModel& model, const std::string& path) {
  std::string external_bytes;
  collage::Result<std::string> bytes = serialize(model, &external_bytes);
  if (!bytes.ok()) return bytes.error();
  if (!model.external_data.empty()) {
    const std::size_t slash = path.find_last_of('/');
    const std::string external_path = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + model.external_data;
    std::ofstream external(external_path, std::ios::binary | std::ios::trunc);
    external.write(external_bytes.data(), static_cast<std::streamsize>(external_bytes.size()));
    external.close();
    if (!external) return Error{ErrorCode::io, external_path + ": cannot write"};
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  out.close();
  if (!out) return Error{ErrorCode::io, path + ": cannot write"};
  return collage::Status::success();
}

}  // namespace tc
