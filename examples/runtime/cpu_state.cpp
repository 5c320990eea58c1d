#include "runtime/cpu_state.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/cpu_threads.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tc {

#if defined(__x86_64__) || defined(__i386__)
namespace {

__attribute__((target("avx"))) void vzeroupper() { _mm256_zeroupper(); }

const bool kHasAvx = __builtin_cpu_supports("avx");

}  // namespace

void clear_vector_upper_state() {
  if (kHasAvx) vzeroupper();
}

namespace {
constexpr unsigned kFlushToZero = 1u << 15;
constexpr unsigned kDenormalsAreZero = 1u << 6;
}  // namespace

DenormalsFlushed::DenormalsFlushed(bool flush) : saved_(_mm_getcsr()), active_(flush) {
  if (active_) _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
}

DenormalsFlushed::~DenormalsFlushed() {
  if (active_) _mm_setcsr(saved_);
}

bool denormals_flushed() {
  const unsigned csr = _mm_getcsr();
  return (csr & kFlushToZero) != 0 && (csr & kDenormalsAreZero) != 0;
}
#else
void clear_vector_upper_state() {}
DenormalsFlushed::DenormalsFlushed(bool) {}
DenormalsFlushed::~DenormalsFlushed() = default;
bool denormals_flushed() { return false; }
#endif

std::size_t cpu_cache_bytes(int level) {
  long bytes = -1;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  const int name = level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE;
  bytes = sysconf(name);
#else
  (void)level;
#endif
  return bytes > 0 ? static_cast<std::size_t>(bytes) : 0;
}

void touch(const float* data, std::size_t count) {
  constexpr std::size_t kLine = 64 / sizeof(float);
  float sum = 0;
  for (std::size_t i = 0; i < count; i += kLine) sum += data[i];
  volatile float sink = sum;
  (void)sink;
}

void touch_interleaved(const std::vector<FloatSpan>& spans, int threads) {
  const int parts = std::max(threads, 1);
  parallel_parts(parts, [&](int part) {
    for (const FloatSpan& span : spans) {
      for_each_interleaved_chunk(span.count, part, parts,
                                 [&](std::size_t begin, std::size_t end) { touch(span.data + begin, end - begin); });
    }
  });
}

std::size_t default_eviction_bytes() {
  const std::size_t llc = cpu_cache_bytes(3);
  if (llc == 0) return std::size_t{64} << 20;
  return std::max<std::size_t>(2 * llc, std::size_t{8} << 20);
}

namespace {

thread_local std::size_t evictions = 0;

}  // namespace

std::size_t evictions_on_this_thread() { return evictions; }

void evict_caches(std::size_t bytes) {
  ++evictions;
  static const std::size_t kDefault = default_eviction_bytes();
  thread_local std::vector<std::uint64_t> buffer;
  const std::size_t words = (bytes == 0 ? kDefault : bytes) / sizeof(std::uint64_t);
  if (buffer.size() < words) buffer.resize(words);
  constexpr std::size_t kLine = 64 / sizeof(std::uint64_t);
  volatile std::uint64_t sink = 0;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words; i += kLine) {
    buffer[i] += 1;
    sum += buffer[i];
  }
  sink = sum;
  (void)sink;
}

}  // namespace tc
