// docs/guide.md, "Writing rules": the base rules, patterns (built and parsed), the combinators and
// the ready-made specs, each run over one small graph.
#include "net_ir.hpp"

#include <collage/collage.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

/// The candidates of `rule` for target "t", one per line.
std::vector<std::string> candidates_of(const Graph& graph, const collage::PartitionRule<Net>& rule) {
  std::vector<std::string> out;
  for (const collage::Candidate& c : rule.all_candidates(graph, "t")) out.push_back(c.sub_graph.to_string(graph));
  return out;
}

void show(const Graph& graph, const collage::PartitionRule<Net>& rule) {
  std::printf("%s\n", rule.describe().c_str());
  for (const std::string& c : candidates_of(graph, rule)) std::printf("    %s\n", c.c_str());
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  for (const std::string& s : list) {
    if (s == item) return true;
  }
  return false;
}

}  // namespace

int main() {
  // x -> conv2d(x, w) -> add(., b) -> relu -> dense(., w2) -> add(., b2) -> softmax
  Net net{{{"input", {}},
           {"const", {}},
           {"conv2d", {0, 1}},
           {"const", {}},
           {"add", {2, 3}},
           {"relu", {4}},
           {"const", {}},
           {"dense", {5, 6}},
           {"const", {}},
           {"add", {7, 8}},
           {"softmax", {9}}},
          {10}};
  auto built = Graph::build(net);
  if (!built) return std::fprintf(stderr, "%s\n", built.error().message.c_str()), 1;
  const Graph& graph = *built;

  // [base]
  using R = collage::PartitionRule<Net>;
  // One candidate per conv2d or dense, each with its constant arguments.
  R anchors = collage::op_predicate<Net>(
      "dnnl", [](const Graph& g, std::size_t i) { return g.op_name(i) == "conv2d" || g.op_name(i) == "dense"; },
      /*pull_constants=*/true);
  // One candidate per operator of kind at most broadcast (add, relu).
  R cheap = collage::op_kind<Net>(collage::OpKind::broadcast);
  // A zero-cost candidate per node that needs no kernel.
  R host = collage::host<Net>();
  // [base]
  show(graph, anchors);
  show(graph, cheap);
  show(graph, host);
  check(has(candidates_of(graph, anchors), "conv2d{1,2}"), "op_predicate with constants: conv2d and w");
  check(candidates_of(graph, cheap).size() == 3, "op_kind(broadcast): add, relu, add");
  check(candidates_of(graph, host).size() == 5, "host: x and the four constants");

  // [patterns]
  // A pattern built in code and the same pattern parsed from text.
  using P = collage::Pattern<Net>;
  P built_bias = P::op("add", {P::op("dense", {P::wildcard(), P::constant()}), P::constant()});
  collage::Result<P> parsed_bias = collage::parse_pattern<Net>("add(dense(*, const), const)");
  // A pattern that names a predicate of the caller's (`?name`).
  collage::PredicateTable<Net> predicates;
  predicates["has_const_arg"] = [](const Graph& g, std::size_t i) {
    for (std::size_t j : g.inputs(i)) {
      if (g.is_constant(j)) return true;
    }
    return false;
  };
  collage::Result<R> with_const = collage::pattern<Net>("with_const", "relu(?has_const_arg)", {}, predicates);
  // A text that does not parse is an error value naming the column.
  collage::Result<P> broken = collage::parse_pattern<Net>("relu(add(*");
  if (!broken) std::printf("%s\n", broken.error().message.c_str());
  // [patterns]
  check(parsed_bias.ok() && parsed_bias->to_string() == built_bias.to_string(), "parsed pattern = built pattern");
  check(with_const.ok() && candidates_of(graph, *with_const) == std::vector<std::string>{"add+relu{4,5}"},
        "relu(?has_const_arg) matches relu and its add (not the constant)");
  check(!broken.ok() && broken.error().code == collage::ErrorCode::parse &&
            broken.error().message == "pattern 'relu(add(*' at column 10: expected ',' or ')'",
        "parse error names the column");

  // [combinators]
  R dense_bias = collage::pattern<Net>("dense_bias", built_bias);
  // A Composite=dnnl.dense_bias group around each match, in a Primitive group for the backend.
  R library = collage::primitive(collage::composite("dnnl.dense_bias", dense_bias));
  // Both rules' candidates.
  R either = collage::union_of<Net>({anchors, dense_bias});
  // Grow candidates by joining touching ones: an anchor with broadcast ops after it, elementwise
  // ops with each other; pairwise joins at most 3 kernel nodes deep.
  collage::CombineLimits limits;
  limits.max_depth = 3;
  R grown = collage::combine(
      collage::op_kind<Net>(collage::OpKind::opaque),
      {collage::Combiner<Net>::by_kind(collage::OpKind::anchor, collage::OpKind::broadcast),
       collage::Combiner<Net>::by_kind(collage::OpKind::broadcast, collage::OpKind::broadcast),
       collage::Combiner<Net>::constant()},
      limits);
  // Keep what one kernel can be: one exit, no taps, at most 3 deep.
  R kernels = collage::only_valid(grown, collage::SubGraphConfig{1, false, 3});
  // The largest regions of touching candidates that stay valid.
  R regions = collage::max_coalesce(cheap, collage::SubGraphConfig{1, false, 0});
  // An anchor with its epilogue (and prologue), and sibling anchors that share an input.
  R around_anchors = collage::anchor_fusion<Net>();
  // Maximal fusible regions, cut at most once.
  R split_once = collage::combine_split_bounded(collage::op_kind<Net>(collage::OpKind::opaque),
                                                collage::fuse_ops_combiners<Net>(), std::size_t{1});
  // [combinators]
  if (with_const) show(graph, *with_const);
  for (const R& rule : {library, either, kernels, regions, around_anchors, split_once}) show(graph, rule);
  check(candidates_of(graph, library) ==
            std::vector<std::string>{"dense+add{7,9}[Compiler=t,Primitive=1:dense+add{7,9}[Composite=dnnl.dense_bias:dense+add{7,9}]]"},
        "primitive(composite(...)) nests the Composite group in the Primitive one");
  check(candidates_of(graph, either).size() == 3, "union: conv2d, dense and dense+add");
  check(has(candidates_of(graph, kernels), "conv2d+add+relu{1..5}"), "combine grows conv2d+add+relu with w and b");
  check(!has(candidates_of(graph, kernels), "add+softmax{9,10}"), "by_kind never joins an opaque operator");
  check(has(candidates_of(graph, regions), "add+relu{4,5}"), "max_coalesce joins add and relu");
  check(has(candidates_of(graph, around_anchors), "conv2d+add+relu{2,4,5}"), "anchor_fusion: conv2d + epilogue");
  check(has(candidates_of(graph, split_once), "conv2d+add{2,4}"), "combine_split_bounded: a prefix of a region");

  // [specs]
  collage::PatternTable<Net> table = {{"dnnl.dense_bias", built_bias}};
  auto is_anchor = [](const Graph& g, std::size_t i) { return g.kind(i) == collage::OpKind::anchor; };
  std::vector<collage::PartitionSpec<Net>> specs = {
      // TVM-style native fusion: covers every operator on its own.
      collage::native_fusion_spec<Net>("native", /*max_depth=*/3),
      // A backend that runs single operators it accepts, and touching runs of them.
      {"cudnn", collage::op_predicate_byoc_rule<Net>("cudnn", is_anchor, /*max_depth=*/2), /*penalty=*/0.5},
      // A backend whose pattern table names the kernels it has.
      {"dnnl", collage::pattern_table_byoc_rule<Net>(table, /*max_depth=*/3)},
      // Library calls inside native kernels.
      {"native_lib", collage::library_in_native_rule<Net>(table, /*max_depth=*/3)},
      // Exactly the patterns of the table, nothing combined.
      {"exact", collage::exact_patterns_rule<Net>(table)},
  };
  // [specs]
  for (const auto& spec : specs) {
    std::printf("%s: %zu candidates\n", spec.target.c_str(), spec.all_candidates(graph).size());
    check(!spec.all_candidates(graph).empty(), "every ready-made spec proposes candidates");
  }

  if (failures != 0) return 1;
  std::puts("guide rules: all checks passed");
  return 0;
}
