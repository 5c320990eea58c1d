#include "collage/rules/pattern_parser.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/expr_ir.hpp"
#include "common/pattern_helpers.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using testing_ir::parse;
using P = Pattern<ExprGraph>;
using Graph = DataflowGraph<ExprGraph>;

TEST(PatternParser, ToStringRoundTrips) {
  PredicateTable<ExprGraph> table;
  table["p"] = [](const Graph&, std::size_t) { return true; };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"relu(add(conv2d(*, const), *))", "relu(add(conv2d(*, const), *))"},
      {"relu( relu(*)|abs( * ) )", "relu(relu(*) | abs(*))"},
      {"(a | b) | c", "a | b | c"},
      {"a | (b | c)", "a | b | c"},
      {"((relu))", "relu"},
      {"add((a | b), c)", "add(a | b, c)"},
      {"f(...)", "f"},
      {"f()", "f()"},
      {"concat(*,...)", "concat(*, ...)"},
      {"kind: anchor( * , const )", "kind:anchor(*, const)"},
      {"kind:tuple(...)", "kind:tuple"},
      {"? p (*)", "?p(*)"},
      {"?p | ?p(?p, ...)", "?p | ?p(?p, ...)"},
      {"nn.conv2d(*, const) | nn.dense(*, *)", "nn.conv2d(*, const) | nn.dense(*, *)"},
      {"\tconstant(const)\n", "constant(const)"},
      {"kind(*)", "kind(*)"},
      {"_x.y_1", "_x.y_1"},
  };
  for (const auto& [text, canonical] : cases) {
    P pattern = parse(text, table);
    EXPECT_EQ(pattern.to_string(), canonical) << text;
    EXPECT_EQ(parse(pattern.to_string(), table).to_string(), canonical) << text;
  }
}

/// Checks that parsing `text` fails at `column` with a message containing `expectation`.
void expect_parse_error(const std::string& text, std::size_t column, const std::string& expectation) {
  PredicateTable<ExprGraph> table;
  table["known"] = [](const Graph&, std::size_t) { return true; };
  auto result = parse_pattern<ExprGraph>(text, table);
  ASSERT_FALSE(result.ok()) << "'" << text << "' parsed as " << result->to_string();
  const std::string& message = result.error().message;
  const std::string prefix = "pattern '" + text + "' at column " + std::to_string(column) + ": ";
  EXPECT_EQ(message.compare(0, prefix.size(), prefix), 0) << message;
  EXPECT_NE(message.find(expectation), std::string::npos) << message;
}

TEST(PatternParser, ErrorsNameTheColumnAndTheExpectation) {
  expect_parse_error("", 0, "expected a pattern");
  expect_parse_error("   ", 3, "expected a pattern");
  expect_parse_error("relu(", 5, "expected a pattern, '...' or ')'");
  expect_parse_error("relu(*", 6, "expected ',' or ')'");
  expect_parse_error("relu(*,)", 7, "expected a pattern or '...'");
  expect_parse_error("*(x)", 1, "'*' takes no argument list");
  expect_parse_error("const ()", 6, "'const' takes no argument list");
  expect_parse_error("add(*, const(*))", 12, "'const' takes no argument list");
  expect_parse_error("kind:bogus", 5, "unknown op kind 'bogus': expected one of elemwise, broadcast, injective, "
                                      "reduce, anchor, tuple, opaque");
  expect_parse_error("kind:", 5, "expected an op kind");
  expect_parse_error("?unknown", 1, "unknown predicate 'unknown' (known: known)");
  expect_parse_error("?", 1, "expected a predicate name");
  expect_parse_error("relu)", 4, "expected end of input");
  expect_parse_error("relu(*) abs", 8, "expected end of input");
  expect_parse_error("(relu | abs)(*)", 12, "expected end of input");
  expect_parse_error("a || b", 3, "expected a pattern");
  expect_parse_error("relu | ", 7, "expected a pattern");
  expect_parse_error("add(*, ... , *)", 11, "expected ')'");
  expect_parse_error("(relu", 5, "expected ')'");
  expect_parse_error("relu(#)", 5, "expected a pattern, '...' or ')'");
  expect_parse_error("1relu", 0, "expected a pattern");

  // The exact text of one message.
  auto result = parse_pattern<ExprGraph>("relu(add(*");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "pattern 'relu(add(*' at column 10: expected ',' or ')'");

  // Without a table, unknown predicates say so.
  auto no_table = parse_pattern<ExprGraph>("?p");
  ASSERT_FALSE(no_table.ok());
  EXPECT_EQ(no_table.error().message, "pattern '?p' at column 1: unknown predicate 'p' (no predicates are defined)");
}

TEST(PatternParser, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  deep += "relu";
  deep += std::string(100000, ')');
  auto result = parse_pattern<ExprGraph>(deep);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("nest at most 256 levels"), std::string::npos);

  std::string nested = "relu";
  for (int k = 0; k < 100; ++k) nested = "relu(" + nested + ")";
  auto ok = parse_pattern<ExprGraph>(nested);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->to_string(), nested);
}

}  // namespace
}  // namespace collage
