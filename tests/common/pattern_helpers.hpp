#pragma once

// Helpers for the pattern tests over the expression IR: parse a pattern's text (a failure is a
// test failure), and write matches as (root, inside indexes) pairs to compare with expectations.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "collage/rules/pattern_matcher.hpp"
#include "collage/rules/pattern_parser.hpp"
#include "common/build_graph.hpp"
#include "common/expr_ir.hpp"

namespace testing_ir {

using PatternGraph = collage::DataflowGraph<ExprGraph>;

/// (root, inside indexes) pairs: what the expectations are written in.
using Matches = std::vector<std::pair<std::size_t, std::vector<std::size_t>>>;

inline Matches summarize(const std::vector<collage::PatternMatch>& matches) {
  Matches out;
  for (const collage::PatternMatch& m : matches) out.emplace_back(m.root, m.inside.to_vector());
  return out;
}

inline collage::Pattern<ExprGraph> parse(const std::string& text,
                                         const collage::PredicateTable<ExprGraph>& predicates = {}) {
  auto pattern = collage::parse_pattern<ExprGraph>(text, predicates);
  EXPECT_TRUE(pattern.ok()) << pattern.error().message;
  return pattern.ok() ? *pattern : collage::Pattern<ExprGraph>::alt({});
}

/// The matches of the text form of a pattern.
inline Matches matches_of(const PatternGraph& graph, const std::string& text,
                          const collage::PredicateTable<ExprGraph>& predicates = {}) {
  return summarize(collage::match_all(graph, parse(text, predicates)));
}

}  // namespace testing_ir
