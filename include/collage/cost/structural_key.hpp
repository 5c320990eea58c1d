#pragma once

/// \file
/// structural_key: a canonical text of a candidate's extracted function, equal for candidates
/// that would compile to the same kernel, so their cost is estimated once.

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/extraction.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/support/identity_index.hpp"

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

/// The fixed words of a structural key's text.
enum class KeyWord : std::uint8_t {
  target, param, body, open_args, comma, close_args, line_end,
  results, space, group, equals, open_members, close_members, inlined
};

/// How a fixed word is spelled in the text.
inline const char* key_word_text(KeyWord w) {
  static constexpr const char* kText[] = {"target ", "param ", "body ", " (", ",", ")", "\n",
                                          "results", " ", "group ", "=", " {", "}", "i"};
  return kText[static_cast<std::size_t>(w)];
}

/// Writes a structural key as text (the key structural_key() returns).
template <class G>
class KeyTextWriter {
 public:
  KeyTextWriter(const DataflowGraph<G>& graph, std::string& out) : graph_(graph), out_(out) {}
  void word(KeyWord w) { out_ += key_word_text(w); }
  /// A string of the candidate's (target, attribute name or value).
  void field(std::string_view s) { append_field(out_, s); }
  void signature(std::size_t node) { append_field(out_, graph_.signature(node)); }
  void number(std::size_t n) { append_number(out_, n); }
  /// "<kind><position>", or "?" for npos.
  void ref(char kind, std::size_t position) {
    if (position == npos) {
      out_ += '?';
      return;
    }
    out_ += kind;
    append_number(out_, position);
  }

 private:
  const DataflowGraph<G>& graph_;
  std::string& out_;
};

/// Appends "group <depth> <attrs> {b<k>,...}" lines for `nested` and, depth-first, their own nested groups.
template <class Writer, class Body>
void write_groups(Writer& w, const NestedGroups& nested, std::size_t depth, const Body& body) {
  for (const NestedSubGraph& n : nested) {
    w.word(KeyWord::group);
    w.number(depth);
    for (const auto& [name, value] : n.attrs) {
      w.word(KeyWord::space);
      w.field(name);
      w.word(KeyWord::equals);
      w.field(value);
    }
    w.word(KeyWord::open_members);
    bool first = true;
    for (std::size_t i : n.sub_graph.inside()) {
      if (!first) w.word(KeyWord::comma);
      first = false;
      w.ref('b', body_position(body, i));
    }
    w.word(KeyWord::close_members);
    w.word(KeyWord::line_end);
    write_groups(w, n.sub_graph.nested(), depth + 1, body);
  }
}

/// Writes the key of structural_key() from the function's parameters (first-use order), body
/// (ascending) and results (exit nodes, ascending).
template <class Writer, class G, class Params, class Body, class Results>
void write_structure(Writer& w, const DataflowGraph<G>& graph, const Candidate& candidate, const Params& params,
                     const Body& body, const Results& results) {
  assert(std::is_sorted(body.begin(), body.end()) && "structural_key: the body must be in ascending order");
  const ParamPositions param_pos(params);
  w.word(KeyWord::target);
  w.field(candidate.target);
  w.word(KeyWord::line_end);
  for (std::size_t p : params) {
    w.word(KeyWord::param);
    w.signature(p);
    w.word(KeyWord::line_end);
  }
  for (std::size_t i : body) {
    w.word(KeyWord::body);
    w.signature(i);
    w.word(KeyWord::open_args);
    bool first = true;
    for (std::size_t j : graph.inputs(i)) {
      if (!first) w.word(KeyWord::comma);
      first = false;
      if (std::size_t k = body_position(body, j); k != npos) {
        w.ref('b', k);
      } else if (std::size_t q = param_pos.find(j); q != npos) {
        w.ref('p', q);
      } else {
        w.word(KeyWord::inlined);
        w.signature(j);
      }
    }
    w.word(KeyWord::close_args);
    w.word(KeyWord::line_end);
  }
  w.word(KeyWord::results);
  for (std::size_t r : results) {
    w.word(KeyWord::space);
    w.ref('b', body_position(body, r));
  }
  w.word(KeyWord::line_end);
  write_groups(w, candidate.sub_graph.nested(), 0, body);
}

/// write_structure() with the parameters and body laid out here by extract()'s layout
/// (detail::lay_out_operands), in small buffers.
template <class Writer, class G>
void write_structure(Writer& w, const DataflowGraph<G>& graph, const Candidate& candidate) {
  const SubGraph& sub = candidate.sub_graph;
  boost::container::small_vector<std::size_t, 32> body(sub.inside().begin(), sub.inside().end());
  boost::container::small_vector<std::size_t, 16> params;
  lay_out_operands(graph, sub.inside(), body, params, static_cast<NoInlined*>(nullptr));
  write_structure(w, graph, candidate, params, body, sub.exit());
}

/// Dense ids 0, 1, ... of the distinct strings seen, which must outlive it: a linear scan while
/// there are few (the targets and attributes of a batch, typically), a hash map beyond.
class StringIds {
 public:
  std::uint32_t id(std::string_view s) {
    if (by_hash_.empty()) {
      for (std::size_t k = 0; k < few_.size(); ++k) {
        if (few_[k] == s) return static_cast<std::uint32_t>(k);
      }
      if (few_.size() < kFew) {
        few_.push_back(s);
        return static_cast<std::uint32_t>(few_.size() - 1);
      }
      for (std::size_t k = 0; k < few_.size(); ++k) by_hash_.emplace(few_[k], static_cast<std::uint32_t>(k));
    }
    return by_hash_.try_emplace(s, static_cast<std::uint32_t>(by_hash_.size())).first->second;
  }

 private:
  static constexpr std::size_t kFew = 16;
  std::vector<std::string_view> few_;
  std::unordered_map<std::string_view, std::uint32_t> by_hash_;
};

/// Key tokens, one group's after another.
class KeyTokens {
 public:
  void push(std::uint64_t token) { data_.push_back(token); }
  std::size_t size() const { return data_.size(); }
  /// Forgets the tokens from `n` on.
  void truncate(std::size_t n) { data_.resize(n); }
  /// Whether tokens [a, a + n) equal tokens [b, b + n).
  bool same(std::size_t a, std::size_t b, std::size_t n) const {
    const auto at = [&](std::size_t k) { return data_.begin() + static_cast<std::ptrdiff_t>(k); };
    return std::equal(at(a), at(a + n), at(b));
  }
  /// A hash of tokens [from, size()).
  std::size_t hash_from(std::size_t from) const {
    std::size_t h = data_.size() - from;
    for (std::size_t t = from; t < data_.size(); ++t) h = h * 0x9E3779B97F4A7C15ULL ^ data_[t];
    return h;
  }

 private:
  std::vector<std::uint64_t> data_;
};

/// Writes a structural key as a list of tokens for comparison within one batch over one graph:
/// signatures as the graph's signature ids, strings as ids of `strings`. Two candidates with the
/// same tokens have the same text key, and making the tokens costs a fraction of the text. The
/// separators (commas, spaces, '=' and line ends) are left out: the other words and the types of
/// the tokens fix where write_structure() puts them.
template <class G>
class KeyTokenWriter {
 public:
  /// Appends to `out`; `strings` numbers the distinct strings seen.
  KeyTokenWriter(const DataflowGraph<G>& graph, KeyTokens& out, StringIds& strings)
      : graph_(graph), out_(out), strings_(strings) {}
  void word(KeyWord w) {
    if (w == KeyWord::comma || w == KeyWord::space || w == KeyWord::equals || w == KeyWord::line_end) return;
    push(kWord, static_cast<std::uint64_t>(w));
  }
  void field(std::string_view s) {
    push(kField, strings_.id(s));
  }
  void signature(std::size_t node) { push(kSignature, graph_.signature_id(node)); }
  void number(std::size_t n) { push(kNumber, n); }
  void ref(char kind, std::size_t position) {
    push(kRef, static_cast<std::uint64_t>(static_cast<unsigned char>(kind)) << 40 |
                   (position == npos ? kNoPosition : position));
  }

 private:
  // A token is its type (top byte) and its value.
  enum Type : std::uint64_t { kWord = 1, kField, kSignature, kNumber, kRef };
  static constexpr std::uint64_t kNoPosition = (std::uint64_t{1} << 40) - 1;
  void push(Type type, std::uint64_t value) {
    assert(value < (std::uint64_t{1} << 56));
    out_.push(static_cast<std::uint64_t>(type) << 56 | value);
  }

  const DataflowGraph<G>& graph_;
  KeyTokens& out_;
  StringIds& strings_;
};

}  // namespace detail

/// The structure of `candidate`'s function as text, up to renaming of nodes: its target; the
/// signature of each parameter, in order; for each body node in topological order its signature
/// and its operands, written as parameter positions (p<j>), body positions (b<k>) or, for inlined
/// nodes, their signatures; the results as body positions; and the nested groups (attributes and
/// members as body positions, depth-first). Candidates with equal keys compute the same function
/// on the same target, so one cost serves them all; a different op, signature (shape), wiring,
/// target or nested attribute gives a different key. `function` must be extract(graph,
/// candidate.sub_graph). The rule name is not part of the key.
///
/// A parameter is written as its producer's signature, so with the default signature
/// ("op_name/kind") two blocks fed by different ops get different keys.
template <class G>
std::string structural_key(const DataflowGraph<G>& graph, const Candidate& candidate,
                           const ExtractedFunction& function) {
  std::string key;
  key.reserve(32 * (function.params.size() + function.body.size() + 1) + 8 * candidate.sub_graph.nested().size());
  detail::KeyTextWriter<G> writer(graph, key);
  detail::write_structure(writer, graph, candidate, function.params, function.body, function.results);
  return key;
}

/// structural_key() without an extracted function: the parameters and body are laid out here as
/// extract() lays them out, in small buffers.
template <class G>
std::string structural_key(const DataflowGraph<G>& graph, const Candidate& candidate) {
  std::string key;
  key.reserve(64 * (candidate.sub_graph.size() + 1));
  detail::KeyTextWriter<G> writer(graph, key);
  detail::write_structure(writer, graph, candidate);
  return key;
}

/// Candidates of one batch grouped by structure (see group_by_structure()).
struct StructureGroups {
  /// The group of each candidate; groups are numbered by first appearance.
  std::vector<std::size_t> group_of;
  /// The first candidate of each group.
  std::vector<std::size_t> first;
};

/// Groups `candidates` (over `graph`) by structural_key(): candidates in one group have equal
/// keys, and candidates in different groups different ones. Compares the keys as tokens (ids of
/// signatures and strings) rather than text, so a caller that needs the text makes it once per
/// group: on a model of repeated layers, a few dozen keys for thousands of candidates.
template <class G>
StructureGroups group_by_structure(const DataflowGraph<G>& graph, const std::vector<const Candidate*>& candidates) {
  StructureGroups groups;
  groups.group_of.reserve(candidates.size());
  detail::StringIds strings;
  detail::KeyTokens tokens;  // every group's tokens, one after another, then the current candidate's
  std::vector<std::size_t> starts{0};  // group g's tokens: [starts[g], starts[g + 1])
  detail::IdentityIndex index;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const std::size_t start = tokens.size();
    detail::KeyTokenWriter<G> writer(graph, tokens, strings);
    detail::write_structure(writer, graph, *candidates[k]);
    const std::size_t length = tokens.size() - start;
    const std::size_t hash = tokens.hash_from(start);
    const std::size_t group = index.find(hash, [&](std::size_t g) {
      return starts[g + 1] - starts[g] == length && tokens.same(starts[g], start, length);
    });
    if (group != npos) {
      tokens.truncate(start);
      groups.group_of.push_back(group);
      continue;
    }
    groups.group_of.push_back(groups.first.size());
    groups.first.push_back(k);
    starts.push_back(tokens.size());
    index.push(hash);
  }
  return groups;
}

/// A batch split against a store of answers kept by structural key (a cache, a database): each
/// group of structurally equal candidates is answered by the store, or is one miss to be measured
/// through its first candidate. Groups have distinct keys, so no key is missed twice.
template <class Answer>
struct KeyedBatch {
  StructureGroups groups;
  std::vector<std::optional<Answer>> stored;  // by group: the store's answer
  std::vector<std::size_t> miss_of;           // by group: its index in `misses`, or npos
  std::vector<const Candidate*> misses;       // the first candidate of each group the store lacks
  std::vector<std::string> miss_keys;         // by miss: its key

  /// Number of candidates the store answered.
  std::size_t stored_candidates() const {
    std::size_t n = 0;
    for (std::size_t g : groups.group_of) n += stored[g] ? 1 : 0;
    return n;
  }
  /// An answer per candidate, in batch order: the store's, or its group's in `answers` (those of
  /// `misses`, in order).
  std::vector<Answer> per_candidate(const std::vector<Answer>& answers) const {
    std::vector<Answer> out;
    out.reserve(groups.group_of.size());
    for (std::size_t g : groups.group_of) out.push_back(stored[g] ? *stored[g] : answers[miss_of[g]]);
    return out;
  }
};

/// Splits `candidates` against a store: `lookup(key)` is the stored answer (an
/// std::optional<Answer>) for the key `prefix` + structural_key(), made once per group.
template <class Answer, class G, class Lookup>
KeyedBatch<Answer> split_by_key(const DataflowGraph<G>& graph, const std::vector<const Candidate*>& candidates,
                                Lookup lookup, const std::string& prefix = {}) {
  KeyedBatch<Answer> batch;
  batch.groups = group_by_structure(graph, candidates);
  const std::size_t n = batch.groups.first.size();
  batch.stored.resize(n);
  batch.miss_of.assign(n, npos);
  for (std::size_t g = 0; g < n; ++g) {
    const Candidate* first = candidates[batch.groups.first[g]];
    std::string key = prefix + structural_key(graph, *first);
    batch.stored[g] = lookup(key);
    if (batch.stored[g]) continue;
    batch.miss_of[g] = batch.misses.size();
    batch.misses.push_back(first);
    batch.miss_keys.push_back(std::move(key));
  }
  return batch;
}

}  // namespace collage
