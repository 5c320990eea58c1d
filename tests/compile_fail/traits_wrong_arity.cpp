// Must NOT compile: label takes only the graph, so collage cannot call it with a node.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  NEAR_MISS_REQUIRED
  static std::string label(const near_miss::Ir&) { return "node"; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
