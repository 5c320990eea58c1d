// Must NOT compile: NotAGraph has no dataflow_traits specialisation. tests/CMakeLists.txt checks that the compiler
// reports exactly one error, and that it names collage::dataflow_traits and says to specialise it.
#include <collage/collage.hpp>

struct NotAGraph {};

int main() {
  auto r = collage::DataflowGraph<NotAGraph>::build(NotAGraph{});
  (void)r;
}
