#pragma once

/// \file
/// Memory planning: offsets in one arena for buffers with known lifetimes, so that buffers whose
/// lifetimes do not overlap share memory.

#include <cstddef>
#include <vector>

namespace tc {

/// A buffer to place: its size and the steps it is live in (first and last, inclusive).
struct Lifetime {
  std::size_t bytes = 0;
  int first = 0;
  int last = 0;
};

/// Where each buffer goes in the arena.
struct MemoryPlan {
  /// Byte offset of each buffer, in input order; each a multiple of the alignment.
  std::vector<std::size_t> offsets;
  /// The arena's size: the peak memory of the plan.
  std::size_t arena_bytes = 0;
  /// The liveness lower bound: the largest total (aligned) size of the buffers live at one step.
  /// No plan can use less.
  std::size_t lower_bound = 0;
};

/// Places `buffers` greedily by size (largest first, each in the tightest gap between the
/// placed buffers live at the same time, else at the end), as TensorFlow Lite's arena planner
/// does. Two buffers live at a common step never overlap. Deterministic.
MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, std::size_t alignment = 64);

}  // namespace tc
