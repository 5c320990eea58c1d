#pragma once

/// \file
/// Backend and Kernel: what every backend of the example compiler is. A backend is two things: a
/// rule saying which sub-graphs it can run (a collage PartitionSpec) and a compile function
/// turning one extracted sub-graph (a Function) into a runnable Kernel or an error value. The cost
/// oracle and the executor call the same compile function, so what was measured is what runs.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <collage/rules/partition_spec.hpp>
#include <collage/support/result.hpp>

#include "runtime/device.hpp"
#include "tensor/function.hpp"
#include "tensor/layout.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// A compiled partition, ready to run on the device it was compiled for.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Runs once. inputs[k] is the float32 tensor of the Function's k-th graph input, outputs[k]
  /// receives its k-th graph output, each in its backend's layout (Backend::layout); all are
  /// device pointers of the kernel's device, and outputs never alias inputs. Kernels launched on an asynchronous device may
  /// return before they finish (Device::synchronize waits).
  virtual collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) = 0;
};

/// A backend: a collage target with its partition rule and its compiler.
class Backend {
 public:
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  /// The target name ("native", "eigen", "onednn", ...).
  const std::string& name() const { return name_; }
  /// The kind of device its kernels run on.
  DeviceKind device() const { return device_; }
  /// The layout its kernels read and write rank-4 values in (others are plain): with the device,
  /// where a value it reads must be, and where the values it writes are.
  Layout layout() const { return layout_; }
  /// The rule proposing the sub-graphs it can run, with name() as target.
  virtual collage::PartitionSpec<Graph> spec() const = 0;
  /// Compiles `function` for `device`. A device of another kind, or one that is not available, is
  /// refused here; every error names the backend ("onednn: Conv with 3 spatial dims"). An
  /// unsupported case is an error value, never a crash.
  collage::Result<std::unique_ptr<Kernel>> compile(const Function& function, Device& device) const;
  /// Readies compile() for `functions` on `device` ahead of time, doing in parallel what the
  /// backend can (the cuda backend compiles their generated programs with NVRTC on the host's
  /// cores), so that compile() of one of them is quicker. Never fails: what it could not ready,
  /// compile() compiles or refuses as usual. Nothing for a device compile() would refuse.
  void prepare(const std::vector<const Function*>& functions, Device& device) const;
  /// What besides the device its kernels' speed depends on ("threads=4"), "" for the default:
  /// part of the measurement database's identity, so that costs measured otherwise are not served.
  virtual std::string configuration() const { return ""; }

 protected:
  Backend(std::string name, DeviceKind device, Layout layout = Layout::plain)
      : name_(std::move(name)), device_(device), layout_(layout) {}

 private:
  /// The backend's own compiler, given an available device of kind device(). Its errors get the
  /// backend's name in front unless they start with it already.
  virtual collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const = 0;
  /// prepare() on an available device of kind device(); nothing by default.
  virtual void do_prepare(const std::vector<const Function*>& /*functions*/, Device& /*device*/) const {}

  std::string name_;
  DeviceKind device_;
  Layout layout_;
};

/// Choices every backend is made with.
struct BackendOptions {
  /// Threads a CPU backend's kernels may use (backends that cannot use more run on one).
  int cpu_threads = 1;
  /// Whether make_default_backends also makes the backends that are not made by default (those
  /// keeping values in the CPU's blocked layout).
  bool blocked_layouts = false;
};

/// A CPU backend's configuration() on `threads` threads: "threads=N", "" for one.
std::string threads_configuration(int threads);

/// What a backend folder tells the registry (backends/registry.hpp) about its backend.
struct BackendRegistration {
  /// The target name.
  std::string name;
  /// The kind of device its kernels run on.
  DeviceKind device = DeviceKind::cpu;
  /// Empty when this build has its kernels; otherwise why not ("oneDNN 2.x was not found").
  std::string not_built;
  /// Makes the backend (null when it is not built).
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> make;
  /// Whether make_default_backends makes it without being asked (BackendOptions::blocked_layouts).
  bool by_default = true;

  bool built() const { return not_built.empty(); }
};

}  // namespace tc
