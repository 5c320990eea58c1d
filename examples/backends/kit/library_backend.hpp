#pragma once

/// \file
/// LibraryBackend: a library backend made of its three parts, a pattern table (what it proposes),
/// a planner (what it does for one call; the table's check) and a kernel (the library calls for a
/// partition's plans), as eigen, onednn, cublas and cudnn are.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <collage/rules/partition_spec.hpp>
#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/kit/library_call.hpp"
#include "backends/kit/pattern_table.hpp"

namespace tc {

/// The calls of a partition (library_calls or one_call).
using CallsFunction = std::function<collage::Result<std::vector<LibraryCall>>(const Function&)>;

/// Plans one call.
template <class CallPlan>
using PlanFunction = std::function<collage::Result<CallPlan>(const Graph&, const LibraryCall&)>;

/// The kernel running `plans` (one per call, in order) for a partition, on an available device of
/// the backend's kind.
template <class CallPlan>
using KernelFunction = std::function<collage::Result<std::unique_ptr<Kernel>>(
    const Function&, const std::vector<LibraryCall>&, std::vector<CallPlan>, Device&)>;

/// What a library backend is, its plans of one call being `CallPlan`s.
template <class CallPlan>
struct Library {
  /// A library named `name` running on `device`, proposing `table`'s matches, reading a
  /// partition as `calls` and planning each with `plan`; without a kernel yet, `not_built` says why
  /// ("" when this build has one).
  Library(std::string name, DeviceKind device, std::string not_built, LibraryTable table, CallsFunction calls,
          PlanFunction<CallPlan> plan)
      : name(std::move(name)),
        device(device),
        not_built(std::move(not_built)),
        table(std::move(table)),
        calls(std::move(calls)),
        plan(std::move(plan)) {}

  /// The target name.
  std::string name;
  /// The kind of device its kernels run on.
  DeviceKind device;
  /// Why this build has no kernels ("" when it has).
  std::string not_built;
  /// Its pattern table.
  LibraryTable table;
  /// The calls of a partition.
  CallsFunction calls;
  /// Its planner.
  PlanFunction<CallPlan> plan;
  /// The operators it proposes alone, as their own partitions (none when empty).
  CallCheck single_operators;
  /// Its kernels (none in a build without the library).
  KernelFunction<CallPlan> kernel;
  /// Its partitions of several calls (see table_rule; none by default).
  Joins joins;
  /// See Backend::configuration.
  std::string configuration;
  /// See Backend::layout.
  Layout layout = Layout::plain;
};

/// The Backend of a Library: its rule is table_rule over the table (and the single operators),
/// its compile plans each call of a Function and makes the kernel of the plans, or says that this
/// build has no kernel.
template <class CallPlan>
class LibraryBackend final : public Backend {
 public:
  explicit LibraryBackend(Library<CallPlan> library)
      : Backend(library.name, library.device, library.layout), library_(std::move(library)) {}

  collage::PartitionSpec<Graph> spec() const override {
    return collage::PartitionSpec<Graph>{name(), table_rule(library_.table, name(), library_.single_operators, library_.joins), 0.0};
  }
  std::string configuration() const override { return library_.configuration; }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    collage::Result<std::vector<LibraryCall>> calls = library_.calls(function);
    if (!calls.ok()) return calls.error();
    std::vector<CallPlan> plans;
    for (const LibraryCall& call : *calls) {
      collage::Result<CallPlan> plan = library_.plan(function.graph, call);
      if (!plan.ok()) return plan.error();
      plans.push_back(std::move(plan).value());
    }
    if (!library_.kernel) return collage::Error{collage::ErrorCode::invalid_argument, library_.not_built};
    return library_.kernel(function, *calls, std::move(plans), device);
  }

  Library<CallPlan> library_;
};

/// The Backend of `library`.
template <class CallPlan>
std::unique_ptr<Backend> make_library_backend(Library<CallPlan> library) {
  return std::make_unique<LibraryBackend<CallPlan>>(std::move(library));
}

}  // namespace tc
