#include "executor/memory_plan.hpp"

#include <algorithm>
#include <numeric>

namespace tc {

namespace {

std::size_t align_up(std::size_t n, std::size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

bool overlaps(const Lifetime& a, const Lifetime& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, std::size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    if (buffers[a].first != buffers[b].first) return buffers[a].first < buffers[b].first;
    return a < b;
  });
  std::vector<std::size_t> placed;
  struct Span {
    std::size_t begin, end;
  };
  std::vector<Span> busy;
  for (std::size_t b : order) {
    const std::size_t size = align_up(buffers[b].bytes, alignment);
    busy.clear();
    for (std::size_t p : placed) {
      if (overlaps(buffers[b], buffers[p])) busy.push_back({plan.offsets[p], plan.offsets[p] + align_up(buffers[p].bytes, alignment)});
    }
    std::sort(busy.begin(), busy.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
    std::size_t best = 0;
    std::size_t best_gap = 0;
    bool found = false;
    std::size_t cursor = 0;
    for (const Span& s : busy) {
      if (s.begin > cursor && s.begin - cursor >= size && (!found || s.begin - cursor < best_gap)) {
        best = cursor;
        best_gap = s.begin - cursor;
        found = true;
      }
      cursor = std::max(cursor, s.end);
    }
    plan.offsets[b] = found ? best : cursor;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[b] + size);
    placed.push_back(b);
  }
  int last_step = -1;
  int first_step = 0;
  for (const Lifetime& l : buffers) {
    last_step = std::max(last_step, l.last);
    first_step = std::min(first_step, l.first);
  }
  for (int step = first_step; step <= last_step; ++step) {
    std::size_t live = 0;
    for (const Lifetime& l : buffers) {
      if (l.first <= step && step <= l.last) live += align_up(l.bytes, alignment);
    }
    plan.lower_bound = std::max(plan.lower_bound, live);
  }
  return plan;
}

}  // namespace tc
