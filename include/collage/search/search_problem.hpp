#pragma once

/// \file
/// SearchProblem: costed candidates indexed for the searchers, and the covered-set state they
/// share.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/search/settled_set.hpp"
#include "collage/search/transfers.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// How the search treats candidates whose cost is Unknown.
///
/// The documented rule: an Unknown candidate costs a fallback M larger than every possible total of
/// known costs (M = 1 + 2 * the sum of all known candidate costs). So a partitioning with fewer
/// Unknown candidates is always preferred, and among equals the known costs decide; Unknown
/// candidates are used only where nothing known covers their nodes.
struct SearchCosts {
  /// Added to every candidate of a target (a per-partition transition cost), by target name.
  /// Each must be a finite number >= 0.
  std::map<std::string, double> penalty;
  /// Where targets run and what moving values between them costs (see TransferModel); empty: nothing
  /// moves.
  TransferTable transfers;
};

/// Why the oracle made some candidates Invalid, as (index into the candidate list, reason),
/// ascending by index: what SearchProblem says when no usable candidate covers a node.
using InvalidReasons = std::vector<std::pair<std::size_t, std::string>>;

namespace detail {

/// An invalid_argument Error when `penalty` (of `target`, set through `field`) is negative, NaN or
/// infinite.
inline std::optional<Error> check_penalty(const std::string& target, double penalty, std::string_view field) {
  if (std::isfinite(penalty) && penalty >= 0) return std::nullopt;
  return Error{ErrorCode::invalid_argument, std::string(field) + " of target '" + target + "' is " +
                                                collage::format_double(penalty) +
                                                ": it must be a finite number >= 0"};
}

/// The sorted, distinct targets of `candidates`, joined with ", " ("none" when there are none).
template <class Candidates, class Keep>
std::string target_list(const Candidates& candidates, Keep keep) {
  std::vector<std::string_view> targets;
  for (const Candidate& c : candidates) {
    if (keep(c)) targets.push_back(c.target);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::string text;
  for (std::string_view t : targets) text += (text.empty() ? "" : ", ") + std::string(t);
  return text.empty() ? std::string("none") : text;
}

}  // namespace detail

/// The searchers' view of a partitioning problem: every usable candidate with its effective cost,
/// indexed by its first kernel node. Nodes that need no kernel are never required: a searcher may
/// leave them to the host at zero cost.
template <class G>
class SearchProblem {
 public:
  /// Builds the problem from costed candidates (a candidate without a cost counts as Unknown).
  /// Invalid candidates and candidates without a kernel node are dropped. Fails with
  /// ErrorCode::invalid_argument on a negative, NaN or infinite penalty (naming the target), and
  /// with ErrorCode::uncovered when some kernel node has no usable candidate, saying which case it
  /// is: "no rule proposed a candidate for node 'X' (targets tried: ...)", or "no candidate covers
  /// node 'X': N candidates from T, all Invalid: <the first of `reasons` among them>" ('X' followed
  /// by "at index I" when another node has the same label).
  static Result<SearchProblem> build(const DataflowGraph<G>& graph, std::vector<Candidate> candidates,
                                     const SearchCosts& costs = {}, const InvalidReasons& reasons = {}) {
    SearchProblem p(graph);
    p.owned_ = std::move(candidates);
    if (std::optional<Error> error = p.index(p.owned_, costs, reasons)) return std::move(*error);
    return p;
  }

  /// build() without copying the candidates: the problem refers to `candidates`, which must
  /// outlive it unchanged.
  static Result<SearchProblem> build_borrowed(const DataflowGraph<G>& graph, const std::vector<Candidate>& candidates,
                                              const SearchCosts& costs = {}, const InvalidReasons& reasons = {}) {
    SearchProblem p(graph);
    if (std::optional<Error> error = p.index(candidates, costs, reasons)) return std::move(*error);
    return p;
  }

  SearchProblem(SearchProblem&&) noexcept = default;
  SearchProblem& operator=(SearchProblem&&) noexcept = default;
  // Items point into the candidate list: no copies.
  SearchProblem(const SearchProblem&) = delete;
  SearchProblem& operator=(const SearchProblem&) = delete;

  /// A usable candidate with its costs.
  struct Item {
    const Candidate& candidate() const { return *source; }
    const Candidate* source;
    /// The oracle's cost plus the target's penalty (may be Unknown).
    Cost cost;
    /// `cost`, with Unknown replaced by the fallback: what the search minimises.
    Cost effective;
    std::size_t first_kernel;
    std::size_t kernels;
    /// Copies of the candidate's inside and input sets. The searchers read these on every state
    /// they expand: here, beside the costs and in search order, they are read without a visit to
    /// each candidate's shared block (a cache miss per candidate on graphs larger than the cache).
    IndexSet inside;
    IndexSet input;
  };

  const DataflowGraph<G>& graph() const { return *graph_; }
  std::size_t size() const { return items_.size(); }
  const Item& operator[](std::size_t id) const { return items_[id]; }
  /// Ids of the candidates whose first kernel node is `node`, ascending in candidate order.
  std::pair<std::size_t, std::size_t> starting_at(std::size_t node) const {
    return {by_first_[node], by_first_[node + 1]};
  }
  /// Ids of the candidates that hold `node` (kernel or not), ascending.
  std::pair<const std::uint32_t*, const std::uint32_t*> covering(std::size_t node) const {
    return {covering_ids_.data() + covering_first_[node], covering_ids_.data() + covering_first_[node + 1]};
  }
  /// The nodes candidate `id` holds as the non-empty words of its inside set, ascending: a sparse
  /// set (a join of the ends of distant branches) without the empty words between them.
  std::pair<const BitsetWord*, const BitsetWord*> words(std::size_t id) const {
    return {words_.data() + words_first_[id], words_.data() + words_first_[id + 1]};
  }
  /// The cheapest cost share per kernel node (0 for other nodes): an admissible bound.
  double min_share(std::size_t node) const { return min_share_[node] < 0 ? 0.0 : min_share_[node]; }
  std::size_t kernel_nodes() const { return kernel_nodes_; }
  /// Whether some candidate holds node i although it needs no kernel (a pulled-in constant, a
  /// tuple fused with its consumer). Other such nodes always stay with the host.
  bool contested(std::size_t i) const { return contested_[i]; }
  Cost unknown_fallback() const { return unknown_fallback_; }
  const TransferTable& transfers() const { return transfers_; }
  /// The device candidate `id`'s target runs on (SearchCosts::transfers; 0 without transfers).
  std::size_t device(std::size_t id) const { return devices_.empty() ? 0 : devices_[id]; }

 private:
  explicit SearchProblem(const DataflowGraph<G>& graph) : graph_(&graph) {}

  /// Indexes the usable candidates of `candidates` (which the items point into).
  std::optional<Error> index(const std::vector<Candidate>& candidates, const SearchCosts& costs,
                             const InvalidReasons& reasons) {
    for (const auto& [target, value] : costs.penalty) {
      if (auto error = detail::check_penalty(target, value, "SearchCosts::penalty")) return error;
    }
    if (auto error = detail::check_transfer_table(costs.transfers, graph_->size())) return error;
    transfers_ = costs.transfers;
    double known_sum = 0;
    items_.reserve(candidates.size());
    by_first_.assign(graph_->size() + 1, 0);
    for (const Candidate& c : candidates) {
      Cost cost = c.cost;
      if (cost.is_invalid()) continue;
      std::size_t first_kernel = npos;
      std::size_t kernels = 0;
      for (std::size_t i : c.sub_graph.inside()) {
        if (graph_->needs_kernel(i)) {
          if (first_kernel == npos) first_kernel = i;
          ++kernels;
        }
      }
      if (kernels == 0) continue;
      auto pen = costs.penalty.find(c.target);
      if (pen != costs.penalty.end()) cost += Cost::value(pen->second);
      if (cost.is_known()) known_sum += cost.raw();
      items_.push_back(Item{&c, cost, Cost(), first_kernel, kernels, c.sub_graph.inside(), c.sub_graph.input()});
      ++by_first_[first_kernel + 1];
    }
    unknown_fallback_ = Cost::value(1.0 + 2.0 * known_sum);
    // Items by first kernel node, in candidate order within a node: a counting sort, applied in
    // place (a second item list would be a second large block to allocate and fill).
    for (std::size_t i = 0; i < graph_->size(); ++i) by_first_[i + 1] += by_first_[i];
    std::vector<std::size_t> slot(items_.size());
    std::vector<std::size_t> next(by_first_.begin(), by_first_.end() - 1);
    for (std::size_t k = 0; k < items_.size(); ++k) slot[k] = next[items_[k].first_kernel]++;
    for (std::size_t k = 0; k < items_.size(); ++k) {
      while (slot[k] != k) {  // send item k to its slot, and take in the item that was there
        std::swap(items_[k], items_[slot[k]]);
        std::swap(slot[k], slot[slot[k]]);
      }
    }

    // Effective costs, and the cheapest share of a candidate's cost per kernel node it covers
    // (the A* lower bound).
    min_share_.assign(graph_->size(), -1.0);
    for (Item& item : items_) {
      item.effective = item.cost.is_unknown() ? unknown_fallback_ : item.cost;
      const double share = item.effective.raw() / static_cast<double>(item.kernels);
      for (std::size_t i : item.inside) {
        if (!graph_->needs_kernel(i)) continue;
        if (min_share_[i] < 0 || share < min_share_[i]) min_share_[i] = share;
      }
    }
    for (std::size_t i = 0; i < graph_->size(); ++i) {
      if (!graph_->needs_kernel(i)) continue;
      ++kernel_nodes_;
      if (min_share_[i] < 0) return uncovered(candidates, reasons, i);
    }
    mark_contested();
    index_covering();
    if (transfers_.enabled()) {
      devices_.reserve(items_.size());
      for (const Item& item : items_) {
        devices_.push_back(static_cast<std::uint8_t>(transfers_.device_of(item.candidate().target)));
      }
    }
    return std::nullopt;
  }

  /// The error for kernel node `node`, which no usable candidate covers: either no candidate holds
  /// it, or every one that does is Invalid (after its penalty, which is finite: so the oracle said so).
  Error uncovered(const std::vector<Candidate>& candidates, const InvalidReasons& reasons, std::size_t node) const {
    const std::string label = graph_->label(node);
    std::string name = "'" + label + "'";
    for (std::size_t j = 0; j < graph_->size(); ++j) {
      if (j != node && graph_->label(j) == label) {  // the label alone does not tell which node
        name += " at index " + std::to_string(node);
        break;
      }
    }
    auto holds = [&](const Candidate& c) { return c.sub_graph.inside().contains(node); };
    std::size_t holding = 0;
    std::size_t first = npos;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (!holds(candidates[k])) continue;
      if (holding++ == 0) first = k;
    }
    if (holding == 0) {
      return Error{ErrorCode::uncovered, "no rule proposed a candidate for node " + name + " (targets tried: " +
                                             detail::target_list(candidates, [](const Candidate&) { return true; }) +
                                             ")"};
    }
    std::string message = "no candidate covers node " + name + ": " + std::to_string(holding) +
                          (holding == 1 ? " candidate from " : " candidates from ") +
                          detail::target_list(candidates, holds) + (holding == 1 ? ", Invalid" : ", all Invalid");
    // The first reason given for a candidate that holds the node.
    auto reason = std::lower_bound(reasons.begin(), reasons.end(), first,
                                   [](const auto& entry, std::size_t k) { return entry.first < k; });
    for (; reason != reasons.end(); ++reason) {
      if (reason->first < candidates.size() && holds(candidates[reason->first])) {
        message += ": " + reason->second;
        break;
      }
    }
    return Error{ErrorCode::uncovered, std::move(message)};
  }

  void mark_contested() {
    contested_.assign(graph_->size(), false);
    for (const Item& item : items_) {
      for (std::size_t i : item.inside) {
        if (!graph_->needs_kernel(i)) contested_[i] = true;
      }
    }
  }

  /// covering(): the candidate ids of every node, one run per node (counting sort by node); and
  /// words(): the nodes of every candidate.
  void index_covering() {
    constexpr std::size_t kBits = IndexSet::kWordBits;
    covering_first_.assign(graph_->size() + 1, 0);
    words_first_.assign(items_.size() + 1, 0);
    for (std::size_t id = 0; id < items_.size(); ++id) {
      std::size_t words = 0, last = npos;
      for (std::size_t i : items_[id].inside) {
        ++covering_first_[i + 1];
        if (i / kBits != last) ++words;
        last = i / kBits;
      }
      words_first_[id + 1] = words_first_[id] + words;
    }
    words_.resize(words_first_.back());  // sized first: growing it cost large graphs page faults
    for (std::size_t id = 0; id < items_.size(); ++id) {
      std::size_t next = words_first_[id];
      for (std::size_t i : items_[id].inside) {
        const auto w = static_cast<std::uint32_t>(i / kBits);
        if (next == words_first_[id] || words_[next - 1].index != w) words_[next++] = BitsetWord{w, 0};
        words_[next - 1].bits |= IndexSet::Word{1} << (i % kBits);
      }
    }
    for (std::size_t i = 0; i < graph_->size(); ++i) covering_first_[i + 1] += covering_first_[i];
    covering_ids_.resize(covering_first_.back());
    std::vector<std::size_t> next(covering_first_.begin(), covering_first_.end() - 1);
    for (std::size_t id = 0; id < items_.size(); ++id) {
      for (std::size_t i : items_[id].inside) covering_ids_[next[i]++] = static_cast<std::uint32_t>(id);
    }
  }

  const DataflowGraph<G>* graph_;
  std::vector<Candidate> owned_;  // the candidates, when the problem owns them
  std::vector<Item> items_;
  std::vector<std::size_t> covering_first_;
  std::vector<std::uint32_t> covering_ids_;
  std::vector<std::size_t> words_first_;
  std::vector<BitsetWord> words_;
  std::vector<std::size_t> by_first_;
  std::vector<double> min_share_;
  std::vector<bool> contested_;
  std::size_t kernel_nodes_ = 0;
  Cost unknown_fallback_;
  TransferTable transfers_;
  std::vector<std::uint8_t> devices_;  // by item, with transfers
};

/// The nodes a partial partitioning has settled: kernel nodes covered by chosen candidates, nodes
/// that need no kernel but were placed inside a chosen candidate, and such nodes fixed to the
/// host because a chosen candidate consumes them. Stored as a SettledSet, whose size follows the
/// words of the graph's bitset that still have unsettled nodes, not the graph; `first_open`, the
/// first unsettled node that does not always stay with the host, follows from it. With transfers
/// (SearchCosts::transfers), also where the settled values that unsettled nodes still read are, by
/// node: two partial partitionings are the same state only when their futures cost the same.
struct CoveredSet {
  std::size_t first_open = 0;
  SettledSet settled;
  detail::PlacementList placement;  // empty without transfers

  friend bool operator==(const CoveredSet& a, const CoveredSet& b) {
    return a.settled == b.settled && a.placement == b.placement;
  }
  std::size_t hash() const {
    std::size_t h = settled.hash();
    for (const detail::Placement& p : placement) {
      h = h * 1000003u ^ (std::size_t{p.node} << 16 | std::size_t{p.home} << 8 | p.on);
    }
    return h;
  }
};

}  // namespace collage

namespace std {
template <>
struct hash<collage::CoveredSet> {
  std::size_t operator()(const collage::CoveredSet& s) const noexcept { return s.hash(); }
};
}  // namespace std
