#pragma once

/// \file
/// CachingOracle<G>: remembers an oracle's answers by structural key, so identical sub-graphs
/// anywhere in a model (twelve identical transformer layers) are estimated once.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"
#include "collage/cost/structural_key.hpp"

namespace collage {

/// Wraps an oracle and answers every candidate whose structural_key() it has seen from memory.
///
/// The wrapped oracle is borrowed (a reference that must outlive the cache) or owned (a
/// unique_ptr). Errors and exceptions of the wrapped oracle are cached like costs, so a backend
/// that cannot handle a sub-graph is asked once, not once per copy; safe_estimate() then turns
/// the cached Error into Invalid. Unknown answers are not cached (they may come from a spent
/// budget that is later renewed), so they are asked again. The key does not name the graph, so
/// one cache can serve several graphs (of the same IR). stats() counts hits (including repeats
/// within one batch) and misses.
template <class G>
class CachingOracle final : public detail::OracleWrapper<G> {
 public:
  /// Caches answers of `inner`, which must outlive this oracle.
  explicit CachingOracle(CostOracle<G>& inner) : detail::OracleWrapper<G>(inner) {}
  /// Caches answers of `inner`, which this oracle owns.
  explicit CachingOracle(std::unique_ptr<CostOracle<G>> inner) : detail::OracleWrapper<G>(std::move(inner)) {}
  /// Caches answers of another cache (wraps it; a cache is not copyable).
  explicit CachingOracle(CachingOracle& inner) : CachingOracle(static_cast<CostOracle<G>&>(inner)) {}

  /// "caching(<wrapped oracle>)".
  std::string name() const override { return "caching(" + this->inner().name() + ")"; }

  /// Number of cached keys.
  std::size_t size() const { return cache_.size(); }
  /// Forgets every cached answer (the counters stay).
  void clear() { cache_.clear(); }
  /// The cached answer for a structural key, or nullptr.
  const Result<Measurement>* find(const std::string& key) const {
    auto it = cache_.find(key);
    return it == cache_.end() ? nullptr : &it->second;
  }

 private:
  /// Answers cached keys from memory and passes the first candidate of every other key on to the
  /// wrapped oracle, all in one batch. Keys are made once per group of structurally equal
  /// candidates (group_by_structure()).
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    this->own_.calls += candidates.size();
    return answer(graph, candidates, true);
  }

  /// Cached keys from memory, what the wrapped oracle knows for the others.
  std::vector<Result<Measurement>> do_known_batch(const DataflowGraph<G>& graph,
                                                  const std::vector<const Candidate*>& candidates) override {
    return answer(graph, candidates, false);
  }

  /// Cached answers; the first candidate of every other key asked below (ask_below()), cached.
  std::vector<Result<Measurement>> answer(const DataflowGraph<G>& graph, const std::vector<const Candidate*>& candidates,
                                          bool measuring) {
    KeyedBatch<Result<Measurement>> batch = split_by_key<Result<Measurement>>(
        graph, candidates, [&](const std::string& key) -> std::optional<Result<Measurement>> {
          auto hit = cache_.find(key);
          if (hit == cache_.end()) return std::nullopt;
          return hit->second;
        });
    // Every candidate but the first of each missing key is a hit.
    this->own_.cache_hits += candidates.size() - batch.misses.size();
    if (measuring) this->own_.cache_misses += batch.misses.size();
    const std::vector<Result<Measurement>> answers = this->ask_below(graph, batch.misses, measuring);
    for (std::size_t m = 0; m < answers.size(); ++m) {
      if (cacheable(answers[m])) cache_.emplace(std::move(batch.miss_keys[m]), answers[m]);
    }
    return batch.per_candidate(answers);
  }

  static bool cacheable(const Result<Measurement>& m) { return !m.ok() || !m->cost.is_unknown(); }

  std::unordered_map<std::string, Result<Measurement>> cache_;
};

}  // namespace collage
