#pragma once

/// \file
/// IndexSpan: a read-only view of a contiguous run of indexes (C++17 has no std::span).

#include <cassert>
#include <cstddef>
#include <vector>

namespace collage {

/// A non-owning view of `size()` indexes; valid while the owner is unchanged.
class IndexSpan {
 public:
  IndexSpan() = default;
  IndexSpan(const std::size_t* first, std::size_t size) : first_(first), size_(size) {}
  IndexSpan(const std::vector<std::size_t>& v) : first_(v.data()), size_(v.size()) {}  // NOLINT: implicit view

  const std::size_t* begin() const { return first_; }
  const std::size_t* end() const { return first_ + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t operator[](std::size_t i) const {
    assert(i < size_);
    return first_[i];
  }
  std::size_t front() const { return (*this)[0]; }
  std::size_t back() const { return (*this)[size_ - 1]; }
  std::vector<std::size_t> to_vector() const { return std::vector<std::size_t>(begin(), end()); }

 private:
  const std::size_t* first_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace collage
