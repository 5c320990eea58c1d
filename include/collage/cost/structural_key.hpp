#pragma once

/// \file
/// structural_key: a canonical text of a candidate's extracted function, equal for candidates
/// that would compile to the same kernel, so their cost is estimated once.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/extraction.hpp"
#include "collage/partition/sub_graph.hpp"

namespace collage {

namespace detail {

/// Appends the decimal digits of `n` (without a temporary string).
inline void append_number(std::string& out, std::size_t n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, static_cast<std::size_t>(end - digits));
}

/// Appends `s` as "<length>:<bytes>", so that no string can be mistaken for the text around it.
inline void append_field(std::string& out, std::string_view s) {
  append_number(out, s.size());
  out += ':';
  out.append(s.data(), s.size());
}

/// Sorted (graph index, position) pairs for lookups by graph index.
inline std::vector<std::pair<std::size_t, std::size_t>> positions_of(const std::vector<std::size_t>& indexes) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  out.reserve(indexes.size());
  for (std::size_t k = 0; k < indexes.size(); ++k) out.emplace_back(indexes[k], k);
  std::sort(out.begin(), out.end());
  return out;
}

/// The position of graph index `i` in `positions`, or npos.
inline std::size_t position_in(const std::vector<std::pair<std::size_t, std::size_t>>& positions, std::size_t i) {
  auto it = std::lower_bound(positions.begin(), positions.end(), std::make_pair(i, std::size_t{0}));
  return (it != positions.end() && it->first == i) ? it->second : npos;
}

/// Appends "<kind><position>", or "?" for npos.
inline void append_ref(std::string& out, char kind, std::size_t position) {
  if (position == npos) {
    out += '?';
    return;
  }
  out += kind;
  append_number(out, position);
}

/// Appends "group <depth> <attrs> {b<k>,...}" lines for `nested` and, depth-first, their own nested groups.
inline void append_groups(std::string& key, const std::vector<NestedSubGraph>& nested, std::size_t depth,
                          const std::vector<std::pair<std::size_t, std::size_t>>& body_pos) {
  for (const NestedSubGraph& n : nested) {
    key += "group ";
    append_number(key, depth);
    for (const auto& [name, value] : n.attrs) {
      key += ' ';
      append_field(key, name);
      key += '=';
      append_field(key, value);
    }
    key += " {";
    bool first = true;
    for (std::size_t i : n.sub_graph.inside()) {
      if (!first) key += ',';
      first = false;
      append_ref(key, 'b', position_in(body_pos, i));
    }
    key += "}\n";
    append_groups(key, n.sub_graph.nested(), depth + 1, body_pos);
  }
}

}  // namespace detail

/// The structure of `candidate`'s function as text, up to renaming of nodes: its target; the
/// signature of each parameter, in order; for each body node in topological order its signature
/// and its operands, written as parameter positions (p<j>), body positions (b<k>) or, for inlined
/// nodes, their signatures; the results as body positions; and the nested groups (attributes and
/// members as body positions, depth-first). Candidates with equal keys compute the same function
/// on the same target, so one cost serves them all; a different op, signature (shape), wiring,
/// target or nested attribute gives a different key. `view` must be extract(graph,
/// candidate.sub_graph). The rule name is not part of the key.
///
/// A parameter is written as its producer's signature, so with the default signature
/// ("op_name/kind") two blocks fed by different ops get different keys.
template <class G>
std::string structural_key(const DataflowGraph<G>& graph, const Candidate& candidate, const ExtractionView& view) {
  const auto param_pos = detail::positions_of(view.params);
  const auto body_pos = detail::positions_of(view.body);
  std::string key;
  key.reserve(64 * (view.params.size() + view.body.size() + 1));
  key += "target ";
  detail::append_field(key, candidate.target);
  key += '\n';
  for (std::size_t p : view.params) {
    key += "param ";
    detail::append_field(key, graph.signature(p));
    key += '\n';
  }
  for (std::size_t i : view.body) {
    key += "body ";
    detail::append_field(key, graph.signature(i));
    key += " (";
    bool first = true;
    for (std::size_t j : graph.inputs(i)) {
      if (!first) key += ',';
      first = false;
      if (std::size_t k = detail::position_in(body_pos, j); k != npos) {
        detail::append_ref(key, 'b', k);
      } else if (std::size_t q = detail::position_in(param_pos, j); q != npos) {
        detail::append_ref(key, 'p', q);
      } else {
        key += 'i';
        detail::append_field(key, graph.signature(j));
      }
    }
    key += ")\n";
  }
  key += "results";
  for (std::size_t r : view.results) {
    key += ' ';
    detail::append_ref(key, 'b', detail::position_in(body_pos, r));
  }
  key += '\n';
  detail::append_groups(key, candidate.sub_graph.nested(), 0, body_pos);
  return key;
}

/// structural_key() with the extraction view computed here.
template <class G>
std::string structural_key(const DataflowGraph<G>& graph, const Candidate& candidate) {
  return structural_key(graph, candidate, extract(graph, candidate.sub_graph));
}

}  // namespace collage
