#pragma once

/// \file
/// Internal to examples/onnx/: which version of an operator's definition a model uses, and
/// whether the reader reads that version. The reader reads opsets up to 27: from opset 11 on
/// every definition it has a lowering for; in older opsets the definitions still in force at 11
/// and the older ones it knows (attributes that later became inputs, Upsample, Resize-10 ...),
/// which covers the model zoo's opsets 7 to 10. The definitions of opsets 18 to 27 come from a
/// table when the installed libonnx predates them.

#include <string>
#include <vector>

#include <collage/support/result.hpp>

namespace tc::detail {

constexpr int kMaxOpset = 27;

/// The opset in which the definition of `op_type` in force at `opset` (default domain) was
/// introduced ("Conv" at opset 9 is Conv-1: 1). An error, naming the operator and the opset, when
/// no definition is known or the reader does not read that version. `opset` is at most
/// kMaxOpset.
collage::Result<int> definition_version(const std::string& op_type, int opset);

/// The opsets after 17, up to kMaxOpset, that introduced a definition of `op_type` (ONNX's
/// changelog), in order; empty for an operator unchanged since 17.
std::vector<int> later_definitions(const std::string& op_type);

/// Whether reduction `op_type` at definition `version` takes its axes as input 1 (ReduceSum from
/// version 13, the other reductions from 18) rather than as an attribute.
inline bool reduction_axes_are_input(const std::string& op_type, int version) {
  return version >= 18 || (op_type == "ReduceSum" && version >= 13);
}

}  // namespace tc::detail
