#pragma once

/// \file
/// EpochMarks: marks on ids 0, 1, 2, ... that are all cleared at once in constant time.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace collage {
namespace detail {

/// Marks on ids for walks and de-duplication that run many times over the same ids: a mark is a
/// stamp equal to the current epoch, and clearing starts a new epoch. The stamps are reset only
/// when the epoch counter wraps (`Stamp` is a parameter so that tests can make it wrap).
template <class Stamp = std::uint32_t>
class BasicEpochMarks {
 public:
  /// Clears every mark; ids below `ids` can be marked afterwards.
  void clear(std::size_t ids) {
    if (++epoch_ == 0) {  // wrapped: old stamps could equal the new epoch
      std::fill(stamps_.begin(), stamps_.end(), Stamp{0});
      epoch_ = 1;
    }
    if (stamps_.size() < ids) stamps_.resize(ids, Stamp{0});
  }
  bool marked(std::size_t id) const { return stamps_[id] == epoch_; }
  /// Marks `id`; false when it was marked already.
  bool mark(std::size_t id) {
    if (stamps_[id] == epoch_) return false;
    stamps_[id] = epoch_;
    return true;
  }

 private:
  std::vector<Stamp> stamps_;
  Stamp epoch_ = 0;
};

using EpochMarks = BasicEpochMarks<>;

}  // namespace detail
}  // namespace collage
