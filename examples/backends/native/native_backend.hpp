#pragma once

/// \file
/// NativeBackend: the example compiler's own code generator, in the style of TVM's: partitions of
/// TVM's FuseOps rule (an anchor or reduction with elementwise epilogues, elementwise prologues
/// of reductions, injective chains, opaque operators alone) each run as one fused loop nest, on
/// the CPU, on one thread or more (runtime/cpu_threads.hpp). It can run every operator of the IR
/// alone, so it is the fallback for what other backends lack.

#include <cstddef>
#include <memory>
#include <string>

#include "backends/backend.hpp"
#include "loops/lower.hpp"

namespace tc {

/// The native backend (target "native").
class NativeBackend final : public Backend {
 public:
  /// Kernels on `threads` threads (at least 1; 1 in a build without them, cpu_threads_available).
  explicit NativeBackend(std::size_t max_depth = loops::kFusionMaxDepth, int threads = 1);

  /// collage::native_fusion_rule(max_depth) for target "native".
  collage::PartitionSpec<Graph> spec() const override;
  /// "threads=N" on N > 1 threads.
  std::string configuration() const override;

 private:
  /// Lowers `function` to stages (see loops/lower.hpp) and prepares their kernels. Fails for what
  /// no kernel covers (more than 3 spatial dimensions).
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override;

  std::size_t max_depth_;
  int threads_;
};

/// The native backend's entry in the registry (always built; made with BackendOptions::cpu_threads).
BackendRegistration native_registration();

}  // namespace tc
