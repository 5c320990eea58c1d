// What the machine charges for memory a process touches for the first time: 64 MiB mapped
// fresh, one byte written per 4 KiB page, unmapped; with the kernel asked for transparent huge
// pages (madvise MADV_HUGEPAGE) and without. Counter us_per_4k_page: the first touches' time over
// the 4 KiB pages they cover. A partition's result is memory its process has not touched before
// (docs/benchmarks.md, "A fresh process's timed call"), so this is the price of each of its bytes.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

constexpr std::size_t kBytes = std::size_t{64} << 20;
constexpr std::size_t kPage = 4096;

void BM_FirstTouch(benchmark::State& state) {
#if defined(__linux__)
  const bool huge = state.range(0) != 0;
  double seconds = 0;
  for (auto _ : state) {
    void* mapped = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      return;
    }
    auto* bytes = static_cast<volatile char*>(mapped);
    if (huge) ::madvise(mapped, kBytes, MADV_HUGEPAGE);  // advice: where the kernel declines, 4 KiB pages
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < kBytes; i += kPage) bytes[i] = 1;
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::munmap(mapped, kBytes);
  }
  state.SetLabel(huge ? "madvise(MADV_HUGEPAGE)" : "4 KiB pages");
  state.counters["us_per_4k_page"] = seconds * 1e6 / (static_cast<double>(state.iterations()) * (kBytes / kPage));
#else
  state.SkipWithError("Linux only");
#endif
}

BENCHMARK(BM_FirstTouch)->Arg(0)->Arg(1)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace
