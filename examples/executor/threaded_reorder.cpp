#include "executor/threaded_reorder.hpp"

#include <cstdint>

#include "runtime/cpu_threads.hpp"

namespace tc {

void reorder_on_threads(const float* from, Layout from_layout, float* to, Layout to_layout, const Shape& shape,
                        int threads) {
  // A part of at least 32Ki floats, as the native backend's elementwise loops.
  constexpr std::int64_t kFloatsPerPart = std::int64_t{1} << 15;
  const int parts = parts_for(static_cast<std::int64_t>(stored_floats(shape, to_layout)), kFloatsPerPart, threads);
  parallel_parts(parts, [&](int part) { reorder_part(from, from_layout, to, to_layout, shape, part, parts); });
}

}  // namespace tc
