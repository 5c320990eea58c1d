#pragma once

/// \file
/// The loop IR: a partition's compiled form, independent of what renders it: tile programs (a
/// fused elementwise/injective DAG evaluated over chunks of consecutive points of an iteration
/// domain, each leaf read through an Access) and stages (at most one anchor or reduction per
/// stage, its epilogue program fused onto each finished block). The native backend runs it as C++
/// loops (backends/native/); the cuda backend renders one CUDA kernel per stage from the same data
/// (backends/cuda/).

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "loops/coord_map.hpp"
#include "loops/window.hpp"
#include "tensor/shape.hpp"
#include "tensor/tensor.hpp"

namespace tc::loops {

/// What one tile operation computes, element by element over the tile.
enum class TileOpCode : std::uint8_t {
  load,    ///< leaf `ref` through its Access (0 where not valid)
  fill,    ///< the scalar p0
  select,  ///< mask `ref` valid ? a : b
  // Unary (a).
  copy, relu, sigmoid, tanh, exp, log, sqrt, erf, neg, abs, reciprocal, square,
  sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, floor, ceil,
  round,  ///< halves to even
  sign,
  clip,          ///< min(max(a, p0), p1)
  leaky_relu,    ///< a < 0 ? p0 * a : a
  hard_sigmoid,  ///< max(0, min(1, p0 * a + p1))
  // Binary (a, b).
  add, sub, mul, div, pow, max, min,
  // With the scalar p0 as right operand (a op p0).
  add_s, sub_s, mul_s, div_s, pow_s, max_s, min_s,
  // With the scalar p0 as left operand (p0 op a).
  rsub_s, rdiv_s, rpow_s,
};

/// The name of `code` ("add_s"), for dumps and messages.
const char* to_string(TileOpCode code);

/// One operation of a tile program. Operands are earlier operations of the same program.
struct TileOp {
  TileOpCode code = TileOpCode::fill;
  int a = -1;
  int b = -1;
  int ref = -1;  ///< load: a leaf; select: a mask
  float p0 = 0.0f;
  float p1 = 0.0f;
  int slot = -1;  ///< the tile buffer holding the result (slots are reused once a value is dead)
};

/// A tensor a program reads: a buffer of the stage (see Source) and how the domain reads it.
struct Leaf {
  int source = -1;
  Access access;
};

/// A fused elementwise/injective computation over an iteration domain. The domain is row-major
/// with the destination's linear order; evaluation visits chunks ("tiles") of consecutive points,
/// split into runs along the innermost dimension ("segments"), and computes every operation over
/// the whole tile. `sink` is the destination index of each point: the identity for stores, the
/// reduced index for a reduction's input.
struct TileProgram {
  Shape dims;
  std::vector<Leaf> leaves;
  std::vector<Access> masks;  ///< select's validity (only checks and tables matter)
  std::vector<TileOp> ops;    ///< topological; the last is the result
  Affine sink;
  int slots = 0;

  /// Multi-line listing for debugging and tests.
  std::string to_string() const;
};

/// A buffer a stage reads or writes.
struct Source {
  enum class Kind { param, constant, scratch, output };
  Kind kind = Kind::param;
  int index = 0;  ///< parameter / constant / scratch / output number
};

/// C = A x B per batch (MatMul, and Gemm without its alpha, beta and C, which are epilogue
/// operations): element (i, j) of A at a_rs * i + a_cs * j from the batch's start (likewise B).
struct GemmCore {
  int a = -1;
  int b = -1;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0;
  /// The output's batch dimensions and, per batch dimension, the element stride of A and B in it
  /// (0 when broadcast).
  Shape batch;
  Ints a_batch_strides, b_batch_strides;
};

/// Convolution without bias (the bias is an epilogue operation) over 1 to 3 spatial dimensions.
struct ConvCore {
  int x = -1;
  int w = -1;
  ConvGeom geom{};
};

/// Max or average pooling over 1 to 3 spatial dimensions.
struct PoolCore {
  int x = -1;
  PoolGeom geom{};
};

/// How a reduction combines its elements.
enum class ReduceKind { sum, mean, max };

/// A reduction whose input is a tile program (the fused prologue) over the input's shape, its
/// sink the reduced index; `count` elements reduce into each of the `size` results.
struct ReduceCore {
  ReduceKind kind = ReduceKind::sum;
  TileProgram input;
  std::int64_t size = 0;
  std::int64_t count = 0;
  /// When the reduced axes are the innermost of the input: each result reduces one contiguous
  /// run of `count` input points, so a stage can interleave the reduction and the epilogue.
  bool rows = false;
};

/// Softmax over one axis, the input seen as [outer, axis, inner].
struct SoftmaxCore {
  int x = -1;
  std::int64_t outer = 0, axis = 0, inner = 0;
};

/// Layer normalisation over the trailing `cols` elements of each of `rows` rows; scale and bias
/// are read through accesses over the normalised shape (bias may be absent: -1).
struct LayerNormCore {
  int x = -1;
  int scale = -1;
  int bias = -1;
  std::int64_t rows = 0, cols = 0;
  /// The normalised dimensions (cols elements), the domain of the accesses.
  Shape normalized;
  Access scale_access, bias_access;
  float epsilon = 1e-5f;
};

/// Gather along one axis, data seen as [outer, size, inner]: output [outer, count, inner] reads
/// row indices[i] of each outer block (a negative index counts from the end; one outside
/// [-size, size), or not a number, gives NaN rows).
struct GatherCore {
  int data = -1;
  int indices = -1;
  std::int64_t outer = 0, size = 0, inner = 0, count = 0;
};

/// The operator computed by a stage before its epilogue (none: the epilogue is the whole stage).
using Core = std::variant<std::monostate, GemmCore, ConvCore, PoolCore, ReduceCore, SoftmaxCore, LayerNormCore, GatherCore>;

/// One loop nest: the core (if any) writes its result to `core_dst`; the epilogue, when present,
/// computes `dst` (numel `size`) from it, fused onto each block the core finishes (in place when
/// core_dst == dst). A reduction's result lives in a scratch buffer of its size; when
/// `rows_per_result` is set, the epilogue's points for each reduced row follow that row's reduction
/// (`rows_per_result` epilogue points per reduction result).
struct Stage {
  Core core;
  int core_dst = -1;
  bool has_epilogue = false;
  TileProgram epilogue;
  int dst = -1;
  std::int64_t size = 0;
  std::int64_t rows_per_result = 0;
};

/// A compiled partition: its buffers and stages in execution order, then copies of results that
/// the function outputs more than once.
struct LoweredFunction {
  std::vector<Source> sources;
  /// Constant tensors by Source::index (the model's, and those folded at compile time).
  std::vector<std::shared_ptr<const Tensor>> constants;
  /// Element counts of scratch buffers by Source::index.
  std::vector<std::int64_t> scratch_sizes;
  std::vector<Stage> stages;
  /// (output index, output index it copies), after the stages.
  std::vector<std::pair<int, int>> output_copies;
  /// Element counts of the outputs.
  std::vector<std::int64_t> output_sizes;

  /// Multi-line listing for debugging and tests.
  std::string to_string() const;
};

}  // namespace tc::loops
