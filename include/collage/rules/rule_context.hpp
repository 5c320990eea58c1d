#pragma once

/// \file
/// RuleContext: what a rule's candidates() call gets besides the graph and the target: the
/// depth bound and config an enclosing rule will apply anyway, and the budget shared by every rule
/// of one collection of candidates (with the warnings of the rules it stopped).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/partition/sub_graph_config.hpp"

namespace collage {

/// Limits on generating candidates, shared by the rules of every spec of one collection
/// (collect_candidates(), partition()). Rules that propose a bounded number of candidates per node
/// (operator predicates, kinds, patterns, maximal regions) need none; the growing rules (combine,
/// combine_split_bounded), whose joins can multiply (a tuple of many fields, a node of many
/// consumers), stop at the first limit reached and say which in a warning. A limit of 0 is off.
struct CandidateBudget {
  /// Most joins all growing rules together may build.
  std::size_t max_candidates = 1000000;
  /// Most joins one growing rule may build in one run.
  std::size_t max_candidates_per_rule = 250000;
  /// About how many MiB the joins may take, all rules together.
  std::size_t max_memory_mib = 2048;
  /// Wall-clock seconds for the whole collection.
  double max_seconds = 10.0;
};

/// One collection of candidates under a CandidateBudget: what has been spent, and the warnings of
/// the rules that stopped. One serves one thread.
class CandidateRun {
 public:
  explicit CandidateRun(const CandidateBudget& budget = {})
      : budget_(budget), started_(std::chrono::steady_clock::now()) {}

  const CandidateBudget& budget() const { return budget_; }

  /// Records a join built by a growing rule, of about `bytes` bytes.
  void add_join(std::size_t bytes) {
    ++joins_;
    bytes_ += bytes;
  }
  /// Joins built so far, all rules together.
  std::size_t joins() const { return joins_; }
  /// Bytes of those joins (an estimate).
  std::size_t bytes() const { return bytes_; }

  /// Why a growing rule that has built `rule_joins` joins in this run must stop before the next
  /// one ("" when it need not): the limit reached, e.g. "max_candidates_per_rule (250000)". Reads
  /// the clock once in `kClockStride` calls.
  std::string stop_reason(std::size_t rule_joins) {
    if (budget_.max_candidates_per_rule != 0 && rule_joins >= budget_.max_candidates_per_rule) {
      return "max_candidates_per_rule (" + std::to_string(budget_.max_candidates_per_rule) + ")";
    }
    if (budget_.max_candidates != 0 && joins_ >= budget_.max_candidates) {
      return "max_candidates (" + std::to_string(budget_.max_candidates) + ", all rules together)";
    }
    if (budget_.max_memory_mib != 0 && (bytes_ >> 20) >= budget_.max_memory_mib) {
      return "max_memory_mib (" + std::to_string(budget_.max_memory_mib) + ", all rules together)";
    }
    if (out_of_time()) return "max_seconds (" + seconds_text() + ", all rules together)";
    return {};
  }

  /// Whether the time budget is spent (reads the clock once in kClockStride calls, and always
  /// once it said so).
  bool out_of_time() {
    if (expired_) return true;
    if (budget_.max_seconds <= 0 || ++ticks_ % kClockStride != 0) return false;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    expired_ = spent > budget_.max_seconds;
    return expired_;
  }

  /// Adds a warning line (once: repeats are dropped).
  void warn(std::string line) {
    if (std::find(warnings_.begin(), warnings_.end(), line) == warnings_.end()) warnings_.push_back(std::move(line));
  }
  /// The warnings so far, in the order they were first given.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Takes the warnings out.
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

  /// How many out_of_time() calls share one reading of the clock.
  static constexpr std::size_t kClockStride = 256;

 private:
  std::string seconds_text() const {
    std::string text = std::to_string(budget_.max_seconds);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text + " s";
  }

  CandidateBudget budget_;
  std::chrono::steady_clock::time_point started_;
  std::size_t joins_ = 0;
  std::size_t bytes_ = 0;
  std::size_t ticks_ = 0;
  bool expired_ = false;
  std::vector<std::string> warnings_;
};

/// What a rule's candidates() call gets besides the graph and the target.
struct RuleContext {
  RuleContext() = default;
  /// A context of collection `collection`, with no depth bound and no config.
  explicit RuleContext(CandidateRun* collection) : run(collection) {}

  /// The collection this call belongs to (its budget and warnings); never null inside a rule.
  CandidateRun* run = nullptr;
  /// Candidates deeper than this (SubGraph::depth) will be dropped by an enclosing rule (an
  /// only_valid with a depth bound), so a rule may leave them out; 0: no bound. A sub-graph is
  /// at least as deep as each part it was joined from, so a growing rule that never builds a join
  /// deeper than this loses none of the candidates that survive.
  std::size_t max_depth = 0;
  /// Candidates not valid under this config (SubGraph::is_valid) will be dropped by an enclosing
  /// only_valid; none when empty. A growing rule may leave out a join that no valid sub-graph can
  /// contain (every candidate it would have grown from that join contains it too).
  std::optional<SubGraphConfig> valid_under;

  /// This context with the depth bound tightened to `depth` (0 leaves it as it is).
  RuleContext within_depth(std::size_t depth) const {
    RuleContext c = *this;
    if (depth != 0 && (c.max_depth == 0 || depth < c.max_depth)) c.max_depth = depth;
    return c;
  }
  /// This context for the sub-rule of a filter that keeps only candidates valid under `config`.
  RuleContext within(const SubGraphConfig& config) const {
    RuleContext c = within_depth(config.max_depth);
    c.valid_under = config;
    return c;
  }
  /// This context for the sub-rule of a rule whose candidates are not unions of its sub-rule's
  /// (they may be parts of them), where neither the depth bound nor the config says what the
  /// sub-rule may leave out.
  RuleContext for_parts() const {
    RuleContext c = *this;
    c.max_depth = 0;
    c.valid_under.reset();
    return c;
  }
};

}  // namespace collage
