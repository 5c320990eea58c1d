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

namespace tc {

/// The native backend (target "native").
class NativeBackend final : public Backend {
 public:
  /// The rule's bound on a partition's depth. 8 keeps the decomposed forms exporters emit whole
  /// (layer norm: Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add; matmul, bias and GELU: 7) while
  /// bounding the candidates of long elementwise chains.
  static constexpr std::size_t kDefaultMaxDepth = 8;

  explicit NativeBackend(std::size_t max_depth = kDefaultMaxDepth) : max_depth_(max_depth) {}

  const std::string& name() const override;
  DeviceKind device() const override { return DeviceKind::cpu; }
  /// collage::native_fusion_rule(max_depth) for target "native".
  collage::PartitionSpec<Graph> spec() const override;
  /// Lowers `function` to stages (see native/lower.hpp) and prepares their kernels. Fails for a
  /// device other than the CPU and for what no kernel covers (more than 3 spatial dimensions).
  collage::Result<std::unique_ptr<Kernel>> compile(const Function& function, Device& device) const override;

 private:
  std::size_t max_depth_;
};

}  // namespace tc
