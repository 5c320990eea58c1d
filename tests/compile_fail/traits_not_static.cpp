// Must NOT compile: op_name is a non-static member function; traits members are static.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  std::string op_name(const near_miss::Ir&, int) const { return "op"; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
