#pragma once

/// \file
/// IndexSet: a set of post-DFS indexes over a fixed universe, stored as 64-bit words.

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace collage {

/// Sentinel for "no index" returned by searches over an IndexSet or a graph.
inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// A set of indexes drawn from the fixed universe [0, universe()), as 64-bit words.
///
/// Only the words between the first and the last member are stored (a window), so a set of a few
/// nearby indexes costs the same over a universe of 64 or of 10 million; windows of up to 128
/// indexes live inline without heap allocation. Set algebra works word by word over the windows.
///
/// Binary operations require both operands to share a universe (checked with assert).
class IndexSet {
 public:
  using Word = std::uint64_t;
  static constexpr std::size_t kWordBits = 64;
  static constexpr std::size_t kInlineWords = 2;

  /// The empty set over the empty universe.
  IndexSet() = default;

  /// The empty set over [0, universe).
  explicit IndexSet(std::size_t universe) : universe_(universe) {}

  /// The set {indexes...} over [0, universe).
  IndexSet(std::size_t universe, std::initializer_list<std::size_t> indexes) : IndexSet(universe) {
    for (std::size_t i : indexes) add(i);
  }

  /// The set [first, last) over [0, universe).
  static IndexSet range(std::size_t universe, std::size_t first, std::size_t last) {
    assert(first <= last && last <= universe);
    IndexSet result(universe);
    if (first == last) return result;
    result.base_ = first / kWordBits;
    const std::size_t end_word = (last - 1) / kWordBits + 1;
    result.words_.assign(end_word - result.base_, ~Word{0});
    result.words_.front() &= ~Word{0} << (first % kWordBits);
    if (last % kWordBits != 0) result.words_.back() &= ~(~Word{0} << (last % kWordBits));
    return result;
  }

  /// Every index of [0, universe).
  static IndexSet full(std::size_t universe) { return range(universe, 0, universe); }

  std::size_t universe() const { return universe_; }

  bool contains(std::size_t i) const {
    assert(i < universe_);
    return (word_at(i / kWordBits) >> (i % kWordBits)) & 1U;
  }
  bool operator[](std::size_t i) const { return contains(i); }

  void add(std::size_t i) {
    assert(i < universe_);
    const std::size_t w = i / kWordBits;
    cover_words(w, w + 1);
    words_[w - base_] |= Word{1} << (i % kWordBits);
  }
  void remove(std::size_t i) {
    assert(i < universe_);
    const std::size_t w = i / kWordBits;
    if (w < base_ || w >= end_word()) return;
    words_[w - base_] &= ~(Word{1} << (i % kWordBits));
    trim();
  }
  void clear() {
    words_.clear();
    base_ = 0;
  }

  /// Number of indexes inside.
  std::size_t count() const {
    std::size_t n = 0;
    for (Word w : words_) n += static_cast<std::size_t>(popcount(w));
    return n;
  }
  bool empty() const { return words_.empty(); }

  /// Smallest index inside, or npos.
  std::size_t first_inside() const {
    return empty() ? npos : base_ * kWordBits + static_cast<std::size_t>(ctz(words_.front()));
  }

  /// Largest index inside, or npos.
  std::size_t last_inside() const {
    if (empty()) return npos;
    return (end_word() - 1) * kWordBits + (kWordBits - 1 - static_cast<std::size_t>(clz(words_.back())));
  }

  /// Smallest index inside that is strictly greater than i, or npos.
  std::size_t next_inside(std::size_t i) const { return i == npos ? npos : next_inside_from(i + 1); }

  /// Smallest index inside that is >= i, or npos.
  std::size_t next_inside_from(std::size_t i) const {
    if (empty() || i >= universe_) return npos;
    std::size_t w = i / kWordBits;
    Word word;
    if (w < base_) {
      w = base_;
      word = words_.front();
    } else if (w >= end_word()) {
      return npos;
    } else {
      word = words_[w - base_] & (~Word{0} << (i % kWordBits));
    }
    while (true) {
      if (word != 0) return w * kWordBits + static_cast<std::size_t>(ctz(word));
      if (++w == end_word()) return npos;
      word = words_[w - base_];
    }
  }

  /// Smallest index of the universe not inside, or npos when the set is full.
  std::size_t first_outside() const {
    if (universe_ == 0) return npos;
    if (empty() || base_ > 0) return 0;
    for (std::size_t k = 0; k < words_.size(); ++k) {
      if (words_[k] != ~Word{0}) {
        std::size_t i = k * kWordBits + static_cast<std::size_t>(ctz(~words_[k]));
        return i < universe_ ? i : npos;
      }
    }
    std::size_t i = words_.size() * kWordBits;
    return i < universe_ ? i : npos;
  }

  IndexSet& operator|=(const IndexSet& that) {
    check_same_universe(that);
    if (that.empty()) return *this;
    cover_words(that.base_, that.end_word());
    for (std::size_t k = 0; k < that.words_.size(); ++k) words_[that.base_ + k - base_] |= that.words_[k];
    return *this;
  }
  IndexSet& operator&=(const IndexSet& that) {
    check_same_universe(that);
    const std::size_t lo = std::max(base_, that.base_);
    const std::size_t hi = std::min(end_word(), that.end_word());
    if (empty() || that.empty() || lo >= hi) {
      clear();
      return *this;
    }
    Words kept;
    kept.reserve(hi - lo);
    for (std::size_t w = lo; w < hi; ++w) kept.push_back(words_[w - base_] & that.words_[w - that.base_]);
    words_ = std::move(kept);
    base_ = lo;
    trim();
    return *this;
  }
  /// Set difference.
  IndexSet& operator-=(const IndexSet& that) {
    check_same_universe(that);
    for (std::size_t k = 0; k < words_.size(); ++k) words_[k] &= ~that.word_at(base_ + k);
    trim();
    return *this;
  }
  friend IndexSet operator|(IndexSet a, const IndexSet& b) { return a |= b; }
  friend IndexSet operator&(IndexSet a, const IndexSet& b) { return a &= b; }
  friend IndexSet operator-(IndexSet a, const IndexSet& b) { return a -= b; }

  /// Every index of this set is in that.
  bool is_subset_of(const IndexSet& that) const {
    check_same_universe(that);
    for (std::size_t k = 0; k < words_.size(); ++k) {
      if ((words_[k] & ~that.word_at(base_ + k)) != 0) return false;
    }
    return true;
  }
  bool intersects(const IndexSet& that) const {
    check_same_universe(that);
    const std::size_t lo = std::max(base_, that.base_);
    const std::size_t hi = std::min(end_word(), that.end_word());
    for (std::size_t w = lo; w < hi; ++w) {
      if ((words_[w - base_] & that.words_[w - that.base_]) != 0) return true;
    }
    return false;
  }
  bool is_disjoint(const IndexSet& that) const { return !intersects(that); }

  friend bool operator==(const IndexSet& a, const IndexSet& b) {
    return a.universe_ == b.universe_ && a.base_ == b.base_ && a.words_.size() == b.words_.size() &&
           std::equal(a.words_.begin(), a.words_.end(), b.words_.begin());
  }
  friend bool operator!=(const IndexSet& a, const IndexSet& b) { return !(a == b); }

  /// A total order: by universe, then lexicographically by the ascending index sequence
  /// (so {0,5} < {1} and {0} < {0,1}). Deterministic and independent of the host.
  friend bool operator<(const IndexSet& a, const IndexSet& b) {
    if (a.universe_ != b.universe_) return a.universe_ < b.universe_;
    if (a.empty() || b.empty()) return a.empty() && !b.empty();
    const std::size_t lo = std::min(a.base_, b.base_);
    const std::size_t hi = std::max(a.end_word(), b.end_word());
    for (std::size_t w = lo; w < hi; ++w) {
      const Word x = a.word_at(w);
      const Word y = b.word_at(w);
      if (x == y) continue;
      // At the lowest differing index p, the set holding p is smaller unless the other set has
      // nothing above p (then the other is a proper prefix, hence smaller).
      const Word lowest = (x ^ y) & (~(x ^ y) + 1);
      const bool a_holds = (x & lowest) != 0;
      const IndexSet& other = a_holds ? b : a;
      const Word above = ~((lowest << 1) - 1);  // bits strictly above p in this word
      const bool other_continues = (other.word_at(w) & above) != 0 || other.end_word() > w + 1;
      return a_holds == other_continues;
    }
    return false;
  }
  friend bool operator>(const IndexSet& a, const IndexSet& b) { return b < a; }
  friend bool operator<=(const IndexSet& a, const IndexSet& b) { return !(b < a); }
  friend bool operator>=(const IndexSet& a, const IndexSet& b) { return !(a < b); }

  /// A hash of the contents that is the same on every run and host.
  std::size_t hash() const {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ universe_;
    h = (h ^ base_) * 0x100000001b3ULL;
    for (Word w : words_) {
      h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0x100000001b3ULL;
    }
    return static_cast<std::size_t>(h);
  }

  /// The image of this set through `index_map` (old index -> new index, or npos to drop it)
  /// as a set over [0, new_universe).
  IndexSet subst(std::size_t new_universe, const std::vector<std::size_t>& index_map) const {
    IndexSet result(new_universe);
    for (std::size_t i : *this) {
      assert(i < index_map.size());
      if (index_map[i] != npos) result.add(index_map[i]);
    }
    return result;
  }

  /// The indexes inside, ascending.
  std::vector<std::size_t> to_vector() const { return std::vector<std::size_t>(begin(), end()); }

  /// Prints as `{0,2..4,7}`: runs of three or more consecutive indexes are written `a..b`.
  std::string to_string() const {
    std::string out = "{";
    bool first = true;
    std::size_t i = first_inside();
    while (i != npos) {
      std::size_t j = i;
      while (j + 1 < universe_ && contains(j + 1)) ++j;
      if (!first) out += ',';
      first = false;
      out += std::to_string(i);
      if (j - i >= 2) {
        out += "..";
        out += std::to_string(j);
      } else if (j == i + 1) {
        out += ',';
        out += std::to_string(j);
      }
      i = next_inside(j);
    }
    out += '}';
    return out;
  }
  friend std::ostream& operator<<(std::ostream& os, const IndexSet& s) { return os << s.to_string(); }

  /// Forward iterator over the indexes inside, ascending.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::size_t*;
    using reference = std::size_t;

    const_iterator() = default;
    const_iterator(const IndexSet* set, std::size_t index) : set_(set), index_(index) {}
    std::size_t operator*() const { return index_; }
    const_iterator& operator++() {
      index_ = set_->next_inside(index_);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }
    friend bool operator!=(const const_iterator& a, const const_iterator& b) { return a.index_ != b.index_; }

   private:
    const IndexSet* set_ = nullptr;
    std::size_t index_ = npos;
  };
  const_iterator begin() const { return const_iterator(this, first_inside()); }
  const_iterator end() const { return const_iterator(this, npos); }

 private:
  using Words = boost::container::small_vector<Word, kInlineWords>;

  static int popcount(Word w) { return __builtin_popcountll(w); }
  static int ctz(Word w) { return __builtin_ctzll(w); }
  static int clz(Word w) { return __builtin_clzll(w); }
  void check_same_universe([[maybe_unused]] const IndexSet& that) const {
    assert(universe_ == that.universe_ && "IndexSet: operands over different universes");
  }

  std::size_t end_word() const { return base_ + words_.size(); }
  /// Word w of the universe (0 outside the stored window).
  Word word_at(std::size_t w) const { return (w >= base_ && w < end_word()) ? words_[w - base_] : Word{0}; }
  /// Widens the stored window to cover words [lo, hi).
  void cover_words(std::size_t lo, std::size_t hi) {
    if (words_.empty()) {
      base_ = lo;
      words_.assign(hi - lo, Word{0});
      return;
    }
    if (lo < base_) {
      words_.insert(words_.begin(), base_ - lo, Word{0});
      base_ = lo;
    }
    if (hi > end_word()) words_.resize(hi - base_, Word{0});
  }
  /// Restores the canonical form: no zero word at either end of the window.
  void trim() {
    while (!words_.empty() && words_.back() == 0) words_.pop_back();
    std::size_t lead = 0;
    while (lead < words_.size() && words_[lead] == 0) ++lead;
    if (lead != 0) {
      words_.erase(words_.begin(), words_.begin() + static_cast<std::ptrdiff_t>(lead));
      base_ += lead;
    }
    if (words_.empty()) base_ = 0;
  }

  std::size_t universe_ = 0;
  std::size_t base_ = 0;  // word index of words_[0]
  /// Canonical: empty, or the first and last words are non-zero.
  Words words_;
};

}  // namespace collage

namespace std {
template <>
struct hash<collage::IndexSet> {
  std::size_t operator()(const collage::IndexSet& s) const noexcept { return s.hash(); }
};
}  // namespace std
