#include "runtime/cpu_threads.hpp"

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(TC_HAVE_GOMP)
// libgomp's entry point for a parallel region, the call GCC's `#pragma omp parallel` compiles to
// (libgomp manual, "The libgomp ABI"). Calling it directly shares oneDNN's OpenMP pool from any
// compiler: Clang's OpenMP would bring a second runtime (libomp) into the process.
extern "C" {
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
}
#endif

namespace tc {

namespace {
std::atomic<std::size_t> runs_on_threads{0};
}  // namespace

#if defined(TC_HAVE_GOMP)
namespace {

struct Parts {
  int parts;
  void (*body)(void*, int);
  void* context;
  unsigned vector_control;  // the caller's MXCSR: its denormal handling holds on every thread
};

unsigned vector_control() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#else
  return 0;
#endif
}

void set_vector_control(unsigned csr) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(csr);
#else
  (void)csr;
#endif
}

void run_team_share(void* data) {
  const auto* p = static_cast<const Parts*>(data);
  // The runtime may give fewer threads than asked (OMP_THREAD_LIMIT, nesting): each takes every
  // team-size-th part.
  const int team = omp_get_num_threads();
  const unsigned saved = vector_control();
  set_vector_control(p->vector_control);
  for (int part = omp_get_thread_num(); part < p->parts; part += team) p->body(p->context, part);
  set_vector_control(saved);
  if (omp_get_thread_num() == 0 && team > 1) runs_on_threads.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace
#endif

bool cpu_threads_available() {
#if defined(TC_HAVE_GOMP)
  return true;
#else
  return false;
#endif
}

std::size_t parallel_runs() { return runs_on_threads.load(std::memory_order_relaxed); }

void run_parts(int parts, void (*body)(void* context, int part), void* context) {
#if defined(TC_HAVE_GOMP)
  if (parts > 1) {
    Parts p{parts, body, context, vector_control()};
    GOMP_parallel(run_team_share, &p, static_cast<unsigned>(parts), 0);
    return;
  }
#endif
  for (int part = 0; part < parts; ++part) body(context, part);
}

}  // namespace tc

