#pragma once

/// \file
/// Backend and Kernel: what every backend of the example compiler is. A backend is two things: a
/// rule saying which sub-graphs it can run (a collage PartitionSpec) and a compile function
/// turning one extracted sub-graph (a Function) into a runnable Kernel or an error value. The cost
/// oracle and the executor call the same compile function, so what was measured is what runs.

#include <memory>
#include <string>
#include <vector>

#include <collage/rules/partition_spec.hpp>
#include <collage/support/result.hpp>

#include "runtime/device.hpp"
#include "tensor/function.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// A compiled partition, ready to run on the device it was compiled for.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Runs once. inputs[k] is the dense row-major float32 tensor of the Function's k-th graph
  /// input, outputs[k] receives its k-th graph output; all are device pointers of the kernel's
  /// device, and outputs never alias inputs. Kernels launched on an asynchronous device may
  /// return before they finish (Device::synchronize waits).
  virtual collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) = 0;
};

/// A backend: a collage target with its partition rule and its compiler.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The target name ("native", "eigen", "onednn", ...).
  virtual const std::string& name() const = 0;
  /// The device its kernels run on.
  virtual DeviceKind device() const = 0;
  /// The rule proposing the sub-graphs it can run, with name() as target.
  virtual collage::PartitionSpec<Graph> spec() const = 0;
  /// Compiles `function` for `device` (of kind device()). An unsupported case is an error value
  /// naming it ("onednn: Conv with 3 spatial dims"), never a crash.
  virtual collage::Result<std::unique_ptr<Kernel>> compile(const Function& function, Device& device) const = 0;
  /// What besides the device its kernels' speed depends on ("threads=4"), "" for the default:
  /// part of the measurement database's identity, so that costs measured otherwise are not served.
  virtual std::string configuration() const { return ""; }
};

}  // namespace tc
