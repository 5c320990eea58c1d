#pragma once

/// \file
/// ONNX tensors of any element type (OnnxTensor) and the TensorProto files of the ONNX test-data
/// layout (input_0.pb, output_0.pb). Only the ONNX reader's folding and the test-data readers see
/// integer tensors; the IR itself is float32.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <collage/support/result.hpp>

#include "tensor/tensor.hpp"

namespace tc {

/// ONNX's TensorProto.DataType codes.
enum class ElemType : int {
  undefined = 0,
  float32 = 1,
  uint8 = 2,
  int8 = 3,
  uint16 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  string = 8,
  boolean = 9,
  float16 = 10,
  float64 = 11,
  uint32 = 12,
  uint64 = 13,
  complex64 = 14,
  complex128 = 15,
  bfloat16 = 16,
};

/// "float32", "int64", ...; "type 42" for codes ONNX does not define.
std::string elem_type_name(ElemType type);
/// float32, float64, float16 and bfloat16.
bool is_real_type(ElemType type);
/// The signed and unsigned integer types and bool.
bool is_integer_type(ElemType type);

/// A tensor of an ONNX element type. Floating-point elements are held as float (float64 rounded),
/// integer and bool elements as int64 (uint64 above INT64_MAX wraps).
struct OnnxTensor {
  ElemType type = ElemType::float32;
  Shape shape;
  std::vector<float> reals;        ///< the elements when is_real_type(type)
  std::vector<std::int64_t> ints;  ///< the elements when is_integer_type(type)

  std::int64_t size() const { return is_real_type(type) ? static_cast<std::int64_t>(reals.size()) : static_cast<std::int64_t>(ints.size()); }
};

/// The float32 tensor `t` as an OnnxTensor.
OnnxTensor from_float32(const Tensor& t);
/// A float32 scalar (rank 0) holding `v` rounded to float.
OnnxTensor float_scalar(double v);
/// A 1-D int64 tensor holding `values` (shapes, axes, pads as operands).
OnnxTensor int64_vector(const std::vector<std::int64_t>& values);
/// `t` as a float32 tensor; an error naming `what` when its type is not float32.
collage::Result<Tensor> to_float32(const OnnxTensor& t, const std::string& what);
/// Integer (or bool) tensor `t` as the float32 tensor of the same numbers, as the IR holds a
/// run-time integer input; an error naming `what` for another type or a magnitude over 2^24.
collage::Result<Tensor> integers_as_float32(const OnnxTensor& t, const std::string& what);

/// The TensorProto serialised in `bytes` (typed fields or little-endian raw_data). External data,
/// strings and complex numbers are errors (code parse or invalid_argument).
collage::Result<OnnxTensor> parse_tensor_proto(std::string_view bytes);
/// parse_tensor_proto() of the file at `path` (errors name the path; code io when unreadable).
collage::Result<OnnxTensor> read_tensor_file(const std::string& path);
/// Writes `t` as a TensorProto named `name` (raw_data) to `path`.
collage::Status write_tensor_file(const OnnxTensor& t, const std::string& name, const std::string& path);

/// The whole file at `path`, or an io error naming it.
collage::Result<std::string> read_file_bytes(const std::string& path);

}  // namespace tc
