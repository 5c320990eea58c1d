#pragma once

/// \file
/// pattern: the base rule that proposes a candidate per match of a Pattern (TVM's
/// DFPatternPartitionRule), optionally filtered by a predicate on the matched sub-graph.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/partition_rule.hpp"
#include "collage/rules/pattern.hpp"
#include "collage/rules/pattern_matcher.hpp"
#include "collage/rules/pattern_parser.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// A test on a whole candidate sub-graph (e.g. a backend's "are these shapes supported?"). An
/// empty predicate accepts everything.
template <class G>
using SubGraphPredicate = std::function<bool(const DataflowGraph<G>&, const SubGraph&)>;

namespace detail {

template <class G>
class PatternRule final : public RuleImpl<G> {
 public:
  PatternRule(std::string name, Pattern<G> pattern, SubGraphPredicate<G> predicate)
      : name_(std::move(name)), pattern_(std::move(pattern)), predicate_(std::move(predicate)) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext&) const override {
    std::vector<Candidate> result;
    for (PatternMatch& m : match_all(graph, pattern_)) {
      Candidate c = make_candidate(graph, std::move(m.inside), target, name_);
      if (predicate_ && !predicate_(graph, c.sub_graph)) continue;
      result.push_back(std::move(c));
    }
    // Matches at different roots may share an inside set (a root that is inlinable).
    canonicalize(result);
    return result;
  }
  std::string describe() const override {
    return "pattern(" + name_ + ", " + pattern_.to_string() + (predicate_ ? ", with predicate)" : ")");
  }
  const std::string& name() const override { return name_; }

 private:
  Name name_;
  Pattern<G> pattern_;
  SubGraphPredicate<G> predicate_;
};

}  // namespace detail

/// A candidate per match of `pattern` (every match, overlapping ones included; see match_all),
/// named `name`, keeping only the matches whose sub-graph `predicate` accepts (an empty predicate
/// accepts all). Matches are not checked for validity (convexity, exits): wrap the rule in
/// only_valid for that.
template <class G>
PartitionRule<G> pattern(std::string name, Pattern<G> pattern, SubGraphPredicate<G> predicate = {}) {
  return make_rule<G, detail::PatternRule<G>>(std::move(name), std::move(pattern), std::move(predicate));
}

/// The rule above for a pattern in text form (see parse_pattern; `?name` predicates are looked up
/// in `predicates`). A text that does not parse gives parse_pattern's error.
template <class G>
Result<PartitionRule<G>> pattern(std::string name, std::string_view text, SubGraphPredicate<G> predicate = {},
                                 const PredicateTable<G>& predicates = {}) {
  Result<Pattern<G>> parsed = parse_pattern<G>(text, predicates);
  if (!parsed.ok()) return parsed.error();
  return pattern<G>(std::move(name), std::move(parsed).value(), std::move(predicate));
}

}  // namespace collage
