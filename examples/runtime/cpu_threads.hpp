#pragma once

/// \file
/// Parallel parts for the CPU kernels written in C++ (native's, Eigen's), on the threads of the
/// process's OpenMP runtime: libgomp, the pool oneDNN's kernels run on. Sharing it means one set of
/// worker threads for every CPU backend, rather than a pool per backend whose idle threads spin on
/// the cores the next partition needs.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tc {

/// Whether this build runs parts on threads (it links libgomp); without it run_parts runs them one
/// after another in the calling thread.
bool cpu_threads_available();

/// Runs body(context, part) for every part in [0, parts) and returns when all have finished: on
/// up to `parts` threads of the OpenMP runtime (the caller's among them), each part once. `body`
/// must not throw. With parts <= 1 it runs in the calling thread.
void run_parts(int parts, void (*body)(void* context, int part), void* context);

/// How many run_parts calls of this process have run their parts on more than one thread.
std::size_t parallel_runs();

/// run_parts over a callable: f(part).
template <class F>
void parallel_parts(int parts, F&& f) {
  run_parts(
      parts, [](void* context, int part) { (*static_cast<std::remove_reference_t<F>*>(context))(part); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

/// Parts worth running at once, at most `threads`, for `work` units when a part should have at
/// least `per_part` of them (below that a thread's wake-up, a few microseconds, outweighs it).
inline int parts_for(std::int64_t work, std::int64_t per_part, int threads) {
  return static_cast<int>(std::clamp<std::int64_t>(work / per_part, 1, std::max(threads, 1)));
}

/// Part `part` of `parts` of [0, n) in whole units of `unit` (the last unit may be short): the
/// parts are contiguous, in order, and differ by at most one unit; a part may be empty.
inline std::pair<std::int64_t, std::int64_t> share(std::int64_t n, std::int64_t unit, int part, int parts) {
  const std::int64_t units = (n + unit - 1) / unit;
  return {std::min(n, units * part / parts * unit), std::min(n, units * (part + 1) / parts * unit)};
}

/// The rows [i0, i1) and columns [j0, j1) of an m x n output that part `part` of `parts` computes:
/// a share of the columns in whole units of `col_unit` while each part gets at least two, else a
/// share of the rows in units of `row_unit`. The block may be empty.
struct OutputBlock {
  std::int64_t i0, i1, j0, j1;
  bool empty() const { return i0 >= i1 || j0 >= j1; }
};

inline OutputBlock share_output(std::int64_t m, std::int64_t n, std::int64_t row_unit, std::int64_t col_unit, int part,
                                int parts) {
  if (n >= 2 * col_unit * parts) {
    const auto [j0, j1] = share(n, col_unit, part, parts);
    return {0, m, j0, j1};
  }
  const auto [i0, i1] = share(m, row_unit, part, parts);
  return {i0, i1, 0, n};
}

}  // namespace tc
