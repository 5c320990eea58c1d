// Must NOT compile: the required roots takes the graph by non-const reference.
#include "near_miss.hpp"

template <>
struct collage::dataflow_traits<near_miss::Ir> {
  using node_handle = int;
  static const std::vector<int>& roots(near_miss::Ir& g) { return g.results; }
  static const std::vector<int>& inputs(const near_miss::Ir& g, int n) { return g.args[static_cast<std::size_t>(n)]; }
};

int main() { return near_miss::build<near_miss::Ir>(); }
