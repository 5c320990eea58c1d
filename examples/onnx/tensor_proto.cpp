#include "onnx/tensor_proto.hpp"

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "onnx/proto_tensor.hpp"
#include "tensor/op_attrs.hpp"

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;

Error parse_error(const std::string& message) { return Error{ErrorCode::parse, message}; }

/// Bytes of one element in raw_data, or 0 for types without a fixed-size encoding.
std::size_t element_bytes(ElemType type) {
  switch (type) {
    case ElemType::uint8: case ElemType::int8: case ElemType::boolean: return 1;
    case ElemType::uint16: case ElemType::int16: case ElemType::float16: case ElemType::bfloat16: return 2;
    case ElemType::float32: case ElemType::int32: case ElemType::uint32: return 4;
    case ElemType::int64: case ElemType::uint64: case ElemType::float64: return 8;
    default: return 0;
  }
}

bool host_is_little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

/// The little-endian unsigned integer of `bytes` bytes at `p`.
std::uint64_t load_le(const unsigned char* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t k = bytes; k-- > 0;) v = (v << 8) | p[k];
  return v;
}

void store_le(std::uint64_t v, std::size_t bytes, std::string& out) {
  for (std::size_t k = 0; k < bytes; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

float half_to_float(std::uint32_t h) {
  const std::uint32_t exponent = (h >> 10) & 0x1f;
  const std::uint32_t mantissa = h & 0x3ff;
  float v = 0.0f;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    v = mantissa != 0 ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    v = std::ldexp(static_cast<float>(mantissa + 1024), static_cast<int>(exponent) - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

float bits_to_float(std::uint32_t bits) {
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double bits_to_double(std::uint64_t bits) {
  double d = 0.0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

/// The element of `type` whose (zero-extended) bit pattern is `bits`, as held in an OnnxTensor.
void append_bits(ElemType type, std::uint64_t bits, OnnxTensor& t) {
  switch (type) {
    case ElemType::float32: t.reals.push_back(bits_to_float(static_cast<std::uint32_t>(bits))); break;
    case ElemType::float64: t.reals.push_back(static_cast<float>(bits_to_double(bits))); break;
    case ElemType::float16: t.reals.push_back(half_to_float(static_cast<std::uint32_t>(bits & 0xffff))); break;
    case ElemType::bfloat16: t.reals.push_back(bits_to_float(static_cast<std::uint32_t>(bits & 0xffff) << 16)); break;
    case ElemType::int8: t.ints.push_back(static_cast<std::int8_t>(bits & 0xff)); break;
    case ElemType::int16: t.ints.push_back(static_cast<std::int16_t>(bits & 0xffff)); break;
    case ElemType::int32: t.ints.push_back(static_cast<std::int32_t>(bits & 0xffffffff)); break;
    case ElemType::boolean: t.ints.push_back((bits & 0xff) != 0 ? 1 : 0); break;
    default: t.ints.push_back(static_cast<std::int64_t>(bits)); break;  // unsigned, int64
  }
}

std::uint32_t float_bits(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

std::uint64_t double_bits(double d) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

}  // namespace

std::string elem_type_name(ElemType type) {
  switch (type) {
    case ElemType::undefined: return "undefined";
    case ElemType::float32: return "float32";
    case ElemType::uint8: return "uint8";
    case ElemType::int8: return "int8";
    case ElemType::uint16: return "uint16";
    case ElemType::int16: return "int16";
    case ElemType::int32: return "int32";
    case ElemType::int64: return "int64";
    case ElemType::string: return "string";
    case ElemType::boolean: return "bool";
    case ElemType::float16: return "float16";
    case ElemType::float64: return "float64";
    case ElemType::uint32: return "uint32";
    case ElemType::uint64: return "uint64";
    case ElemType::complex64: return "complex64";
    case ElemType::complex128: return "complex128";
    case ElemType::bfloat16: return "bfloat16";
  }
  return "type " + std::to_string(static_cast<int>(type));
}

bool is_real_type(ElemType type) {
  return type == ElemType::float32 || type == ElemType::float64 || type == ElemType::float16 || type == ElemType::bfloat16;
}

bool is_integer_type(ElemType type) {
  switch (type) {
    case ElemType::uint8: case ElemType::int8: case ElemType::uint16: case ElemType::int16: case ElemType::int32:
    case ElemType::int64: case ElemType::boolean: case ElemType::uint32: case ElemType::uint64: return true;
    default: return false;
  }
}

OnnxTensor float_scalar(double v) {
  OnnxTensor t;
  t.reals = {static_cast<float>(v)};
  return t;
}

OnnxTensor int64_vector(const std::vector<std::int64_t>& values) {
  OnnxTensor t;
  t.type = ElemType::int64;
  t.shape = {static_cast<std::int64_t>(values.size())};
  t.ints = values;
  return t;
}

OnnxTensor from_float32(const Tensor& t) {
  OnnxTensor out;
  out.type = ElemType::float32;
  out.shape = t.shape;
  out.reals = t.data;
  return out;
}

collage::Result<Tensor> to_float32(const OnnxTensor& t, const std::string& what) {
  if (t.type != ElemType::float32) {
    return Error{ErrorCode::invalid_argument, what + " is " + elem_type_name(t.type) + ", not float32"};
  }
  return Tensor(t.shape, t.reals);
}

collage::Result<Tensor> integers_as_float32(const OnnxTensor& t, const std::string& what) {
  if (!is_integer_type(t.type)) return Error{ErrorCode::invalid_argument, what + " is " + elem_type_name(t.type) + ", not an integer type"};
  Tensor out(t.shape);
  for (std::size_t i = 0; i < t.ints.size(); ++i) {
    if (t.ints[i] < -kMaxExactInteger || t.ints[i] > kMaxExactInteger) {
      return Error{ErrorCode::invalid_argument, what + ": element " + std::to_string(i) + " is " + std::to_string(t.ints[i]) +
                                                    ", over 2^24 in magnitude (the IR holds integers as float32)"};
    }
    out.data[i] = static_cast<float>(t.ints[i]);
  }
  return out;
}

namespace detail {

std::optional<std::int64_t> checked_numel(const Shape& shape, std::int64_t limit) {
  std::int64_t n = 1;
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0 || d > kMaxDim) return std::nullopt;
    if (d == 0) empty = true;
    else if (n > limit / d) return std::nullopt;
    else n *= d;
  }
  return empty ? 0 : n;
}

collage::Result<OnnxTensor> tensor_from_proto(const ::onnx::TensorProto& proto, std::optional<std::string_view> raw_data) {
  if (!raw_data && (proto.data_location() == ::onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0)) {
    return parse_error("external data is read only for a model's initializers");
  }
  if (proto.has_segment()) return parse_error("segmented tensors are not supported");
  OnnxTensor t;
  t.type = static_cast<ElemType>(proto.data_type());
  if (!is_real_type(t.type) && !is_integer_type(t.type)) {
    return parse_error("element type " + elem_type_name(t.type) + " is not supported");
  }
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  const std::optional<std::int64_t> count = checked_numel(t.shape);
  if (!count) return parse_error("dimensions " + to_string(t.shape) + " are negative or too large");
  const auto n = static_cast<std::size_t>(*count);
  if (raw_data || proto.has_raw_data()) {
    const std::string_view raw = raw_data ? *raw_data : std::string_view(proto.raw_data());
    const std::size_t bytes = element_bytes(t.type);
    if (raw.size() / bytes != n || raw.size() % bytes != 0) {
      return parse_error("raw_data holds " + std::to_string(raw.size()) + " bytes for " + std::to_string(n) + " " +
                         elem_type_name(t.type) + " elements");
    }
    if (t.type == ElemType::float32 && host_is_little_endian()) {  // the common case, copied whole
      resize_fresh(t.reals, n);
      if (n > 0) std::memcpy(t.reals.data(), raw.data(), raw.size());
      return t;
    }
    (is_real_type(t.type) ? t.reals.reserve(n) : t.ints.reserve(n));
    const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
    for (std::size_t i = 0; i < n; ++i) append_bits(t.type, load_le(p + i * bytes, bytes), t);
    return t;
  }
  std::size_t stored = 0;
  switch (t.type) {
    case ElemType::float32:
      stored = static_cast<std::size_t>(proto.float_data_size());
      if (stored == n) t.reals.assign(proto.float_data().begin(), proto.float_data().end());
      break;
    case ElemType::float64:
      stored = static_cast<std::size_t>(proto.double_data_size());
      if (stored == n) {
        for (double d : proto.double_data()) t.reals.push_back(static_cast<float>(d));
      }
      break;
    case ElemType::int64:
      stored = static_cast<std::size_t>(proto.int64_data_size());
      if (stored == n) t.ints.assign(proto.int64_data().begin(), proto.int64_data().end());
      break;
    case ElemType::uint32:
    case ElemType::uint64:
      stored = static_cast<std::size_t>(proto.uint64_data_size());
      if (stored == n) {
        for (std::uint64_t v : proto.uint64_data()) append_bits(t.type, v, t);
      }
      break;
    default:  // the 8-, 16- and 32-bit types, bool and the 16-bit floats live in int32_data
      stored = static_cast<std::size_t>(proto.int32_data_size());
      if (stored == n) {
        for (std::int32_t v : proto.int32_data()) append_bits(t.type, static_cast<std::uint32_t>(v), t);
      }
      break;
  }
  if (stored != n) {
    return parse_error(std::to_string(stored) + " stored values for " + std::to_string(n) + " " +
                       elem_type_name(t.type) + " elements of shape " + to_string(t.shape));
  }
  return t;
}

collage::Status tensor_to_proto(const OnnxTensor& t, const std::string& name, ::onnx::TensorProto* proto) {
  const std::size_t bytes = element_bytes(t.type);
  if (bytes == 0 || t.type == ElemType::float16 || t.type == ElemType::bfloat16) {
    return Error{ErrorCode::invalid_argument, "cannot write " + elem_type_name(t.type) + " tensors"};
  }
  if (numel(t.shape) != t.size()) {
    return Error{ErrorCode::invalid_argument, "tensor '" + name + "' has " + std::to_string(t.size()) +
                                                  " elements for shape " + to_string(t.shape)};
  }
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(static_cast<int>(t.type));
  for (std::int64_t d : t.shape) proto->add_dims(d);
  std::string raw;
  raw.reserve(static_cast<std::size_t>(t.size()) * bytes);
  if (t.type == ElemType::float32) {
    for (float f : t.reals) store_le(float_bits(f), 4, raw);
  } else if (t.type == ElemType::float64) {
    for (float f : t.reals) store_le(double_bits(f), 8, raw);
  } else {
    for (std::int64_t v : t.ints) store_le(static_cast<std::uint64_t>(v), bytes, raw);
  }
  proto->set_raw_data(std::move(raw));
  return collage::Status::success();
}

template <class T>
void resize_fresh(std::vector<T>& v, std::size_t n) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (v.empty() && n * sizeof(T) >= 4 * kHuge) {
    v.reserve(n);
    const auto first = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t begin = (first + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t end = (first + n * sizeof(T)) & ~(kHuge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only: failure is harmless
  }
  v.resize(n);
}

template void resize_fresh(std::vector<float>&, std::size_t);
template void resize_fresh(std::vector<std::int64_t>&, std::size_t);

}  // namespace detail

collage::Result<std::string> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Error{ErrorCode::io, path + ": cannot open"};
  const std::streamoff size = in.tellg();
  if (size < 0) return Error{ErrorCode::io, path + ": cannot read"};
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) return Error{ErrorCode::io, path + ": read error"};
  return bytes;
}

collage::Result<OnnxTensor> parse_tensor_proto(std::string_view bytes) {
  ::onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return parse_error("not a TensorProto (malformed or truncated)");
  }
  return detail::tensor_from_proto(proto);
}

collage::Result<OnnxTensor> read_tensor_file(const std::string& path) {
  collage::Result<std::string> bytes = read_file_bytes(path);
  if (!bytes.ok()) return bytes.error();
  collage::Result<OnnxTensor> t = parse_tensor_proto(*bytes);
  if (!t.ok()) return Error{t.error().code, path + ": " + t.error().message};
  return t;
}

collage::Status write_tensor_file(const OnnxTensor& t, const std::string& name, const std::string& path) {
  ::onnx::TensorProto proto;
  if (collage::Status s = detail::tensor_to_proto(t, name, &proto); !s.ok()) return s;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out)) return Error{ErrorCode::io, path + ": cannot write"};
  out.close();
  if (!out) return Error{ErrorCode::io, path + ": cannot write"};
  return collage::Status::success();
}

}  // namespace tc
