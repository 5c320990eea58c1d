// Must NOT compile: is_tuple returns a pointer, not bool.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  static const int* is_tuple(const near_miss::Ir&, int) { return nullptr; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
