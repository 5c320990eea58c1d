#include "backends/native/tile_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "backends/native/fast_math.hpp"

namespace tc::native {

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
  slots_.assign(static_cast<std::size_t>(std::max(program_.slots, 1)) * kTilePoints, 0.0f);
  values_.assign(program_.ops.size(), nullptr);
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
                            bool may_alias) {
  if (a.table != nullptr) {
    const std::int64_t* table = a.table + t0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at = table[i];
      out[i] = at >= 0 ? src[at] : 0.0f;
    }
    return out;
  }
  const std::int64_t stride = a.linear.inner;
  if (may_alias && a.checks.empty() && stride == 1 && segments_.size() == 1) {
    return src + row_base(a.linear) + segments_[0].j0;
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

const float* TileLoop::compute(const float* const* sources, std::int64_t t0, std::int64_t n, float* final_out,
                               const float* no_alias) {
  const std::size_t last = program_.ops.size() - 1;
  for (std::size_t i = 0; i < program_.ops.size(); ++i) {
    const TileOp& op = program_.ops[i];
    float* out = (i == last && final_out != nullptr) ? final_out
                                                     : slots_.data() + static_cast<std::ptrdiff_t>(op.slot) * kTilePoints;
    const float* a = op.a >= 0 ? values_[static_cast<std::size_t>(op.a)] : nullptr;
    const float* b = op.b >= 0 ? values_[static_cast<std::size_t>(op.b)] : nullptr;
    const float p0 = op.p0;
    const float p1 = op.p1;
    switch (op.code) {
      case TileOpCode::load: {
        const Leaf& leaf = program_.leaves[static_cast<std::size_t>(op.ref)];
        const float* src = sources[leaf.source];
        values_[i] = load(leaves_[static_cast<std::size_t>(op.ref)], src, t0, n, out,
                          out != final_out && src != no_alias);
        continue;
      }
      case TileOpCode::fill: std::fill(out, out + n, p0); break;
      case TileOpCode::select: {
        std::uint8_t* m = mask_buffer_.data();
        mask(masks_[static_cast<std::size_t>(op.ref)], t0, n, m);
        for (std::int64_t k = 0; k < n; ++k) out[k] = m[k] ? a[k] : b[k];
        break;
      }
      case TileOpCode::copy: std::copy(a, a + n, out); break;
      case TileOpCode::relu: map1(out, a, n, [](float x) { return x < 0.0f ? 0.0f : x; }); break;
      case TileOpCode::sigmoid: map1(out, a, n, [](float x) { return fast_sigmoid(x); }); break;
      case TileOpCode::tanh: map1(out, a, n, [](float x) { return fast_tanh(x); }); break;
      case TileOpCode::exp: map1(out, a, n, [](float x) { return fast_exp(x); }); break;
      case TileOpCode::log: map1(out, a, n, [](float x) { return std::log(x); }); break;
      case TileOpCode::sqrt: map1(out, a, n, [](float x) { return std::sqrt(x); }); break;
      case TileOpCode::erf: map1(out, a, n, [](float x) { return fast_erf(x); }); break;
      case TileOpCode::neg: map1(out, a, n, [](float x) { return -x; }); break;
      case TileOpCode::abs: map1(out, a, n, [](float x) { return std::fabs(x); }); break;
      case TileOpCode::reciprocal: map1(out, a, n, [](float x) { return 1.0f / x; }); break;
      case TileOpCode::square: map1(out, a, n, [](float x) { return x * x; }); break;
      case TileOpCode::clip:
        map1(out, a, n, [p0, p1](float x) {
          const float lo = x < p0 ? p0 : x;
          return lo > p1 ? p1 : lo;
        });
        break;
      case TileOpCode::leaky_relu: map1(out, a, n, [p0](float x) { return x < 0.0f ? p0 * x : x; }); break;
      case TileOpCode::hard_sigmoid:
        map1(out, a, n, [p0, p1](float x) {
          const float y = p0 * x + p1;
          const float lo = y < 0.0f ? 0.0f : y;
          return lo > 1.0f ? 1.0f : lo;
        });
        break;
      case TileOpCode::add: map2(out, a, b, n, [](float x, float y) { return x + y; }); break;
      case TileOpCode::sub: map2(out, a, b, n, [](float x, float y) { return x - y; }); break;
      case TileOpCode::mul: map2(out, a, b, n, [](float x, float y) { return x * y; }); break;
      case TileOpCode::div: map2(out, a, b, n, [](float x, float y) { return x / y; }); break;
      case TileOpCode::pow: map2(out, a, b, n, [](float x, float y) { return std::pow(x, y); }); break;
      case TileOpCode::max: map2(out, a, b, n, [](float x, float y) { return nan_max(x, y); }); break;
      case TileOpCode::min: map2(out, a, b, n, [](float x, float y) { return (x < y || x != x) ? x : y; }); break;
      case TileOpCode::add_s: map1(out, a, n, [p0](float x) { return x + p0; }); break;
      case TileOpCode::sub_s: map1(out, a, n, [p0](float x) { return x - p0; }); break;
      case TileOpCode::mul_s: map1(out, a, n, [p0](float x) { return x * p0; }); break;
      case TileOpCode::div_s: map1(out, a, n, [p0](float x) { return x / p0; }); break;
      case TileOpCode::pow_s: map1(out, a, n, [p0](float x) { return std::pow(x, p0); }); break;
      case TileOpCode::max_s: map1(out, a, n, [p0](float x) { return nan_max(x, p0); }); break;
      case TileOpCode::min_s: map1(out, a, n, [p0](float x) { return (x < p0 || x != x) ? x : p0; }); break;
      case TileOpCode::rsub_s: map1(out, a, n, [p0](float x) { return p0 - x; }); break;
      case TileOpCode::rdiv_s: map1(out, a, n, [p0](float x) { return p0 / x; }); break;
      case TileOpCode::rpow_s: map1(out, a, n, [p0](float x) { return std::pow(p0, x); }); break;
    }
    values_[i] = out;
  }
  return values_[last];
}

void TileLoop::store(const float* const* sources, float* dst, std::int64_t begin, std::int64_t end) {
  for (std::int64_t t0 = begin; t0 < end; t0 += kTilePoints) {
    const std::int64_t n = std::min(kTilePoints, end - t0);
    plan_tile(t0, n);
    compute(sources, t0, n, dst + t0, dst);
  }
}

void TileLoop::reduce(const float* const* sources, float* acc, bool max, std::int64_t begin, std::int64_t end) {
  for (std::int64_t t0 = begin; t0 < end; t0 += kTilePoints) {
    const std::int64_t n = std::min(kTilePoints, end - t0);
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
