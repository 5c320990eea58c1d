#pragma once

/// \file
/// KernelOperands: where the values a library backend's kernel reads and writes live while it
/// runs, on the host or on a device: the Function's inputs and outputs (given to Kernel::run),
/// constants bound when the kernel is compiled (read in place on the CPU, uploaded once to any
/// other device), and scratch buffers on the device for values that pass between its calls.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/kit/library_call.hpp"
#include "runtime/device.hpp"
#include "tensor/function.hpp"

namespace tc {

/// The addresses of a compiled partition's values.
class KernelOperands {
 public:
  /// Binds the values of `function` that `calls` (see library_calls) produce and that `reads`
  /// (nodes the kernel reads; -1 entries are skipped) name: inputs by parameter position, results
  /// by output position, each call's root that is neither in a scratch buffer allocated on
  /// `device`, and the constants among `reads` (and those returned) now. Fails when a node of
  /// `reads` is none of these, when an allocation or upload fails, or, on a device other than the
  /// CPU, when an output is not written by a call (an input or constant returned, a result
  /// returned twice: those are copied on the host).
  static collage::Result<KernelOperands> bind(const Function& function, const std::vector<LibraryCall>& calls,
                                              const std::vector<int>& reads, Device& device) {
    const Graph& g = function.graph;
    KernelOperands out;
    out.slots_.resize(g.size());
    out.inputs_ = g.inputs().size();
    out.outputs_ = g.outputs().size();
    for (std::size_t k = 0; k < g.inputs().size(); ++k) out.slot(g.inputs()[k]) = {Kind::param, k};
    std::vector<int> constants;
    for (std::size_t k = 0; k < g.outputs().size(); ++k) {
      const int n = g.outputs()[k];
      Slot& s = out.slot(n);
      if (s.kind == Kind::none && g.node(n).op != Op::constant) {
        s = {Kind::result, k};
        continue;
      }
      if (device.kind() != DeviceKind::cpu) {
        return collage::Error{collage::ErrorCode::invalid_argument,
                              "output " + std::to_string(k) + " (" + describe(g, n) + ") is written by no call"};
      }
      out.copies_.push_back({n, k, static_cast<std::size_t>(numel(g.node(n).shape))});
      if (g.node(n).op == Op::constant) constants.push_back(n);
    }
    for (const LibraryCall& call : calls) {
      Slot& s = out.slot(call.root());
      if (s.kind != Kind::none) continue;
      collage::Result<OwnedBuffer> buffer =
          allocate_owned(device, static_cast<std::size_t>(numel(g.node(call.root()).shape)) * sizeof(float));
      if (!buffer.ok()) return buffer.error();
      s = {Kind::scratch, 0, buffer->floats()};
      out.buffers_.push_back(std::move(buffer).value());
    }
    for (int n : reads) {
      if (n < 0 || out.slot(n).kind != Kind::none) continue;
      if (g.node(n).op != Op::constant || g.node(n).value == nullptr) {
        return collage::Error{collage::ErrorCode::internal, describe(g, n) + " is not an operand of the kernel"};
      }
      constants.push_back(n);
    }
    for (int n : constants) {
      if (collage::Status st = out.bind_constant(g, n, device); !st.ok()) return st.error();
    }
    return out;
  }

  /// The address of node `n`'s value in a run given `inputs` and `outputs` (the Function's
  /// parameters and results in order); null for -1. Inputs and constants are read-only.
  float* address(int n, const std::vector<const float*>& inputs, const std::vector<float*>& outputs) const {
    if (n < 0) return nullptr;
    const Slot& s = slots_[static_cast<std::size_t>(n)];
    switch (s.kind) {
      case Kind::param: return const_cast<float*>(inputs[s.index]);
      case Kind::result: return outputs[s.index];
      case Kind::scratch:
      case Kind::constant: return s.data;
      case Kind::none: break;
    }
    return nullptr;
  }

  /// Whether a run was given as many inputs and outputs as the Function has parameters and
  /// results; an error naming `who` if not.
  collage::Status check_buffers(const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
                                const std::string& who) const {
    if (inputs.size() == inputs_ && outputs.size() == outputs_) return collage::Status::success();
    return collage::Error{collage::ErrorCode::invalid_argument,
                          who + ": expected " + std::to_string(inputs_) + " inputs and " + std::to_string(outputs_) +
                              " outputs, got " + std::to_string(inputs.size()) + " and " +
                              std::to_string(outputs.size())};
  }

  /// Fills the outputs no call writes (on the host): a result returned more than once (from its
  /// first output), an input or a constant returned as is.
  void copy_outputs(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) const {
    for (const Copy& c : copies_) {
      const float* from = address(c.node, inputs, outputs);
      std::copy(from, from + c.floats, outputs[c.output]);
    }
  }

  /// Whether `n` is a constant bound at compile time.
  bool is_constant(int n) const { return slots_[static_cast<std::size_t>(n)].kind == Kind::constant; }
  /// The host value of bound constant `n`, kept alive with the operands (kernels may outlive
  /// their Function).
  const Tensor& constant(int n) const { return *constants_[static_cast<std::size_t>(n)]; }

 private:
  enum class Kind { none, param, result, scratch, constant };
  struct Slot {
    Kind kind = Kind::none;
    std::size_t index = 0;
    float* data = nullptr;
  };
  struct Copy {
    int node;
    std::size_t output;
    std::size_t floats;
  };

  Slot& slot(int n) { return slots_[static_cast<std::size_t>(n)]; }

  collage::Status bind_constant(const Graph& g, int n, Device& device) {
    Slot& s = slot(n);
    if (s.kind == Kind::constant) return collage::Status::success();
    const std::shared_ptr<const Tensor>& value = g.node(n).value;
    if (constants_.empty()) constants_.resize(g.size());
    constants_[static_cast<std::size_t>(n)] = value;
    if (device.kind() == DeviceKind::cpu) {
      s = {Kind::constant, 0, const_cast<float*>(value->data.data())};
      return collage::Status::success();
    }
    collage::Result<OwnedBuffer> buffer = allocate_owned(device, value->bytes());
    if (!buffer.ok()) return buffer.error();
    if (collage::Status st = device.upload(buffer->get(), 0, value->data.data(), value->bytes()); !st.ok()) return st;
    s = {Kind::constant, 0, buffer->floats()};
    buffers_.push_back(std::move(buffer).value());
    return collage::Status::success();
  }

  std::vector<Slot> slots_;
  std::vector<std::shared_ptr<const Tensor>> constants_;
  std::vector<OwnedBuffer> buffers_;
  std::vector<Copy> copies_;
  std::size_t inputs_ = 0;
  std::size_t outputs_ = 0;
};

/// The nodes the plans of a kernel's calls read: operands(plan) of each (found by
/// argument-dependent lookup in the plan's namespace), in order.
template <class CallPlan>
std::vector<int> operands_of(const std::vector<CallPlan>& plans) {
  std::vector<int> out;
  for (const CallPlan& plan : plans) {
    const std::vector<int> more = operands(plan);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

}  // namespace tc
