#pragma once

/// \file
/// TileLoop: runs a tile program on the CPU over a range of its domain's points.

#include <cstdint>
#include <vector>

#include "loops/index_math.hpp"
#include "loops/program.hpp"

namespace tc::native {

/// Points per tile: the tile buffers of a program (a few KiB each) stay in L1.
inline constexpr std::int64_t kTilePoints = 512;

/// A tile program ready to run on the CPU. It walks a range of the domain a tile at a time: each
/// leaf is read run by run along the innermost dimension (copied, broadcast or gathered into a tile
/// buffer, or read in place when the tile is one contiguous run), then each operation runs over
/// the whole tile as one loop the compiler vectorises. Holds its tile buffers, so one TileLoop
/// serves one thread.
class TileLoop {
 public:
  explicit TileLoop(loops::TileProgram program);

  /// Computes the points [begin, end) of the domain into dst[begin, end). `sources` are the
  /// buffers by Source number. A leaf may read dst itself at the points it writes (an epilogue
  /// in place).
  void store(const float* const* sources, float* dst, std::int64_t begin, std::int64_t end);
  /// Combines the values of the points [begin, end) into acc[sink(point)]: adds them, or keeps
  /// the largest when `max`.
  void reduce(const float* const* sources, float* acc, bool max, std::int64_t begin, std::int64_t end);

 private:
  /// An affine expression ready for row walks.
  struct Walk {
    std::int64_t offset = 0;
    std::int64_t inner = 0;  // coefficient of the innermost dimension
    std::int64_t coef[loops::kMaxDomainRank] = {};
    std::int64_t carry[loops::kMaxDomainRank] = {};
  };
  struct CheckWalk {
    Walk expr;
    std::int64_t lo = 0;
    std::int64_t hi = 0;
  };
  struct AccessWalk {
    Walk linear;
    std::vector<CheckWalk> checks;
    const std::int64_t* table = nullptr;
  };
  /// A run of consecutive points along the innermost dimension: tile positions [pos, pos + len),
  /// innermost coordinates from j0; the row changed by incrementing coordinate carry_dim before it
  /// (-1 for the tile's first run).
  struct Segment {
    std::int64_t pos;
    std::int64_t len;
    std::int64_t j0;
    int carry_dim;
  };

  Walk prepare(const loops::Affine& a) const;
  AccessWalk prepare(const loops::Access& a) const;
  /// The value of `w` at the current tile's first row (innermost coordinate 0).
  std::int64_t row_base(const Walk& w) const;
  /// Where the tile starting at point t0 ends (at most `end`).
  std::int64_t tile_end(std::int64_t t0, std::int64_t end) const;
  void plan_tile(std::int64_t t0, std::int64_t n);
  /// Points of run `s` (relative, [*j0, *j1) within [0, len)) where every check of `a` holds.
  void valid_run(const AccessWalk& a, std::int64_t* check_bases, const Segment& s, std::int64_t* j0,
                 std::int64_t* j1) const;
  /// Reads leaf `a` for the current tile into `out`, or returns a pointer to where the tile already
  /// is (when `may_alias`), or to its one value when it is the same at every point (*uniform).
  const float* load(const AccessWalk& a, const float* src, std::int64_t t0, std::int64_t n, float* out, bool may_alias,
                    bool* uniform);
  void mask(const AccessWalk& a, std::int64_t t0, std::int64_t n, std::uint8_t* out);
  /// Runs the operations over tile [t0, t0 + n); the last writes to `final_out` when given.
  const float* compute(const float* const* sources, std::int64_t t0, std::int64_t n, float* final_out,
                       const float* no_alias);

  loops::TileProgram program_;
  int rank_ = 1;
  std::int64_t dims_[loops::kMaxDomainRank] = {};
  std::vector<AccessWalk> leaves_;
  std::vector<AccessWalk> masks_;
  Walk sink_;
  std::vector<float> slots_;
  std::vector<const float*> values_;
  std::vector<char> uniform_;  // values_[i] is one value for every point of the tile
  std::vector<std::uint8_t> mask_buffer_;
  std::vector<Segment> segments_;
  std::vector<std::int64_t> check_bases_;
  std::int64_t coords_[loops::kMaxDomainRank] = {};
};

}  // namespace tc::native
