#include "loops/coord_map.hpp"

#include <algorithm>
#include <utility>

#include "loops/index_math.hpp"

namespace tc::loops {

Affine Affine::constant(std::size_t rank, std::int64_t value) { return Affine{value, Ints(rank, 0)}; }

Affine Affine::coordinate(std::size_t rank, std::size_t d) {
  Affine a = constant(rank, 0);
  a.coef[d] = 1;
  return a;
}

void Affine::add_scaled(const Affine& other, std::int64_t scale) {
  offset += scale * other.offset;
  for (std::size_t d = 0; d < coef.size(); ++d) coef[d] += scale * other.coef[d];
}

std::int64_t Affine::at(const Ints& coords) const {
  std::int64_t v = offset;
  for (std::size_t d = 0; d < coef.size(); ++d) v += coef[d] * coords[d];
  return v;
}

Domain::Domain(const Shape& shape) {
  for (std::int64_t n : shape) factors_.push_back({n});
}

Shape Domain::dims() const {
  Shape out;
  for (const Shape& f : factors_) out.insert(out.end(), f.begin(), f.end());
  return out;
}

CoordMap Domain::identity() const {
  const std::size_t rank = dims().size();
  CoordMap map;
  std::size_t d = 0;
  for (const Shape& f : factors_) {
    Affine coord = Affine::constant(rank, 0);
    std::int64_t scale = numel(f);
    for (std::int64_t n : f) {
      scale = n == 0 ? 0 : scale / n;
      coord.coef[d++] = scale;
    }
    map.coords.push_back(std::move(coord));
  }
  return map;
}

bool Domain::split(const Split& split) {
  std::size_t d = 0;
  for (Shape& f : factors_) {
    if (split.dim < d + f.size()) {
      const std::size_t at = split.dim - d;
      const std::int64_t n = f[at];
      if (split.inner <= 1 || n % split.inner != 0 || split.inner >= n) return false;
      f[at] = n / split.inner;
      f.insert(f.begin() + static_cast<std::ptrdiff_t>(at) + 1, split.inner);
      return true;
    }
    d += f.size();
  }
  return false;
}

namespace {

/// A table map built by transforming every valid entry of `out` (a map of a tensor of
/// `out_shape`): f(out coordinates, in coordinates) returns whether the input element exists.
template <class F>
CoordMap map_table(const CoordMap& out, const Shape& out_shape, const Shape& in_shape, const Shape& domain, F f) {
  const CoordMap table = out.table ? out : to_table(out, out_shape, domain);
  auto entries = std::make_shared<std::vector<std::int64_t>>(table.table->size(), -1);
  Ints oc(out_shape.size());
  Ints ic(in_shape.size());
  const int out_rank = static_cast<int>(out_shape.size());
  const int in_rank = static_cast<int>(in_shape.size());
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const std::int64_t linear = (*table.table)[i];
    if (linear < 0) continue;
    unravel(linear, out_shape.data(), out_rank, oc.data());
    if (f(oc, ic)) (*entries)[i] = ravel(ic.data(), in_shape.data(), in_rank);
  }
  CoordMap result;
  result.table = std::move(entries);
  return result;
}

}  // namespace

CoordMap to_table(const CoordMap& map, const Shape& shape, const Shape& domain) {
  if (map.table) return map;
  const std::int64_t size = numel(domain);
  auto entries = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(size), -1);
  const Ints strides = row_major_strides(shape);
  Ints c(domain.size());
  for (std::int64_t i = 0; i < size; ++i) {
    unravel(i, domain.data(), static_cast<int>(domain.size()), c.data());
    bool valid = true;
    for (const Check& check : map.checks) {
      const std::int64_t v = check.expr.at(c);
      valid = valid && v >= check.lo && v < check.hi;
    }
    if (!valid) continue;
    std::int64_t linear = 0;
    for (std::size_t k = 0; k < map.coords.size(); ++k) linear += map.coords[k].at(c) * strides[k];
    (*entries)[static_cast<std::size_t>(i)] = linear;
  }
  CoordMap result;
  result.table = std::move(entries);
  return result;
}

CoordMap broadcast_input(const CoordMap& out, const Shape& out_shape, const Shape& in_shape, const Shape& domain) {
  const std::size_t shift = out_shape.size() - in_shape.size();
  if (out.table) {
    return map_table(out, out_shape, in_shape, domain, [&](const Ints& oc, Ints& ic) {
      for (std::size_t k = 0; k < in_shape.size(); ++k) ic[k] = in_shape[k] == 1 ? 0 : oc[k + shift];
      return true;
    });
  }
  CoordMap in;
  in.checks = out.checks;
  for (std::size_t k = 0; k < in_shape.size(); ++k) {
    in.coords.push_back(in_shape[k] == 1 ? Affine::constant(domain.size(), 0) : out.coords[k + shift]);
  }
  return in;
}

CoordMap project_input(const CoordMap& out, const Shape& out_shape, const Ints& out_dims, const Shape& in_shape,
                       const Shape& domain) {
  if (out.table) {
    return map_table(out, out_shape, in_shape, domain, [&](const Ints& oc, Ints& ic) {
      for (std::size_t k = 0; k < out_dims.size(); ++k) ic[k] = oc[static_cast<std::size_t>(out_dims[k])];
      return true;
    });
  }
  CoordMap in;
  in.checks = out.checks;
  for (std::int64_t d : out_dims) in.coords.push_back(out.coords[static_cast<std::size_t>(d)]);
  return in;
}

CoordMap transpose_input(const CoordMap& out, const Shape& out_shape, const Ints& perm, const Shape& in_shape,
                         const Shape& domain) {
  if (out.table) {
    return map_table(out, out_shape, in_shape, domain, [&](const Ints& oc, Ints& ic) {
      for (std::size_t k = 0; k < perm.size(); ++k) ic[static_cast<std::size_t>(perm[k])] = oc[k];
      return true;
    });
  }
  CoordMap in;
  in.checks = out.checks;
  in.coords.resize(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) in.coords[static_cast<std::size_t>(perm[k])] = out.coords[k];
  return in;
}

CoordMap slice_input(const CoordMap& out, const Shape& out_shape, const Ints& starts, const Ints& steps,
                     const Shape& in_shape, const Shape& domain) {
  if (out.table) {
    return map_table(out, out_shape, in_shape, domain, [&](const Ints& oc, Ints& ic) {
      for (std::size_t k = 0; k < oc.size(); ++k) ic[k] = starts[k] + steps[k] * oc[k];
      return true;
    });
  }
  CoordMap in;
  in.checks = out.checks;
  for (std::size_t k = 0; k < out.coords.size(); ++k) {
    Affine c = Affine::constant(domain.size(), starts[k]);
    c.add_scaled(out.coords[k], steps[k]);
    in.coords.push_back(std::move(c));
  }
  return in;
}

CoordMap pad_input(const CoordMap& out, const Shape& out_shape, const Ints& pads, PadAttrs::Mode mode,
                   const Shape& in_shape, const Shape& domain) {
  const std::size_t rank = in_shape.size();
  if (out.table || mode != PadAttrs::Mode::constant) {
    return map_table(out, out_shape, in_shape, domain, [&](const Ints& oc, Ints& ic) {
      for (std::size_t k = 0; k < rank; ++k) {
        std::int64_t c = oc[k] - pads[k];
        const std::int64_t n = in_shape[k];
        if (c < 0 || c >= n) {
          if (mode == PadAttrs::Mode::constant || n == 0) return false;
          if (mode == PadAttrs::Mode::edge) {
            c = std::clamp<std::int64_t>(c, 0, n - 1);
          } else {  // reflect (|pad| < n, checked by shape inference)
            if (c < 0) c = -c;
            if (c >= n) c = 2 * (n - 1) - c;
          }
        }
        ic[k] = c;
      }
      return true;
    });
  }
  CoordMap in;
  in.checks = out.checks;
  for (std::size_t k = 0; k < rank; ++k) {
    Affine c = out.coords[k];
    c.offset -= pads[k];
    if (pads[k] > 0 || pads[k + rank] > 0) in.checks.push_back(Check{c, 0, in_shape[k]});
    in.coords.push_back(std::move(c));
  }
  return in;
}

CoordMap concat_input(const CoordMap& out, const Shape& out_shape, std::size_t axis, std::int64_t offset,
                      const Shape& in_shape, const Shape& domain) {
  if (out.table) {
    return map_table(out, out_shape, in_shape, domain, [&](const Ints& oc, Ints& ic) {
      ic = oc;
      ic[axis] -= offset;
      return ic[axis] >= 0 && ic[axis] < in_shape[axis];
    });
  }
  CoordMap in = out;
  in.coords[axis].offset -= offset;
  in.checks.push_back(Check{in.coords[axis], 0, in_shape[axis]});
  return in;
}

std::variant<CoordMap, Split> reshape_input(const CoordMap& out, const Shape& out_shape, const Shape& in_shape,
                                            const Shape& domain) {
  if (out_shape == in_shape) return out;
  // Reshaping keeps the linear index; a table of the output's linear indexes is the input's.
  auto table = [&] { return to_table(out, out_shape, domain); };
  if (out.table || !out.checks.empty()) return table();
  const std::size_t rank = domain.size();
  // The linear index as an affine expression of the domain.
  Affine linear = Affine::constant(rank, 0);
  const Ints out_strides = row_major_strides(out_shape);
  for (std::size_t k = 0; k < out_shape.size(); ++k) linear.add_scaled(out.coords[k], out_strides[k]);
  if (linear.offset < 0 || linear.offset >= std::max<std::int64_t>(1, numel(in_shape))) return table();
  // Write the linear index as digits of the input's mixed radix: each domain term a * c[d] must
  // fall within one digit (a a multiple of that digit's stride) and no digit may carry.
  const Ints in_strides = row_major_strides(in_shape);
  std::vector<Affine> in(in_shape.size(), Affine::constant(rank, 0));
  Ints digit_max(in_shape.size(), 0);
  for (std::size_t k = 0; k < in_shape.size(); ++k) {
    if (in_shape[k] <= 1) continue;
    in[k].offset = (linear.offset / in_strides[k]) % in_shape[k];
    digit_max[k] = in[k].offset;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t a = linear.coef[d];
    const std::int64_t n = domain[d];
    if (n <= 1 || a == 0) continue;
    if (a < 0) return table();
    std::size_t digit = in_shape.size();
    for (std::size_t k = 0; k < in_shape.size(); ++k) {
      if (in_shape[k] > 1 && in_strides[k] <= a && a < in_strides[k] * in_shape[k]) digit = k;
    }
    if (digit == in_shape.size() || a % in_strides[digit] != 0) return table();
    const std::int64_t q = a / in_strides[digit];
    const std::int64_t size = in_shape[digit];
    if (q * (n - 1) >= size) {
      // The term spans several digits: split the domain dimension at the digit's boundary.
      if (size % q == 0 && n % (size / q) == 0) return Split{d, size / q};
      return table();
    }
    in[digit].coef[d] += q;
    digit_max[digit] += q * (n - 1);
  }
  for (std::size_t k = 0; k < in_shape.size(); ++k) {
    if (in_shape[k] > 1 && digit_max[k] >= in_shape[k]) return table();
  }
  CoordMap result;
  result.coords = std::move(in);
  return result;
}

Access access_of(const CoordMap& map, const Shape& shape, std::size_t rank) {
  Access access;
  access.table = map.table;
  access.checks = map.checks;
  access.linear = Affine::constant(rank, 0);
  if (map.table) return access;
  const Ints strides = row_major_strides(shape);
  for (std::size_t k = 0; k < map.coords.size(); ++k) access.linear.add_scaled(map.coords[k], strides[k]);
  return access;
}

bool is_identity_access(const Access& access, const Shape& dims) {
  if (access.has_holes() || access.linear.offset != 0) return false;
  const Ints strides = row_major_strides(dims);
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1 && access.linear.coef[d] != strides[d]) return false;
  }
  return true;
}

Shape coalesce(const Shape& domain, const std::vector<Affine*>& exprs) {
  // Keep the dimensions of size > 1.
  std::vector<std::size_t> kept;
  for (std::size_t d = 0; d < domain.size(); ++d) {
    if (domain[d] != 1) kept.push_back(d);
  }
  Shape dims;
  std::vector<Ints> coefs(exprs.size());
  for (std::size_t d : kept) {
    const std::int64_t n = domain[d];
    bool merge = !dims.empty();
    for (std::size_t e = 0; merge && e < exprs.size(); ++e) {
      merge = coefs[e].back() == exprs[e]->coef[d] * n;
    }
    if (merge) {
      dims.back() *= n;
      for (std::size_t e = 0; e < exprs.size(); ++e) coefs[e].back() = exprs[e]->coef[d];
    } else {
      dims.push_back(n);
      for (std::size_t e = 0; e < exprs.size(); ++e) coefs[e].push_back(exprs[e]->coef[d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(numel(domain) == 0 ? 0 : 1);
    for (std::size_t e = 0; e < exprs.size(); ++e) coefs[e].push_back(0);
  }
  for (std::size_t e = 0; e < exprs.size(); ++e) exprs[e]->coef = std::move(coefs[e]);
  return dims;
}

}  // namespace tc::loops
