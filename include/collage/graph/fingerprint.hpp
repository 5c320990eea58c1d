#pragma once

/// \file
/// GraphFingerprint: what identifies a DataflowGraph for the results made over it (its size and a
/// hash of its structure), so that a partitioning, trace or report used with another graph is an
/// error rather than a crash or a silently wrong answer.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collage/support/result.hpp"

namespace collage {

/// A graph's node count and a 64-bit hash of its structure: each node's inputs (by post-DFS
/// index, in argument order), op name, op kind and flags (result, inlinable, tuple, projection,
/// constant, needs a kernel), in post-DFS order. Building a DataflowGraph twice over the same IR
/// gives the same fingerprint; graphs that differ in any of these give different ones (but for
/// hash collisions). The default value (0 nodes, hash 0) means "not recorded".
struct GraphFingerprint {
  std::size_t nodes = 0;
  std::uint64_t hash = 0;

  /// Whether this fingerprint was recorded (a default one was not).
  bool recorded() const { return nodes != 0 || hash != 0; }
  /// The hash as 16 lower-case hex digits.
  std::string hash_text() const {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(16, '0');
    for (std::size_t k = 0; k < 16; ++k) out[15 - k] = kHex[(hash >> (4 * k)) & 0xF];
    return out;
  }
  /// "N nodes, structure HHHHHHHHHHHHHHHH".
  std::string to_string() const { return std::to_string(nodes) + " nodes, structure " + hash_text(); }

  friend bool operator==(const GraphFingerprint& a, const GraphFingerprint& b) {
    return a.nodes == b.nodes && a.hash == b.hash;
  }
  friend bool operator!=(const GraphFingerprint& a, const GraphFingerprint& b) { return !(a == b); }
};

/// The hash hash_text() wrote as `text` (16 hex digits), or nothing.
inline std::optional<std::uint64_t> parse_fingerprint_hash(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t h = 0;
  for (char ch : text) {
    int d = -1;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    if (d < 0) return std::nullopt;
    h = h << 4 | static_cast<std::uint64_t>(d);
  }
  return h;
}

/// An ErrorCode::wrong_graph Error when `made` (the fingerprint a result, trace or report was made
/// over) is recorded and is not `graph`'s: "<what> was made over a graph of ..., not this one of
/// ...". `what` names the caller and the object, e.g. "to_json: the partition result".
inline std::optional<Error> check_same_graph(const GraphFingerprint& made, const GraphFingerprint& graph,
                                             std::string_view what) {
  if (!made.recorded() || made == graph) return std::nullopt;
  return Error{ErrorCode::wrong_graph, std::string(what) + " was made over a graph of " + made.to_string() +
                                           ", not this one of " + graph.to_string()};
}

namespace detail {

/// One step of the fingerprint's hash (the finaliser of SplitMix64 over the running value and
/// `value`).
constexpr std::uint64_t fingerprint_mix(std::uint64_t h, std::uint64_t value) {
  std::uint64_t z = h ^ (value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a of `text`: an op name's share of the fingerprint.
constexpr std::uint64_t fingerprint_text(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : text) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  return h;
}

}  // namespace detail
}  // namespace collage
