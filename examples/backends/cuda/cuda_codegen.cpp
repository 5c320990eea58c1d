#include "backends/cuda/cuda_codegen.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <utility>
#include <variant>

#include "backends/cuda/kernel_math.hpp"
#include "loops/index_math.hpp"

namespace tc::cudagen {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;
using loops::Access;
using loops::Affine;
using loops::Check;
using loops::Stage;
using loops::TileOp;
using loops::TileOpCode;
using loops::TileProgram;

/// The source text of the headers the generated code includes (kernel_headers.inc is written by
/// CMake from loops/index_math.hpp, loops/window.hpp and kernel_math.hpp).
#include "kernel_headers.inc"

/// <cstdint> for NVRTC, which has no standard library: the host's fixed-width types (LP64).
constexpr const char* kCstdint = R"(#pragma once
namespace std {
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
}
)";

/// Device helpers every generated program starts with: block-wide reductions.
constexpr const char* kPreamble = R"(#include <cstdint>
#include "backends/cuda/kernel_math.hpp"

template <bool Max>
__device__ __forceinline__ float tc_combine(float a, float b) {
  return Max ? tc::cudagen::nan_max(a, b) : a + b;
}

/// The sum (or NaN-propagating maximum) of v over the block; every thread of the block calls it
/// and gets the result. blockDim.x is a multiple of 32.
template <bool Max>
__device__ float tc_block_reduce(float v) {
  __shared__ float part[32];
  __shared__ float total;
  for (int s = 16; s > 0; s >>= 1) v = tc_combine<Max>(v, __shfl_xor_sync(0xffffffffu, v, s));
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < (int)(blockDim.x >> 5) ? part[lane] : (Max ? -__int_as_float(0x7f800000) : 0.0f);
    for (int s = 16; s > 0; s >>= 1) w = tc_combine<Max>(w, __shfl_xor_sync(0xffffffffu, w, s));
    if (lane == 0) total = w;
  }
  __syncthreads();
  const float result = total;
  __syncthreads();
  return result;
}
)";

/// Blocks of a grid-stride loop over `items` items of `per_block` each (CUDA's x limit is
/// 2^31 - 1; beyond a million blocks each thread takes several items).
std::int64_t blocks_for(std::int64_t items, std::int64_t per_block) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>((items + per_block - 1) / per_block, std::int64_t{1} << 20));
}

/// The smallest power of two >= n, between 32 and kThreads.
int block_for(std::int64_t n) {
  int b = 32;
  while (b < kThreads && b < n) b *= 2;
  return b;
}

std::string int_literal(std::int64_t v) {
  std::string s = std::to_string(v);
  if (v > 2147483647 || v < -2147483647) s += "LL";
  return s;
}

std::string int_list(const std::int64_t* v, std::size_t n) {
  std::string s = "{";
  for (std::size_t i = 0; i < n; ++i) s += (i == 0 ? "" : ", ") + int_literal(v[i]);
  return s + "}";
}

std::string int_list(const Ints& v) { return v.empty() ? std::string("{0}") : int_list(v.data(), v.size()); }

/// The source text of a kernel body, indented.
class Code {
 public:
  void line(const std::string& text) { out_ << std::string(static_cast<std::size_t>(2 * depth_), ' ') << text << "\n"; }
  void open(const std::string& text) {
    line(text + " {");
    ++depth_;
  }
  void close(const std::string& tail = "") {
    --depth_;
    line("}" + tail);
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  int depth_ = 1;
};

/// The pointer parameters of one kernel, in order of first use.
class KernelParams {
 public:
  explicit KernelParams(CudaProgram& program) : program_(program) {}

  /// The name of buffer `source` in the kernel (`written` when the kernel stores to it).
  std::string buffer(int source, bool written = false) {
    std::size_t i = find(KernelArg{KernelArg::Kind::buffer, source});
    if (written) written_[i] = true;
    return "b" + std::to_string(source);
  }
  /// The name of `table` in the kernel (uploaded once per program).
  std::string table(const loops::IndexTable& table) {
    int index = -1;
    for (std::size_t t = 0; t < program_.tables.size(); ++t) {
      if (program_.tables[t] == table) index = static_cast<int>(t);
    }
    if (index < 0) {
      program_.tables.push_back(table);
      index = static_cast<int>(program_.tables.size()) - 1;
    }
    find(KernelArg{KernelArg::Kind::table, index});
    return "t" + std::to_string(index);
  }
  /// The parameter list. A buffer the kernel writes may be read through the same pointer; the
  /// others are distinct read-only buffers.
  std::string signature() const {
    std::string s;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const KernelArg& a = args_[i];
      s += i == 0 ? "" : ", ";
      if (a.kind == KernelArg::Kind::table) {
        s += "const std::int64_t* __restrict__ t" + std::to_string(a.index);
      } else if (written_[i]) {
        s += "float* b" + std::to_string(a.index);
      } else {
        s += "const float* __restrict__ b" + std::to_string(a.index);
      }
    }
    return s;
  }
  const std::vector<KernelArg>& args() const { return args_; }

 private:
  std::size_t find(const KernelArg& arg) {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (args_[i] == arg) return i;
    }
    args_.push_back(arg);
    written_.push_back(false);
    return args_.size() - 1;
  }

  CudaProgram& program_;
  std::vector<KernelArg> args_;
  std::vector<bool> written_;
};

/// Where a program is evaluated: the names of the variables holding the domain point's linear
/// index and its coordinates (either may be empty: it is derived from the other when needed).
struct Point {
  std::string linear;
  std::string coords;
};

/// Emits a tile program evaluated at one point of its domain, each operation a register.
class ProgramEmitter {
 public:
  ProgramEmitter(const TileProgram& program, std::string prefix, KernelParams& params)
      : p_(program), prefix_(std::move(prefix)), params_(params), rank_(static_cast<int>(program.dims.size())) {}

  /// Leaves reading buffer `source` read `value` instead (a core's result in a register).
  void substitute(int source, std::string value) {
    substitute_source_ = source;
    substitute_value_ = std::move(value);
  }

  /// Emits the statements; returns the variable holding the result.
  std::string emit(Code& code, Point point) {
    bool need_coords = false;
    bool need_linear = false;
    auto uses = [&](const Access& a, bool is_mask) {
      if (a.table) {
        need_linear = true;
      } else if (is_mask || !loops::is_identity_access(a, p_.dims)) {
        need_coords = true;
      } else {
        need_linear = true;
      }
    };
    for (const TileOp& op : p_.ops) {
      if (op.code == TileOpCode::load) {
        const loops::Leaf& leaf = p_.leaves[static_cast<std::size_t>(op.ref)];
        if (leaf.source != substitute_source_) uses(leaf.access, false);
      } else if (op.code == TileOpCode::select) {
        uses(p_.masks[static_cast<std::size_t>(op.ref)], true);
      }
    }
    if ((need_coords && point.coords.empty()) || (need_linear && point.linear.empty())) {
      code.line("const std::int64_t " + prefix_ + "dims[" + std::to_string(rank_) + "] = " + int_list(p_.dims) + ";");
    }
    if (need_coords && point.coords.empty()) {
      point.coords = prefix_ + "c";
      code.line("std::int64_t " + point.coords + "[" + std::to_string(rank_) + "];");
      code.line("tc::loops::unravel(" + point.linear + ", " + prefix_ + "dims, " + std::to_string(rank_) + ", " +
                point.coords + ");");
    }
    if (need_linear && point.linear.empty()) {
      point.linear = prefix_ + "p";
      code.line("const std::int64_t " + point.linear + " = tc::loops::ravel(" + point.coords + ", " + prefix_ +
                "dims, " + std::to_string(rank_) + ");");
    }
    point_ = point;
    for (std::size_t i = 0; i < p_.ops.size(); ++i) {
      const TileOp& op = p_.ops[i];
      const std::string v = value(i);
      switch (op.code) {
        case TileOpCode::load: emit_load(code, v, p_.leaves[static_cast<std::size_t>(op.ref)]); break;
        case TileOpCode::select: {
          const std::string valid = validity(code, p_.masks[static_cast<std::size_t>(op.ref)], v + "m");
          code.line("const float " + v + " = " + valid + " ? " + value(op.a) + " : " + value(op.b) + ";");
          break;
        }
        default: code.line("const float " + v + " = " + expression(op) + ";"); break;
      }
    }
    return value(p_.ops.size() - 1);
  }

 private:
  std::string value(std::size_t i) const { return prefix_ + "v" + std::to_string(i); }
  std::string value(int i) const { return value(static_cast<std::size_t>(i)); }

  /// Emits the affine expression `a` at the point as a variable named `name`.
  std::string affine(Code& code, const Affine& a, const std::string& name) {
    code.line("const std::int64_t " + name + "k[" + std::to_string(rank_) + "] = " + int_list(a.coef) + ";");
    code.line("const std::int64_t " + name + " = tc::loops::affine_at(" + int_literal(a.offset) + ", " + name + "k, " +
              point_.coords + ", " + std::to_string(rank_) + ");");
    return name;
  }

  /// Emits whether `a`'s element exists at the point; returns the expression.
  std::string validity(Code& code, const Access& a, const std::string& name) {
    if (a.table) return "(" + params_.table(a.table) + "[" + point_.linear + "] >= 0)";
    std::string valid;
    for (std::size_t k = 0; k < a.checks.size(); ++k) {
      const Check& c = a.checks[k];
      const std::string e = affine(code, c.expr, name + "e" + std::to_string(k));
      valid += (k == 0 ? "(" : " && (") + int_literal(c.lo) + " <= " + e + " && " + e + " < " + int_literal(c.hi) + ")";
    }
    return valid.empty() ? "true" : valid;
  }

  void emit_load(Code& code, const std::string& v, const loops::Leaf& leaf) {
    if (leaf.source == substitute_source_) {
      code.line("const float " + v + " = " + substitute_value_ + ";");
      return;
    }
    const std::string src = params_.buffer(leaf.source);
    const Access& a = leaf.access;
    if (a.table) {
      const std::string at = v + "i";
      code.line("const std::int64_t " + at + " = " + params_.table(a.table) + "[" + point_.linear + "];");
      code.line("const float " + v + " = " + at + " >= 0 ? " + src + "[" + at + "] : 0.0f;");
      return;
    }
    if (loops::is_identity_access(a, p_.dims)) {
      code.line("const float " + v + " = " + src + "[" + point_.linear + "];");
      return;
    }
    const std::string at = affine(code, a.linear, v + "i");
    if (a.checks.empty()) {
      code.line("const float " + v + " = " + src + "[" + at + "];");
    } else {
      const std::string valid = validity(code, a, v + "m");
      code.line("const float " + v + " = " + valid + " ? " + src + "[" + at + "] : 0.0f;");
    }
  }

  std::string expression(const TileOp& op) const {
    const std::string a = op.a >= 0 ? value(op.a) : "";
    const std::string b = op.b >= 0 ? value(op.b) : "";
    const std::string p0 = float_literal(op.p0);
    const std::string p1 = float_literal(op.p1);
    switch (op.code) {
      case TileOpCode::fill: return p0;
      case TileOpCode::copy: return a;
      case TileOpCode::relu: return "(" + a + " < 0.0f ? 0.0f : " + a + ")";
      case TileOpCode::sigmoid: return "1.0f / (1.0f + expf(-" + a + "))";
      case TileOpCode::tanh: return "tanhf(" + a + ")";
      case TileOpCode::exp: return "expf(" + a + ")";
      case TileOpCode::log: return "logf(" + a + ")";
      case TileOpCode::sqrt: return "sqrtf(" + a + ")";
      case TileOpCode::erf: return "erff(" + a + ")";
      case TileOpCode::neg: return "-" + a;
      case TileOpCode::abs: return "fabsf(" + a + ")";
      case TileOpCode::reciprocal: return "1.0f / " + a;
      case TileOpCode::square: return a + " * " + a;
      case TileOpCode::sin: return "sinf(" + a + ")";
      case TileOpCode::cos: return "cosf(" + a + ")";
      case TileOpCode::tan: return "tanf(" + a + ")";
      case TileOpCode::asin: return "asinf(" + a + ")";
      case TileOpCode::acos: return "acosf(" + a + ")";
      case TileOpCode::atan: return "atanf(" + a + ")";
      case TileOpCode::sinh: return "sinhf(" + a + ")";
      case TileOpCode::cosh: return "coshf(" + a + ")";
      case TileOpCode::asinh: return "asinhf(" + a + ")";
      case TileOpCode::acosh: return "acoshf(" + a + ")";
      case TileOpCode::atanh: return "atanhf(" + a + ")";
      case TileOpCode::floor: return "floorf(" + a + ")";
      case TileOpCode::ceil: return "ceilf(" + a + ")";
      case TileOpCode::round: return "rintf(" + a + ")";
      case TileOpCode::sign: return "(" + a + " > 0.0f ? 1.0f : " + a + " < 0.0f ? -1.0f : " + a + ")";
      case TileOpCode::clip: return "tc::cudagen::clamp(" + a + ", " + p0 + ", " + p1 + ")";
      case TileOpCode::leaky_relu: return "(" + a + " < 0.0f ? " + p0 + " * " + a + " : " + a + ")";
      case TileOpCode::hard_sigmoid: return "tc::cudagen::clamp(" + p0 + " * " + a + " + " + p1 + ", 0.0f, 1.0f)";
      case TileOpCode::add: return a + " + " + b;
      case TileOpCode::sub: return a + " - " + b;
      case TileOpCode::mul: return a + " * " + b;
      case TileOpCode::div: return a + " / " + b;
      case TileOpCode::pow: return "powf(" + a + ", " + b + ")";
      case TileOpCode::max: return "tc::cudagen::nan_max(" + a + ", " + b + ")";
      case TileOpCode::min: return "tc::cudagen::nan_min(" + a + ", " + b + ")";
      case TileOpCode::add_s: return a + " + " + p0;
      case TileOpCode::sub_s: return a + " - " + p0;
      case TileOpCode::mul_s: return a + " * " + p0;
      case TileOpCode::div_s: return a + " / " + p0;
      case TileOpCode::pow_s: return "powf(" + a + ", " + p0 + ")";
      case TileOpCode::max_s: return "tc::cudagen::nan_max(" + a + ", " + p0 + ")";
      case TileOpCode::min_s: return "tc::cudagen::nan_min(" + a + ", " + p0 + ")";
      case TileOpCode::rsub_s: return p0 + " - " + a;
      case TileOpCode::rdiv_s: return p0 + " / " + a;
      case TileOpCode::rpow_s: return "powf(" + p0 + ", " + a + ")";
      case TileOpCode::load:
      case TileOpCode::select: break;
    }
    return "0.0f";
  }

  const TileProgram& p_;
  std::string prefix_;
  KernelParams& params_;
  int rank_;
  int substitute_source_ = -1;
  std::string substitute_value_;
  Point point_;
};

std::string triple(const std::int64_t* v) { return int_list(v, 3); }
std::string boolean(bool v) { return v ? "true" : "false"; }

/// The geometries as initialisers of the kernel_math.hpp structs.
std::string to_source(const GemmGeom& g) {
  return "const tc::cudagen::GemmGeom geom = {" + int_literal(g.m) + ", " + int_literal(g.n) + ", " + int_literal(g.k) +
         ", " + int_literal(g.a_rs) + ", " + int_literal(g.a_cs) + ", " + int_literal(g.b_rs) + ", " +
         int_literal(g.b_cs) + ", " + std::to_string(g.batch_rank) + ", " + int_list(g.batch, kMaxBatchRank) + ", " +
         int_list(g.a_batch_strides, kMaxBatchRank) + ", " + int_list(g.b_batch_strides, kMaxBatchRank) + "};";
}

std::string to_source(const loops::ConvGeom& g) {
  return "const tc::loops::ConvGeom geom = {" + int_literal(g.n) + ", " + int_literal(g.c) + ", " + int_literal(g.m) +
         ", " + int_literal(g.group) + ", " + triple(g.in) + ", " + triple(g.out) + ", " + triple(g.k) + ", " +
         triple(g.stride) + ", " + triple(g.dil) + ", " + triple(g.pad) + "};";
}

std::string to_source(const loops::PoolGeom& g) {
  return "const tc::loops::PoolGeom geom = {" + boolean(g.max) + ", " + boolean(g.count_include_pad) + ", " +
         int_literal(g.planes) + ", " + triple(g.in) + ", " + triple(g.out) + ", " + triple(g.k) + ", " +
         triple(g.stride) + ", " + triple(g.dil) + ", " + triple(g.pad) + ", " + triple(g.pad_end) + "};";
}

std::string to_source(const ReduceGeom& g) {
  std::string dims, reduced;
  for (int d = 0; d < g.rank; ++d) {
    dims += (d == 0 ? "" : ", ") + int_literal(g.dims[d]);
    reduced += (d == 0 ? "" : ", ") + boolean(g.reduced[d]);
  }
  return "const tc::cudagen::ReduceGeom geom = {" + std::to_string(g.rank) + ", {" + dims + "}, {" + reduced + "}};";
}

Error unsupported(const std::string& what) { return Error{ErrorCode::invalid_argument, "cuda: " + what}; }

/// The generator of one LoweredFunction.
class Generator {
 public:
  explicit Generator(const loops::LoweredFunction& lowered) : lowered_(lowered) {}

  Result<CudaProgram> run() {
    out_.source = kPreamble;
    for (std::size_t s = 0; s < lowered_.stages.size(); ++s) {
      stage_ = static_cast<int>(s);
      if (Status st = stage(lowered_.stages[s]); !st.ok()) return st.error();
    }
    return std::move(out_);
  }

 private:
  /// How a core hands over each value it computes: through the stage's epilogue in registers
  /// (reading the value where it reads the core's buffer `substitute`), or to its buffer.
  struct Store {
    const TileProgram* epilogue = nullptr;
    int substitute = -1;
    int dst = -1;
  };

  Error fail(const std::string& problem) const {
    return Error{ErrorCode::invalid_argument, "cuda: stage " + std::to_string(stage_) + ": " + problem};
  }

  /// Emits `auto store = [&](std::int64_t o, float v) {...}` writing value v of point o.
  void emit_store(Code& code, KernelParams& params) {
    code.open("auto store = [&](std::int64_t o, float v)");
    if (store_.epilogue == nullptr) {
      code.line(params.buffer(store_.dst, true) + "[o] = v;");
    } else {
      ProgramEmitter e(*store_.epilogue, "e", params);
      e.substitute(store_.substitute, "v");
      const std::string r = e.emit(code, Point{"o", ""});
      code.line(params.buffer(store_.dst, true) + "[o] = " + r + ";");
    }
    code.close(";");
  }

  /// Adds kernel `name` with `body` and its launch.
  void add_kernel(const std::string& name, KernelKind kind, const KernelParams& params, const Code& body, int block,
                  std::array<std::int64_t, 3> grid) {
    out_.source += "\nextern \"C\" __global__ void __launch_bounds__(" + std::to_string(block) + ") " + name + "(" +
                   params.signature() + ") {\n" + body.str() + "}\n";
    KernelLaunch launch;
    launch.kernel = name;
    launch.kind = kind;
    launch.stage = stage_;
    launch.fused_epilogue = kind != KernelKind::elementwise && store_.epilogue != nullptr;
    launch.grid = grid;
    launch.block = block;
    launch.args = params.args();
    out_.launches.push_back(std::move(launch));
  }

  /// The header of a grid-stride loop of `variable` over [0, count), one per thread of `block`.
  static std::string thread_loop(const std::string& variable, std::int64_t count, int block) {
    const std::string b = std::to_string(block);
    return "for (std::int64_t " + variable + " = blockIdx.x * (std::int64_t)" + b + " + threadIdx.x; " + variable +
           " < " + int_literal(count) + "; " + variable + " += (std::int64_t)gridDim.x * " + b + ")";
  }

  /// A kernel of one thread per output element o in [0, size), storing `value` (an expression of
  /// o) after the lines already in `code`.
  void per_output_kernel(const std::string& name, KernelKind kind, KernelParams& params, Code& code, std::int64_t size,
                         const std::string& value) {
    emit_store(code, params);
    code.open(thread_loop("o", size, kThreads));
    code.line("store(o, " + value + ");");
    code.close();
    add_kernel(name, kind, params, code, kThreads, {blocks_for(size, kThreads), 1, 1});
  }

  /// The header of a loop of `variable` over [0, count), one per block.
  static std::string block_loop(const std::string& variable, std::int64_t count) {
    return "for (std::int64_t " + variable + " = blockIdx.x; " + variable + " < " + int_literal(count) + "; " +
           variable + " += gridDim.x)";
  }

  /// One thread per point of `program`, written to `dst`.
  void elementwise(const std::string& name, const TileProgram& program, int dst, std::int64_t size) {
    KernelParams params(out_);
    Code code;
    code.open(thread_loop("p", size, kThreads));
    ProgramEmitter e(program, "e", params);
    const std::string r = e.emit(code, Point{"p", ""});
    code.line(params.buffer(dst, true) + "[p] = " + r + ";");
    code.close();
    add_kernel(name, KernelKind::elementwise, params, code, kThreads, {blocks_for(size, kThreads), 1, 1});
  }

  Status stage(const Stage& st) {
    const std::string name = "tc_stage" + std::to_string(stage_);
    store_ = Store{nullptr, -1, st.core_dst};
    if (std::holds_alternative<std::monostate>(st.core)) {
      if (st.has_epilogue && st.size > 0) elementwise(name, st.epilogue, st.dst, st.size);
      return Status::success();
    }
    // The epilogue is fused when it reads the core's values where they are computed: element
    // for element (an anchor in place), or a reduction's result along its row.
    bool fused = false;
    if (st.has_epilogue) {
      const bool reduce = std::holds_alternative<loops::ReduceCore>(st.core);
      fused = reduce ? st.rows_per_result > 0 : st.core_dst == st.dst;
      if (fused && !reduce) {
        for (const loops::Leaf& leaf : st.epilogue.leaves) {
          if (leaf.source == st.core_dst && !loops::is_identity_access(leaf.access, st.epilogue.dims)) {
            return fail("the epilogue reads the anchor's result out of place");
          }
        }
      }
      if (fused) store_ = Store{&st.epilogue, st.core_dst, st.dst};
    }
    Status made = Status::success();
    if (const auto* g = std::get_if<loops::GemmCore>(&st.core)) made = gemm(name, *g);
    if (const auto* c = std::get_if<loops::ConvCore>(&st.core)) made = conv(name, *c);
    if (const auto* p = std::get_if<loops::PoolCore>(&st.core)) made = pool(name, *p);
    if (const auto* r = std::get_if<loops::ReduceCore>(&st.core)) made = reduce(name, *r, st.rows_per_result);
    if (const auto* x = std::get_if<loops::SoftmaxCore>(&st.core)) softmax(name, *x);
    if (const auto* l = std::get_if<loops::LayerNormCore>(&st.core)) made = layer_norm(name, *l);
    if (const auto* x = std::get_if<loops::GatherCore>(&st.core)) gather(name, *x);
    if (!made.ok()) return made;
    if (st.has_epilogue && !fused) {
      ++out_.split_stages;
      store_ = Store{nullptr, -1, st.dst};
      if (st.size > 0) elementwise(name + "_epilogue", st.epilogue, st.dst, st.size);
    }
    return Status::success();
  }

  /// A shared-memory tiled matrix product C = A x B per batch z: load_a and load_b are
  /// expressions of (z, gi, gk) and (z, gk, gj), output of (z, gi, gj), after `setup` per batch.
  struct GemmShape {
    std::int64_t m = 0, n = 0, k = 0, batches = 1;
    bool a_k_contiguous = true;  // consecutive elements of A run along k
    bool b_j_contiguous = true;  // those of B along j
    std::string setup, load_a, load_b, output;
  };

  void tiled_gemm(const std::string& name, KernelKind kind, const GemmShape& g, KernelParams& params, Code& code) {
    struct Tile {
      int bm, bn, bk, tm, tn;
    };
    // 128 x 128 tiles (8 x 8 per thread) where they still give an H100's 132 SMs a block each.
    const bool big = g.m >= 128 && g.n >= 128 && (g.m + 127) / 128 * ((g.n + 127) / 128) * g.batches >= 132;
    const Tile t = big ? Tile{128, 128, 8, 8, 8} : Tile{64, 64, 16, 4, 4};
    const std::int64_t row_tiles = (g.m + t.bm - 1) / t.bm;
    const std::int64_t col_tiles = (g.n + t.bn - 1) / t.bn;
    const std::string bm = std::to_string(t.bm), bn = std::to_string(t.bn), bk = std::to_string(t.bk);
    const std::string tm = std::to_string(t.tm), tn = std::to_string(t.tn), threads = std::to_string(kThreads);
    const std::string rows = std::to_string(t.bm / t.tm), cols = std::to_string(t.bn / t.tn);
    const std::string m = int_literal(g.m), n = int_literal(g.n), k = int_literal(g.k);
    emit_store(code, params);
    code.line("__shared__ float As[" + bk + "][" + bm + " + 1];");
    code.line("__shared__ float Bs[" + bk + "][" + bn + " + 1];");
    code.line("const int tx = threadIdx.x % " + cols + ";");
    code.line("const int ty = threadIdx.x / " + cols + ";");
    code.open("for (std::int64_t z = blockIdx.z; z < " + int_literal(g.batches) + "; z += gridDim.z)");
    if (!g.setup.empty()) code.line(g.setup);
    code.open("for (std::int64_t by = blockIdx.y; by < " + int_literal(row_tiles) + "; by += gridDim.y)");
    code.open("for (std::int64_t bx = blockIdx.x; bx < " + int_literal(col_tiles) + "; bx += gridDim.x)");
    code.line("const std::int64_t i0 = by * " + bm + ";");
    code.line("const std::int64_t j0 = bx * " + bn + ";");
    code.line("float acc[" + tm + "][" + tn + "] = {};");
    code.open("for (std::int64_t k0 = 0; k0 < " + k + "; k0 += " + bk + ")");
    code.open("for (int e = threadIdx.x; e < " + bm + " * " + bk + "; e += " + threads + ")");
    code.line(g.a_k_contiguous ? "const int ii = e / " + bk + ", kk = e % " + bk + ";"
                               : "const int ii = e % " + bm + ", kk = e / " + bm + ";");
    code.line("const std::int64_t gi = i0 + ii, gk = k0 + kk;");
    code.line("As[kk][ii] = gi < " + m + " && gk < " + k + " ? " + g.load_a + " : 0.0f;");
    code.close();
    code.open("for (int e = threadIdx.x; e < " + bk + " * " + bn + "; e += " + threads + ")");
    code.line(g.b_j_contiguous ? "const int jj = e % " + bn + ", kk = e / " + bn + ";"
                               : "const int jj = e / " + bk + ", kk = e % " + bk + ";");
    code.line("const std::int64_t gk = k0 + kk, gj = j0 + jj;");
    code.line("Bs[kk][jj] = gk < " + k + " && gj < " + n + " ? " + g.load_b + " : 0.0f;");
    code.close();
    code.line("__syncthreads();");
    code.line("#pragma unroll");
    code.open("for (int kk = 0; kk < " + bk + "; ++kk)");
    code.line("float a[" + tm + "], b[" + tn + "];");
    code.line("#pragma unroll");
    code.line("for (int i = 0; i < " + tm + "; ++i) a[i] = As[kk][ty + i * " + rows + "];");
    code.line("#pragma unroll");
    code.line("for (int j = 0; j < " + tn + "; ++j) b[j] = Bs[kk][tx + j * " + cols + "];");
    code.line("#pragma unroll");
    code.line("for (int i = 0; i < " + tm + "; ++i)");
    code.line("#pragma unroll");
    code.line("  for (int j = 0; j < " + tn + "; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);");
    code.close();
    code.line("__syncthreads();");
    code.close();
    code.open("for (int i = 0; i < " + tm + "; ++i)");
    code.line("const std::int64_t gi = i0 + ty + i * " + rows + ";");
    code.line("if (gi >= " + m + ") continue;");
    code.open("for (int j = 0; j < " + tn + "; ++j)");
    code.line("const std::int64_t gj = j0 + tx + j * " + cols + ";");
    code.line("if (gj < " + n + ") store(" + g.output + ", acc[i][j]);");
    code.close();
    code.close();
    code.close();
    code.close();
    code.close();
    auto capped = [](std::int64_t v) { return std::min<std::int64_t>(v, 65535); };
    add_kernel(name, kind, params, code, kThreads,
               {std::min<std::int64_t>(col_tiles, std::int64_t{1} << 20), capped(row_tiles), capped(g.batches)});
  }

  Status gemm(const std::string& name, const loops::GemmCore& core) {
    Result<GemmGeom> geom = gemm_geometry(core);
    if (!geom.ok()) return geom.error();
    GemmShape g;
    g.m = core.m;
    g.n = core.n;
    g.k = core.k;
    g.batches = gemm_batches(*geom);
    if (g.m * g.n * g.batches == 0) return Status::success();
    KernelParams params(out_);
    Code code;
    code.line(to_source(*geom));
    g.a_k_contiguous = core.a_cs == 1;
    g.b_j_contiguous = core.b_cs == 1;
    g.setup = "std::int64_t a_base, b_base; tc::cudagen::gemm_batch_offsets(geom, z, &a_base, &b_base);";
    g.load_a = params.buffer(core.a) + "[a_base + gi * geom.a_rs + gk * geom.a_cs]";
    g.load_b = params.buffer(core.b) + "[b_base + gk * geom.b_rs + gj * geom.b_cs]";
    g.output = "tc::cudagen::gemm_output_offset(geom, z, gi, gj)";
    tiled_gemm(name, KernelKind::gemm, g, params, code);
    return Status::success();
  }

  Status conv(const std::string& name, const loops::ConvCore& core) {
    const loops::ConvGeom& geom = core.geom;
    const std::int64_t size = loops::conv_outputs(geom);
    if (size == 0) return Status::success();
    KernelParams params(out_);
    Code code;
    code.line(to_source(geom));
    const std::string x = params.buffer(core.x);
    const std::string w = params.buffer(core.w);
    if (runs_direct(geom)) {
      per_output_kernel(name, KernelKind::conv_direct, params, code, size,
                        "tc::cudagen::conv_direct(geom, " + x + ", " + w + ", o)");
      return Status::success();
    }
    GemmShape g;
    g.m = loops::conv_group_features(geom);
    g.n = conv_columns(geom);
    g.k = loops::conv_depth(geom);
    g.batches = geom.group;
    g.load_a = w + "[tc::cudagen::conv_weight_offset(geom, z, gi, gk)]";
    g.load_b = "tc_image(z, gk, gj)";
    g.output = "tc::cudagen::conv_output_offset(geom, z, gi, gj)";
    code.open("auto tc_image = [&](std::int64_t z, std::int64_t kk, std::int64_t j)");
    code.line("const std::int64_t at = tc::cudagen::conv_image_offset(geom, z, kk, j);");
    code.line("return at >= 0 ? " + x + "[at] : 0.0f;");
    code.close(";");
    tiled_gemm(name, KernelKind::conv_gemm, g, params, code);
    return Status::success();
  }

  Status pool(const std::string& name, const loops::PoolCore& core) {
    const loops::PoolGeom& geom = core.geom;
    const std::int64_t size = loops::pool_outputs(geom);
    if (size == 0) return Status::success();
    KernelParams params(out_);
    Code code;
    code.line(to_source(geom));
    const std::string x = params.buffer(core.x);
    per_output_kernel(name, KernelKind::pool, params, code, size, "tc::cudagen::pool_value(geom, " + x + ", o)");
    return Status::success();
  }

  /// A reduction with its prologue, and its epilogue when fused (`per` epilogue points after each
  /// result): one block per result when the reduced elements are innermost and many, else one
  /// thread per result.
  Status reduce(const std::string& name, const loops::ReduceCore& core, std::int64_t per) {
    Result<ReduceGeom> geom = reduce_geometry(core);
    if (!geom.ok()) return fail(geom.error().message);
    if (core.size == 0) return Status::success();
    const bool max = core.kind == loops::ReduceKind::max;
    const std::string init = max ? "-__int_as_float(0x7f800000)" : "0.0f";
    const bool by_block = geom->reduced[geom->rank - 1] && core.count >= 32;
    const int block = by_block ? block_for(core.count) : kThreads;
    const std::string b = std::to_string(block);
    if (store_.epilogue == nullptr) per = 0;
    KernelParams params(out_);
    Code code;
    code.line(to_source(*geom));
    emit_store(code, params);
    code.open(by_block ? block_loop("r", core.size) : thread_loop("r", core.size, block));
    code.line("float acc = " + init + ";");
    code.open(by_block ? "for (std::int64_t q = threadIdx.x; q < " + int_literal(core.count) + "; q += " + b + ")"
                       : "for (std::int64_t q = 0; q < " + int_literal(core.count) + "; ++q)");
    code.line("std::int64_t qc[" + std::to_string(geom->rank) + "];");
    code.line("tc::cudagen::reduce_coords(geom, r, q, qc);");
    ProgramEmitter prologue(core.input, "q", params);
    const std::string v = prologue.emit(code, Point{"", "qc"});
    code.line(max ? "acc = tc::cudagen::nan_max(acc, " + v + ");" : "acc += " + v + ";");
    code.close();
    if (by_block) code.line(std::string("acc = tc_block_reduce<") + boolean(max) + ">(acc);");
    if (core.kind == loops::ReduceKind::mean) {
      code.line("acc = acc / " + float_literal(static_cast<float>(core.count)) + ";");
    }
    if (per > 0) {
      code.line((by_block ? "for (std::int64_t e = threadIdx.x; e < " + int_literal(per) + "; e += " + b + ")"
                          : "for (std::int64_t e = 0; e < " + int_literal(per) + "; ++e)") +
                " store(r * " + int_literal(per) + " + e, acc);");
    } else {
      code.line(std::string(by_block ? "if (threadIdx.x == 0) " : "") + "store(r, acc);");
    }
    code.close();
    add_kernel(name, by_block ? KernelKind::reduce_rows : KernelKind::reduce_columns, params, code, block,
               {by_block ? blocks_for(core.size, 1) : blocks_for(core.size, block), 1, 1});
    return Status::success();
  }

  void softmax(const std::string& name, const loops::SoftmaxCore& core) {
    if (core.outer * core.axis * core.inner == 0) return;
    KernelParams params(out_);
    Code code;
    const std::string x = params.buffer(core.x);
    emit_store(code, params);
    const std::string len = int_literal(core.axis);
    if (core.inner == 1) {
      const int block = block_for(core.axis);
      const std::string b = std::to_string(block);
      const std::string each = "for (std::int64_t k = threadIdx.x; k < " + len + "; k += " + b + ")";
      code.open(block_loop("row", core.outer));
      code.line("const float* in = " + x + " + row * " + len + ";");
      code.line("float m = -__int_as_float(0x7f800000);");
      code.line(each + " m = tc::cudagen::nan_max(in[k], m);");
      code.line("m = tc_block_reduce<true>(m);");
      code.line("float sum = 0.0f;");
      code.line(each + " sum += expf(in[k] - m);");
      code.line("const float inv = 1.0f / tc_block_reduce<false>(sum);");
      code.line(each + " store(row * " + len + " + k, expf(in[k] - m) * inv);");
      code.close();
      add_kernel(name, KernelKind::softmax_rows, params, code, block, {blocks_for(core.outer, 1), 1, 1});
      return;
    }
    const std::string inner = int_literal(core.inner);
    const std::int64_t columns = core.outer * core.inner;
    const std::string each = "for (std::int64_t k = 0; k < " + len + "; ++k)";
    const std::string at = x + "[base + k * " + inner + "]";
    code.open(thread_loop("t", columns, kThreads));
    code.line("const std::int64_t base = t / " + inner + " * " + len + " * " + inner + " + t % " + inner + ";");
    code.line("float m = -__int_as_float(0x7f800000);");
    code.line(each + " m = tc::cudagen::nan_max(" + at + ", m);");
    code.line("float sum = 0.0f;");
    code.line(each + " sum += expf(" + at + " - m);");
    code.line("const float inv = 1.0f / sum;");
    code.line(each + " store(base + k * " + inner + ", expf(" + at + " - m) * inv);");
    code.close();
    add_kernel(name, KernelKind::softmax_columns, params, code, kThreads, {blocks_for(columns, kThreads), 1, 1});
  }

  void gather(const std::string& name, const loops::GatherCore& core) {
    const std::int64_t total = core.outer * core.count * core.inner;
    if (total == 0) return;
    KernelParams params(out_);
    Code code;
    const std::string data = params.buffer(core.data);
    const std::string indices = params.buffer(core.indices);
    emit_store(code, params);
    const std::string inner = int_literal(core.inner), count = int_literal(core.count), size = int_literal(core.size);
    code.open(thread_loop("o", total, kThreads));
    code.line("const std::int64_t r = o / " + inner + ";");
    code.line("const std::int64_t row = tc::loops::gather_row(" + indices + "[r % " + count + "], " + size + ");");
    code.line("store(o, row < 0 ? __int_as_float(0x7fc00000) : " + data + "[(r / " + count + " * " + size + " + row) * " +
              inner + " + o % " + inner + "]);");
    code.close();
    add_kernel(name, KernelKind::gather, params, code, kThreads, {blocks_for(total, kThreads), 1, 1});
  }

  /// The expression reading parameter `source` through `access` (over the normalised `dims`,
  /// coordinates `nc`) at normalised position j.
  static std::string parameter(Code& code, const std::string& source, const Access& access, const Shape& dims,
                               const std::string& name) {
    if (loops::is_identity_access(access, dims)) return source + "[j]";
    const std::string rank = std::to_string(dims.size());
    code.line("const std::int64_t " + name + "k[" + rank + "] = " + int_list(access.linear.coef) + ";");
    code.line("const std::int64_t " + name + " = tc::loops::affine_at(" + int_literal(access.linear.offset) + ", " +
              name + "k, nc, " + rank + ");");
    return source + "[" + name + "]";
  }

  Status layer_norm(const std::string& name, const loops::LayerNormCore& core) {
    if (core.scale_access.has_holes() || (core.bias >= 0 && core.bias_access.has_holes())) {
      return fail("layer normalisation with a scale or bias read through a table");
    }
    if (core.rows * core.cols == 0) return Status::success();
    KernelParams params(out_);
    Code code;
    const std::string x = params.buffer(core.x);
    const std::string scale = params.buffer(core.scale);
    const std::string bias = core.bias >= 0 ? params.buffer(core.bias) : "";
    emit_store(code, params);
    const int block = block_for(core.cols);
    const std::string cols = int_literal(core.cols);
    const std::string inv_cols = float_literal(1.0f / static_cast<float>(core.cols));
    const std::string rank = std::to_string(core.normalized.size());
    const std::string each = "for (std::int64_t j = threadIdx.x; j < " + cols + "; j += " + std::to_string(block) + ")";
    const bool dense = loops::is_identity_access(core.scale_access, core.normalized) &&
                       (core.bias < 0 || loops::is_identity_access(core.bias_access, core.normalized));
    code.open(block_loop("row", core.rows));
    code.line("const float* in = " + x + " + row * " + cols + ";");
    code.line("float sum = 0.0f;");
    code.line(each + " sum += in[j];");
    code.line("const float mean = tc_block_reduce<false>(sum) * " + inv_cols + ";");
    code.line("float squares = 0.0f;");
    code.open(each);
    code.line("const float d = in[j] - mean;");
    code.line("squares += d * d;");
    code.close();
    code.line("const float rstd = 1.0f / sqrtf(tc_block_reduce<false>(squares) * " + inv_cols + " + " +
              float_literal(core.epsilon) + ");");
    code.open(each);
    if (!dense) {
      code.line("const std::int64_t ndims[" + rank + "] = " + int_list(core.normalized) + ";");
      code.line("std::int64_t nc[" + rank + "];");
      code.line("tc::loops::unravel(j, ndims, " + rank + ", nc);");
    }
    std::string y = "(in[j] - mean) * rstd * " + parameter(code, scale, core.scale_access, core.normalized, "si");
    if (core.bias >= 0) y += " + " + parameter(code, bias, core.bias_access, core.normalized, "bi");
    code.line("store(row * " + cols + " + j, " + y + ");");
    code.close();
    code.close();
    add_kernel(name, KernelKind::layer_norm, params, code, block, {blocks_for(core.rows, 1), 1, 1});
    return Status::success();
  }

  const loops::LoweredFunction& lowered_;
  CudaProgram out_;
  int stage_ = 0;
  Store store_;
};

}  // namespace

Result<GemmGeom> gemm_geometry(const loops::GemmCore& core) {
  if (core.batch.size() > static_cast<std::size_t>(kMaxBatchRank)) {
    return unsupported("matrix product with " + std::to_string(core.batch.size()) + " batch dimensions (at most " +
                       std::to_string(kMaxBatchRank) + ")");
  }
  GemmGeom g{};
  g.m = core.m;
  g.n = core.n;
  g.k = core.k;
  g.a_rs = core.a_rs;
  g.a_cs = core.a_cs;
  g.b_rs = core.b_rs;
  g.b_cs = core.b_cs;
  g.batch_rank = static_cast<int>(core.batch.size());
  for (std::size_t d = 0; d < core.batch.size(); ++d) {
    g.batch[d] = core.batch[d];
    g.a_batch_strides[d] = core.a_batch_strides[d];
    g.b_batch_strides[d] = core.b_batch_strides[d];
  }
  return g;
}

bool runs_direct(const loops::ConvGeom& geom) { return geom.group > 1 && loops::conv_group_channels(geom) <= 4; }

Result<ReduceGeom> reduce_geometry(const loops::ReduceCore& core) {
  // Each dimension of the input's domain is reduced (the sink ignores it) or kept, and the sink
  // enumerates the kept coordinates row-major.
  const TileProgram& in = core.input;
  ReduceGeom g{};
  g.rank = static_cast<int>(in.dims.size());
  std::int64_t count = 1;
  std::int64_t size = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    const std::int64_t n = in.dims[static_cast<std::size_t>(d)];
    const std::int64_t coef = in.sink.coef[static_cast<std::size_t>(d)];
    g.dims[d] = n;
    g.reduced[d] = coef == 0 && n > 1;
    if (g.reduced[d]) {
      count *= n;
    } else if (n > 1) {
      if (coef != size) return unsupported("a reduction whose results are not row-major in its input's order");
      size *= n;
    }
  }
  if (in.sink.offset != 0 || (core.size > 0 && (count != core.count || size != core.size))) {
    return unsupported("a reduction whose sink does not enumerate its results");
  }
  return g;
}

const char* to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::elementwise: return "elementwise";
    case KernelKind::reduce_rows: return "reduce_rows";
    case KernelKind::reduce_columns: return "reduce_columns";
    case KernelKind::gemm: return "gemm";
    case KernelKind::conv_gemm: return "conv_gemm";
    case KernelKind::conv_direct: return "conv_direct";
    case KernelKind::pool: return "pool";
    case KernelKind::softmax_rows: return "softmax_rows";
    case KernelKind::softmax_columns: return "softmax_columns";
    case KernelKind::layer_norm: return "layer_norm";
    case KernelKind::gather: return "gather";
  }
  return "?";
}

std::string float_literal(float value) {
  if (std::isnan(value) || std::isinf(value)) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "__int_as_float(0x%08x)", static_cast<unsigned>(bits));
    return buffer;
  }
  if (value == 0.0f) return std::signbit(value) ? "-0.0f" : "0.0f";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%af", static_cast<double>(value));
  return buffer;
}

const std::vector<KernelHeader>& kernel_headers() {
  static const std::vector<KernelHeader> headers = {
      {"cstdint", kCstdint},
      {"loops/index_math.hpp", kIndexMathHeader},
      {"loops/window.hpp", kWindowHeader},
      {"backends/cuda/kernel_math.hpp", kKernelMathHeader},
  };
  return headers;
}

Result<CudaProgram> generate_cuda(const loops::LoweredFunction& lowered) { return Generator(lowered).run(); }

}  // namespace tc::cudagen
