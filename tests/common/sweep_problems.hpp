#pragma once

// The partitioner's sweep over graph shapes, shared by its property test and its benchmark:
// random DAGs with tuples and projections, parallel chains joined by one wide tuple, the
// ready-made specs over them, a cost oracle for their targets, and a soundness check of a result.

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "collage/cost/mock_oracle.hpp"
#include "collage/partitioner.hpp"
#include "collage/rules/pattern_parser.hpp"
#include "common/brute_force.hpp"
#include "common/expr_ir.hpp"

namespace testing_ir::sweep {

/// `branches` chains from one input, joined by concat(tuple(ends)) (a DenseNet / Inception /
/// per-head join), about `nodes` nodes in all. Each chain repeats dense(., W), add(., b), relu,
/// multiply(., scalar), tanh: 7 nodes a round with the constants; with `elementwise`, exp in
/// place of the dense, so every chain end has several fusible producers.
inline ExprGraph parallel_chains(std::size_t branches, std::size_t nodes, bool elementwise = false) {
  ExprGraph ir;
  const Expr* x = ir.var("x");
  const std::size_t per_branch = std::max<std::size_t>(1, nodes > 3 ? (nodes - 3) / branches : 1);
  std::vector<const Expr*> ends;
  for (std::size_t b = 0; b < branches; ++b) {
    const Expr* h = x;
    std::size_t made = 0;
    for (std::size_t step = 0; made < per_branch; ++step) {
      const std::string name = std::to_string(b) + "." + std::to_string(step);
      switch (step % 5) {
        case 0:
          h = elementwise ? ir.call("exp", {h}) : ir.call("dense", {h, ir.constant("w" + name)});
          made += elementwise ? 1 : 2;
          break;
        case 1: h = ir.call("add", {h, ir.constant("b" + name)}); made += 2; break;
        case 2: h = ir.call("relu", {h}); made += 1; break;
        case 3: h = ir.call("multiply", {h, ir.scalar()}); made += 2; break;
        default: h = ir.call("tanh", {h}); made += 1; break;
      }
    }
    ends.push_back(h);
  }
  ir.output(ir.call("concat", {ir.tuple(ends)}));
  return ir;
}

/// The spec of native fusion alone, as a compiler without libraries would partition.
inline std::vector<collage::PartitionSpec<ExprGraph>> native_only_specs() {
  return {collage::native_fusion_spec<ExprGraph>("native", 4)};
}

/// The ready-made specs of four targets: native fusion (depth 4); an operator-predicate library
/// of anchors, splits and multiplies (the reproducer's `byoc`, depth 4); a pattern-table library
/// of dense / conv2d with their bias adds (depth 3); an elementwise library (depth 3).
inline std::vector<collage::PartitionSpec<ExprGraph>> ready_made_specs() {
  using Graph = collage::DataflowGraph<ExprGraph>;
  std::vector<collage::PartitionSpec<ExprGraph>> specs = native_only_specs();
  specs.push_back({"byoc", collage::op_predicate_byoc_rule<ExprGraph>(
                               "byoc",
                               [](const Graph& g, std::size_t i) {
                                 const std::string op = g.op_name(i);
                                 return g.kind(i) == collage::OpKind::anchor || op == "split" || op == "multiply";
                               },
                               4)});
  collage::PatternTable<ExprGraph> table;
  for (const char* pattern : {"add(dense(*, *), *)", "dense(*, *)", "add(conv2d(*, *), *)", "conv2d(*, *)"}) {
    table.emplace_back(std::string("lib.") + pattern, *collage::parse_pattern<ExprGraph>(pattern));
  }
  specs.push_back({"lib", collage::pattern_table_byoc_rule<ExprGraph>(std::move(table), 3)});
  specs.push_back({"ew", collage::op_predicate_byoc_rule<ExprGraph>(
                             "ew", [](const Graph& g, std::size_t i) { return g.kind(i) <= collage::OpKind::broadcast; },
                             3)});
  return specs;
}

/// A cost oracle for the targets above.
inline collage::MockOracle<ExprGraph> sweep_oracle() {
  return collage::MockOracle<ExprGraph>({{"native", 1.0}, {"byoc", 0.8}, {"lib", 0.7}, {"ew", 0.9}});
}

/// "" when `partitioning` is a sound answer for `graph`: its parts are disjoint, cover every node
/// that needs a kernel, and form an acyclic quotient; else what is wrong.
template <class G>
std::string unsound(const collage::DataflowGraph<G>& graph, const collage::Partitioning& partitioning) {
  std::vector<collage::IndexSet> parts;
  std::vector<int> owners(graph.size(), 0);
  for (const collage::Candidate& part : partitioning.parts) {
    parts.push_back(part.sub_graph.inside());
    for (std::size_t i : part.sub_graph.inside()) {
      if (graph.needs_kernel(i) && ++owners[i] > 1) return "node " + std::to_string(i) + " is in two parts";
    }
  }
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (graph.needs_kernel(i) && owners[i] == 0) return "node " + std::to_string(i) + " is in no part";
  }
  if (!quotient_is_acyclic(graph, parts)) return "the parts form a cycle";
  return "";
}

}  // namespace testing_ir::sweep
