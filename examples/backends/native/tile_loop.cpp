#include "backends/native/tile_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "backends/kit/fast_math.hpp"

namespace tc::native {

using loops::Access;
using loops::Affine;
using loops::affine_at;
using loops::Check;
using loops::clip_to_check;
using loops::kMaxDomainRank;
using loops::Leaf;
using loops::row_carry;
using loops::TileOp;
using loops::TileOpCode;
using loops::TileProgram;
using loops::unravel;

namespace {

template <class F>
inline void map1(float* __restrict out, const float* __restrict a, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = f(a[i]);
}

template <class F>
inline void map2(float* __restrict out, const float* __restrict a, const float* __restrict b, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

}  // namespace

TileLoop::TileLoop(TileProgram program) : program_(std::move(program)) {
  rank_ = static_cast<int>(program_.dims.size());
  for (int d = 0; d < rank_; ++d) dims_[d] = program_.dims[static_cast<std::size_t>(d)];
  for (const Leaf& leaf : program_.leaves) leaves_.push_back(prepare(leaf.access));
  for (const Access& m : program_.masks) masks_.push_back(prepare(m));
  sink_ = prepare(program_.sink);
  // The program's slots and two spares (uniform operands of select expanded; a uniform result).
  slots_.assign(static_cast<std::size_t>(program_.slots + 2) * kTilePoints, 0.0f);
  values_.assign(program_.ops.size(), nullptr);
  uniform_.assign(program_.ops.size(), 0);
  mask_buffer_.assign(static_cast<std::size_t>(kTilePoints), 0);
  segments_.reserve(static_cast<std::size_t>(kTilePoints) + 1);
  std::size_t checks = 0;
  for (const AccessWalk& a : leaves_) checks = std::max(checks, a.checks.size());
  for (const AccessWalk& a : masks_) checks = std::max(checks, a.checks.size());
  check_bases_.assign(checks, 0);
}

TileLoop::Walk TileLoop::prepare(const Affine& a) const {
  Walk w;
  w.offset = a.offset;
  for (int d = 0; d < rank_; ++d) w.coef[d] = a.coef[static_cast<std::size_t>(d)];
  w.inner = w.coef[rank_ - 1];
  for (int d = 0; d + 1 < rank_; ++d) w.carry[d] = row_carry(w.coef, dims_, rank_, d);
  return w;
}

TileLoop::AccessWalk TileLoop::prepare(const Access& a) const {
  AccessWalk w;
  w.table = a.table ? a.table->data() : nullptr;
  w.linear = prepare(a.linear);
  for (const Check& c : a.checks) w.checks.push_back(CheckWalk{prepare(c.expr), c.lo, c.hi});
  return w;
}

std::int64_t TileLoop::row_base(const Walk& w) const { return affine_at(w.offset, w.coef, coords_, rank_ - 1); }

void TileLoop::plan_tile(std::int64_t t0, std::int64_t n) {
  unravel(t0, dims_, rank_, coords_);
  segments_.clear();
  const std::int64_t inner = dims_[rank_ - 1];
  std::int64_t c[kMaxDomainRank];
  std::copy(coords_, coords_ + rank_, c);
  std::int64_t pos = 0;
  int carry_dim = -1;
  while (pos < n) {
    const std::int64_t j0 = c[rank_ - 1];
    const std::int64_t len = std::min(n - pos, inner - j0);
    segments_.push_back(Segment{pos, len, j0, carry_dim});
    pos += len;
    c[rank_ - 1] = 0;
    int d = rank_ - 2;
    while (d >= 0 && ++c[d] == dims_[d]) c[d--] = 0;
    carry_dim = d;
  }
}

void TileLoop::valid_run(const AccessWalk& a, std::int64_t* check_bases, const Segment& s, std::int64_t* j0,
                         std::int64_t* j1) const {
  *j0 = 0;
  *j1 = s.len;
  for (std::size_t k = 0; k < a.checks.size(); ++k) {
    const CheckWalk& c = a.checks[k];
    if (s.carry_dim >= 0) check_bases[k] += c.expr.carry[s.carry_dim];
    clip_to_check(check_bases[k] + c.expr.inner * s.j0, c.expr.inner, c.lo, c.hi, j0, j1);
  }
}

const float* TileLoop::load(const AccessWalk& a, const float* src, std::int64_t t0, std::int64_t n, float* out,
                            bool may_alias, bool* uniform) {
  *uniform = false;
  if (a.table != nullptr) {
    const std::int64_t* table = a.table + t0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at = table[i];
      out[i] = at >= 0 ? src[at] : 0.0f;
    }
    return out;
  }
  const std::int64_t stride = a.linear.inner;
  if (a.checks.empty() && segments_.size() == 1) {
    if (stride == 0) {
      *uniform = true;
      return src + row_base(a.linear);
    }
    if (may_alias && stride == 1) return src + row_base(a.linear) + segments_[0].j0;
  }
  std::int64_t base = row_base(a.linear);
  for (std::size_t k = 0; k < a.checks.size(); ++k) check_bases_[k] = row_base(a.checks[k].expr);
  for (const Segment& s : segments_) {
    if (s.carry_dim >= 0) base += a.linear.carry[s.carry_dim];
    std::int64_t j0 = 0;
    std::int64_t j1 = s.len;
    if (!a.checks.empty()) valid_run(a, check_bases_.data(), s, &j0, &j1);
    float* o = out + s.pos;
    const float* p = src + base + stride * (s.j0 + j0);
    const std::int64_t count = j1 - j0;
    std::fill(o, o + j0, 0.0f);
    if (stride == 1) {
      std::memcpy(o + j0, p, static_cast<std::size_t>(std::max<std::int64_t>(count, 0)) * sizeof(float));
    } else if (stride == 0) {
      if (count > 0) std::fill(o + j0, o + j1, *p);
    } else {
      for (std::int64_t j = 0; j < count; ++j) o[j0 + j] = p[j * stride];
    }
    std::fill(o + j1, o + s.len, 0.0f);
  }
  return out;
}

void TileLoop::mask(const AccessWalk& a, std::int64_t t0, std::int64_t n, std::uint8_t* out) {
  if (a.table != nullptr) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = a.table[t0 + i] >= 0 ? 1 : 0;
    return;
  }
  for (std::size_t k = 0; k < a.checks.size(); ++k) check_bases_[k] = row_base(a.checks[k].expr);
  for (const Segment& s : segments_) {
    std::int64_t j0 = 0;
    std::int64_t j1 = s.len;
    valid_run(a, check_bases_.data(), s, &j0, &j1);
    std::uint8_t* o = out + s.pos;
    std::memset(o, 0, static_cast<std::size_t>(s.len));
    if (j1 > j0) std::memset(o + j0, 1, static_cast<std::size_t>(j1 - j0));
  }
}

namespace {

/// An operand of a tile operation: a tile of values, or one value for every point.
struct Operand {
  const float* p;
  bool uniform;
};

/// out = f(a) over the tile, or once when `a` is uniform; returns whether the result is uniform.
template <class F>
bool unary(float* out, Operand a, std::int64_t n, F f) {
  if (a.uniform) {
    out[0] = f(a.p[0]);
    return true;
  }
  map1(out, a.p, n, f);
  return false;
}

/// out = f(a, b) over the tile; a uniform operand is read as a scalar.
template <class F>
bool binary(float* out, Operand a, Operand b, std::int64_t n, F f) {
  if (a.uniform && b.uniform) {
    out[0] = f(a.p[0], b.p[0]);
    return true;
  }
  if (a.uniform) {
    const float x = a.p[0];
    map1(out, b.p, n, [x, f](float y) { return f(x, y); });
  } else if (b.uniform) {
    const float y = b.p[0];
    map1(out, a.p, n, [y, f](float x) { return f(x, y); });
  } else {
    map2(out, a.p, b.p, n, f);
  }
  return false;
}

}  // namespace

const float* TileLoop::compute(const float* const* sources, std::int64_t t0, std::int64_t n, float* final_out,
                               const float* no_alias) {
  const std::size_t last = program_.ops.size() - 1;
  float* spare = slots_.data() + static_cast<std::ptrdiff_t>(program_.slots) * kTilePoints;
  /// A uniform operand expanded to a whole tile (for select).
  auto expand = [&](Operand o, float* buffer) {
    if (!o.uniform) return o.p;
    std::fill(buffer, buffer + n, o.p[0]);
    return static_cast<const float*>(buffer);
  };
  for (std::size_t i = 0; i < program_.ops.size(); ++i) {
    const TileOp& op = program_.ops[i];
    float* out = (i == last && final_out != nullptr) ? final_out
                                                     : slots_.data() + static_cast<std::ptrdiff_t>(op.slot) * kTilePoints;
    const Operand a = op.a >= 0 ? Operand{values_[static_cast<std::size_t>(op.a)], uniform_[static_cast<std::size_t>(op.a)] != 0}
                                : Operand{nullptr, false};
    const Operand b = op.b >= 0 ? Operand{values_[static_cast<std::size_t>(op.b)], uniform_[static_cast<std::size_t>(op.b)] != 0}
                                : Operand{nullptr, false};
    const float p0 = op.p0;
    const float p1 = op.p1;
    bool uniform = false;
    switch (op.code) {
      case TileOpCode::load: {
        const Leaf& leaf = program_.leaves[static_cast<std::size_t>(op.ref)];
        const float* src = sources[leaf.source];
        values_[i] = load(leaves_[static_cast<std::size_t>(op.ref)], src, t0, n, out,
                          out != final_out && src != no_alias, &uniform);
        uniform_[i] = uniform ? 1 : 0;
        continue;
      }
      case TileOpCode::fill:
        out[0] = p0;
        uniform = true;
        break;
      case TileOpCode::select: {
        std::uint8_t* m = mask_buffer_.data();
        mask(masks_[static_cast<std::size_t>(op.ref)], t0, n, m);
        const float* x = expand(a, spare);
        const float* y = expand(b, spare + kTilePoints);
        for (std::int64_t k = 0; k < n; ++k) out[k] = select_float(m[k] != 0, x[k], y[k]);
        break;
      }
      case TileOpCode::copy: uniform = unary(out, a, n, [](float x) { return x; }); break;
      case TileOpCode::relu: uniform = unary(out, a, n, [](float x) { return select_float(x < 0.0f, 0.0f, x); }); break;
      case TileOpCode::sigmoid: uniform = unary(out, a, n, [](float x) { return fast_sigmoid(x); }); break;
      case TileOpCode::tanh: uniform = unary(out, a, n, [](float x) { return fast_tanh(x); }); break;
      case TileOpCode::exp: uniform = unary(out, a, n, [](float x) { return fast_exp(x); }); break;
      case TileOpCode::log: uniform = unary(out, a, n, [](float x) { return std::log(x); }); break;
      case TileOpCode::sqrt: uniform = unary(out, a, n, [](float x) { return std::sqrt(x); }); break;
      case TileOpCode::erf: uniform = unary(out, a, n, [](float x) { return fast_erf(x); }); break;
      case TileOpCode::neg: uniform = unary(out, a, n, [](float x) { return -x; }); break;
      case TileOpCode::abs: uniform = unary(out, a, n, [](float x) { return std::fabs(x); }); break;
      case TileOpCode::reciprocal: uniform = unary(out, a, n, [](float x) { return 1.0f / x; }); break;
      case TileOpCode::square: uniform = unary(out, a, n, [](float x) { return x * x; }); break;
      case TileOpCode::sin: uniform = unary(out, a, n, [](float x) { return std::sin(x); }); break;
      case TileOpCode::cos: uniform = unary(out, a, n, [](float x) { return std::cos(x); }); break;
      case TileOpCode::tan: uniform = unary(out, a, n, [](float x) { return std::tan(x); }); break;
      case TileOpCode::asin: uniform = unary(out, a, n, [](float x) { return std::asin(x); }); break;
      case TileOpCode::acos: uniform = unary(out, a, n, [](float x) { return std::acos(x); }); break;
      case TileOpCode::atan: uniform = unary(out, a, n, [](float x) { return std::atan(x); }); break;
      case TileOpCode::sinh: uniform = unary(out, a, n, [](float x) { return std::sinh(x); }); break;
      case TileOpCode::cosh: uniform = unary(out, a, n, [](float x) { return std::cosh(x); }); break;
      case TileOpCode::asinh: uniform = unary(out, a, n, [](float x) { return std::asinh(x); }); break;
      case TileOpCode::acosh: uniform = unary(out, a, n, [](float x) { return std::acosh(x); }); break;
      case TileOpCode::atanh: uniform = unary(out, a, n, [](float x) { return std::atanh(x); }); break;
      case TileOpCode::floor: uniform = unary(out, a, n, [](float x) { return std::floor(x); }); break;
      case TileOpCode::ceil: uniform = unary(out, a, n, [](float x) { return std::ceil(x); }); break;
      case TileOpCode::round: uniform = unary(out, a, n, [](float x) { return std::nearbyint(x); }); break;
      case TileOpCode::sign:
        uniform = unary(out, a, n, [](float x) { return select_float(x > 0.0f, 1.0f, select_float(x < 0.0f, -1.0f, x)); });
        break;
      case TileOpCode::clip: uniform = unary(out, a, n, [p0, p1](float x) { return clamp_to(x, p0, p1); }); break;
      case TileOpCode::leaky_relu:
        uniform = unary(out, a, n, [p0](float x) { return select_float(x < 0.0f, p0 * x, x); });
        break;
      case TileOpCode::hard_sigmoid:
        uniform = unary(out, a, n, [p0, p1](float x) { return clamp_to(p0 * x + p1, 0.0f, 1.0f); });
        break;
      case TileOpCode::add: uniform = binary(out, a, b, n, [](float x, float y) { return x + y; }); break;
      case TileOpCode::sub: uniform = binary(out, a, b, n, [](float x, float y) { return x - y; }); break;
      case TileOpCode::mul: uniform = binary(out, a, b, n, [](float x, float y) { return x * y; }); break;
      case TileOpCode::div:
        if (b.uniform && !a.uniform) {
          // By one value (a row's standard deviation): multiply by its reciprocal.
          const float r = 1.0f / b.p[0];
          uniform = unary(out, a, n, [r](float x) { return x * r; });
        } else {
          uniform = binary(out, a, b, n, [](float x, float y) { return x / y; });
        }
        break;
      case TileOpCode::pow: uniform = binary(out, a, b, n, [](float x, float y) { return std::pow(x, y); }); break;
      case TileOpCode::max: uniform = binary(out, a, b, n, [](float x, float y) { return nan_max(x, y); }); break;
      case TileOpCode::min:
        uniform = binary(out, a, b, n, [](float x, float y) { return select_float((x < y) | (x != x), x, y); });
        break;
      case TileOpCode::add_s: uniform = unary(out, a, n, [p0](float x) { return x + p0; }); break;
      case TileOpCode::sub_s: uniform = unary(out, a, n, [p0](float x) { return x - p0; }); break;
      case TileOpCode::mul_s: uniform = unary(out, a, n, [p0](float x) { return x * p0; }); break;
      case TileOpCode::div_s: uniform = unary(out, a, n, [p0](float x) { return x / p0; }); break;
      case TileOpCode::pow_s: uniform = unary(out, a, n, [p0](float x) { return std::pow(x, p0); }); break;
      case TileOpCode::max_s: uniform = unary(out, a, n, [p0](float x) { return nan_max(x, p0); }); break;
      case TileOpCode::min_s:
        uniform = unary(out, a, n, [p0](float x) { return select_float((x < p0) | (x != x), x, p0); });
        break;
      case TileOpCode::rsub_s: uniform = unary(out, a, n, [p0](float x) { return p0 - x; }); break;
      case TileOpCode::rdiv_s: uniform = unary(out, a, n, [p0](float x) { return p0 / x; }); break;
      case TileOpCode::rpow_s: uniform = unary(out, a, n, [p0](float x) { return std::pow(p0, x); }); break;
    }
    values_[i] = out;
    uniform_[i] = uniform ? 1 : 0;
  }
  if (uniform_[last] != 0) {
    // The result is needed point by point.
    float* dst = final_out != nullptr ? final_out : spare;
    const float v = values_[last][0];
    std::fill(dst, dst + n, v);
    values_[last] = dst;
  }
  return values_[last];
}

std::int64_t TileLoop::tile_end(std::int64_t t0, std::int64_t end) const {
  const std::int64_t inner = dims_[rank_ - 1];
  std::int64_t stop = std::min(t0 + kTilePoints, end);
  // Long rows: tiles stop at row ends, so each tile is one run and values broadcast along the
  // row (a per-row statistic, a per-channel bias) are uniform over it.
  if (rank_ > 1 && inner >= kTilePoints / 4) stop = std::min(stop, t0 - t0 % inner + inner);
  return stop;
}

void TileLoop::store(const float* const* sources, float* dst, std::int64_t begin, std::int64_t end) {
  for (std::int64_t t0 = begin, t1 = 0; t0 < end; t0 = t1) {
    t1 = tile_end(t0, end);
    const std::int64_t n = t1 - t0;
    plan_tile(t0, n);
    compute(sources, t0, n, dst + t0, dst);
  }
}

void TileLoop::reduce(const float* const* sources, float* acc, bool max, std::int64_t begin, std::int64_t end) {
  for (std::int64_t t0 = begin, t1 = 0; t0 < end; t0 = t1) {
    t1 = tile_end(t0, end);
    const std::int64_t n = t1 - t0;
    plan_tile(t0, n);
    const float* v = compute(sources, t0, n, nullptr, nullptr);
    std::int64_t base = row_base(sink_);
    for (const Segment& s : segments_) {
      if (s.carry_dim >= 0) base += sink_.carry[s.carry_dim];
      const float* x = v + s.pos;
      float* target = acc + base + sink_.inner * s.j0;
      if (sink_.inner == 0) {
        *target = max ? max_of(x, s.len, *target) : *target + sum_of(x, s.len);
      } else if (max) {
        for (std::int64_t j = 0; j < s.len; ++j) {
          float& t = target[j * sink_.inner];
          t = nan_max(x[j], t);
        }
      } else {
        for (std::int64_t j = 0; j < s.len; ++j) target[j * sink_.inner] += x[j];
      }
    }
  }
}

}  // namespace tc::native
