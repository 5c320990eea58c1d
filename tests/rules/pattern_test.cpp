#include "collage/rules/pattern.hpp"

#include <gtest/gtest.h>

#include "common/expr_ir.hpp"
#include "common/pattern_helpers.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using testing_ir::parse;
using P = Pattern<ExprGraph>;

TEST(Pattern, BuiltPatternsPrintTheCanonicalText) {
  EXPECT_EQ(P::alt({P::op("a"), P::alt({P::op("b"), P::op("c")})}).to_string(), "a | b | c");
  EXPECT_EQ(P::alt({P::op("a")}).to_string(), "a");
  EXPECT_EQ(P::alt({}).to_string(), "()");
  EXPECT_EQ(P::op("f", {P::alt({P::wildcard(), P::constant()}), P::kind(OpKind::reduce)}, true).to_string(),
            "f(* | const, kind:reduce, ...)");
  P built = P::op("relu", {P::alt({P::op("relu", {P::wildcard()}), P::op("abs", {P::wildcard()})})});
  EXPECT_EQ(parse(built.to_string()).to_string(), built.to_string());

  // Copies share and stay equal.
  P copy = built;
  EXPECT_EQ(copy.to_string(), built.to_string());
}

}  // namespace
}  // namespace collage
