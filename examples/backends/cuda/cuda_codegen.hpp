#pragma once

/// \file
/// The cuda backend's code generator: CUDA C++ source for a partition lowered to the loop IR
/// (loops/: its stages and tile programs, which the native backend runs as C++ loops), so the CPU
/// and the GPU share the fusion logic. Each stage becomes one kernel, whose epilogue is applied in
/// registers before the store; a stage whose epilogue cannot run on the core's values as they are
/// computed (it reads them out of order) becomes two, with the stage's scratch buffer between
/// them. Plain host code: it needs no CUDA toolkit.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/cuda/kernel_math.hpp"
#include "loops/program.hpp"

namespace tc::cudagen {

/// A pointer argument of a generated kernel.
struct KernelArg {
  enum class Kind : std::uint8_t {
    buffer,  ///< float buffer: index is a Source number of the LoweredFunction
    table,   ///< std::int64_t index table: index into CudaProgram::tables
  };
  Kind kind = Kind::buffer;
  int index = 0;

  friend bool operator==(const KernelArg& a, const KernelArg& b) { return a.kind == b.kind && a.index == b.index; }
};

/// What a kernel's core is computed by, for tests and dumps.
enum class KernelKind : std::uint8_t {
  elementwise,        ///< one thread per output point
  reduce_rows,        ///< one block per result (the reduced elements innermost)
  reduce_columns,     ///< one thread per result
  gemm,               ///< shared-memory tiled matrix product
  conv_gemm,          ///< convolution as a tiled implicit-im2col matrix product per group
  conv_direct,        ///< convolution, one thread per output (depthwise, few channels per group)
  pool,               ///< one thread per output
  softmax_rows,       ///< one block per row (softmax over the innermost axis)
  softmax_columns,    ///< one thread per (outer, inner) pair
  layer_norm,         ///< one block per row
  gather,             ///< one thread per output element
};

/// The name of `kind` ("gemm").
const char* to_string(KernelKind kind);

/// One kernel launch: the kernel's name in the program, what it computes, its grid and block, and
/// its arguments in order (every argument is a pointer). No dynamic shared memory.
struct KernelLaunch {
  std::string kernel;
  KernelKind kind = KernelKind::elementwise;
  /// The stage of the LoweredFunction it computes (its core, or, for an elementwise launch of a
  /// stage with a core, that stage's epilogue).
  int stage = 0;
  /// Whether the stage's epilogue is applied to the core's values in registers.
  bool fused_epilogue = false;
  std::array<std::int64_t, 3> grid{1, 1, 1};
  int block = 256;
  std::vector<KernelArg> args;
};

/// A partition as CUDA source and the launches that run it in order.
struct CudaProgram {
  /// One translation unit for NVRTC: it includes kernel_headers() by name, nothing else.
  std::string source;
  std::vector<KernelLaunch> launches;
  /// Index tables the kernels read (uploaded with the constants).
  std::vector<loops::IndexTable> tables;
  /// Stages whose epilogue runs as a launch of its own (reading the core's buffer); 0 for a
  /// partition of the native fusion rule except where the lowering keeps a scratch buffer.
  int split_stages = 0;
};

/// Threads per block of the element-wise kernels and the tiled matrix products.
inline constexpr int kThreads = 256;

/// Generates the kernels of `lowered`. Fails, naming the case, where no kernel is generated for it
/// (matrix products beyond kMaxBatchRank batch dimensions, launch grids beyond CUDA's limits).
collage::Result<CudaProgram> generate_cuda(const loops::LoweredFunction& lowered);

/// The geometry of a matrix product (an error beyond kMaxBatchRank batch dimensions).
collage::Result<GemmGeom> gemm_geometry(const loops::GemmCore& core);
/// Whether a convolution runs one thread per output (depthwise and few channels per group)
/// rather than as a tiled matrix product per group.
bool runs_direct(const loops::ConvGeom& geom);
/// The geometry of a reduction's input domain (an error where its sink does not enumerate the
/// results row-major over the kept dimensions, which the lowering never produces).
collage::Result<ReduceGeom> reduce_geometry(const loops::ReduceCore& core);

/// A header the generated source includes: its name in `#include "..."` and its text.
struct KernelHeader {
  const char* name;
  const char* text;
};

/// The headers the generated source includes, to be handed to NVRTC with it: the loop IR's index
/// arithmetic and window geometries (loops/index_math.hpp, loops/window.hpp), kernel_math.hpp and
/// a <cstdint> for the device.
const std::vector<KernelHeader>& kernel_headers();

/// `value` as a CUDA float expression that reads back bit for bit (a hexadecimal literal, or the
/// bit pattern of an infinity or a NaN).
std::string float_literal(float value);

}  // namespace tc::cudagen
