#include "onnx/proto_node.hpp"

namespace tc::detail {

namespace {

using ::onnx::AttributeProto;

/// Whether `a` holds a value of `type` (an attribute written without its type field counts when
/// the field of that type is set).
bool is_type(const AttributeProto& a, AttributeProto::AttributeType type) {
  if (a.type() == type) return true;
  if (a.type() != AttributeProto::UNDEFINED) return false;
  switch (type) {
    case AttributeProto::INT: return a.has_i();
    case AttributeProto::FLOAT: return a.has_f();
    case AttributeProto::STRING: return a.has_s();
    case AttributeProto::TENSOR: return a.has_t();
    case AttributeProto::INTS: return a.ints_size() > 0;
    case AttributeProto::FLOATS: return a.floats_size() > 0;
    default: return false;
  }
}

collage::Error wrong_type(const std::string& name, const char* expected) {
  return collage::Error{collage::ErrorCode::parse, "attribute '" + name + "' must be " + expected};
}

}  // namespace

const AttributeProto* NodeAttrs::find(const std::string& name) const {
  for (const AttributeProto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

collage::Result<std::int64_t> NodeAttrs::get_int(const std::string& name, std::int64_t fallback) const {
  const AttributeProto* a = find(name);
  if (a == nullptr) return fallback;
  if (!is_type(*a, AttributeProto::INT)) return wrong_type(name, "an int");
  return a->i();
}

collage::Result<float> NodeAttrs::get_float(const std::string& name, float fallback) const {
  const AttributeProto* a = find(name);
  if (a == nullptr) return fallback;
  if (!is_type(*a, AttributeProto::FLOAT)) return wrong_type(name, "a float");
  return a->f();
}

collage::Result<std::string> NodeAttrs::get_string(const std::string& name, const std::string& fallback) const {
  const AttributeProto* a = find(name);
  if (a == nullptr) return fallback;
  if (!is_type(*a, AttributeProto::STRING)) return wrong_type(name, "a string");
  return a->s();
}

collage::Result<std::vector<std::int64_t>> NodeAttrs::get_ints(const std::string& name,
                                                               std::vector<std::int64_t> fallback) const {
  const AttributeProto* a = find(name);
  if (a == nullptr) return fallback;
  if (!is_type(*a, AttributeProto::INTS)) return wrong_type(name, "a list of ints");
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

collage::Result<std::vector<std::string>> NodeAttrs::get_strings(const std::string& name,
                                                                  std::vector<std::string> fallback) const {
  const AttributeProto* a = find(name);
  if (a == nullptr) return fallback;
  if (!is_type(*a, AttributeProto::STRINGS)) return wrong_type(name, "a list of strings");
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

collage::Result<std::vector<float>> NodeAttrs::get_floats(const std::string& name, std::vector<float> fallback) const {
  const AttributeProto* a = find(name);
  if (a == nullptr) return fallback;
  if (!is_type(*a, AttributeProto::FLOATS)) return wrong_type(name, "a list of floats");
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

const ::onnx::TensorProto* NodeAttrs::get_tensor(const std::string& name) const {
  const AttributeProto* a = find(name);
  return a != nullptr && is_type(*a, AttributeProto::TENSOR) ? &a->t() : nullptr;
}

}  // namespace tc::detail
