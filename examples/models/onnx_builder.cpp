#include "models/onnx_builder.hpp"

#include <cstring>
#include <fstream>

#include <onnx/onnx_pb.h>

namespace tc {

OnnxAttr OnnxAttr::of(std::string name, std::int64_t v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.type = Type::int_;
  a.i = v;
  return a;
}

OnnxAttr OnnxAttr::of(std::string name, float v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.type = Type::float_;
  a.f = v;
  return a;
}

OnnxAttr OnnxAttr::of(std::string name, std::vector<std::int64_t> v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.type = Type::ints;
  a.ints = std::move(v);
  return a;
}

struct OnnxBuilder::Impl {
  onnx::ModelProto model;
  onnx::GraphProto* graph = nullptr;
};

OnnxBuilder::OnnxBuilder(std::string name, std::uint64_t seed) : impl_(std::make_unique<Impl>()), rng_(seed) {
  onnx::ModelProto& m = impl_->model;
  m.set_ir_version(8);
  m.set_producer_name("collage-examples");
  m.set_producer_version("0.1");
  onnx::OperatorSetIdProto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  impl_->graph = m.mutable_graph();
  impl_->graph->set_name(std::move(name));
}

OnnxBuilder::~OnnxBuilder() = default;

std::string OnnxBuilder::fresh(const std::string& hint) { return hint + "_" + std::to_string(counter_++); }

namespace {

void set_float_type(onnx::ValueInfoProto* v, const Shape& shape) {
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  onnx::TensorShapeProto* s = t->mutable_shape();
  for (std::int64_t d : shape) s->add_dim()->set_dim_value(d);
}

}  // namespace

std::string OnnxBuilder::input(const std::string& name, const Shape& shape) {
  onnx::ValueInfoProto* v = impl_->graph->add_input();
  v->set_name(name);
  set_float_type(v, shape);
  return name;
}

std::string OnnxBuilder::initializer(const std::string& hint, const Tensor& value) {
  onnx::TensorProto* t = impl_->graph->add_initializer();
  const std::string name = fresh(hint);
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (std::int64_t d : value.shape) t->add_dims(d);
  std::string raw(value.data.size() * sizeof(float), '\0');
  if (!raw.empty()) std::memcpy(raw.data(), value.data.data(), raw.size());
  t->set_raw_data(std::move(raw));
  return name;
}

std::string OnnxBuilder::int64_initializer(const std::string& hint, const std::vector<std::int64_t>& values,
                                           const Shape& shape) {
  onnx::TensorProto* t = impl_->graph->add_initializer();
  const std::string name = fresh(hint);
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_INT64);
  for (std::int64_t d : shape) t->add_dims(d);
  for (std::int64_t v : values) t->add_int64_data(v);
  return name;
}

std::string OnnxBuilder::random_weight(const std::string& hint, const Shape& shape, float scale) {
  Tensor t(shape);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (float& v : t.data) v = dist(rng_);
  return initializer(hint, t);
}

std::vector<std::string> OnnxBuilder::node_n(const std::string& op, const std::vector<std::string>& inputs,
                                             std::size_t outputs, const std::vector<OnnxAttr>& attrs) {
  onnx::NodeProto* n = impl_->graph->add_node();
  std::string lower = op;
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const std::string base = fresh(lower);
  n->set_op_type(op);
  n->set_name(base);
  for (const std::string& in : inputs) n->add_input(in);
  std::vector<std::string> names;
  for (std::size_t k = 0; k < outputs; ++k) {
    names.push_back(outputs == 1 ? base : base + "_" + std::to_string(k));
    n->add_output(names.back());
  }
  for (const OnnxAttr& a : attrs) {
    onnx::AttributeProto* p = n->add_attribute();
    p->set_name(a.name);
    switch (a.type) {
      case OnnxAttr::Type::int_:
        p->set_type(onnx::AttributeProto_AttributeType_INT);
        p->set_i(a.i);
        break;
      case OnnxAttr::Type::float_:
        p->set_type(onnx::AttributeProto_AttributeType_FLOAT);
        p->set_f(a.f);
        break;
      case OnnxAttr::Type::ints:
        p->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (std::int64_t v : a.ints) p->add_ints(v);
        break;
      case OnnxAttr::Type::floats:
        p->set_type(onnx::AttributeProto_AttributeType_FLOATS);
        for (float v : a.floats) p->add_floats(v);
        break;
    }
  }
  return names;
}

std::string OnnxBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                              const std::vector<OnnxAttr>& attrs) {
  return node_n(op, inputs, 1, attrs)[0];
}

void OnnxBuilder::output(const std::string& value, const Shape& shape) {
  onnx::ValueInfoProto* v = impl_->graph->add_output();
  v->set_name(value);
  set_float_type(v, shape);
}

std::string OnnxBuilder::serialize() const { return impl_->model.SerializeAsString(); }

collage::Status OnnxBuilder::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string bytes = serialize();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return collage::Error{collage::ErrorCode::io, path + ": cannot write"};
  return collage::Status::success();
}

}  // namespace tc
