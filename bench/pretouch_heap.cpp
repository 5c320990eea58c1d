// Preloaded into a benchmark (LD_PRELOAD=libpretouch_heap.so), takes first touches of memory out
// of its timings: glibc's heap grows by 256 MiB whose pages are written once, then freed and kept
// (mmap and trim thresholds of 1 GiB), so later allocations reuse pages the process has touched.
// docs/benchmarks.md, "A fresh process's timed call", runs search_bench with and without it.

#include <malloc.h>

#include <cstddef>
#include <cstdlib>

namespace {

__attribute__((constructor)) void pretouch_heap() {
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 0);
  auto* heap = static_cast<volatile char*>(std::malloc(kBytes));
  if (heap == nullptr) return;
  for (std::size_t i = 0; i < kBytes; i += 4096) heap[i] = 1;
  std::free(const_cast<char*>(heap));
}

}  // namespace
