#pragma once

/// \file
/// SettledSet: the nodes a search state has settled, stored by the bitset words that still have
/// a hole, so that a state's size follows its holes and not the distance between them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/support/index_set.hpp"

namespace collage {

/// One word of a bitset over a universe of nodes, with its place: nodes 64 * index + k for the
/// bits k that are set.
struct BitsetWord {
  std::uint32_t index;
  IndexSet::Word bits;
  friend bool operator==(const BitsetWord& a, const BitsetWord& b) { return a.index == b.index && a.bits == b.bits; }
};

/// A set of nodes that searches fill roughly front to back, as the bitset words of a universe
/// [0, n): each word below `top` is whole (every bit settled) unless listed in `holes` with its
/// bits, and words from `top` on are empty. Bits that count as settled from the start (a
/// detail::SettledUniverse's preset: nodes that always stay with the host, and the bits past n
/// in the last word) are stored as set, so whole words need no entry. A search on parallel
/// branches leaves a few unsettled nodes far behind its frontier (the ends of branches waiting
/// for their join): a window of the bitset from the first of them would grow with the graph,
/// while `holes` holds only the words around them. Canonical (`top` is the least such bound and
/// `holes` lists exactly the words below it that are not whole), so equal sets compare and hash
/// equal. Built and read through a detail::SettledUniverse.
struct SettledSet {
  /// The listed words: one inline (the common case on chain-like graphs), more on the heap. A
  /// search state is moved and copied often, so a move is a copy of three fields.
  class Holes {
   public:
    Holes() = default;
    Holes(const Holes& that) { assign(that); }
    Holes(Holes&& that) noexcept { steal(that); }
    Holes& operator=(const Holes& that) {
      if (this != &that) {
        release();
        assign(that);
      }
      return *this;
    }
    Holes& operator=(Holes&& that) noexcept {
      if (this != &that) {
        release();
        steal(that);
      }
      return *this;
    }
    ~Holes() { release(); }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const BitsetWord* begin() const { return on_heap() ? heap_ : &one_; }
    const BitsetWord* end() const { return begin() + size_; }
    const BitsetWord& operator[](std::size_t k) const { return begin()[k]; }
    const BitsetWord& front() const { return begin()[0]; }
    const BitsetWord& back() const { return begin()[size_ - 1]; }
    void pop_back() { --size_; }  // the storage stays where it is
    void push_back(BitsetWord w) {
      if (size_ == capacity_) grow();
      (on_heap() ? heap_ : &one_)[size_++] = w;
    }
    /// Bytes held on the heap.
    std::size_t heap_bytes() const { return on_heap() ? capacity_ * sizeof(BitsetWord) : 0; }

    friend bool operator==(const Holes& a, const Holes& b) {
      return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
    }

   private:
    bool on_heap() const { return capacity_ > 1; }
    void grow() {
      const std::uint32_t capacity = capacity_ * 2;
      BitsetWord* heap = new BitsetWord[capacity];
      std::copy(begin(), end(), heap);
      release();
      heap_ = heap;
      capacity_ = capacity;
    }
    void assign(const Holes& that) {
      size_ = that.size_;
      capacity_ = std::max<std::uint32_t>(1, that.size_);
      if (on_heap()) heap_ = new BitsetWord[capacity_];
      std::copy(that.begin(), that.end(), on_heap() ? heap_ : &one_);
    }
    void steal(Holes& that) {
      size_ = that.size_;
      capacity_ = that.capacity_;
      if (on_heap()) {
        heap_ = that.heap_;
      } else {
        one_ = that.one_;
      }
      that.size_ = 0;
      that.capacity_ = 1;
    }
    void release() {
      if (on_heap()) delete[] heap_;
      capacity_ = 1;
    }

    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = 1;  // 1: the word is inline
    union {
      BitsetWord one_{0, 0};
      BitsetWord* heap_;
    };
  };

  std::uint32_t top = 0;
  Holes holes;  // ascending index, all below top

  friend bool operator==(const SettledSet& a, const SettledSet& b) { return a.top == b.top && a.holes == b.holes; }
  friend bool operator!=(const SettledSet& a, const SettledSet& b) { return !(a == b); }
  std::size_t hash() const {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ top;
    for (const BitsetWord& w : holes) {
      h = (h ^ w.index) * 0x100000001b3ULL;
      h ^= w.bits + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0x100000001b3ULL;
    }
    return static_cast<std::size_t>(h);
  }
  /// Bytes held on the heap.
  std::size_t heap_bytes() const { return holes.heap_bytes(); }
};

namespace detail {

/// The universe of the SettledSets of one search: its size and preset bits.
class SettledUniverse {
 public:
  using Word = IndexSet::Word;
  static constexpr std::size_t kBits = IndexSet::kWordBits;

  /// The universe [0, n) in which the nodes for which preset(i) is true count as settled from the
  /// start.
  template <class Preset>
  SettledUniverse(std::size_t n, Preset preset) : n_(n), preset_((n + kBits - 1) / kBits, 0) {
    for (std::size_t i = 0; i < n; ++i) {
      if (preset(i)) preset_[i / kBits] |= Word{1} << (i % kBits);
    }
    if (n % kBits != 0) preset_.back() |= ~Word{0} << (n % kBits);
  }

  /// The set of the preset nodes alone.
  SettledSet none() const { return {}; }

  /// Whether i is in `s` (preset nodes are in it only where their word is listed or below top:
  /// callers test them apart).
  bool contains(const SettledSet& s, std::size_t i) const {
    const std::size_t w = i / kBits;
    if (w >= s.top) return false;
    for (const BitsetWord& h : s.holes) {  // a few, on most graphs
      if (h.index >= w) return h.index != w || ((h.bits >> (i % kBits)) & 1U) != 0;
    }
    return true;
  }

  /// Whether `s` holds a node of the words [first, last) (ascending, holding no preset bit).
  bool meets(const SettledSet& s, const BitsetWord* first, const BitsetWord* last) const {
    const BitsetWord* hole = s.holes.begin();
    for (; first != last && first->index < s.top; ++first) {
      while (hole != s.holes.end() && hole->index < first->index) ++hole;
      if (hole == s.holes.end() || hole->index != first->index) return true;  // a whole word
      if ((hole->bits & first->bits) != 0) return true;
    }
    return false;
  }

  /// `s` with the nodes of `added` (a set over this universe) settled too.
  SettledSet with(const SettledSet& s, const IndexSet& added) const {
    SettledSet out;  // the one object returned, so that it is built in place
    if (added.empty()) {
      out = s;
      return out;
    }
    out.top = static_cast<std::uint32_t>(std::max<std::size_t>(s.top, added.last_inside() / kBits + 1));
    std::size_t i = added.first_inside();
    // Adds the bits of `added` in word w to `bits`, and lists the word unless it is whole.
    auto put = [&](std::size_t w, Word bits) {
      for (; i != npos && i / kBits == w; i = added.next_inside(i)) bits |= Word{1} << (i % kBits);
      if (bits != ~Word{0}) out.holes.push_back(BitsetWord{static_cast<std::uint32_t>(w), bits});
    };
    // Below s.top: the words listed in s, and whole words that `added` reaches (already whole).
    auto old = s.holes.begin();
    while (old != s.holes.end() || (i != npos && i / kBits < s.top)) {
      const std::size_t w = std::min(old != s.holes.end() ? std::size_t{old->index} : npos,
                                     i != npos && i / kBits < s.top ? i / kBits : npos);
      put(w, old != s.holes.end() && old->index == w ? (old++)->bits : ~Word{0});
    }
    // From s.top up: empty but for the preset bits.
    for (std::size_t w = s.top; w < out.top; ++w) put(w, preset_[w]);
    canonicalize(out);
    return out;
  }

  /// The first index not in `s` and not preset (n when there is none).
  std::size_t first_unsettled(const SettledSet& s) const {
    if (!s.holes.empty()) return s.holes.front().index * kBits + static_cast<std::size_t>(ctz(~s.holes.front().bits));
    for (std::size_t w = s.top; w < preset_.size(); ++w) {
      if (preset_[w] != ~Word{0}) return w * kBits + static_cast<std::size_t>(ctz(~preset_[w]));
    }
    return n_;
  }

 private:
  static int ctz(Word w) { return __builtin_ctzll(w); }

  /// Lowers `top` past words that hold nothing but preset bits (dropping their entries).
  void canonicalize(SettledSet& s) const {
    while (s.top > 0) {
      const std::size_t w = s.top - 1;
      if (!s.holes.empty() && s.holes.back().index == w) {
        if (s.holes.back().bits != preset_[w]) break;
        s.holes.pop_back();
      } else if (preset_[w] != ~Word{0}) {
        break;
      }
      --s.top;
    }
  }

  std::size_t n_;
  std::vector<Word> preset_;
};

}  // namespace detail
}  // namespace collage
