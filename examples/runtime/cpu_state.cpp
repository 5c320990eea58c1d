#include "runtime/cpu_state.hpp"

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
#else
void clear_vector_upper_state() {}
#endif

}  // namespace tc
