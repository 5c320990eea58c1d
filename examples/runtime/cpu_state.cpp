#include "runtime/cpu_state.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

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

namespace {

std::size_t default_eviction_bytes() {
  long llc = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  if (llc <= 0) return std::size_t{64} << 20;
  return std::max<std::size_t>(2 * static_cast<std::size_t>(llc), std::size_t{8} << 20);
}

}  // namespace

void evict_caches(std::size_t bytes) {
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
