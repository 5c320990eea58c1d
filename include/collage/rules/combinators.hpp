#pragma once

/// \file
/// Combinators that wrap, join and filter the candidates of sub-rules: composite, primitive,
/// union_of, only_valid.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "collage/partition/sub_graph_config.hpp"
#include "collage/rules/partition_rule.hpp"

namespace collage {
namespace detail {

/// Rewrites each candidate of a sub-rule by wrapping its sub-graph in a nested attribute group.
template <class G>
class WrapRule final : public RuleImpl<G> {
 public:
  /// `attrs` for every candidate; when `compiler_attr` is set, ("Compiler", target) is added.
  WrapRule(std::string name, PartitionRule<G> sub, Attrs attrs, bool compiler_attr, std::string description)
      : name_(std::move(name)),
        prefix_(name_ + "."),
        sub_(std::move(sub)),
        attrs_(std::move(attrs)),
        compiler_attr_(compiler_attr),
        description_(std::move(description)) {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    std::vector<Candidate> result = sub_.all_candidates(graph, target, ctx);
    Attrs list = attrs_;
    if (compiler_attr_) list.emplace_back("Compiler", target);
    const AttrList attrs(std::move(list));  // one list, shared by every candidate's group
    // The sub-rule stamps a few rule names on many candidates: prefix each distinct one once.
    boost::container::small_vector<std::pair<Name, Name>, 4> renamed;  // (sub-rule's name, prefixed)
    for (Candidate& c : result) {
      c.sub_graph = c.sub_graph.with_attrs(graph, attrs);
      auto it = std::find_if(renamed.begin(), renamed.end(), [&](const auto& r) { return r.first == c.rule_name; });
      if (it == renamed.end()) it = renamed.insert(renamed.end(), {c.rule_name, Name(prefix_ + c.rule_name)});
      c.rule_name = it->second;
    }
    canonicalize(result);
    return result;
  }
  std::string describe() const override { return description_ + "(" + sub_.describe() + ")"; }
  const std::string& name() const override { return name_; }

 private:
  std::string name_;
  std::string prefix_;  // "<name_>.", put before the sub-rule's rule names
  PartitionRule<G> sub_;
  Attrs attrs_;
  bool compiler_attr_;
  std::string description_;
};

template <class G>
class UnionRule final : public RuleImpl<G> {
 public:
  explicit UnionRule(std::vector<PartitionRule<G>> subs) : subs_(std::move(subs)), name_("union") {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    std::vector<std::vector<Candidate>> lists;
    for (const PartitionRule<G>& sub : subs_) lists.push_back(sub.all_candidates(graph, target, ctx));
    return merge_canonical(std::move(lists));
  }
  std::string describe() const override {
    std::string out = "union(";
    for (std::size_t k = 0; k < subs_.size(); ++k) out += (k == 0 ? "" : ", ") + subs_[k].describe();
    return out + ")";
  }
  const std::string& name() const override { return name_; }

 private:
  std::vector<PartitionRule<G>> subs_;
  std::string name_;
};

template <class G>
class OnlyValidRule final : public RuleImpl<G> {
 public:
  OnlyValidRule(PartitionRule<G> sub, SubGraphConfig config) : sub_(std::move(sub)), config_(config) {}

  /// The sub-rule runs within the config: whatever it would propose that is not valid under it is
  /// dropped here anyway.
  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext& ctx) const override {
    std::vector<Candidate> result = sub_.all_candidates(graph, target, ctx.within(config_));
    result.erase(std::remove_if(result.begin(), result.end(),
                                [&](const Candidate& c) { return !c.sub_graph.is_valid(graph, config_); }),
                 result.end());
    return result;
  }
  std::string describe() const override {
    return "only_valid(" + sub_.describe() + ", " + collage::to_string(config_) + ")";
  }
  const std::string& name() const override { return sub_.name(); }

 private:
  PartitionRule<G> sub_;
  SubGraphConfig config_;
};

}  // namespace detail

/// Wraps each candidate of `sub` in a nested "Composite=name" group (a function the backend
/// recognises by name, as in TVM's pattern tables).
template <class G>
PartitionRule<G> composite(std::string name, PartitionRule<G> sub) {
  std::string description = "composite[" + name + "]";
  Attrs attrs{{"Composite", name}};
  return make_rule<G, detail::WrapRule<G>>("composite", std::move(sub), std::move(attrs), false,
                                           std::move(description));
}

/// Marks each candidate of `sub` as a Primitive partition (one kernel). For an external backend
/// (`external`), the group also carries ("Compiler", target) so the rewrite hands it to that
/// backend's compiler.
template <class G>
PartitionRule<G> primitive(PartitionRule<G> sub, bool external = true) {
  return make_rule<G, detail::WrapRule<G>>("primitive", std::move(sub), Attrs{{"Primitive", "1"}}, external,
                                           external ? "primitive" : "primitive[native]");
}

/// Every candidate of every sub-rule (duplicates removed).
template <class G>
PartitionRule<G> union_of(std::vector<PartitionRule<G>> subs) {
  return make_rule<G, detail::UnionRule<G>>(std::move(subs));
}

/// The candidates of `sub` that are valid under `config`.
template <class G>
PartitionRule<G> only_valid(PartitionRule<G> sub, SubGraphConfig config) {
  return make_rule<G, detail::OnlyValidRule<G>>(std::move(sub), config);
}

}  // namespace collage
