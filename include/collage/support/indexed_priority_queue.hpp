#pragma once

/// \file
/// IndexedPriorityQueue: a binary min-heap over dense integer ids with decrease-key.

#include <cassert>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "collage/support/index_set.hpp"

namespace collage {

/// A min-heap of ids (dense integers, growing on demand) keyed by a priority, with
/// decrease-key. Ties between equal priorities break by the smaller id, so the pop order is
/// deterministic. `Less` must be a strict weak order on `Priority`.
template <class Priority, class Less = std::less<Priority>>
class IndexedPriorityQueue {
 public:
  IndexedPriorityQueue() = default;
  explicit IndexedPriorityQueue(Less less) : less_(std::move(less)) {}

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  bool contains(std::size_t id) const { return id < position_.size() && position_[id] != npos; }

  /// The priority of an id in the queue.
  const Priority& priority(std::size_t id) const {
    assert(contains(id));
    return heap_[position_[id]].priority;
  }

  /// Inserts `id`, which must not be in the queue.
  void push(std::size_t id, Priority priority) {
    assert(!contains(id));
    if (id >= position_.size()) position_.resize(id + 1, npos);
    position_[id] = heap_.size();
    heap_.push_back(Entry{id, std::move(priority)});
    sift_up(heap_.size() - 1);
  }

  /// Lowers the priority of `id`, which must be in the queue; a priority that is not lower is
  /// ignored. Returns whether the priority changed.
  bool decrease(std::size_t id, Priority priority) {
    assert(contains(id));
    std::size_t pos = position_[id];
    if (!less_(priority, heap_[pos].priority)) return false;
    heap_[pos].priority = std::move(priority);
    sift_up(pos);
    return true;
  }

  /// Inserts `id` or lowers its priority; returns whether the queue changed.
  bool push_or_decrease(std::size_t id, Priority priority) {
    if (contains(id)) return decrease(id, std::move(priority));
    push(id, std::move(priority));
    return true;
  }

  /// The id with the least priority.
  std::size_t top() const {
    assert(!empty());
    return heap_.front().id;
  }

  /// Removes and returns the id with the least priority (and its priority).
  std::pair<std::size_t, Priority> pop() {
    assert(!empty());
    Entry front = std::move(heap_.front());
    position_[front.id] = npos;
    if (heap_.size() > 1) {
      heap_.front() = std::move(heap_.back());
      position_[heap_.front().id] = 0;
      heap_.pop_back();
      sift_down(0);
    } else {
      heap_.pop_back();
    }
    return {front.id, std::move(front.priority)};
  }

  void clear() {
    for (const Entry& e : heap_) position_[e.id] = npos;
    heap_.clear();
  }

 private:
  struct Entry {
    std::size_t id;
    Priority priority;
  };

  bool before(const Entry& a, const Entry& b) const {
    if (less_(a.priority, b.priority)) return true;
    if (less_(b.priority, a.priority)) return false;
    return a.id < b.id;
  }
  void place(std::size_t pos, Entry entry) {
    position_[entry.id] = pos;
    heap_[pos] = std::move(entry);
  }
  void sift_up(std::size_t pos) {
    Entry entry = std::move(heap_[pos]);
    while (pos > 0) {
      std::size_t parent = (pos - 1) / 2;
      if (!before(entry, heap_[parent])) break;
      place(pos, std::move(heap_[parent]));
      pos = parent;
    }
    place(pos, std::move(entry));
  }
  void sift_down(std::size_t pos) {
    Entry entry = std::move(heap_[pos]);
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * pos + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], entry)) break;
      place(pos, std::move(heap_[child]));
      pos = child;
    }
    place(pos, std::move(entry));
  }

  Less less_{};
  std::vector<Entry> heap_;
  std::vector<std::size_t> position_;
};

}  // namespace collage
