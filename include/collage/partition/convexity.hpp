#pragma once

/// \file
/// is_convex: whether a set of nodes can become one kernel without a path that leaves it and comes
/// back (which would make the kernel both feed and consume some outside node).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/support/index_set.hpp"

namespace collage {
namespace detail {

/// is_convex where `for_each_start(taint)` calls taint(o) for each outside node o fed by an inside
/// node (repeats and inside nodes are ignored), e.g. the outputs of the sub-graphs whose union
/// `inside` is.
///
/// Such a path starts at one of those nodes and, as edges go up in index order, never passes the
/// last inside node: the walk marks the outside nodes below it that the starts reach (a bitmap
/// over the index range of `inside`, taken in ascending order, so no stack is needed) and fails
/// when one of them feeds an inside node. O(range / 64 + nodes reached + their out-edges); no
/// allocation for ranges of up to 4,096 nodes.
template <class G, class ForEachStart>
bool is_convex_from(const DataflowGraph<G>& graph, const IndexSet& inside, ForEachStart for_each_start) {
  const std::size_t lo = inside.first_inside();
  if (lo == npos) return true;
  const std::size_t last = inside.last_inside();
  const std::size_t base = lo - lo % 64;  // bit k of the bitmap is node base + k
  const std::size_t words = (last - base) / 64 + 1;
  constexpr std::size_t kInlineWords = 64;
  std::uint64_t inline_words[kInlineWords];
  std::vector<std::uint64_t> heap_words;
  std::uint64_t* reached = inline_words;
  if (words > kInlineWords) {
    heap_words.assign(words, 0);
    reached = heap_words.data();
  } else {
    std::fill(reached, reached + words, std::uint64_t{0});
  }
  auto reach = [&](std::size_t o) {
    if (o < last && !inside.contains(o)) reached[(o - base) / 64] |= std::uint64_t{1} << ((o - base) % 64);
  };
  for_each_start(reach);
  for (std::size_t w = 0; w < words; ++w) {
    // Outputs have larger indexes: a node reached from bit b of word w lands above b in w, or later.
    while (reached[w] != 0) {
      const std::size_t n = base + w * 64 + static_cast<std::size_t>(__builtin_ctzll(reached[w]));
      reached[w] &= reached[w] - 1;
      for (std::size_t o : graph.outputs(n)) {
        if (inside.contains(o)) return false;
        reach(o);
      }
    }
  }
  return true;
}

}  // namespace detail

/// Whether no path leaves `inside` and re-enters it. Walks from the outside nodes that inside
/// nodes feed, within the index range of `inside` (see detail::is_convex_from for the cost).
template <class G>
bool is_convex(const DataflowGraph<G>& graph, const IndexSet& inside) {
  return detail::is_convex_from(graph, inside, [&](auto reach) {
    for (std::size_t i : inside) {
      for (std::size_t o : graph.outputs(i)) reach(o);
    }
  });
}

/// is_convex(graph, inside) where `outputs` holds the outside nodes that inside nodes feed (as
/// SubGraph::output() does), so the inside nodes need not be visited.
template <class G>
bool is_convex(const DataflowGraph<G>& graph, const IndexSet& inside, const IndexSet& outputs) {
  return detail::is_convex_from(graph, inside, [&](auto reach) {
    for (std::size_t o : outputs) reach(o);
  });
}

}  // namespace collage
