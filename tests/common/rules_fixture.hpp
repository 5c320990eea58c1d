#pragma once

// A fixture for rule tests over the expression IR: builds the graph and renders candidate lists
// as one "target:rule:sub-graph" string per candidate, so tests can spell out expected sets.

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collage/rules/partition_rule.hpp"
#include "common/expr_ir.hpp"

namespace testing_ir {

struct RulesFixture {
  ExprGraph ir;
  std::optional<collage::DataflowGraph<ExprGraph>> graph;

  const collage::DataflowGraph<ExprGraph>& build() {
    auto r = collage::DataflowGraph<ExprGraph>::build(ir);
    if (!r.ok()) throw std::runtime_error(r.error().message);
    graph.emplace(std::move(r).value());
    return *graph;
  }
  /// The post-DFS index of an IR node, as text.
  std::string idx(const Expr* e) const { return std::to_string(graph->index_of(e)); }
  std::size_t at(const Expr* e) const { return graph->index_of(e); }
  collage::IndexSet set(std::initializer_list<const Expr*> nodes) const {
    collage::IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(at(e));
    return s;
  }
  std::vector<std::string> describe(const collage::PartitionRule<ExprGraph>& rule, const std::string& target) const {
    std::vector<std::string> out;
    for (const collage::Candidate& c : rule.all_candidates(*graph, target)) out.push_back(c.to_string(*graph));
    return out;
  }
  /// The inside sets only, as "{...}" strings, in the rule's order.
  std::vector<std::string> insides(const collage::PartitionRule<ExprGraph>& rule, const std::string& target) const {
    std::vector<std::string> out;
    for (const collage::Candidate& c : rule.all_candidates(*graph, target)) out.push_back(c.sub_graph.inside().to_string());
    return out;
  }
  static std::vector<std::string> lines(std::vector<std::string> l) { return l; }
};

}  // namespace testing_ir
