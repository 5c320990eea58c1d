#pragma once

/// \file
/// Reading `collage-spec/1` files (see docs/formats.md): the targets and their partition rules,
/// the cost model and the search settings.

#include <cstddef>
#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/partitioner.hpp"
#include "collage/rules/anchor_fusion.hpp"
#include "collage/rules/base_rules.hpp"
#include "collage/rules/combinators.hpp"
#include "collage/rules/combine.hpp"
#include "collage/rules/max_coalesce.hpp"
#include "collage/rules/partition_spec.hpp"
#include "collage/rules/pattern_rule.hpp"
#include "collage/rules/split_bound.hpp"
#include "collage/support/result.hpp"
#include "json_util.hpp"
#include "synthetic_cost.hpp"

namespace collage::cli {

/// The format tag of spec files.
inline constexpr std::string_view kSpecFormat = "collage-spec/1";

/// Deepest nesting of rules accepted in a spec.
inline constexpr std::size_t kMaxRuleDepth = 64;

/// What a spec file says: targets with their rules, the cost model, the search settings.
template <class G>
struct ToolSpec {
  /// The file it was read from (for messages).
  std::string file;
  std::vector<PartitionSpec<G>> targets;
  /// The synthetic cost model, by target.
  std::map<std::string, SyntheticCost> costs;
  SearchAlgorithm algorithm = SearchAlgorithm::exact;
  std::size_t beam_width = 64;
  std::size_t max_states = ExactSearchOptions{}.max_states;
  std::size_t max_memory_mib = ExactSearchOptions{}.max_memory_mib;

  /// The partitioner options the search settings give.
  PartitionerOptions options() const {
    PartitionerOptions o;
    o.algorithm = algorithm;
    o.beam.width = beam_width;
    o.exact.max_states = max_states;
    o.exact.max_memory_mib = max_memory_mib;
    return o;
  }
  /// A fresh oracle for the cost model.
  std::unique_ptr<CostOracle<G>> make_oracle() const { return std::make_unique<SyntheticOracle<G>>(costs); }
  /// The spec of target `name`, or nullptr.
  const PartitionSpec<G>* find(const std::string& name) const {
    for (const PartitionSpec<G>& t : targets) {
      if (t.target == name) return &t;
    }
    return nullptr;
  }
};

namespace detail {

/// The rule and combiner names a spec may use, for messages.
inline constexpr const char* kRuleNames =
    "op_kind, op_predicate, pattern, host, composite, primitive, union, combine, combine_split_bounded, only_valid, "
    "max_coalesce, anchor_fusion, native";
inline constexpr const char* kCombinerNames = "{\"by_kind\": [KIND, KIND]}, \"all\", \"tuple_arg\", \"tuple_proj\", \"constant\"";
inline constexpr const char* kKindNames = "elemwise, broadcast, injective, reduce, anchor, tuple, opaque";

/// Reads RULE trees and the rest of a spec, recording the first error in a JsonReader.
template <class G>
class SpecParser {
 public:
  explicit SpecParser(JsonReader& in) : in_(in) {}

  std::optional<PartitionRule<G>> rule(const Json& j, const JsonPath& path, std::size_t depth) {
    if (depth >= kMaxRuleDepth) {
      in_.fail(path, "rules nest more than " + std::to_string(kMaxRuleDepth) + " levels deep");
      return std::nullopt;
    }
    if (!j.is_object()) {
      in_.fail(path, std::string("expected a rule (an object with a \"rule\" key), found ") + type_phrase(j));
      return std::nullopt;
    }
    const Json* tag = in_.member(j, "rule", path, true);
    if (tag == nullptr) return std::nullopt;
    std::optional<std::string> name = in_.string(*tag, path / "rule");
    if (!name) return std::nullopt;
    const std::string& r = *name;
    if (r == "op_kind") {
      if (!in_.expect_object(j, path, {"rule", "max_kind"})) return std::nullopt;
      std::optional<OpKind> k = kind(j, "max_kind", path, true, OpKind::opaque);
      if (!k) return std::nullopt;
      return op_kind<G>(*k);
    }
    if (r == "op_predicate") {
      if (!in_.expect_object(j, path, {"rule", "ops", "name", "constants"})) return std::nullopt;
      std::optional<std::set<std::string, std::less<>>> ops = op_set(j, path);
      std::optional<std::string> rule_name = optional_string(j, "name", path, "op_predicate");
      std::optional<bool> constants = optional_bool(j, "constants", path, false);
      if (!ops || !rule_name || !constants) return std::nullopt;
      return op_predicate<G>(
          *rule_name, [ops = std::move(*ops)](const DataflowGraph<G>& g, std::size_t i) { return ops.count(g.op_name(i)) != 0; },
          *constants);
    }
    if (r == "pattern") {
      if (!in_.expect_object(j, path, {"rule", "pattern", "name"})) return std::nullopt;
      const Json* text = in_.member(j, "pattern", path, true);
      if (text == nullptr) return std::nullopt;
      std::optional<std::string> pattern_text = in_.string(*text, path / "pattern");
      std::optional<std::string> rule_name = optional_string(j, "name", path, "pattern");
      if (!pattern_text || !rule_name) return std::nullopt;
      Result<PartitionRule<G>> made = pattern<G>(*rule_name, std::string_view(*pattern_text));
      if (!made.ok()) {
        in_.fail(path / "pattern", "bad pattern: " + one_line(made.error().message));
        return std::nullopt;
      }
      return std::move(made).value();
    }
    if (r == "host") {
      if (!in_.expect_object(j, path, {"rule"})) return std::nullopt;
      return host<G>();
    }
    if (r == "composite") {
      if (!in_.expect_object(j, path, {"rule", "name", "sub"})) return std::nullopt;
      const Json* label = in_.member(j, "name", path, true);
      if (label == nullptr) return std::nullopt;
      std::optional<std::string> text = in_.string(*label, path / "name");
      if (!text) return std::nullopt;
      std::optional<PartitionRule<G>> sub = sub_rule(j, path, depth);
      if (!sub) return std::nullopt;
      return composite<G>(*text, std::move(*sub));
    }
    if (r == "primitive") {
      if (!in_.expect_object(j, path, {"rule", "sub", "compiler"})) return std::nullopt;
      std::optional<bool> compiler = optional_bool(j, "compiler", path, true);
      if (!compiler) return std::nullopt;
      std::optional<PartitionRule<G>> sub = sub_rule(j, path, depth);
      if (!sub) return std::nullopt;
      return primitive<G>(std::move(*sub), *compiler);
    }
    if (r == "union") {
      if (!in_.expect_object(j, path, {"rule", "subs"})) return std::nullopt;
      const Json* subs = in_.member(j, "subs", path, true);
      if (subs == nullptr) return std::nullopt;
      if (!subs->is_array() || subs->empty()) {
        in_.fail(path / "subs", "expected a non-empty array of rules");
        return std::nullopt;
      }
      std::vector<PartitionRule<G>> rules;
      for (std::size_t k = 0; k < subs->size(); ++k) {
        std::optional<PartitionRule<G>> sub = rule((*subs)[k], path / "subs" / k, depth + 1);
        if (!sub) return std::nullopt;
        rules.push_back(std::move(*sub));
      }
      return union_of<G>(std::move(rules));
    }
    if (r == "combine") {
      if (!in_.expect_object(j, path,
                             {"rule", "sub", "combiners", "max_depth", "max_candidates", "max_tuple_joins",
                              "max_joins_per_exit", "name"})) {
        return std::nullopt;
      }
      std::optional<std::vector<Combiner<G>>> cs = combiners(j, path);
      std::optional<std::size_t> max_depth = optional_size(j, "max_depth", path, 0);
      std::optional<std::size_t> max_candidates = optional_size(j, "max_candidates", path, CombineLimits{}.max_candidates);
      std::optional<std::size_t> max_tuple_joins =
          optional_size(j, "max_tuple_joins", path, CombineLimits{}.max_tuple_joins);
      std::optional<std::size_t> max_joins_per_exit =
          optional_size(j, "max_joins_per_exit", path, CombineLimits{}.max_joins_per_exit);
      std::optional<std::string> rule_name = optional_string(j, "name", path, "combine");
      if (!cs || !max_depth || !max_candidates || !max_tuple_joins || !max_joins_per_exit || !rule_name) {
        return std::nullopt;
      }
      std::optional<PartitionRule<G>> sub = sub_rule(j, path, depth);
      if (!sub) return std::nullopt;
      CombineLimits limits = combine_limits(*max_depth, *max_candidates);
      limits.max_tuple_joins = *max_tuple_joins;
      limits.max_joins_per_exit = *max_joins_per_exit;
      return combine<G>(std::move(*sub), std::move(*cs), std::move(limits), *rule_name);
    }
    if (r == "combine_split_bounded") {
      if (!in_.expect_object(j, path, {"rule", "sub", "combiners", "max_splits", "max_candidates", "name"})) {
        return std::nullopt;
      }
      std::optional<std::vector<Combiner<G>>> cs = combiners(j, path);
      std::optional<std::size_t> max_splits = optional_size(j, "max_splits", path, 0);
      std::optional<std::size_t> max_candidates =
          optional_size(j, "max_candidates", path, SplitBoundLimits{}.max_candidates);
      std::optional<std::string> rule_name = optional_string(j, "name", path, "combine_split_bounded");
      if (!cs || !max_splits || !max_candidates || !rule_name) return std::nullopt;
      std::optional<PartitionRule<G>> sub = sub_rule(j, path, depth);
      if (!sub) return std::nullopt;
      SplitBoundLimits limits;
      limits.max_splits = *max_splits;
      limits.max_candidates = *max_candidates;
      return combine_split_bounded<G>(std::move(*sub), std::move(*cs), limits, *rule_name);
    }
    if (r == "only_valid" || r == "max_coalesce") {
      if (!in_.expect_object(j, path, {"rule", "sub", "config"})) return std::nullopt;
      std::optional<SubGraphConfig> c = config(j, path, r == "only_valid");
      if (!c) return std::nullopt;
      std::optional<PartitionRule<G>> sub = sub_rule(j, path, depth);
      if (!sub) return std::nullopt;
      if (r == "only_valid") return only_valid<G>(std::move(*sub), *c);
      return max_coalesce<G>(std::move(*sub), *c);
    }
    if (r == "anchor_fusion") {
      if (!in_.expect_object(j, path,
                             {"rule", "epilogue_max_kind", "max_epilogue", "prologue_max_kind", "horizontal"})) {
        return std::nullopt;
      }
      AnchorFusionOptions o;
      std::optional<OpKind> epilogue = kind(j, "epilogue_max_kind", path, false, o.epilogue_max_kind);
      std::optional<std::size_t> max_epilogue = optional_size(j, "max_epilogue", path, o.max_epilogue);
      std::optional<OpKind> prologue = kind(j, "prologue_max_kind", path, false, o.prologue_max_kind);
      std::optional<bool> horizontal = optional_bool(j, "horizontal", path, o.horizontal);
      if (!epilogue || !max_epilogue || !prologue || !horizontal) return std::nullopt;
      o.epilogue_max_kind = *epilogue;
      o.max_epilogue = *max_epilogue;
      o.prologue_max_kind = *prologue;
      o.horizontal = *horizontal;
      return anchor_fusion<G>(o);
    }
    if (r == "native") {
      if (!in_.expect_object(j, path, {"rule", "max_depth"})) return std::nullopt;
      std::optional<std::size_t> max_depth = optional_size(j, "max_depth", path, 0);
      if (!max_depth) return std::nullopt;
      return native_fusion_rule<G>(combine_limits(*max_depth, CombineLimits{}.max_candidates));
    }
    in_.fail(path / "rule", "unknown rule " + quote_text(one_line(r)) + " (expected one of: " + kRuleNames + ")");
    return std::nullopt;
  }

  std::optional<SyntheticCost> target_cost(const Json& j, const JsonPath& path) {
    if (!in_.expect_object(j, path, {"launch", "fusion", "ops"})) return std::nullopt;
    SyntheticCost cost;
    if (const Json* launch = in_.member(j, "launch", path, false)) {
      std::optional<double> v = in_.cost(*launch, path / "launch");
      if (!v) return std::nullopt;
      cost.launch = *v;
    }
    if (const Json* fusion = in_.member(j, "fusion", path, false)) {
      std::optional<double> v = in_.number(*fusion, path / "fusion");
      if (!v) return std::nullopt;
      if (*v < 0) {
        in_.fail(path / "fusion", "negative fusion factor " + fusion->dump() + " (it must be >= 0)");
        return std::nullopt;
      }
      cost.fusion = *v;
    }
    const Json* ops = in_.member(j, "ops", path, true);
    if (ops == nullptr) return std::nullopt;
    if (!in_.expect_object(*ops, path / "ops")) return std::nullopt;
    for (auto it = ops->begin(); it != ops->end(); ++it) {
      std::optional<double> v = in_.cost(it.value(), path / "ops" / it.key());
      if (!v) return std::nullopt;
      if (it.key() == "*") {
        cost.any = *v;
      } else {
        cost.ops[it.key()] = *v;
      }
    }
    return cost;
  }

 private:
  static CombineLimits combine_limits(std::size_t max_depth, std::size_t max_candidates) {
    CombineLimits limits;
    limits.max_depth = max_depth;
    limits.max_candidates = max_candidates;
    return limits;
  }

  std::optional<PartitionRule<G>> sub_rule(const Json& j, const JsonPath& path, std::size_t depth) {
    const Json* sub = in_.member(j, "sub", path, true);
    if (sub == nullptr) return std::nullopt;
    return rule(*sub, path / "sub", depth + 1);
  }

  std::optional<OpKind> kind(const Json& j, std::string_view key, const JsonPath& path, bool required, OpKind fallback) {
    const Json* k = in_.member(j, key, path, required);
    if (k == nullptr) return required ? std::nullopt : std::optional<OpKind>(fallback);
    return kind_value(*k, path / key);
  }

  std::optional<OpKind> kind_value(const Json& k, const JsonPath& path) {
    std::optional<std::string> name = in_.string(k, path);
    if (!name) return std::nullopt;
    std::optional<OpKind> parsed = parse_op_kind(*name);
    if (!parsed) in_.fail(path, "bad kind " + quote_text(one_line(*name)) + " (expected one of " + kKindNames + ")");
    return parsed;
  }

  std::optional<std::string> optional_string(const Json& j, std::string_view key, const JsonPath& path,
                                             std::string fallback) {
    const Json* v = in_.member(j, key, path, false);
    if (v == nullptr) return fallback;
    std::optional<std::string> text = in_.string(*v, path / key);
    if (text && text->empty()) {
      in_.fail(path / key, "must not be empty");
      return std::nullopt;
    }
    return text;
  }

  std::optional<bool> optional_bool(const Json& j, std::string_view key, const JsonPath& path, bool fallback) {
    const Json* v = in_.member(j, key, path, false);
    if (v == nullptr) return fallback;
    return in_.boolean(*v, path / key);
  }

  std::optional<std::size_t> optional_size(const Json& j, std::string_view key, const JsonPath& path,
                                           std::size_t fallback) {
    const Json* v = in_.member(j, key, path, false);
    if (v == nullptr) return fallback;
    return in_.size(*v, path / key);
  }

  std::optional<std::set<std::string, std::less<>>> op_set(const Json& j, const JsonPath& path) {
    const Json* ops = in_.member(j, "ops", path, true);
    if (ops == nullptr) return std::nullopt;
    if (!ops->is_array() || ops->empty()) {
      in_.fail(path / "ops", "expected a non-empty array of op names");
      return std::nullopt;
    }
    std::set<std::string, std::less<>> out;
    for (std::size_t k = 0; k < ops->size(); ++k) {
      std::optional<std::string> op = in_.string((*ops)[k], path / "ops" / k);
      if (!op) return std::nullopt;
      out.insert(std::move(*op));
    }
    return out;
  }

  std::optional<std::vector<Combiner<G>>> combiners(const Json& j, const JsonPath& path) {
    const Json* list = in_.member(j, "combiners", path, true);
    if (list == nullptr) return std::nullopt;
    if (!list->is_array() || list->empty()) {
      in_.fail(path / "combiners", std::string("expected a non-empty array of combiners (") + kCombinerNames + ")");
      return std::nullopt;
    }
    std::vector<Combiner<G>> out;
    for (std::size_t k = 0; k < list->size(); ++k) {
      const Json& c = (*list)[k];
      const JsonPath at = path / "combiners" / k;
      if (c.is_string()) {
        const std::string& name = c.get_ref<const std::string&>();
        if (name == "all") {
          out.push_back(Combiner<G>::all());
        } else if (name == "tuple_arg") {
          out.push_back(Combiner<G>::tuple_arg());
        } else if (name == "tuple_proj") {
          out.push_back(Combiner<G>::tuple_proj());
        } else if (name == "constant") {
          out.push_back(Combiner<G>::constant());
        } else {
          in_.fail(at, "unknown combiner " + quote_text(one_line(name)) + " (expected one of: " + kCombinerNames + ")");
          return std::nullopt;
        }
        continue;
      }
      if (c.is_object() && c.size() == 1 && c.contains("by_kind")) {
        const Json& kinds = c["by_kind"];
        if (!kinds.is_array() || kinds.size() != 2) {
          in_.fail(at / "by_kind", "expected [UPSTREAM_MAX_KIND, DOWNSTREAM_MAX_KIND]");
          return std::nullopt;
        }
        std::optional<OpKind> up = kind_value(kinds[0], at / "by_kind" / 0);
        if (!up) return std::nullopt;
        std::optional<OpKind> down = kind_value(kinds[1], at / "by_kind" / 1);
        if (!down) return std::nullopt;
        out.push_back(Combiner<G>::by_kind(*up, *down));
        continue;
      }
      const std::string what = c.is_object() && !c.empty() ? quote_text(one_line(c.begin().key())) : JsonReader::describe(c);
      in_.fail(at, "unknown combiner " + what + " (expected one of: " + kCombinerNames + ")");
      return std::nullopt;
    }
    return out;
  }

  std::optional<SubGraphConfig> config(const Json& j, const JsonPath& path, bool required) {
    const Json* c = in_.member(j, "config", path, required);
    if (c == nullptr) return required ? std::nullopt : std::optional<SubGraphConfig>(SubGraphConfig{});
    const JsonPath at = path / "config";
    if (!in_.expect_object(*c, at, {"max_exits", "allow_taps", "max_depth"})) return std::nullopt;
    SubGraphConfig out;
    std::optional<std::size_t> max_exits = optional_size(*c, "max_exits", at, out.max_exits);
    std::optional<bool> allow_taps = optional_bool(*c, "allow_taps", at, out.allow_taps);
    std::optional<std::size_t> max_depth = optional_size(*c, "max_depth", at, out.max_depth);
    if (!max_exits || !allow_taps || !max_depth) return std::nullopt;
    out.max_exits = *max_exits;
    out.allow_taps = *allow_taps;
    out.max_depth = *max_depth;
    return out;
  }

  JsonReader& in_;
};

template <class G>
Result<ToolSpec<G>> read_spec_document(const Json& doc, const std::string& file) {
  JsonReader in(file);
  ToolSpec<G> spec;
  spec.file = file;
  SpecParser<G> parser(in);
  const JsonPath root;
  if (!in.expect_format(doc, kSpecFormat)) return in.error();
  if (!in.expect_object(doc, root, {"format", "name", "description", "targets", "cost", "search"})) return in.error();

  const Json* targets = in.member(doc, "targets", root, true);
  if (targets == nullptr) return in.error();
  if (!targets->is_array() || targets->empty()) {
    return located_error(file, "/targets", "expected a non-empty array of targets");
  }
  for (std::size_t k = 0; k < targets->size(); ++k) {
    const Json& t = (*targets)[k];
    const JsonPath path = root / "targets" / k;
    if (!in.expect_object(t, path, {"name", "rule", "penalty"})) return in.error();
    const Json* name = in.member(t, "name", path, true);
    if (name == nullptr) return in.error();
    std::optional<std::string> target = in.string(*name, path / "name");
    if (!target) return in.error();
    if (target->empty()) return located_error(file, (path / "name").str(), "a target name must not be empty");
    if (spec.find(*target) != nullptr) {
      return located_error(file, (path / "name").str(), "duplicate target name " + quote_text(one_line(*target)));
    }
    double penalty = 0.0;
    if (const Json* p = in.member(t, "penalty", path, false)) {
      std::optional<double> v = in.cost(*p, path / "penalty");
      if (!v) return in.error();
      penalty = *v;
    }
    const Json* rule = in.member(t, "rule", path, true);
    if (rule == nullptr) return in.error();
    std::optional<PartitionRule<G>> parsed = parser.rule(*rule, path / "rule", 0);
    if (!parsed) return in.error();
    spec.targets.push_back(PartitionSpec<G>{std::move(*target), std::move(*parsed), penalty});
  }

  const Json* cost = in.member(doc, "cost", root, true);
  if (cost == nullptr) return in.error();
  if (!in.expect_object(*cost, root / "cost", {"model", "targets"})) return in.error();
  const Json* model = in.member(*cost, "model", root / "cost", true);
  if (model == nullptr) return in.error();
  std::optional<std::string> model_name = in.string(*model, root / "cost" / "model");
  if (!model_name) return in.error();
  if (*model_name != "synthetic") {
    return located_error(file, "/cost/model", "unknown cost model " + quote_text(one_line(*model_name)) +
                                                  " (expected \"synthetic\")");
  }
  const Json* per_target = in.member(*cost, "targets", root / "cost", true);
  if (per_target == nullptr) return in.error();
  if (!in.expect_object(*per_target, root / "cost" / "targets")) return in.error();
  for (auto it = per_target->begin(); it != per_target->end(); ++it) {
    const JsonPath path = root / "cost" / "targets" / it.key();
    if (spec.find(it.key()) == nullptr) {
      return located_error(file, path.str(), "no target is named " + quote_text(one_line(it.key())));
    }
    std::optional<SyntheticCost> c = parser.target_cost(it.value(), path);
    if (!c) return in.error();
    spec.costs.emplace(it.key(), std::move(*c));
  }
  for (const PartitionSpec<G>& t : spec.targets) {
    if (spec.costs.count(t.target) == 0) {
      return located_error(file, "/cost/targets", "no cost for target " + quote_text(one_line(t.target)));
    }
  }

  if (const Json* search = in.member(doc, "search", root, false)) {
    const JsonPath path = root / "search";
    if (!in.expect_object(*search, path, {"algorithm", "beam_width", "max_states", "max_memory_mib"})) {
      return in.error();
    }
    if (const Json* a = in.member(*search, "algorithm", path, false)) {
      std::optional<std::string> name = in.string(*a, path / "algorithm");
      if (!name) return in.error();
      std::optional<SearchAlgorithm> algorithm = parse_search_algorithm(*name);
      if (!algorithm) {
        return located_error(file, (path / "algorithm").str(),
                             "unknown search algorithm " + quote_text(one_line(*name)) + " (expected exact, beam or greedy)");
      }
      spec.algorithm = *algorithm;
    }
    if (const Json* w = in.member(*search, "beam_width", path, false)) {
      std::optional<std::size_t> width = in.size(*w, path / "beam_width");
      if (!width) return in.error();
      if (*width == 0) return located_error(file, (path / "beam_width").str(), "the beam width must be at least 1");
      spec.beam_width = *width;
    }
    if (const Json* m = in.member(*search, "max_states", path, false)) {
      std::optional<std::size_t> states = in.size(*m, path / "max_states");
      if (!states) return in.error();
      spec.max_states = *states;
    }
    if (const Json* m = in.member(*search, "max_memory_mib", path, false)) {
      std::optional<std::size_t> mib = in.size(*m, path / "max_memory_mib");
      if (!mib) return in.error();
      spec.max_memory_mib = *mib;
    }
  }
  return spec;
}

}  // namespace detail

/// Reads a parsed `collage-spec/1` document. Errors are "FILE: PLACE: PROBLEM" with PLACE a JSON
/// pointer.
template <class G>
Result<ToolSpec<G>> read_spec(const Json& doc, const std::string& file) {
  try {
    return detail::read_spec_document<G>(doc, file);
  } catch (const std::exception& e) {
    return located_error(file, "", std::string("cannot read the spec: ") + e.what());
  }
}

/// Parses and reads a `collage-spec/1` text.
template <class G>
Result<ToolSpec<G>> read_spec(std::string_view text, const std::string& file) {
  Result<Json> doc = parse_json(text, file);
  if (!doc.ok()) return doc.error();
  return read_spec<G>(*doc, file);
}

}  // namespace collage::cli
