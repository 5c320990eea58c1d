#pragma once

/// \file
/// The onednn backend's kernel: builds each planned call's primitive (the only file that includes
/// dnnl.hpp) at compile time and only executes them when run.

#include <memory>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/backend.hpp"
#include "backends/kit/library_call.hpp"
#include "backends/onednn/onednn_plan.hpp"

namespace tc::onednn {

/// A kernel running `plans` (one per call of `function`, in execution order) on `device`, a CPU
/// device: primitive descriptors and primitives created, constant weights reordered into the
/// layout each primitive prefers, constants broadcast or scaled as planned, scratch buffers for
/// the values passed between calls, on `threads` OpenMP threads. Its rank-4 parameters and
/// results are in `layout` (Backend::layout). oneDNN's errors become error values.
collage::Result<std::unique_ptr<Kernel>> kernel(const Function& function, const std::vector<LibraryCall>& calls,
                                                const std::vector<CallPlan>& plans, Device& device, int threads = 1,
                                                Layout layout = Layout::plain);

/// Whether oneDNN has a Winograd kernel for convolution `conv` on this CPU (its post-ops aside).
bool winograd_available(const CallPlan& conv);

/// While alive, oneDNN runs on one thread: libdnnl (Debian's, built for the OpenMP runtime) sizes
/// its parallel regions from the calling thread's OpenMP limit when a primitive is created and
/// when it runs; the guard sets that limit to `threads` and restores it when it goes. The OpenMP
/// functions are those of the runtime libdnnl loaded, looked up at run time, so the limit set is
/// the one oneDNN reads whichever compiler (and OpenMP) built the caller.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace tc::onednn
