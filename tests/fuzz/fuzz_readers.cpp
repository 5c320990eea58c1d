// libFuzzer target over the collage tool's readers: every input is read as a collage-graph/1 file
// (and, when that succeeds, indexed, which finds cycles) and as a collage-spec/1 file. The readers
// must answer with a value or an error, never crash, hang or leak. Run by ctest for a bounded time
// (fuzz_readers); see docs/formats.md for longer runs.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "graph_reader.hpp"
#include "json_graph.hpp"
#include "spec_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collage::cli;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  collage::Result<JsonGraph> graph = read_graph(text, "fuzz.json");
  if (graph.ok()) {
    collage::Result<collage::DataflowGraph<JsonGraph>> built = build_graph(*graph);
    if (built.ok()) {
      for (std::size_t i = 0; i < built->size(); ++i) (void)built->signature(i);
    }
  }
  collage::Result<ToolSpec<JsonGraph>> spec = read_spec<JsonGraph>(text, "fuzz.json");
  (void)spec.ok();
  return 0;
}
