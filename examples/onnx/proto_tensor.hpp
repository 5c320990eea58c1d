#pragma once

/// \file
/// Internal to examples/onnx/: conversions between OnnxTensor and the protobuf TensorProto, and
/// the size limits every reader applies. Only the .cpp files of this folder include it (it pulls
/// in the generated protobuf headers).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include <collage/support/result.hpp>

#include "onnx/tensor_proto.hpp"

namespace tc::detail {

/// The most elements a tensor read or folded from a model may have (and the bound that keeps
/// every size computation in int64), and the largest single dimension.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
inline constexpr std::int64_t kMaxDim = (std::int64_t{1} << 31) - 1;

/// The number of elements of `shape`, or nothing when a dimension is negative or above kMaxDim or
/// the count exceeds `limit`.
std::optional<std::int64_t> checked_numel(const Shape& shape, std::int64_t limit = kMaxElements);

/// The tensor in `proto`, its raw_data being `raw_data` when given (cut out of the model before
/// parsing, see onnx/wire.hpp, or its external data); errors (code parse) name the problem, not
/// the tensor.
collage::Result<OnnxTensor> tensor_from_proto(const ::onnx::TensorProto& proto,
                                              std::optional<std::string_view> raw_data = std::nullopt);

/// `v` resized to `n` elements, asking the kernel for transparent huge pages under a large new
/// buffer before its first write: faulting it in 4 KiB pages is most of the time it takes to load
/// a model of hundreds of megabytes.
template <class T>
void resize_fresh(std::vector<T>& v, std::size_t n);

/// Fills `proto` with `t` (raw_data, little-endian) under `name`; an error for element types it
/// cannot write (strings, complex, float16, bfloat16).
collage::Status tensor_to_proto(const OnnxTensor& t, const std::string& name, ::onnx::TensorProto* proto);

}  // namespace tc::detail
