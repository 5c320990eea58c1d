// Must NOT compile: needs_kernel takes the graph by non-const reference, so collage cannot call it (it would silently
// fall back to its default). tests/CMakeLists.txt checks for one error naming the member and the signature expected.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  static bool needs_kernel(near_miss::Ir&, int) { return true; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
