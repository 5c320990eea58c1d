#pragma once

/// \file
/// IndexSet: a set of post-DFS indexes over a fixed universe, stored as 64-bit words.

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

// Forces inlining where g++'s growth limits stop it in the rules' and searchers' hot loops.
#if defined(__GNUC__)
#define COLLAGE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define COLLAGE_ALWAYS_INLINE inline
#endif

namespace collage {

/// Sentinel for "no index" returned by searches over an IndexSet or a graph.
inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// A set of indexes drawn from the fixed universe [0, universe()), as 64-bit words.
///
/// Only the words between the first and the last member are stored (a window), so a set of a few
/// nearby indexes costs the same over a universe of 64 or of 10 million; windows of up to 128
/// indexes live inline without heap allocation. Set algebra works word by word over the windows.
/// An IndexSet is 32 bytes, plus one heap block for a wider window. Universes hold up to 2^38
/// indexes (the window's first word is a 32-bit word index).
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
  explicit IndexSet(std::size_t universe) : universe_(universe) {
    assert(universe / kWordBits < std::numeric_limits<std::uint32_t>::max() && "IndexSet: universe too large");
  }

  IndexSet(const IndexSet& that) { copy_from(that); }
  IndexSet(IndexSet&& that) noexcept { steal(that); }
  IndexSet& operator=(const IndexSet& that) {
    if (this != &that) {
      if (that.size_ <= kInlineWords || that.size_ > capacity() || size_ <= kInlineWords) {
        release();
        copy_from(that);
      } else {  // reuse this heap block
        universe_ = that.universe_;
        base_ = that.base_;
        size_ = that.size_;
        std::copy(that.heap_, that.heap_ + size_, heap_);
      }
    }
    return *this;
  }
  IndexSet& operator=(IndexSet&& that) noexcept {
    if (this != &that) {
      release();
      steal(that);
    }
    return *this;
  }
  ~IndexSet() { release(); }

  /// The set {indexes...} over [0, universe).
  IndexSet(std::size_t universe, std::initializer_list<std::size_t> indexes) : IndexSet(universe) {
    for (std::size_t i : indexes) add(i);
  }

  /// The set [first, last) over [0, universe).
  static IndexSet range(std::size_t universe, std::size_t first, std::size_t last) {
    assert(first <= last && last <= universe);
    IndexSet result(universe);
    if (first == last) return result;
    const std::size_t first_word = first / kWordBits;
    const std::size_t end_word = (last - 1) / kWordBits + 1;
    result.set_window(first_word, end_word);
    Word* words = result.data();
    std::fill(words, words + result.size_, ~Word{0});
    words[0] &= ~Word{0} << (first % kWordBits);
    if (last % kWordBits != 0) words[result.size_ - 1] &= ~(~Word{0} << (last % kWordBits));
    return result;
  }

  /// Every index of [0, universe).
  static IndexSet full(std::size_t universe) { return range(universe, 0, universe); }

  std::size_t universe() const { return universe_; }
  /// Bytes this set holds on the heap (0 while its window fits the inline words).
  std::size_t heap_bytes() const { return size_ <= kInlineWords ? 0 : (capacity() + 1) * sizeof(Word); }

  bool contains(std::size_t i) const {
    assert(i < universe_);
    return (word_at(i / kWordBits) >> (i % kWordBits)) & 1U;
  }
  bool operator[](std::size_t i) const { return contains(i); }

  void add(std::size_t i) {
    assert(i < universe_);
    const std::size_t w = i / kWordBits;
    if (empty()) {  // the common first add, without moving a window
      base_ = static_cast<std::uint32_t>(w);
      size_ = 1;
      inline_[0] = Word{1} << (i % kWordBits);
      std::fill(inline_ + 1, inline_ + kInlineWords, Word{0});
      return;
    }
    cover_words(w, w + 1);
    data()[w - base_] |= Word{1} << (i % kWordBits);
  }
  void remove(std::size_t i) {
    assert(i < universe_);
    const std::size_t w = i / kWordBits;
    if (w < base_ || w >= end_word()) return;
    data()[w - base_] &= ~(Word{1} << (i % kWordBits));
    trim();
  }
  void clear() {
    release();
    size_ = 0;
    base_ = 0;
  }

  /// Number of indexes inside.
  std::size_t count() const {
    std::size_t n = 0;
    const Word* words = data();
    for (std::size_t k = 0; k < size_; ++k) n += static_cast<std::size_t>(popcount(words[k]));
    return n;
  }
  bool empty() const { return size_ == 0; }

  /// Smallest index inside, or npos.
  std::size_t first_inside() const {
    return empty() ? npos : std::size_t{base_} * kWordBits + static_cast<std::size_t>(ctz(data()[0]));
  }

  /// Largest index inside, or npos.
  std::size_t last_inside() const {
    if (empty()) return npos;
    return (end_word() - 1) * kWordBits + (kWordBits - 1 - static_cast<std::size_t>(clz(data()[size_ - 1])));
  }

  /// Smallest index inside that is strictly greater than i, or npos.
  std::size_t next_inside(std::size_t i) const { return i == npos ? npos : next_inside_from(i + 1); }

  /// Smallest index inside that is >= i, or npos.
  std::size_t next_inside_from(std::size_t i) const {
    if (empty() || i >= universe_) return npos;
    const Word* words = data();
    std::size_t w = i / kWordBits;
    Word word;
    if (w < base_) {
      w = base_;
      word = words[0];
    } else if (w >= end_word()) {
      return npos;
    } else {
      word = words[w - base_] & (~Word{0} << (i % kWordBits));
    }
    while (true) {
      if (word != 0) return w * kWordBits + static_cast<std::size_t>(ctz(word));
      if (++w == end_word()) return npos;
      word = words[w - base_];
    }
  }

  /// Smallest index of the universe not inside, or npos when the set is full.
  std::size_t first_outside() const {
    if (universe_ == 0) return npos;
    if (empty() || base_ > 0) return 0;
    const Word* words = data();
    for (std::size_t k = 0; k < size_; ++k) {
      if (words[k] != ~Word{0}) {
        std::size_t i = k * kWordBits + static_cast<std::size_t>(ctz(~words[k]));
        return i < universe_ ? i : npos;
      }
    }
    std::size_t i = std::size_t{size_} * kWordBits;
    return i < universe_ ? i : npos;
  }

  IndexSet& operator|=(const IndexSet& that) {
    check_same_universe(that);
    if (that.empty()) return *this;
    cover_words(that.base_, that.end_word());
    Word* words = data() + (that.base_ - base_);
    const Word* theirs = that.data();
    for (std::size_t k = 0; k < that.size_; ++k) words[k] |= theirs[k];
    return *this;
  }
  IndexSet& operator&=(const IndexSet& that) {
    check_same_universe(that);
    const std::size_t lo = std::max<std::size_t>(base_, that.base_);
    const std::size_t hi = std::min(end_word(), that.end_word());
    if (empty() || that.empty() || lo >= hi) {
      clear();
      return *this;
    }
    Word* words = data();
    const Word* theirs = that.data();
    for (std::size_t w = lo; w < hi; ++w) words[w - base_] &= theirs[w - that.base_];
    set_window(lo, hi);
    trim();
    return *this;
  }
  /// Set difference.
  IndexSet& operator-=(const IndexSet& that) {
    check_same_universe(that);
    Word* words = data();
    for (std::size_t k = 0; k < size_; ++k) words[k] &= ~that.word_at(base_ + k);
    trim();
    return *this;
  }
  friend IndexSet operator|(IndexSet a, const IndexSet& b) { return a |= b; }
  friend IndexSet operator&(IndexSet a, const IndexSet& b) { return a &= b; }
  friend IndexSet operator-(IndexSet a, const IndexSet& b) { return a -= b; }

  /// Every index of this set is in that.
  bool is_subset_of(const IndexSet& that) const {
    check_same_universe(that);
    const Word* words = data();
    for (std::size_t k = 0; k < size_; ++k) {
      if ((words[k] & ~that.word_at(base_ + k)) != 0) return false;
    }
    return true;
  }
  COLLAGE_ALWAYS_INLINE bool intersects(const IndexSet& that) const {
    check_same_universe(that);
    const std::size_t lo = std::max<std::size_t>(base_, that.base_);
    const std::size_t hi = std::min(end_word(), that.end_word());
    const Word* words = data();
    const Word* theirs = that.data();
    for (std::size_t w = lo; w < hi; ++w) {
      if ((words[w - base_] & theirs[w - that.base_]) != 0) return true;
    }
    return false;
  }
  bool is_disjoint(const IndexSet& that) const { return !intersects(that); }

  friend bool operator==(const IndexSet& a, const IndexSet& b) {
    return a.universe_ == b.universe_ && a.base_ == b.base_ && a.size_ == b.size_ &&
           std::equal(a.data(), a.data() + a.size_, b.data());
  }
  friend bool operator!=(const IndexSet& a, const IndexSet& b) { return !(a == b); }

  /// A total order: by universe, then lexicographically by the ascending index sequence
  /// (so {0,5} < {1} and {0} < {0,1}). Deterministic and independent of the host.
  friend bool operator<(const IndexSet& a, const IndexSet& b) { return compare(a, b) < 0; }
  /// The order of operator< as a three-way comparison: negative, zero (equal) or positive.
  static int compare(const IndexSet& a, const IndexSet& b) {
    if (a.universe_ != b.universe_) return a.universe_ < b.universe_ ? -1 : 1;
    if (a.empty() || b.empty()) return a.empty() == b.empty() ? 0 : a.empty() ? -1 : 1;
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
      return a_holds == other_continues ? -1 : 1;
    }
    return 0;
  }
  friend bool operator>(const IndexSet& a, const IndexSet& b) { return b < a; }
  friend bool operator<=(const IndexSet& a, const IndexSet& b) { return !(b < a); }
  friend bool operator>=(const IndexSet& a, const IndexSet& b) { return !(a < b); }

  /// A hash of the contents that is the same on every run and host.
  std::size_t hash() const {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ universe_;
    h = (h ^ base_) * 0x100000001b3ULL;
    const Word* words = data();
    for (std::size_t k = 0; k < size_; ++k) {
      h ^= words[k] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
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

  /// Forward iterator over the indexes inside, ascending. It keeps the unvisited bits of the
  /// current word, so a step is a few instructions; the set must not change while it is iterated.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::size_t*;
    using reference = std::size_t;

    const_iterator() = default;
    /// The first index of `set` (npos when empty).
    COLLAGE_ALWAYS_INLINE explicit const_iterator(const IndexSet* set) : set_(set) {
      if (set->empty()) return;
      bits_ = set->data()[0];
      index_ = std::size_t{set->base_} * kWordBits + static_cast<std::size_t>(ctz(bits_));
    }
    std::size_t operator*() const { return index_; }
    const_iterator& operator++() {
      bits_ &= bits_ - 1;
      if (bits_ == 0) {
        next_word();
      } else {
        index_ = (index_ & ~(kWordBits - 1)) + static_cast<std::size_t>(ctz(bits_));
      }
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
    /// Moves to the first index of the next non-empty word, or to the end.
    void next_word() {
      const Word* words = set_->data();
      for (std::size_t w = index_ / kWordBits + 1; w < set_->end_word(); ++w) {
        bits_ = words[w - set_->base_];
        if (bits_ != 0) {
          index_ = w * kWordBits + static_cast<std::size_t>(ctz(bits_));
          return;
        }
      }
      index_ = npos;
    }

    const IndexSet* set_ = nullptr;
    Word bits_ = 0;  // bits of the current word not visited yet, the current index's included
    std::size_t index_ = npos;
  };
  COLLAGE_ALWAYS_INLINE const_iterator begin() const { return const_iterator(this); }
  COLLAGE_ALWAYS_INLINE const_iterator end() const { return const_iterator(); }

 private:
  static int popcount(Word w) { return __builtin_popcountll(w); }
  static int ctz(Word w) { return __builtin_ctzll(w); }
  static int clz(Word w) { return __builtin_clzll(w); }
  void check_same_universe([[maybe_unused]] const IndexSet& that) const {
    assert(universe_ == that.universe_ && "IndexSet: operands over different universes");
  }

  // Storage: the window's words live inline while there are at most kInlineWords of them, else on
  // the heap, in a block whose first word holds its capacity (in words, after that word).
  Word* data() { return size_ <= kInlineWords ? inline_ : heap_; }
  const Word* data() const { return size_ <= kInlineWords ? inline_ : heap_; }
  std::size_t capacity() const { return size_ <= kInlineWords ? kInlineWords : static_cast<std::size_t>(heap_[-1]); }
  static Word* allocate(std::size_t capacity) {
    Word* block = new Word[capacity + 1];
    block[0] = static_cast<Word>(capacity);
    return block + 1;
  }
  /// Frees the heap block, if any (size_ still says where the words are).
  void release() {
    // g++ 12 at -O2 and above can warn that this deletes "an unallocated object" at address -8,
    // when inlining has joined the delete with a path on which size_ <= kInlineWords and the union
    // holds inline zeros (read as a null heap_). Such a path never reaches the delete: a bogus
    // -Wfree-nonheap-object (GCC meta-bug 99098), silenced for this statement only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#endif
    if (size_ > kInlineWords) delete[] (heap_ - 1);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  }

  std::size_t end_word() const { return std::size_t{base_} + size_; }
  /// Word w of the universe (0 outside the stored window).
  Word word_at(std::size_t w) const { return (w >= base_ && w < end_word()) ? data()[w - base_] : Word{0}; }

  /// Makes [lo, hi) (in words, lo < hi) the stored window: words in both the old and the new window
  /// keep their value, the others are zero.
  void set_window(std::size_t lo, std::size_t hi) {
    assert(lo < hi && hi <= std::numeric_limits<std::uint32_t>::max());
    const std::size_t n = hi - lo;
    const std::size_t old_lo = base_;
    const std::size_t old_hi = end_word();
    const std::size_t keep_lo = std::max(lo, old_lo);
    const std::size_t keep_hi = std::max(keep_lo, std::min(hi, old_hi));
    Word* old = data();
    if (n <= kInlineWords) {
      Word words[kInlineWords] = {};
      for (std::size_t w = keep_lo; w < keep_hi; ++w) words[w - lo] = old[w - old_lo];
      release();
      std::copy(words, words + kInlineWords, inline_);
    } else if (size_ > kInlineWords && n <= capacity()) {
      // In place: the kept words move (either way, so memmove), the rest is zeroed.
      if (keep_hi > keep_lo) {
        std::memmove(heap_ + (keep_lo - lo), old + (keep_lo - old_lo), (keep_hi - keep_lo) * sizeof(Word));
        std::fill(heap_, heap_ + (keep_lo - lo), Word{0});
        std::fill(heap_ + (keep_hi - lo), heap_ + n, Word{0});
      } else {
        std::fill(heap_, heap_ + n, Word{0});
      }
    } else {
      // Grow geometrically, but never past the universe: a scratch set whose window moves
      // down again and again must not double its block each time.
      const std::size_t universe_words = (universe_ + kWordBits - 1) / kWordBits;
      const std::size_t grown = n <= capacity() ? capacity() : std::min(2 * capacity(), universe_words);
      Word* words = allocate(std::max(n, grown));
      std::fill(words, words + n, Word{0});
      for (std::size_t w = keep_lo; w < keep_hi; ++w) words[w - lo] = old[w - old_lo];
      release();
      heap_ = words;
    }
    base_ = static_cast<std::uint32_t>(lo);
    size_ = static_cast<std::uint32_t>(n);
  }
  /// Widens the stored window to cover words [lo, hi).
  void cover_words(std::size_t lo, std::size_t hi) {
    if (empty()) {
      set_window(lo, hi);
    } else if (lo < base_ || hi > end_word()) {
      set_window(std::min<std::size_t>(lo, base_), std::max(hi, end_word()));
    }
  }
  /// Restores the canonical form: no zero word at either end of the window.
  void trim() {
    const Word* words = data();
    std::size_t last = size_;
    while (last > 0 && words[last - 1] == 0) --last;
    if (last == 0) {
      clear();
      return;
    }
    std::size_t lead = 0;
    while (words[lead] == 0) ++lead;
    if (lead != 0 || last != size_) set_window(base_ + lead, base_ + last);
  }

  void copy_from(const IndexSet& that) {
    universe_ = that.universe_;
    base_ = that.base_;
    size_ = that.size_;
    if (size_ > kInlineWords) {
      heap_ = allocate(size_);
      std::copy(that.heap_, that.heap_ + size_, heap_);
    } else {
      std::copy(that.inline_, that.inline_ + kInlineWords, inline_);
    }
  }
  void steal(IndexSet& that) noexcept {
    universe_ = that.universe_;
    base_ = that.base_;
    size_ = that.size_;
    if (size_ > kInlineWords) {
      heap_ = that.heap_;
    } else {
      std::copy(that.inline_, that.inline_ + kInlineWords, inline_);
    }
    that.size_ = 0;
    that.base_ = 0;
  }

  std::size_t universe_ = 0;
  std::uint32_t base_ = 0;  // word index of the first stored word
  std::uint32_t size_ = 0;  // stored words; canonical: 0, or the first and last are non-zero
  union {
    Word inline_[kInlineWords] = {};
    Word* heap_;
  };
};

}  // namespace collage

namespace std {
template <>
struct hash<collage::IndexSet> {
  std::size_t operator()(const collage::IndexSet& s) const noexcept { return s.hash(); }
};
}  // namespace std
