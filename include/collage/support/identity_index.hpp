#pragma once

/// \file
/// IdentityIndex: a hash index over ids of items kept elsewhere, looked up with a predicate.

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/support/index_set.hpp"

namespace collage {
namespace detail {

/// Ids 0, 1, 2, ... of items stored elsewhere (sub-graphs, keys), found by hash (open addressing
/// over a power-of-two table). Lookups pass a predicate that compares a stored id with what is
/// sought, so an item can be looked up before it is built, and no item is copied into the table.
/// A slot packs the id with a fragment of its hash, so a probe touches one word per slot.
class IdentityIndex {
 public:
  std::size_t size() const { return hashes_.size(); }

  /// The id whose hash is `hash` and for which same(id) holds, or npos.
  template <class Same>
  std::size_t find(std::size_t hash, Same same) const {
    if (slots_.empty()) return npos;
    const std::size_t mask = slots_.size() - 1;
    const std::uint64_t mixed = mix(hash);
    const std::uint64_t tag = mixed & kTagMask;
    for (std::size_t k = static_cast<std::size_t>(mixed >> kTagBits) & mask;; k = (k + 1) & mask) {
      const std::uint64_t slot = slots_[k];
      if (slot == kEmpty) return npos;
      if ((slot & kTagMask) == tag) {
        const auto id = static_cast<std::size_t>(slot >> kTagBits);
        if (hashes_[id] == hash && same(id)) return id;
      }
    }
  }
  /// Indexes the next id (size()) under `hash`.
  void push(std::size_t hash) {
    assert(hashes_.size() < (std::uint64_t{1} << (64 - kTagBits)) - 1);
    hashes_.push_back(hash);
    if (2 * hashes_.size() > slots_.size()) {
      std::size_t slots = 16;
      while (slots < 4 * hashes_.size()) slots *= 2;
      slots_.assign(slots, kEmpty);
      for (std::size_t id = 0; id < hashes_.size(); ++id) place(id);
    } else {
      place(hashes_.size() - 1);
    }
  }
  void clear() {
    hashes_.clear();
    std::fill(slots_.begin(), slots_.end(), kEmpty);
  }

 private:
  static constexpr unsigned kTagBits = 20;
  static constexpr std::uint64_t kTagMask = (std::uint64_t{1} << kTagBits) - 1;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  static std::uint64_t mix(std::size_t h) {
    std::uint64_t x = static_cast<std::uint64_t>(h);
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    x ^= x >> 33;
    return x;
  }
  void place(std::size_t id) {
    const std::size_t mask = slots_.size() - 1;
    const std::uint64_t mixed = mix(hashes_[id]);
    std::size_t k = static_cast<std::size_t>(mixed >> kTagBits) & mask;
    while (slots_[k] != kEmpty) k = (k + 1) & mask;
    slots_[k] = (static_cast<std::uint64_t>(id) << kTagBits) | (mixed & kTagMask);
  }

  std::vector<std::uint64_t> slots_;  // id << kTagBits | hash tag, or kEmpty
  std::vector<std::size_t> hashes_;   // by id
};

}  // namespace detail
}  // namespace collage
