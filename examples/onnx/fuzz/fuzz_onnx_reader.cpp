// libFuzzer target over the ONNX reader: every input is read as a serialised ModelProto. The reader
// must answer with a graph or an error, never crash, hang or leak; a graph it reads must write back
// as ONNX and read again. Run by ctest for a bounded time (fuzz_onnx_reader) when the compiler is
// clang; see docs/onnx-conformance.md.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "onnx/reader.hpp"
#include "onnx/writer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tc::ReadOptions options;
  options.max_folded_elements = std::int64_t{1} << 16;
  options.max_fold_work = std::int64_t{1} << 20;
  options.dim_params["N"] = 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  collage::Result<tc::Graph> graph = tc::read_onnx_bytes(bytes, options);
  if (!graph.ok()) return 0;
  collage::Result<std::string> written = tc::write_onnx_bytes(*graph);
  if (!written.ok() || !tc::read_onnx_bytes(*written, options).ok()) __builtin_trap();
  return 0;
}
