#pragma once

/// \file
/// structural_key: a canonical text of a candidate's extracted function, equal for candidates
/// that would compile to the same kernel, so their cost is estimated once.

#include <algorithm>
#include <cassert>
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

#include <boost/container/small_vector.hpp>

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

/// Positions of a function's parameters by graph index: a linear scan while there are few, sorted
/// (graph index, position) pairs beyond that.
class ParamPositions {
 public:
  template <class Params>
  explicit ParamPositions(const Params& params) : params_(params.begin(), params.end()) {
    if (params_.size() > kScanned) {
      for (std::size_t k = 0; k < params_.size(); ++k) sorted_.emplace_back(params_[k], k);
      std::sort(sorted_.begin(), sorted_.end());
    }
  }
  /// The position of graph index `i`, or npos.
  std::size_t find(std::size_t i) const {
    if (sorted_.empty()) {
      for (std::size_t k = 0; k < params_.size(); ++k) {
        if (params_[k] == i) return k;
      }
      return npos;
    }
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(i, std::size_t{0}));
    return (it != sorted_.end() && it->first == i) ? it->second : npos;
  }

 private:
  static constexpr std::size_t kScanned = 16;
  boost::container::small_vector<std::size_t, kScanned> params_;
  std::vector<std::pair<std::size_t, std::size_t>> sorted_;
};

/// The position of graph index `i` in the ascending list `body`, or npos.
template <class Body>
std::size_t body_position(const Body& body, std::size_t i) {
  auto it = std::lower_bound(body.begin(), body.end(), i);
  return (it != body.end() && *it == i) ? static_cast<std::size_t>(it - body.begin()) : npos;
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
template <class Body>
void append_groups(std::string& key, const std::vector<NestedSubGraph>& nested, std::size_t depth, const Body& body) {
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
      append_ref(key, 'b', body_position(body, i));
    }
    key += "}\n";
    append_groups(key, n.sub_graph.nested(), depth + 1, body);
  }
}

/// The key of structural_key() from the function's parameters (first-use order), body
/// (ascending) and results (exit nodes, ascending).
template <class G, class Params, class Body, class Results>
std::string structural_key(const DataflowGraph<G>& graph, const Candidate& candidate, const Params& params,
                           const Body& body, const Results& results) {
  assert(std::is_sorted(body.begin(), body.end()) && "structural_key: the body must be in ascending order");
  const ParamPositions param_pos(params);
  std::string key;
  key.reserve(32 * (params.size() + body.size() + 1) + 8 * candidate.sub_graph.nested().size());
  key += "target ";
  append_field(key, candidate.target);
  key += '\n';
  for (std::size_t p : params) {
    key += "param ";
    append_field(key, graph.signature(p));
    key += '\n';
  }
  for (std::size_t i : body) {
    key += "body ";
    append_field(key, graph.signature(i));
    key += " (";
    bool first = true;
    for (std::size_t j : graph.inputs(i)) {
      if (!first) key += ',';
      first = false;
      if (std::size_t k = body_position(body, j); k != npos) {
        append_ref(key, 'b', k);
      } else if (std::size_t q = param_pos.find(j); q != npos) {
        append_ref(key, 'p', q);
      } else {
        key += 'i';
        append_field(key, graph.signature(j));
      }
    }
    key += ")\n";
  }
  key += "results";
  for (std::size_t r : results) {
    key += ' ';
    append_ref(key, 'b', body_position(body, r));
  }
  key += '\n';
  append_groups(key, candidate.sub_graph.nested(), 0, body);
  return key;
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
  return detail::structural_key(graph, candidate, view.params, view.body, view.results);
}

/// structural_key() without an extraction view: the parameters and body are laid out here as
/// extract() would, in small buffers.
template <class G>
std::string structural_key(const DataflowGraph<G>& graph, const Candidate& candidate) {
  const SubGraph& sub = candidate.sub_graph;
  boost::container::small_vector<std::size_t, 32> body(sub.inside().begin(), sub.inside().end());
  constexpr std::size_t kLinearDedupe = 16;  // repeats found by a linear scan; beyond, through `seen`
  boost::container::small_vector<std::size_t, kLinearDedupe> params;
  IndexSet seen;
  for (std::size_t i : body) {
    for (std::size_t j : graph.inputs(i)) {
      if (graph.is_inlinable(j) || sub.inside().contains(j)) continue;
      if (params.size() < kLinearDedupe) {
        if (std::find(params.begin(), params.end(), j) != params.end()) continue;
      } else {
        if (seen.universe() == 0) {
          seen = IndexSet(graph.size());
          for (std::size_t p : params) seen.add(p);
        }
        if (seen.contains(j)) continue;
        seen.add(j);
      }
      params.push_back(j);
    }
  }
  return detail::structural_key(graph, candidate, params, body, sub.exit());
}

}  // namespace collage
