#include "loops/lower.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loops/index_math.hpp"
#include "tensor/op_attrs.hpp"
#include "tensor/shape_inference.hpp"

namespace tc::loops {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

/// Inlined chains longer than this are cut by a buffer (keeps the recursive program builder's
/// depth bounded on whole-model functions).
constexpr int kMaxInlineHeight = 48;
/// Operations one tile program may hold.
constexpr std::size_t kMaxProgramOps = 4096;
/// Domain splits one program may request before the lowering gives up.
constexpr int kMaxSplits = 64;

bool is_leaf_op(Op op) { return op == Op::input || op == Op::constant; }

bool is_reduce_core(Op op) {
  return is_reduction(op) || op == Op::global_average_pool || op == Op::global_max_pool;
}

/// Operators that run as a stage's core (a kernel of their own) rather than inside a program.
bool is_core(Op op) {
  switch (op) {
    case Op::conv: case Op::gemm: case Op::matmul: case Op::max_pool: case Op::average_pool:
    case Op::softmax: case Op::layer_norm: case Op::gather: return true;
    default: return is_reduce_core(op);
  }
}

/// The operands a core's kernel reads from memory; its other operands (a bias, Gemm's C) are
/// epilogue operations and a reduction's operand is its prologue program.
std::vector<std::size_t> kernel_operands(const Node& node) {
  switch (node.op) {
    case Op::conv: case Op::gemm: case Op::matmul: case Op::gather: return {0, 1};
    case Op::max_pool: case Op::average_pool: case Op::softmax: return {0};
    case Op::layer_norm: return node.inputs.size() == 3 ? std::vector<std::size_t>{0, 1, 2} : std::vector<std::size_t>{0, 1};
    default: return {};
  }
}

/// Whether `access` over `dims` reads element floor(i / inner) at domain point i.
bool is_row_broadcast(const Access& access, const Shape& dims, std::int64_t inner) {
  if (inner == 1) return is_identity_access(access, dims);
  if (access.has_holes() || access.linear.offset != 0) return false;
  const Ints strides = row_major_strides(dims);
  std::int64_t tail = 1;
  std::size_t split = dims.size();
  while (split > 0 && tail < inner) tail *= dims[--split];
  if (tail != inner) return false;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t want = d < split ? strides[d] / inner : 0;
    if (dims[d] > 1 && access.linear.coef[d] != want) return false;
  }
  return true;
}

/// Liveness-based slot assignment: a value's slot is reused once its last reader has run. An
/// operation never writes over its own operands (exactly aliased loops defeat some compilers'
/// vectorisers).
void assign_slots(TileProgram& p) {
  std::vector<int> last_use(p.ops.size(), -1);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    for (int operand : {p.ops[i].a, p.ops[i].b}) {
      if (operand >= 0) last_use[static_cast<std::size_t>(operand)] = static_cast<int>(i);
    }
  }
  std::vector<int> free_slots;
  p.slots = 0;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    TileOp& op = p.ops[i];
    if (free_slots.empty()) {
      op.slot = p.slots++;
    } else {
      op.slot = free_slots.back();
      free_slots.pop_back();
    }
    for (int operand : {op.a, op.b}) {
      if (operand >= 0 && last_use[static_cast<std::size_t>(operand)] == static_cast<int>(i)) {
        free_slots.push_back(p.ops[static_cast<std::size_t>(operand)].slot);
        last_use[static_cast<std::size_t>(operand)] = -1;  // a == b frees once
      }
    }
  }
}

/// Copies the entries of `src`, a window's list over three spatial dimensions, to `dst`.
void copy3(const Ints& src, std::int64_t* dst) {
  for (std::size_t d = 0; d < 3; ++d) dst[d] = src[d];
}

/// The loop IR's geometry of a convolution over 1 to 3 spatial dimensions.
ConvGeom conv_geom(const WindowGeometry& window) {
  const WindowGeometry w = window.expanded_to(3);
  ConvGeom g{};
  g.n = w.batch;
  g.c = w.channels;
  g.m = w.out_channels;
  g.group = w.group;
  copy3(w.in, g.in);
  copy3(w.out, g.out);
  copy3(w.kernel, g.k);
  copy3(w.stride, g.stride);
  copy3(w.dilation, g.dil);
  copy3(w.pad_begin, g.pad);
  return g;
}

/// The loop IR's geometry of a pooling over 1 to 3 spatial dimensions.
PoolGeom pool_geom(const WindowGeometry& window, bool max, bool count_include_pad) {
  const WindowGeometry w = window.expanded_to(3);
  PoolGeom g{};
  g.max = max;
  g.count_include_pad = count_include_pad;
  g.planes = w.batch * w.channels;
  copy3(w.in, g.in);
  copy3(w.out, g.out);
  copy3(w.kernel, g.k);
  copy3(w.stride, g.stride);
  copy3(w.dilation, g.dil);
  copy3(w.pad_begin, g.pad);
  copy3(w.pad_end, g.pad_end);
  return g;
}

/// Why a window over more than three spatial dimensions is refused.
std::string spatial_dims(const WindowGeometry& window, const char* what) {
  return std::string(what) + " with " + std::to_string(window.rank()) + " spatial dimensions (1 to 3 are supported)";
}

class Lowering;

/// Builds one tile program by walking the function's graph from a root, composing each
/// operator's coordinate map into its operands' (inlining every operator that is neither a leaf
/// nor buffered). A (node, map) pair is computed once.
class ProgramBuilder {
 public:
  ProgramBuilder(Lowering& lowering, Shape dims, int root, int core, int core_source)
      : lowering_(lowering), dims_(std::move(dims)), root_(root), core_(core), core_source_(core_source) {}

  /// The operation computing node `n` at the points of `map`; -1 when the build stopped (see
  /// split() and error()).
  int value(int n, const CoordMap& map);

  const std::optional<Split>& split() const { return split_; }
  const std::optional<Error>& error() const { return error_; }
  TileProgram take() { return std::move(program_); }

 private:
  struct Operand {
    int op = -1;  // or, when -1, the scalar
    float scalar = 0.0f;
  };

  const Graph& graph() const;
  int compute(int n, const CoordMap& map);
  int core_value(const CoordMap& map);
  Operand operand(int n, const CoordMap& map, const Shape& out_shape);
  int binary(Op op, Operand a, Operand b);
  int emit(TileOp op);
  int unary(TileOpCode code, int a, float p0 = 0.0f, float p1 = 0.0f) {
    TileOp op;
    op.code = code;
    op.a = a;
    op.p0 = p0;
    op.p1 = p1;
    return emit(op);
  }
  int fill(float v) {
    TileOp op;
    op.code = TileOpCode::fill;
    op.p0 = v;
    return emit(op);
  }
  int load(int source, Access access);
  int select(const Access& mask, int a, int b);
  int stop(std::string message) {
    if (!error_) error_ = Error{ErrorCode::invalid_argument, std::move(message)};
    return -1;
  }

  Lowering& lowering_;
  Shape dims_;
  int root_;
  int core_;
  int core_source_;
  TileProgram program_;
  std::map<int, std::vector<std::pair<CoordMap, int>>> memo_;
  std::optional<Split> split_;
  std::optional<Error> error_;
};

/// The lowering of one function.
class Lowering {
 public:
  explicit Lowering(const Function& function) : g_(function.graph) {}

  Result<LoweredFunction> run();

  const Graph& graph() const { return g_; }
  bool scalar_constant(int n) const {
    const Node& node = g_.node(n);
    return node.op == Op::constant && node.value && node.value->data.size() == 1;
  }
  bool buffered(int n) const { return is_leaf_op(g_.node(n).op) || materialized_[static_cast<std::size_t>(n)]; }
  /// The buffer holding node n (a parameter, a constant, or a stage's result).
  int source_of(int n);
  /// Per-channel (a, b) constants with batch_norm(x) = a * x + b, when node n's parameters are
  /// constants; (-1, -1) otherwise.
  std::pair<int, int> folded_batch_norm(int n);

 private:
  const Node& node(int n) const { return g_.node(n); }
  const Shape& shape(int n) const { return g_.node(n).shape; }
  int add_source(Source::Kind kind, int index) {
    out_.sources.push_back(Source{kind, index});
    return static_cast<int>(out_.sources.size()) - 1;
  }
  int add_constant(std::shared_ptr<const Tensor> value) {
    out_.constants.push_back(std::move(value));
    return add_source(Source::Kind::constant, static_cast<int>(out_.constants.size()) - 1);
  }
  int add_scratch(std::int64_t size) {
    out_.scratch_sizes.push_back(size);
    return add_source(Source::Kind::scratch, static_cast<int>(out_.scratch_sizes.size()) - 1);
  }
  Status fail(int n, const std::string& problem) const {
    return Error{ErrorCode::invalid_argument, describe(g_, n) + ": " + problem};
  }

  void plan_materialization();
  void plan_fusion();
  /// The stage-root nodes whose stage reads buffered node `n` (repeats allowed).
  void collect_reads(int root, std::vector<std::vector<int>>& readers) const;
  Status build_stage(int n);
  Status build_core(int c, Stage& stage);
  Result<TileProgram> build_program(int root, const Shape& shape, int inline_root, int core, int core_source,
                                    const std::vector<std::int64_t>* reduce_axes);

  const Graph& g_;
  LoweredFunction out_;
  std::vector<char> materialized_;
  std::vector<int> buffer_;
  std::vector<int> fused_core_;   // stage root -> the core fused into its stage
  std::vector<char> fused_;       // core fused into a consumer's stage
  std::map<int, std::pair<int, int>> batch_norm_constants_;
};

const Graph& ProgramBuilder::graph() const { return lowering_.graph(); }

int ProgramBuilder::emit(TileOp op) {
  for (std::size_t i = 0; i < program_.ops.size(); ++i) {
    const TileOp& o = program_.ops[i];
    if (o.code == op.code && o.a == op.a && o.b == op.b && o.ref == op.ref && o.p0 == op.p0 && o.p1 == op.p1) {
      return static_cast<int>(i);
    }
  }
  if (program_.ops.size() >= kMaxProgramOps) {
    return stop("fused program exceeds " + std::to_string(kMaxProgramOps) + " operations");
  }
  program_.ops.push_back(op);
  return static_cast<int>(program_.ops.size()) - 1;
}

int ProgramBuilder::load(int source, Access access) {
  int leaf = -1;
  for (std::size_t i = 0; i < program_.leaves.size(); ++i) {
    if (program_.leaves[i].source == source && program_.leaves[i].access == access) leaf = static_cast<int>(i);
  }
  if (leaf < 0) {
    program_.leaves.push_back(Leaf{source, std::move(access)});
    leaf = static_cast<int>(program_.leaves.size()) - 1;
  }
  TileOp op;
  op.code = TileOpCode::load;
  op.ref = leaf;
  return emit(op);
}

int ProgramBuilder::select(const Access& mask, int a, int b) {
  if (a < 0 || b < 0) return -1;
  // Only the validity of a mask matters.
  Access valid{Affine::constant(dims_.size(), 0), mask.checks, mask.table};
  int m = -1;
  for (std::size_t i = 0; i < program_.masks.size(); ++i) {
    if (program_.masks[i] == valid) m = static_cast<int>(i);
  }
  if (m < 0) {
    program_.masks.push_back(std::move(valid));
    m = static_cast<int>(program_.masks.size()) - 1;
  }
  TileOp op;
  op.code = TileOpCode::select;
  op.a = a;
  op.b = b;
  op.ref = m;
  return emit(op);
}

int ProgramBuilder::value(int n, const CoordMap& map) {
  if (split_ || error_) return -1;
  auto& seen = memo_[n];
  for (const auto& [m, op] : seen) {
    if (m == map) return op;
  }
  const int op = compute(n, map);
  if (op >= 0) memo_[n].emplace_back(map, op);
  return op;
}

ProgramBuilder::Operand ProgramBuilder::operand(int n, const CoordMap& map, const Shape& out_shape) {
  if (lowering_.scalar_constant(n)) return Operand{-1, graph().node(n).value->data[0]};
  return Operand{value(n, broadcast_input(map, out_shape, graph().node(n).shape, dims_)), 0.0f};
}

int ProgramBuilder::binary(Op op, Operand a, Operand b) {
  if (a.op < 0 && b.op < 0) {
    // Both scalars (an all-constant expression): fold.
    const float x = a.scalar;
    const float y = b.scalar;
    switch (op) {
      case Op::add: return fill(x + y);
      case Op::sub: return fill(x - y);
      case Op::mul: return fill(x * y);
      case Op::div: return fill(x / y);
      case Op::pow: return fill(std::pow(x, y));
      case Op::max: return fill(std::max(x, y));
      default: return fill(std::min(x, y));
    }
  }
  if (split_ || error_) return -1;
  TileOp t;
  if (a.op >= 0 && b.op >= 0) {
    switch (op) {
      case Op::add: t.code = TileOpCode::add; break;
      case Op::sub: t.code = TileOpCode::sub; break;
      case Op::mul: t.code = TileOpCode::mul; break;
      case Op::div: t.code = TileOpCode::div; break;
      case Op::pow: t.code = TileOpCode::pow; break;
      case Op::max: t.code = TileOpCode::max; break;
      default: t.code = TileOpCode::min; break;
    }
    t.a = a.op;
    t.b = b.op;
    return emit(t);
  }
  if (b.op < 0) {
    // Tensor op scalar.
    const float s = b.scalar;
    t.a = a.op;
    t.p0 = s;
    switch (op) {
      case Op::add: t.code = TileOpCode::add_s; break;
      case Op::sub: t.code = TileOpCode::sub_s; break;
      case Op::mul: t.code = TileOpCode::mul_s; break;
      case Op::div:
        // Multiplying by the reciprocal is within an ulp or two and much cheaper.
        if (std::isnormal(s) && std::isnormal(1.0f / s)) {
          t.code = TileOpCode::mul_s;
          t.p0 = 1.0f / s;
        } else {
          t.code = TileOpCode::div_s;
        }
        break;
      case Op::max: t.code = TileOpCode::max_s; break;
      case Op::min: t.code = TileOpCode::min_s; break;
      default:
        if (s == 1.0f) return a.op;
        if (s == 2.0f) return unary(TileOpCode::square, a.op);
        if (s == 0.5f) return unary(TileOpCode::sqrt, a.op);
        if (s == -1.0f) return unary(TileOpCode::reciprocal, a.op);
        t.code = TileOpCode::pow_s;
        break;
    }
    return emit(t);
  }
  // Scalar op tensor.
  t.a = b.op;
  t.p0 = a.scalar;
  switch (op) {
    case Op::add: t.code = TileOpCode::add_s; break;
    case Op::sub: t.code = TileOpCode::rsub_s; break;
    case Op::mul: t.code = TileOpCode::mul_s; break;
    case Op::div: t.code = TileOpCode::rdiv_s; break;
    case Op::pow: t.code = TileOpCode::rpow_s; break;
    case Op::max: t.code = TileOpCode::max_s; break;
    default: t.code = TileOpCode::min_s; break;
  }
  return emit(t);
}

int ProgramBuilder::core_value(const CoordMap& map) {
  const Node& node = graph().node(core_);
  int v = load(core_source_, access_of(map, node.shape, dims_.size()));
  if (node.op == Op::conv && node.inputs.size() == 3) {
    const int bias = value(node.inputs[2], project_input(map, node.shape, {1}, graph().node(node.inputs[2]).shape, dims_));
    if (bias < 0) return -1;
    TileOp add;
    add.code = TileOpCode::add;
    add.a = v;
    add.b = bias;
    v = emit(add);
  } else if (node.op == Op::gemm) {
    const GemmAttrs attrs = gemm_attrs(node);
    const auto alpha = static_cast<float>(attrs.alpha);
    const auto beta = static_cast<float>(attrs.beta);
    if (alpha != 1.0f) v = binary(Op::mul, Operand{v, 0.0f}, Operand{-1, alpha});
    if (node.inputs.size() == 3 && beta != 0.0f) {
      Operand c = operand(node.inputs[2], map, node.shape);
      if (c.op < 0 && (split_ || error_)) return -1;
      if (c.op >= 0 && beta != 1.0f) c = Operand{binary(Op::mul, c, Operand{-1, beta}), 0.0f};
      if (c.op < 0) c.scalar *= beta;
      v = binary(Op::add, Operand{v, 0.0f}, c);
    }
  }
  return v;
}

int ProgramBuilder::compute(int n, const CoordMap& map) {
  const Graph& g = graph();
  const Node& node = g.node(n);
  if (n == core_) return core_value(map);
  if (lowering_.scalar_constant(n)) return fill(node.value->data[0]);
  if (n != root_ && lowering_.buffered(n)) return load(lowering_.source_of(n), access_of(map, node.shape, dims_.size()));
  const Op op = node.op;
  if (op == Op::identity || op == Op::reshape || op == Op::flatten || op == Op::squeeze || op == Op::unsqueeze) {
    auto in = reshape_input(map, node.shape, g.node(node.inputs[0]).shape, dims_);
    if (const Split* s = std::get_if<Split>(&in)) {
      split_ = *s;
      return -1;
    }
    return value(node.inputs[0], std::get<CoordMap>(in));
  }
  if (is_unary_elementwise(op)) {
    const int a = value(node.inputs[0], map);
    if (a < 0) return -1;
    const UnaryAttrs attrs = unary_attrs(node);
    switch (op) {
      case Op::relu: return unary(TileOpCode::relu, a);
      case Op::sigmoid: return unary(TileOpCode::sigmoid, a);
      case Op::tanh: return unary(TileOpCode::tanh, a);
      case Op::exp: return unary(TileOpCode::exp, a);
      case Op::log: return unary(TileOpCode::log, a);
      case Op::sqrt: return unary(TileOpCode::sqrt, a);
      case Op::erf: return unary(TileOpCode::erf, a);
      case Op::neg: return unary(TileOpCode::neg, a);
      case Op::abs: return unary(TileOpCode::abs, a);
      case Op::reciprocal: return unary(TileOpCode::reciprocal, a);
      case Op::sin: return unary(TileOpCode::sin, a);
      case Op::cos: return unary(TileOpCode::cos, a);
      case Op::tan: return unary(TileOpCode::tan, a);
      case Op::asin: return unary(TileOpCode::asin, a);
      case Op::acos: return unary(TileOpCode::acos, a);
      case Op::atan: return unary(TileOpCode::atan, a);
      case Op::sinh: return unary(TileOpCode::sinh, a);
      case Op::cosh: return unary(TileOpCode::cosh, a);
      case Op::asinh: return unary(TileOpCode::asinh, a);
      case Op::acosh: return unary(TileOpCode::acosh, a);
      case Op::atanh: return unary(TileOpCode::atanh, a);
      case Op::floor: return unary(TileOpCode::floor, a);
      case Op::ceil: return unary(TileOpCode::ceil, a);
      case Op::round: return unary(TileOpCode::round, a);
      case Op::sign: return unary(TileOpCode::sign, a);
      case Op::clip: return unary(TileOpCode::clip, a, static_cast<float>(attrs.min), static_cast<float>(attrs.max));
      case Op::leaky_relu: return unary(TileOpCode::leaky_relu, a, static_cast<float>(attrs.alpha));
      case Op::hard_sigmoid:
        return unary(TileOpCode::hard_sigmoid, a, static_cast<float>(attrs.alpha), static_cast<float>(attrs.beta));
      default: return stop(describe(g, n) + ": no tile operation");
    }
  }
  if (is_binary_elementwise(op)) {
    const Operand a = operand(node.inputs[0], map, node.shape);
    if (a.op < 0 && (split_ || error_)) return -1;
    const Operand b = operand(node.inputs[1], map, node.shape);
    if (b.op < 0 && (split_ || error_)) return -1;
    return binary(op, a, b);
  }
  switch (op) {
    case Op::batch_norm: {
      const int x = value(node.inputs[0], map);
      if (x < 0) return -1;
      auto channel = [&](int k) {
        const int in = node.inputs[static_cast<std::size_t>(k)];
        return Operand{value(in, project_input(map, node.shape, {1}, g.node(in).shape, dims_)), 0.0f};
      };
      const auto [a_src, b_src] = lowering_.folded_batch_norm(n);
      if (a_src >= 0) {
        const CoordMap cm = project_input(map, node.shape, {1}, Shape{node.shape[1]}, dims_);
        const int a = load(a_src, access_of(cm, Shape{node.shape[1]}, dims_.size()));
        const int b = load(b_src, access_of(cm, Shape{node.shape[1]}, dims_.size()));
        return binary(Op::add, Operand{binary(Op::mul, Operand{x, 0.0f}, Operand{a, 0.0f}), 0.0f}, Operand{b, 0.0f});
      }
      const Operand scale = channel(1);
      const Operand bias = channel(2);
      const Operand mean = channel(3);
      const Operand var = channel(4);
      if (scale.op < 0 || bias.op < 0 || mean.op < 0 || var.op < 0) return -1;
      const auto eps = static_cast<float>(epsilon_attr(node));
      const int centered = binary(Op::sub, Operand{x, 0.0f}, mean);
      const int scaled = binary(Op::mul, Operand{centered, 0.0f}, scale);
      const int stddev = unary(TileOpCode::sqrt, binary(Op::add, var, Operand{-1, eps}));
      const int normed = binary(Op::div, Operand{scaled, 0.0f}, Operand{stddev, 0.0f});
      return binary(Op::add, Operand{normed, 0.0f}, bias);
    }
    case Op::transpose:
      return value(node.inputs[0],
                   transpose_input(map, node.shape, perm_attr(node), g.node(node.inputs[0]).shape, dims_));
    case Op::slice: {
      const SliceAttrs attrs = slice_attrs(node);
      return value(node.inputs[0],
                   slice_input(map, node.shape, attrs.starts, attrs.steps, g.node(node.inputs[0]).shape, dims_));
    }
    case Op::pad: {
      const Shape& in_shape = g.node(node.inputs[0]).shape;
      const PadAttrs attrs = pad_attrs(node);
      const CoordMap in_map = pad_input(map, node.shape, attrs.pads, attrs.mode, in_shape, dims_);
      const int x = value(node.inputs[0], in_map);
      if (x < 0) return -1;
      if (attrs.mode != PadAttrs::Mode::constant) return x;
      const auto pad_value = static_cast<float>(attrs.value);
      if (!in_map.table && in_map.checks.size() == map.checks.size()) return x;  // no element is padding
      const Access mask = access_of(in_map, in_shape, dims_.size());
      // A leaf reads 0 where it is not valid: padding with 0 needs no select.
      if (pad_value == 0.0f && program_.ops[static_cast<std::size_t>(x)].code == TileOpCode::load) return x;
      return select(mask, x, fill(pad_value));
    }
    case Op::concat: {
      const std::size_t axis = axis_attr(node);
      std::vector<std::pair<Access, int>> pieces;
      std::int64_t offset = 0;
      for (int in : node.inputs) {
        const Shape& in_shape = g.node(in).shape;
        if (in_shape[axis] > 0) {
          const CoordMap in_map = concat_input(map, node.shape, axis, offset, in_shape, dims_);
          const int v = value(in, in_map);
          if (v < 0) return -1;
          pieces.emplace_back(access_of(in_map, in_shape, dims_.size()), v);
        }
        offset += in_shape[axis];
      }
      if (pieces.empty()) return fill(0.0f);
      int acc = pieces.back().second;
      for (std::size_t k = pieces.size() - 1; k-- > 0;) acc = select(pieces[k].first, pieces[k].second, acc);
      return acc;
    }
    default: return stop(describe(g, n) + ": cannot be inlined into a fused loop");
  }
}

int Lowering::source_of(int n) {
  int& b = buffer_[static_cast<std::size_t>(n)];
  if (b >= 0) return b;
  const Node& nd = node(n);
  if (nd.op == Op::constant) {
    b = add_constant(nd.value);
  } else if (nd.op == Op::input) {
    const auto& inputs = g_.inputs();
    const auto at = std::find(inputs.begin(), inputs.end(), n) - inputs.begin();
    b = add_source(Source::Kind::param, static_cast<int>(at));
  }
  return b;
}

std::pair<int, int> Lowering::folded_batch_norm(int n) {
  auto it = batch_norm_constants_.find(n);
  if (it != batch_norm_constants_.end()) return it->second;
  const Node& nd = node(n);
  std::pair<int, int> result{-1, -1};
  bool constants = true;
  for (std::size_t k = 1; k < 5; ++k) constants = constants && node(nd.inputs[k]).op == Op::constant && node(nd.inputs[k]).value;
  if (constants) {
    const auto& scale = node(nd.inputs[1]).value->data;
    const auto& bias = node(nd.inputs[2]).value->data;
    const auto& mean = node(nd.inputs[3]).value->data;
    const auto& var = node(nd.inputs[4]).value->data;
    const double eps = epsilon_attr(nd);
    const std::size_t c = scale.size();
    Tensor a(Shape{static_cast<std::int64_t>(c)});
    Tensor b(Shape{static_cast<std::int64_t>(c)});
    for (std::size_t i = 0; i < c; ++i) {
      const double s = static_cast<double>(scale[i]) / std::sqrt(static_cast<double>(var[i]) + eps);
      a.data[i] = static_cast<float>(s);
      b.data[i] = static_cast<float>(static_cast<double>(bias[i]) - static_cast<double>(mean[i]) * s);
    }
    result = {add_constant(std::make_shared<const Tensor>(std::move(a))),
              add_constant(std::make_shared<const Tensor>(std::move(b)))};
  }
  batch_norm_constants_[n] = result;
  return result;
}

void Lowering::plan_materialization() {
  const std::size_t size = g_.size();
  materialized_.assign(size, 0);
  for (int out : g_.outputs()) {
    if (!is_leaf_op(node(out).op)) materialized_[static_cast<std::size_t>(out)] = 1;
  }
  for (std::size_t n = 0; n < size; ++n) {
    const Node& nd = g_.node(static_cast<int>(n));
    if (!is_core(nd.op)) continue;
    materialized_[n] = 1;
    for (std::size_t k : kernel_operands(nd)) {
      const int in = nd.inputs[k];
      if (!is_leaf_op(node(in).op)) materialized_[static_cast<std::size_t>(in)] = 1;
    }
  }
  // Cut long inlined chains.
  std::vector<int> height(size, 0);
  for (std::size_t n = 0; n < size; ++n) {
    const Node& nd = g_.node(static_cast<int>(n));
    if (is_leaf_op(nd.op)) continue;
    int h = 0;
    for (int in : nd.inputs) h = std::max(h, height[static_cast<std::size_t>(in)] + 1);
    if (h > kMaxInlineHeight) materialized_[n] = 1;
    height[n] = materialized_[n] ? 0 : h;
  }
}

void Lowering::collect_reads(int root, std::vector<std::vector<int>>& readers) const {
  std::vector<int> stack;
  const Node& r = node(root);
  if (is_core(r.op)) {
    const std::vector<std::size_t> direct = kernel_operands(r);
    for (std::size_t k = 0; k < r.inputs.size(); ++k) {
      const int in = r.inputs[k];
      if (std::find(direct.begin(), direct.end(), k) != direct.end() || buffered(in)) {
        readers[static_cast<std::size_t>(in)].push_back(root);
      } else {
        stack.push_back(in);
      }
    }
  } else {
    stack.push_back(root);
  }
  std::vector<char> seen(g_.size(), 0);
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (seen[static_cast<std::size_t>(n)]) continue;
    seen[static_cast<std::size_t>(n)] = 1;
    if (n != root && buffered(n)) {
      readers[static_cast<std::size_t>(n)].push_back(root);
      continue;
    }
    for (int in : node(n).inputs) stack.push_back(in);
  }
}

void Lowering::plan_fusion() {
  const std::size_t size = g_.size();
  std::vector<std::vector<int>> readers(size);
  for (std::size_t n = 0; n < size; ++n) {
    if (materialized_[n]) collect_reads(static_cast<int>(n), readers);
  }
  std::vector<char> output(size, 0);
  for (int out : g_.outputs()) output[static_cast<std::size_t>(out)] = 1;
  fused_core_.assign(size, -1);
  fused_.assign(size, 0);
  for (std::size_t c = 0; c < size; ++c) {
    if (!is_core(g_.node(static_cast<int>(c)).op) || output[c] || readers[c].size() != 1) continue;
    const int s = readers[c][0];
    if (is_core(node(s).op) || fused_core_[static_cast<std::size_t>(s)] >= 0) continue;
    fused_core_[static_cast<std::size_t>(s)] = static_cast<int>(c);
    fused_[c] = 1;
  }
}

Result<TileProgram> Lowering::build_program(int root, const Shape& shape, int inline_root, int core, int core_source,
                                            const std::vector<std::int64_t>* reduce_axes) {
  Domain domain(shape);
  for (int attempt = 0;; ++attempt) {
    ProgramBuilder builder(*this, domain.dims(), inline_root, core, core_source);
    const CoordMap identity = domain.identity();
    const int result = builder.value(root, identity);
    if (builder.error()) return *builder.error();
    if (builder.split()) {
      if (attempt >= kMaxSplits || !domain.split(*builder.split())) {
        return Error{ErrorCode::internal, describe(g_, root) + ": reshape splits do not converge"};
      }
      continue;
    }
    if (result < 0) return Error{ErrorCode::internal, describe(g_, root) + ": empty program"};
    TileProgram p = builder.take();
    // The sink: the destination's linear index (the reduced one for a reduction's input).
    const Shape dims = domain.dims();
    p.sink = Affine::constant(dims.size(), 0);
    if (reduce_axes == nullptr) {
      const Ints strides = row_major_strides(shape);
      for (std::size_t k = 0; k < shape.size(); ++k) p.sink.add_scaled(identity.coords[k], strides[k]);
    } else {
      Shape kept;
      for (std::size_t k = 0; k < shape.size(); ++k) {
        if (!std::binary_search(reduce_axes->begin(), reduce_axes->end(), static_cast<std::int64_t>(k))) kept.push_back(shape[k]);
      }
      const Ints strides = row_major_strides(kept);
      std::size_t r = 0;
      for (std::size_t k = 0; k < shape.size(); ++k) {
        if (std::binary_search(reduce_axes->begin(), reduce_axes->end(), static_cast<std::int64_t>(k))) continue;
        p.sink.add_scaled(identity.coords[k], strides[r++]);
      }
    }
    std::vector<Affine*> exprs{&p.sink};
    for (Leaf& leaf : p.leaves) {
      if (!leaf.access.table) exprs.push_back(&leaf.access.linear);
      for (Check& c : leaf.access.checks) exprs.push_back(&c.expr);
    }
    for (Access& mask : p.masks) {
      for (Check& c : mask.checks) exprs.push_back(&c.expr);
    }
    p.dims = coalesce(dims, exprs);
    if (p.dims.size() > static_cast<std::size_t>(kMaxDomainRank)) {
      return Error{ErrorCode::invalid_argument, describe(g_, root) + ": loop nest deeper than " +
                                                    std::to_string(kMaxDomainRank) + " dimensions"};
    }
    // A table-read leaf's unused linear expression takes the domain's rank too.
    for (Leaf& leaf : p.leaves) {
      if (leaf.access.table) leaf.access.linear = Affine::constant(p.dims.size(), 0);
    }
    for (Access& mask : p.masks) mask.linear = Affine::constant(p.dims.size(), 0);
    assign_slots(p);
    return p;
  }
}

Status Lowering::build_core(int c, Stage& stage) {
  const Node& nd = node(c);
  auto src = [&](std::size_t k) { return source_of(nd.inputs[k]); };
  auto in_shape = [&](std::size_t k) -> const Shape& { return shape(nd.inputs[k]); };
  switch (nd.op) {
    case Op::conv: {
      const WindowGeometry window = conv_geometry(g_, c);
      if (window.rank() > 3) return fail(c, spatial_dims(window, "Conv"));
      ConvCore core;
      core.x = src(0);
      core.w = src(1);
      core.geom = conv_geom(window);
      stage.core = core;
      return Status::success();
    }
    case Op::gemm: {
      GemmCore core;
      core.a = src(0);
      core.b = src(1);
      const Shape& a = in_shape(0);
      const Shape& b = in_shape(1);
      const GemmAttrs attrs = gemm_attrs(nd);
      const bool ta = attrs.trans_a;
      const bool tb = attrs.trans_b;
      core.m = nd.shape[0];
      core.n = nd.shape[1];
      core.k = ta ? a[0] : a[1];
      core.a_rs = ta ? 1 : a[1];
      core.a_cs = ta ? a[1] : 1;
      core.b_rs = tb ? 1 : b[1];
      core.b_cs = tb ? b[1] : 1;
      stage.core = std::move(core);
      return Status::success();
    }
    case Op::matmul: {
      GemmCore core;
      core.a = src(0);
      core.b = src(1);
      Shape a = in_shape(0);
      Shape b = in_shape(1);
      if (a.size() == 1) a.insert(a.begin(), 1);
      if (b.size() == 1) b.push_back(1);
      core.m = a[a.size() - 2];
      core.k = a.back();
      core.n = b.back();
      core.a_rs = core.k;
      core.a_cs = 1;
      core.b_rs = core.n;
      core.b_cs = 1;
      const std::size_t rank = std::max(a.size(), b.size()) - 2;
      const Ints a_strides = row_major_strides(a);
      const Ints b_strides = row_major_strides(b);
      for (std::size_t d = 0; d < rank; ++d) {
        const std::size_t from_end = rank - d;  // batch dims aligned at the end
        const bool in_a = a.size() - 2 >= from_end;
        const bool in_b = b.size() - 2 >= from_end;
        const std::int64_t da = in_a ? a[a.size() - 2 - from_end] : 1;
        const std::int64_t db = in_b ? b[b.size() - 2 - from_end] : 1;
        core.batch.push_back(da == 1 ? db : da);
        core.a_batch_strides.push_back(in_a && da != 1 ? a_strides[a.size() - 2 - from_end] : 0);
        core.b_batch_strides.push_back(in_b && db != 1 ? b_strides[b.size() - 2 - from_end] : 0);
      }
      // B shared by every batch and A dense: one GEMM of (batch * m) rows.
      bool fold = true;
      std::int64_t expect = core.m * core.k;
      for (std::size_t d = rank; d-- > 0;) {
        fold = fold && core.b_batch_strides[d] == 0 && (core.batch[d] == 1 || core.a_batch_strides[d] == expect);
        expect *= core.batch[d];
      }
      if (fold) {
        core.m *= numel(core.batch);
        core.batch.clear();
        core.a_batch_strides.clear();
        core.b_batch_strides.clear();
      }
      stage.core = std::move(core);
      return Status::success();
    }
    case Op::max_pool:
    case Op::average_pool: {
      const WindowGeometry window = pool_geometry(g_, c);
      if (window.rank() > 3) return fail(c, spatial_dims(window, "pooling"));
      PoolCore core;
      core.x = src(0);
      core.geom = pool_geom(window, nd.op == Op::max_pool, pool_attrs(nd).count_include_pad);
      stage.core = core;
      return Status::success();
    }
    case Op::softmax: {
      SoftmaxCore core;
      core.x = src(0);
      const std::size_t axis = axis_attr(nd);
      core.outer = product(nd.shape, 0, axis);
      core.axis = nd.shape[axis];
      core.inner = product(nd.shape, axis + 1, nd.shape.size());
      stage.core = std::move(core);
      return Status::success();
    }
    case Op::layer_norm: {
      LayerNormCore core;
      core.x = src(0);
      core.scale = src(1);
      core.bias = nd.inputs.size() == 3 ? src(2) : -1;
      const std::size_t axis = axis_attr(nd);
      const Shape normalized(nd.shape.begin() + static_cast<std::ptrdiff_t>(axis), nd.shape.end());
      core.rows = product(nd.shape, 0, axis);
      core.cols = numel(normalized);
      core.epsilon = static_cast<float>(epsilon_attr(nd));
      core.normalized = normalized;
      const Domain domain(normalized);
      auto param_access = [&](std::size_t k) {
        return access_of(broadcast_input(domain.identity(), normalized, in_shape(k), normalized), in_shape(k), normalized.size());
      };
      core.scale_access = param_access(1);
      if (core.bias >= 0) core.bias_access = param_access(2);
      stage.core = std::move(core);
      return Status::success();
    }
    case Op::gather: {
      GatherCore core;
      core.data = src(0);
      core.indices = src(1);
      const Shape& data = in_shape(0);
      const std::size_t axis = axis_attr(nd);
      core.outer = product(data, 0, axis);
      core.size = data[axis];
      core.inner = product(data, axis + 1, data.size());
      core.count = numel(in_shape(1));
      stage.core = core;
      return Status::success();
    }
    default: break;
  }
  // Reductions and global pools: the prologue program over the input's shape.
  ReduceCore core;
  const Shape& x = in_shape(0);
  std::vector<std::int64_t> axes;
  if (nd.op == Op::global_average_pool || nd.op == Op::global_max_pool) {
    for (std::size_t d = 2; d < x.size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
    core.kind = nd.op == Op::global_max_pool ? ReduceKind::max : ReduceKind::mean;
  } else {
    axes = reduce_attrs(nd).axes;
    core.kind = nd.op == Op::reduce_max ? ReduceKind::max : nd.op == Op::reduce_mean ? ReduceKind::mean : ReduceKind::sum;
  }
  core.size = numel(nd.shape);
  core.count = 1;
  std::int64_t last_kept = -1;
  std::int64_t first_reduced = static_cast<std::int64_t>(x.size());
  for (std::size_t d = 0; d < x.size(); ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
    if (reduced) core.count *= x[d];
    if (x[d] == 1) continue;
    if (reduced) first_reduced = std::min(first_reduced, static_cast<std::int64_t>(d));
    else last_kept = static_cast<std::int64_t>(d);
  }
  core.rows = last_kept < first_reduced;
  auto input = build_program(nd.inputs[0], x, -1, -1, -1, &axes);
  if (!input.ok()) return input.error();
  core.input = std::move(*input);
  stage.core = std::move(core);
  return Status::success();
}

Status Lowering::build_stage(int n) {
  Stage stage;
  stage.dst = buffer_[static_cast<std::size_t>(n)];
  stage.size = numel(shape(n));
  const Node& nd = node(n);
  if (is_core(nd.op)) {
    if (Status s = build_core(n, stage); !s.ok()) return s;
    stage.core_dst = stage.dst;
    const bool bias = (nd.op == Op::conv && nd.inputs.size() == 3) ||
                      (nd.op == Op::gemm && (gemm_attrs(nd).alpha != 1.0 ||
                                             (nd.inputs.size() == 3 && gemm_attrs(nd).beta != 0.0)));
    if (bias) {
      auto p = build_program(n, nd.shape, n, n, stage.dst, nullptr);
      if (!p.ok()) return p.error();
      stage.epilogue = std::move(*p);
      stage.has_epilogue = true;
    }
    out_.stages.push_back(std::move(stage));
    return Status::success();
  }
  const int core = fused_core_[static_cast<std::size_t>(n)];
  if (core < 0) {
    auto p = build_program(n, nd.shape, n, -1, -1, nullptr);
    if (!p.ok()) return p.error();
    stage.epilogue = std::move(*p);
    stage.has_epilogue = true;
    out_.stages.push_back(std::move(stage));
    return Status::success();
  }
  if (Status s = build_core(core, stage); !s.ok()) return s;
  stage.has_epilogue = true;
  if (auto* reduce = std::get_if<ReduceCore>(&stage.core)) {
    stage.core_dst = add_scratch(reduce->size);
    auto p = build_program(n, nd.shape, n, core, stage.core_dst, nullptr);
    if (!p.ok()) return p.error();
    stage.epilogue = std::move(*p);
    if (reduce->rows && reduce->count > 0) {
      for (std::int64_t per : {std::int64_t{1}, reduce->count}) {
        if (stage.size != reduce->size * per) continue;
        bool all = true;
        for (const Leaf& leaf : stage.epilogue.leaves) {
          if (leaf.source == stage.core_dst) all = all && is_row_broadcast(leaf.access, stage.epilogue.dims, per);
        }
        if (all) {
          stage.rows_per_result = per;
          break;
        }
      }
    }
    out_.stages.push_back(std::move(stage));
    return Status::success();
  }
  // An anchor: its epilogue runs in place on each finished block when it reads the anchor's
  // result element for element; otherwise the anchor writes a scratch buffer first.
  auto p = build_program(n, nd.shape, n, core, stage.dst, nullptr);
  if (!p.ok()) return p.error();
  bool in_place = numel(shape(core)) == stage.size;
  for (const Leaf& leaf : p->leaves) {
    if (leaf.source == stage.dst) in_place = in_place && is_identity_access(leaf.access, p->dims);
  }
  if (in_place) {
    stage.core_dst = stage.dst;
    stage.epilogue = std::move(*p);
  } else {
    stage.core_dst = add_scratch(numel(shape(core)));
    for (Leaf& leaf : p->leaves) {
      if (leaf.source == stage.dst) leaf.source = stage.core_dst;
    }
    stage.epilogue = std::move(*p);
  }
  out_.stages.push_back(std::move(stage));
  return Status::success();
}

Result<LoweredFunction> Lowering::run() {
  const std::size_t size = g_.size();
  buffer_.assign(size, -1);
  for (std::size_t n = 0; n < size; ++n) {
    const Node& nd = g_.node(static_cast<int>(n));
    for (std::int64_t d : nd.shape) {
      if (d < 0) return fail(static_cast<int>(n), "unknown dimension").error();
    }
    if (nd.op == Op::constant && !nd.value) return fail(static_cast<int>(n), "constant without a value").error();
  }
  plan_materialization();
  plan_fusion();
  // Buffers of the stage results: the function's outputs (first occurrence), else scratch.
  const std::vector<int>& outputs = g_.outputs();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const int n = outputs[k];
    out_.output_sizes.push_back(numel(shape(n)));
    const std::size_t first = static_cast<std::size_t>(std::find(outputs.begin(), outputs.end(), n) - outputs.begin());
    if (first != k) {
      out_.output_copies.emplace_back(static_cast<int>(k), static_cast<int>(first));
      continue;
    }
    if (is_leaf_op(node(n).op)) continue;
    buffer_[static_cast<std::size_t>(n)] = add_source(Source::Kind::output, static_cast<int>(k));
  }
  for (std::size_t n = 0; n < size; ++n) {
    if (materialized_[n] && buffer_[n] < 0 && !fused_[n]) buffer_[n] = add_scratch(numel(g_.node(static_cast<int>(n)).shape));
  }
  for (std::size_t n = 0; n < size; ++n) {
    if (!materialized_[n] || fused_[n]) continue;
    if (Status s = build_stage(static_cast<int>(n)); !s.ok()) return s.error();
  }
  // Outputs that are parameters or constants: a copy stage each.
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const int n = outputs[k];
    if (!is_leaf_op(node(n).op)) continue;
    const std::size_t first = static_cast<std::size_t>(std::find(outputs.begin(), outputs.end(), n) - outputs.begin());
    if (first != k) continue;
    Stage stage;
    stage.dst = add_source(Source::Kind::output, static_cast<int>(k));
    stage.size = numel(shape(n));
    auto p = build_program(n, shape(n), -1, -1, -1, nullptr);
    if (!p.ok()) return p.error();
    stage.epilogue = std::move(*p);
    stage.has_epilogue = true;
    out_.stages.push_back(std::move(stage));
  }
  return std::move(out_);
}

}  // namespace

Result<LoweredFunction> lower(const Function& function) { return Lowering(function).run(); }

}  // namespace tc::loops
