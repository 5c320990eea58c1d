// Must NOT compile: kind returns int, not collage::OpKind (an int would have to be cast unchecked).
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  static int kind(const near_miss::Ir&, int) { return 4; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
