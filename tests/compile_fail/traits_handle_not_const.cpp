// Must NOT compile: is_constant takes the handle by non-const reference, so collage cannot call it.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  static bool is_constant(const near_miss::Ir&, int&) { return false; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
