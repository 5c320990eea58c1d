#pragma once

/// \file
/// Coordinate maps: where each element of a tensor inside a fused partition comes from, as a
/// function of the coordinates of the partition's iteration domain (its output's index space).
/// Injective operators (broadcast, transpose, slice, pad, concat, reshape) compose into these maps
/// at compile time, so a fused loop reads its leaves directly: through an affine offset (a strided
/// view), bounds checks (padding, concat pieces), or, where no affine form exists, a precomputed
/// table of linear indexes.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "tensor/op_attrs.hpp"
#include "tensor/shape.hpp"

namespace tc::loops {

/// offset + sum of coef[d] * c[d] over the coordinates c of an iteration domain.
struct Affine {
  std::int64_t offset = 0;
  Ints coef;

  /// The constant `value` over a domain of `rank` dimensions.
  static Affine constant(std::size_t rank, std::int64_t value);
  /// Coordinate `d` of a domain of `rank` dimensions.
  static Affine coordinate(std::size_t rank, std::size_t d);
  /// this += scale * other (same rank).
  void add_scaled(const Affine& other, std::int64_t scale);
  /// The value at `coords`.
  std::int64_t at(const Ints& coords) const;

  friend bool operator==(const Affine& a, const Affine& b) { return a.offset == b.offset && a.coef == b.coef; }
  friend bool operator!=(const Affine& a, const Affine& b) { return !(a == b); }
};

/// A bounds check: valid where lo <= expr < hi.
struct Check {
  Affine expr;
  std::int64_t lo = 0;
  std::int64_t hi = 0;

  friend bool operator==(const Check& a, const Check& b) { return a.expr == b.expr && a.lo == b.lo && a.hi == b.hi; }
};

/// A table over a domain's linear indexes: the linear index of the element read, -1 where none is.
using IndexTable = std::shared_ptr<const std::vector<std::int64_t>>;

/// How a loop over a domain reads a dense row-major tensor: at domain point c the element
/// linear(c), valid where every check holds; or, when `table` is set, the element
/// (*table)[linear index of c] (-1: not valid). Invalid points read as 0 (a select above them
/// discards them).
struct Access {
  Affine linear;
  std::vector<Check> checks;
  IndexTable table;

  /// Whether some points may be invalid.
  bool has_holes() const { return table != nullptr || !checks.empty(); }
  friend bool operator==(const Access& a, const Access& b) {
    return a.linear == b.linear && a.checks == b.checks && a.table == b.table;
  }
};

/// A tensor's coordinates as functions of the domain's: an affine expression per dimension, valid
/// where every check holds; or, when `table` is set, a table of the tensor's linear indexes
/// (coords and checks unused).
struct CoordMap {
  std::vector<Affine> coords;
  std::vector<Check> checks;
  IndexTable table;

  friend bool operator==(const CoordMap& a, const CoordMap& b) {
    return a.coords == b.coords && a.checks == b.checks && a.table == b.table;
  }
};

/// A request to split domain dimension `dim` into (size / inner, inner), which keeps a reshape
/// affine.
struct Split {
  std::size_t dim = 0;
  std::int64_t inner = 1;
};

/// An iteration domain: an output shape whose dimensions may be split into factors. Splitting
/// keeps the row-major order, so the domain's linear index is the output's.
class Domain {
 public:
  explicit Domain(const Shape& shape);
  /// The domain's dimensions (every factor, outermost first).
  Shape dims() const;
  /// The output's coordinates over the domain.
  CoordMap identity() const;
  /// Applies `split`; false when the factor is not divisible by split.inner.
  bool split(const Split& split);

 private:
  std::vector<Shape> factors_;  // per output dimension
};

/// The map of an input broadcast (numpy rules) to an operator's output of shape `out_shape`.
CoordMap broadcast_input(const CoordMap& out, const Shape& out_shape, const Shape& in_shape, const Shape& domain);
/// The map of an input whose dimension k is the output's dimension out_dims[k] (a conv bias or
/// batch-norm parameter indexed by the channel).
CoordMap project_input(const CoordMap& out, const Shape& out_shape, const Ints& out_dims, const Shape& in_shape,
                       const Shape& domain);
/// The map of Transpose's input.
CoordMap transpose_input(const CoordMap& out, const Shape& out_shape, const Ints& perm, const Shape& in_shape,
                         const Shape& domain);
/// The map of Slice's input (canonical starts and steps, one per dimension).
CoordMap slice_input(const CoordMap& out, const Shape& out_shape, const Ints& starts, const Ints& steps,
                     const Shape& in_shape, const Shape& domain);
/// The map of Pad's input (pads: begins then ends). Constant padding adds checks; reflect and
/// edge padding become tables.
CoordMap pad_input(const CoordMap& out, const Shape& out_shape, const Ints& pads, PadAttrs::Mode mode,
                   const Shape& in_shape, const Shape& domain);
/// The map of the Concat input occupying [offset, offset + in_shape[axis]) along `axis`.
CoordMap concat_input(const CoordMap& out, const Shape& out_shape, std::size_t axis, std::int64_t offset,
                      const Shape& in_shape, const Shape& domain);
/// The map of the input of a reshape-like operator (same data, another shape), or the domain
/// split that would keep it affine. Falls back to a table when no split does.
std::variant<CoordMap, Split> reshape_input(const CoordMap& out, const Shape& out_shape, const Shape& in_shape,
                                            const Shape& domain);

/// `map` (of a tensor of `shape`) as a table over `domain`.
CoordMap to_table(const CoordMap& map, const Shape& shape, const Shape& domain);
/// How to read a dense tensor of `shape` whose coordinates are `map` over a domain of `rank`
/// dimensions.
Access access_of(const CoordMap& map, const Shape& shape, std::size_t rank);

/// Whether `access`, over a domain of dimensions `dims`, reads element i at domain point i.
bool is_identity_access(const Access& access, const Shape& dims);

/// Drops the size-1 dimensions of `domain` and merges adjacent ones wherever every expression in
/// `exprs` stays affine over the merged dimension (coef[d] == coef[d + 1] * dims[d + 1]), as
/// NumPy's iterators do; rewrites `exprs` over the result, which has rank >= 1 and the same
/// row-major order.
Shape coalesce(const Shape& domain, const std::vector<Affine*>& exprs);

}  // namespace tc::loops
