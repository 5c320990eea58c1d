#pragma once

#include <cstddef>
#include <vector>

/// \file
/// CPU state around kernels: the x86 vector-register state between kernels of different
/// libraries, how denormal floats are handled, and the caches before a kernel is timed.

namespace tc {

/// Clears the upper halves of the AVX registers (vzeroupper) when the CPU has AVX; nothing
/// elsewhere. Libraries built for AVX (libm's vector paths, oneDNN's JIT, glibc's string functions)
/// may return with those halves dirty, and then every SSE instruction of code compiled for the
/// x86-64 baseline (the native backend, Eigen without -mavx) pays a transition penalty: on the
/// machine of docs/kernels.md a native kernel ran 5x slower after an Eigen GELU call. The executor
/// and the kernel timer call this before each CPU kernel.
void clear_vector_upper_state();

/// While alive, the calling thread's vector arithmetic flushes denormal results to zero and reads
/// denormal inputs as zero (x86 MXCSR FTZ and DAZ), as inference runtimes run (TensorFlow does by
/// default): models with random weights fill with denormals, which x86 cores handle in microcode,
/// 10-100x slower. The mode the thread had is restored when it goes. With `flush` false, or on a
/// CPU without these bits, it changes nothing (IEEE denormals).
class DenormalsFlushed {
 public:
  explicit DenormalsFlushed(bool flush = true);
  ~DenormalsFlushed();
  DenormalsFlushed(const DenormalsFlushed&) = delete;
  DenormalsFlushed& operator=(const DenormalsFlushed&) = delete;

 private:
  unsigned saved_ = 0;
  bool active_ = false;
};

/// Whether the calling thread flushes denormals to zero now.
bool denormals_flushed();

/// Evicts the CPU caches by writing and reading a buffer of `bytes` (default_eviction_bytes() when
/// 0), so that a kernel timed next starts with its weights and inputs in memory, as inside a model
/// too large for the caches.
void evict_caches(std::size_t bytes = 0);

/// What evict_caches writes by default: twice the last-level cache as the system reports it, at
/// least 8 MiB; 64 MiB when it reports none.
std::size_t default_eviction_bytes();

/// How many times the calling thread has called evict_caches.
std::size_t evictions_on_this_thread();

/// The size in bytes of the CPU's cache of `level` (1 data, 2, 3) as the system reports it; 0 when
/// it reports none.
std::size_t cpu_cache_bytes(int level);

/// Reads `count` floats at `data`, so that they are in the caches (as a partition's inputs are,
/// just written by the partition before it).
void touch(const float* data, std::size_t count);

/// `count` floats at `data`.
struct FloatSpan {
  const float* data = nullptr;
  std::size_t count = 0;
};

/// The floats in one chunk of touch_interleaved(): 4 KiB.
inline constexpr std::size_t kInterleaveChunkFloats = 1024;

/// Calls `f(begin, end)` for the chunks of [0, count) that `part` of `parts` reads in
/// touch_interleaved(): chunk k (kInterleaveChunkFloats floats, the last one shorter) goes to part
/// k % parts, so that every part holds about 1/parts of any long stretch of the span.
template <class F>
void for_each_interleaved_chunk(std::size_t count, int part, int parts, F&& f) {
  const std::size_t stride = kInterleaveChunkFloats * static_cast<std::size_t>(parts < 1 ? 1 : parts);
  for (std::size_t begin = static_cast<std::size_t>(part) * kInterleaveChunkFloats; begin < count; begin += stride) {
    f(begin, begin + (count - begin < kInterleaveChunkFloats ? count - begin : kInterleaveChunkFloats));
  }
}

/// touch() of every span on `threads` threads of the shared pool (cpu_threads.hpp), the span's
/// chunks dealt out in turn (for_each_interleaved_chunk): where a partition on that many threads
/// leaves its results for the next, whose split of the work is not its own, so that each core
/// finds about 1/threads of what it reads in its own caches and the rest in the others'. (A read
/// of contiguous shares would put each core's share where a kernel that splits its input the same
/// way wants it, and kernels so timed ran 1.2-2.5x as long inside models on two threads.) One
/// thread: the calling thread reads them all.
void touch_interleaved(const std::vector<FloatSpan>& spans, int threads);

}  // namespace tc
