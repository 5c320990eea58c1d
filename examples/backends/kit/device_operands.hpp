#pragma once

/// \file
/// DeviceOperands: where the tensors a compiled library call reads live while its kernel runs on a
/// device: one of the kernel's inputs, or a constant of its Function (a weight) uploaded to the
/// device once, when the kernel was compiled.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <collage/support/result.hpp>

#include "runtime/device.hpp"
#include "tensor/function.hpp"

namespace tc {

/// The device addresses of some Input and Constant nodes of a Function.
class DeviceOperands {
 public:
  /// Binds `nodes` of `function`'s graph (Input or Constant nodes; -1 entries are skipped): inputs
  /// by parameter position, constants uploaded to `device` now. Fails naming `who` when a node is
  /// an operator or an allocation or upload fails.
  static collage::Result<DeviceOperands> bind(const Function& function, const std::vector<int>& nodes, Device& device,
                                              const std::string& who) {
    const Graph& g = function.graph;
    DeviceOperands out;
    out.slots_.resize(g.size());
    out.params_ = g.inputs().size();
    out.results_ = g.outputs().size();
    for (std::size_t k = 0; k < g.inputs().size(); ++k) out.slots_[static_cast<std::size_t>(g.inputs()[k])].param = static_cast<int>(k);
    for (int n : nodes) {
      if (n < 0) continue;
      Slot& slot = out.slots_[static_cast<std::size_t>(n)];
      const Node& node = g.node(n);
      if (slot.param >= 0 || slot.constant != nullptr) continue;
      if (node.op != Op::constant || node.value == nullptr) {
        return collage::Error{collage::ErrorCode::internal, who + ": " + describe(g, n) + " is not an operand"};
      }
      collage::Result<OwnedBuffer> buffer = allocate_owned(device, node.value->bytes());
      if (!buffer.ok()) return collage::Error{buffer.error().code, who + ": " + buffer.error().message};
      if (collage::Status st = device.upload(buffer->get(), 0, node.value->data.data(), node.value->bytes()); !st.ok()) {
        return collage::Error{st.code(), who + ": " + st.message()};
      }
      slot.constant = buffer->floats();
      out.constants_.push_back(std::move(buffer).value());
    }
    return out;
  }

  /// The address of node `n`'s value in a run given `inputs` (the Function's parameters in
  /// order); null for -1.
  const float* address(int n, const std::vector<const float*>& inputs) const {
    if (n < 0) return nullptr;
    const Slot& slot = slots_[static_cast<std::size_t>(n)];
    return slot.param >= 0 ? inputs[static_cast<std::size_t>(slot.param)] : slot.constant;
  }

  /// Whether a run was given as many inputs and outputs as the Function has parameters and
  /// results; an error naming `who` if not.
  collage::Status check_buffers(const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
                                const std::string& who) const {
    if (inputs.size() == params_ && outputs.size() == results_) return collage::Status::success();
    return collage::Error{collage::ErrorCode::invalid_argument,
                          who + ": expected " + std::to_string(params_) + " inputs and " + std::to_string(results_) +
                              " outputs, got " + std::to_string(inputs.size()) + " and " +
                              std::to_string(outputs.size())};
  }

 private:
  struct Slot {
    int param = -1;
    float* constant = nullptr;
  };
  std::vector<Slot> slots_;
  std::vector<OwnedBuffer> constants_;
  std::size_t params_ = 0;
  std::size_t results_ = 0;
};

}  // namespace tc
