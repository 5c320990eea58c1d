#pragma once

#include <cstddef>

/// \file
/// CPU state between kernels: the x86 vector-register state between kernels of different
/// libraries, and the caches before a kernel is timed.

namespace tc {

/// Clears the upper halves of the AVX registers (vzeroupper) when the CPU has AVX; nothing
/// elsewhere. Libraries built for AVX (libm's vector paths, oneDNN's JIT, glibc's string functions)
/// may return with those halves dirty, and then every SSE instruction of code compiled for the
/// x86-64 baseline (the native backend, Eigen without -mavx) pays a transition penalty: on the
/// machine of docs/kernels.md a native kernel ran 5x slower after an Eigen GELU call. The executor
/// and the kernel timer call this before each CPU kernel.
void clear_vector_upper_state();

/// Evicts the CPU caches by writing and reading a buffer of `bytes` (twice the last-level cache as
/// the system reports it when 0; 64 MiB when it reports none), so that a kernel timed next starts
/// with its weights and inputs in memory, as inside a model too large for the caches.
void evict_caches(std::size_t bytes = 0);

}  // namespace tc
