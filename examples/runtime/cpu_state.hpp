#pragma once

/// \file
/// The x86 vector-register state between kernels of different libraries.

namespace tc {

/// Clears the upper halves of the AVX registers (vzeroupper) when the CPU has AVX; nothing
/// elsewhere. Libraries built for AVX (libm's vector paths, oneDNN's JIT, glibc's string functions)
/// may return with those halves dirty, and then every SSE instruction of code compiled for the
/// x86-64 baseline (the native backend, Eigen without -mavx) pays a transition penalty: on the
/// machine of docs/kernels.md a native kernel ran 5x slower after an Eigen GELU call. The executor
/// and the kernel timer call this before each CPU kernel.
void clear_vector_upper_state();

}  // namespace tc
