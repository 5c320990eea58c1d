#include "collage/cost/end_to_end_oracle.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "collage/search/partitioning.hpp"
#include "common/adjacency_ir.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;
using Graph = DataflowGraph<AdjacencyGraph>;

TEST(EndToEndOracle, FromCallablesReturningCostOrResult) {
  AdjacencyGraph ir;
  ir.roots = {ir.add()};
  auto graph = Graph::build(ir);
  ASSERT_TRUE(graph.ok());
  Partitioning p;
  p.total = Cost::value(2);
  auto plain = make_end_to_end_oracle<AdjacencyGraph>("twice", [](const Graph&, const Partitioning& q) {
    return q.total + q.total;
  });
  EXPECT_EQ(plain->name(), "twice");
  Result<Cost> twice = plain->evaluate(*graph, p);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(*twice, Cost::value(4));
  auto failing = make_end_to_end_oracle<AdjacencyGraph>("no", [](const Graph&, const Partitioning&) -> Result<Cost> {
    return Error{ErrorCode::oracle, "cannot run"};
  });
  Result<Cost> no = failing->evaluate(*graph, p);
  ASSERT_FALSE(no.ok());
  EXPECT_EQ(no.error().message, "cannot run");
}

#if defined(__cpp_exceptions)
TEST(EndToEndOracle, GuardedEvaluateTurnsExceptionsIntoOracleErrors) {
  AdjacencyGraph ir;
  ir.roots = {ir.add()};
  auto graph = Graph::build(ir);
  ASSERT_TRUE(graph.ok());
  const Partitioning p;
  auto standard = make_end_to_end_oracle<AdjacencyGraph>("boom", [](const Graph&, const Partitioning&) -> Cost {
    throw std::runtime_error("kaboom");
  });
  Result<Cost> a = detail::guarded_evaluate(*standard, *graph, p);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::oracle);
  EXPECT_EQ(a.error().message, "end-to-end oracle 'boom' threw: kaboom");
  auto other = make_end_to_end_oracle<AdjacencyGraph>("odd", [](const Graph&, const Partitioning&) -> Cost {
    throw 42;
  });
  Result<Cost> b = detail::guarded_evaluate(*other, *graph, p);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "end-to-end oracle 'odd' threw a non-standard exception");
  auto fine = make_end_to_end_oracle<AdjacencyGraph>("fine", [](const Graph&, const Partitioning&) {
    return Cost::value(1);
  });
  EXPECT_EQ(*detail::guarded_evaluate(*fine, *graph, p), Cost::value(1));
}
#endif

}  // namespace
}  // namespace collage
