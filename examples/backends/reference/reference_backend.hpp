#pragma once

/// \file
/// ReferenceBackend: a CPU backend whose kernels run the reference interpreter over the
/// partition's function. Slow and obviously right: for testing the executor, the oracles and the
/// rules of other backends against a backend that can run anything.

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace tc {

/// A backend named `name` whose rule is native fusion (max depth `max_depth`) and whose kernels
/// interpret their function with evaluate(). It claims devices of `device` kind, whose memory it
/// reads as host memory (for tests of transfers with a host-backed stand-in device), and takes and
/// returns rank-4 values in `layout` (for tests of reorders).
std::unique_ptr<Backend> make_reference_backend(std::string name = "reference", std::size_t max_depth = 4,
                                                DeviceKind device = DeviceKind::cpu, Layout layout = Layout::plain);

}  // namespace tc
