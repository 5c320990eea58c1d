#pragma once

/// \file
/// NativeBackend: the example compiler's own code generator, in the style of TVM's: partitions of
/// TVM's FuseOps rule (an anchor or reduction with elementwise epilogues, elementwise prologues
/// of reductions, injective chains, opaque operators alone) each run as one fused loop nest.
/// Single-threaded, on the CPU. It can run every operator of the IR alone, so it is the fallback
/// for what other backends lack.

#include <cstddef>
#include <memory>
#include <string>

#include "backends/backend.hpp"
#include "loops/lower.hpp"

namespace tc {

/// The native backend (target "native").
class NativeBackend final : public Backend {
 public:
  explicit NativeBackend(std::size_t max_depth = loops::kFusionMaxDepth)
      : Backend("native", DeviceKind::cpu), max_depth_(max_depth) {}

  /// collage::native_fusion_rule(max_depth) for target "native".
  collage::PartitionSpec<Graph> spec() const override;

 private:
  /// Lowers `function` to stages (see loops/lower.hpp) and prepares their kernels. Fails for what
  /// no kernel covers (more than 3 spatial dimensions).
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override;

  std::size_t max_depth_;
};

/// The native backend's entry in the registry (always built).
BackendRegistration native_registration();

}  // namespace tc
