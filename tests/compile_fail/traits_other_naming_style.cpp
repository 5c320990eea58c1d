// Must NOT compile: needsKernel is needs_kernel in another naming style, which collage would not read.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  static bool needsKernel(const near_miss::Ir&, int) { return true; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
