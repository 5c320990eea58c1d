#pragma once

/// \file
/// ChunkedVector: a growing sequence whose elements never move, indexed in constant time.

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace collage {
namespace detail {

/// A sequence of T that only grows at the back, stored in chunks of 2^kChunkBits elements that
/// are never moved: references stay valid while elements are added (as in a std::deque), and an
/// index is found with a shift and a mask whatever sizeof(T) is (a deque divides by its block's
/// element count, which is a true division for most element sizes).
template <class T, std::size_t kChunkBits = 8>
class ChunkedVector {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  T& back() { return (*this)[size_ - 1]; }

  void push_back(T value) {
    if ((size_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<T[]>(kChunk));
    chunks_.back()[size_ & (kChunk - 1)] = std::move(value);
    ++size_;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace detail
}  // namespace collage
