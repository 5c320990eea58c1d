#pragma once

/// \file
/// Graphs for the tests of the backends that compile the native fusion rule's partitions (native,
/// cuda): random graphs of mixed operators over small shapes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "native_testing.hpp"

namespace tc::native_testing {

using testing::pick;
using Ints = std::vector<std::int64_t>;

/// Grows a random graph of mixed operators over small shapes.
class RandomGraph {
 public:
  explicit RandomGraph(std::uint64_t seed) : b_(seed) {}

  /// A graph of `ops` random steps from one input; its last node an output, sometimes one more.
  Graph make(int ops) {
    const bool image = pick(rng(), 0, 1) != 0;
    add(image ? b_.input({1, pick(rng(), 2, 5), pick(rng(), 3, 6), pick(rng(), 3, 6)})
              : b_.input({1, pick(rng(), 2, 6), pick(rng(), 3, 9)}));
    for (int k = 0; k < ops; ++k) step();
    const int last = pool_.back();
    b_.output(last);
    if (pick(rng(), 0, 2) == 0 && pool_.size() > 2) b_.output(pool_[pool_.size() / 2]);
    return b_.done();
  }

 private:
  std::mt19937_64& rng() { return b_.rng(); }
  const Shape& shape(int n) const { return b_.shape(n); }
  void add(int n) { pool_.push_back(n); }
  /// Mostly the newest node (so most nodes reach the output), sometimes any.
  int any() {
    if (pick(rng(), 0, 3) != 0) return pool_.back();
    return pool_[static_cast<std::size_t>(pick(rng(), 0, static_cast<std::int64_t>(pool_.size()) - 1))];
  }
  /// A node of the pool whose shape is `s`, or a fresh constant of a shape broadcastable to it.
  int partner(const Shape& s) {
    std::vector<int> same;
    for (int n : pool_) {
      if (shape(n) == s) same.push_back(n);
    }
    if (!same.empty() && pick(rng(), 0, 1) != 0) return same[static_cast<std::size_t>(pick(rng(), 0, static_cast<std::int64_t>(same.size()) - 1))];
    Shape c;
    const auto drop = static_cast<std::size_t>(pick(rng(), 0, static_cast<std::int64_t>(s.size())));
    for (std::size_t d = drop; d < s.size(); ++d) c.push_back(pick(rng(), 0, 1) != 0 ? s[d] : 1);
    return b_.weight(c, 0.5f, 1.5f);
  }

  void step() {
    const int x = any();
    const Shape s = shape(x);
    const auto rank = static_cast<std::int64_t>(s.size());
    if (rank == 0) {  // a full reduction without keepdims
      add(b_.op(Op::add, {x, partner(s)}));
      return;
    }
    Attributes a;
    switch (pick(rng(), 0, 17)) {
      case 0: add(b_.op(Op::relu, {x})); break;
      case 1: add(b_.op(Op::sigmoid, {x})); break;
      case 2: add(b_.op(Op::tanh, {x})); break;
      case 3: add(b_.op(Op::add, {x, partner(s)})); break;
      case 4: add(b_.op(Op::mul, {partner(s), x})); break;
      case 5: add(b_.op(Op::div, {x, partner(s)})); break;
      case 6: add(b_.op(Op::sub, {x, b_.scalar(0.25f)})); break;
      case 7: {
        Ints axes;
        for (std::int64_t d = 0; d < rank; ++d) {
          if (pick(rng(), 0, 1) != 0) axes.push_back(d);
        }
        if (axes.empty()) axes.push_back(rank - 1);
        const Op ops[] = {Op::reduce_mean, Op::reduce_sum, Op::reduce_max};
        add(b_.reduce(ops[pick(rng(), 0, 2)], x, axes, pick(rng(), 0, 3) != 0));
        break;
      }
      case 8: {
        const std::int64_t axis = pick(rng(), 0, rank - 1);
        a.set("axis", axis);
        if (pick(rng(), 0, 1) != 0) {
          add(b_.op(Op::softmax, {x}, a));
        } else {
          const Shape normalized(s.begin() + axis, s.end());
          add(b_.op(Op::layer_norm, {x, b_.weight(normalized)}, a));
        }
        break;
      }
      case 9: {
        Ints perm(static_cast<std::size_t>(rank));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng());
        a.set("perm", perm);
        add(b_.op(Op::transpose, {x}, a));
        break;
      }
      case 10: {
        if (rank < 2) return;
        const auto d = static_cast<std::size_t>(pick(rng(), 0, rank - 2));
        Ints target(s.begin(), s.end());
        target[d] *= target[d + 1];
        target.erase(target.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        a.set("shape", target);
        add(b_.op(Op::reshape, {x}, a));
        break;
      }
      case 11: {
        Ints pads(static_cast<std::size_t>(2 * rank), 0);
        pads[static_cast<std::size_t>(pick(rng(), 0, 2 * rank - 1))] = pick(rng(), 1, 2);
        a.set("pads", pads);
        add(b_.op(Op::pad, {x}, a));
        break;
      }
      case 12: {
        a.set("axis", pick(rng(), 0, rank - 1));
        add(b_.op(Op::concat, {x, b_.op(Op::neg, {x})}, a));
        break;
      }
      case 13: {
        Ints starts(static_cast<std::size_t>(rank), 0), ends(s.begin(), s.end()), steps(static_cast<std::size_t>(rank), 1);
        const auto d = static_cast<std::size_t>(pick(rng(), 0, rank - 1));
        if (s[d] < 2) return;
        starts[d] = 1;
        steps[d] = pick(rng(), 1, 2);
        a.set("starts", starts);
        a.set("ends", ends);
        a.set("steps", steps);
        add(b_.op(Op::slice, {x}, a));
        break;
      }
      case 14: {  // matmul with a weight
        const std::int64_t k = s.back();
        add(b_.op(Op::matmul, {x, b_.weight({k, pick(rng(), 2, 7)})}));
        break;
      }
      case 15: {
        if (rank != 4) return;
        a.set("pads", Ints{1, 1, 1, 1});
        const std::int64_t c = s[1];
        const bool depthwise = pick(rng(), 0, 1) != 0;
        if (depthwise) a.set("group", c);
        const int w = b_.weight({depthwise ? c : pick(rng(), 2, 5), depthwise ? 1 : c, 3, 3});
        add(b_.op(Op::conv, {x, w, b_.weight({b_.shape(w)[0]})}, a));
        break;
      }
      case 16: {
        if (rank != 4) return;
        if (pick(rng(), 0, 1) != 0) {
          add(b_.op(Op::global_average_pool, {x}));
        } else {
          a.set("kernel_shape", Ints{2, 2});
          a.set("pads", Ints{0, 0, 1, 1});
          add(b_.op(pick(rng(), 0, 1) != 0 ? Op::max_pool : Op::average_pool, {x}, a));
        }
        break;
      }
      default: {
        if (rank < 2) return;
        const Shape c{s[1]};
        add(b_.op(Op::batch_norm, {x, b_.weight(c), b_.weight(c), b_.weight(c), b_.weight(c, 0.5f, 2.0f)}));
        break;
      }
    }
  }

  testing::GraphBuilder b_;
  std::vector<int> pool_;
};

}  // namespace tc::native_testing
