#pragma once

/// \file
/// Internal to examples/onnx/: a model's serialised bytes with the raw_data of its initializers
/// cut out, so protobuf parses the model's structure without copying the weights (hundreds of
/// megabytes), which the reader then converts straight from the (mapped) file.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc::detail {

/// A ModelProto's bytes without its initializers' raw_data fields, and where each initializer's
/// raw_data lies in the original bytes (by initializer order; nothing for one without raw_data).
struct StrippedModel {
  std::string bytes;
  std::vector<std::optional<std::string_view>> raw_data;
};

/// `model` stripped, or nothing when its wire format does not parse (protobuf, given the bytes
/// whole, then names the problem). The views point into `model`.
std::optional<StrippedModel> strip_initializer_data(std::string_view model);

}  // namespace tc::detail
