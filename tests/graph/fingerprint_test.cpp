#include "collage/graph/fingerprint.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/collage.hpp"
#include "collage/cost/mock_oracle.hpp"
#include "collage/report.hpp"
#include "collage/trace.hpp"
#include "common/build_graph.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;
using Spec = PartitionSpec<ExprGraph>;

using testing_ir::build;

/// x -> op1 -> op2 (a graph of 3 nodes).
ExprGraph two_ops(const std::string& op1, const std::string& op2) {
  ExprGraph ir;
  ir.output(ir.call(op2, {ir.call(op1, {ir.var("x")})}));
  return ir;
}

TEST(GraphFingerprint, SameIrSameFingerprintAnyChangeAnother) {
  const ExprGraph ir = two_ops("relu", "abs");
  const Graph a = build(ir);
  const Graph b = build(ir);
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(a.fingerprint().nodes, 3u);
  EXPECT_TRUE(a.fingerprint().recorded());
  EXPECT_FALSE(GraphFingerprint{}.recorded());
  const ExprGraph swapped_ir = two_ops("abs", "relu");
  const Graph swapped = build(swapped_ir);
  EXPECT_NE(a.fingerprint(), swapped.fingerprint());  // same size and edges, other ops
  ExprGraph wider_ir;
  auto x = wider_ir.var("x");
  wider_ir.output(wider_ir.call("abs", {wider_ir.call("relu", {x}), x}));
  const Graph wider = build(wider_ir);
  EXPECT_NE(a.fingerprint(), wider.fingerprint());  // one more edge
  EXPECT_EQ(parse_fingerprint_hash(a.fingerprint().hash_text()), a.fingerprint().hash);
  EXPECT_EQ(parse_fingerprint_hash("0123"), std::nullopt);
  EXPECT_EQ(parse_fingerprint_hash("0123456789abcdeX"), std::nullopt);
}

TEST(GraphFingerprint, EveryEntryPointRefusesAResultOfAnotherGraph) {
  // A result used with a rebuilt graph: another graph of the same size, a smaller and a larger one.
  // Each entry point that takes a result and a graph says so instead of crashing or answering for
  // the wrong graph.
  const ExprGraph ir = two_ops("relu", "abs");
  const Graph g = build(ir);
  MockOracle<ExprGraph> oracle({{"t", 1.0}});
  const std::vector<Spec> specs = {native_fusion_spec<ExprGraph>("t", 2)};
  auto r = partition(g, specs, oracle);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->partitioning.graph, g.fingerprint());
  EXPECT_TRUE(to_json(g, *r).ok());
  EXPECT_TRUE(replay(g, save_trace(*r)).ok());

  ExprGraph smaller_ir;
  smaller_ir.output(smaller_ir.call("relu", {smaller_ir.var("x")}));
  ExprGraph larger_ir = two_ops("relu", "abs");
  larger_ir.output(larger_ir.call("tanh", {larger_ir.outputs.back()}));
  const ExprGraph same_size_ir = two_ops("abs", "relu");
  const Graph smaller = build(smaller_ir);
  const Graph larger = build(larger_ir);
  const Graph same_size = build(same_size_ir);
  auto fitness = make_end_to_end_oracle<ExprGraph>("sum", [](const Graph&, const Partitioning& p) { return p.total; });
  for (const Graph* other : {&smaller, &larger, &same_size}) {
    SCOPED_TRACE(std::to_string(other->size()) + " nodes");
    auto json = to_json(*other, *r);
    ASSERT_FALSE(json.ok());
    EXPECT_EQ(json.error().code, ErrorCode::wrong_graph);
    EXPECT_EQ(json.error().message, "to_json: the partition result was made over a graph of " +
                                        g.fingerprint().to_string() + ", not this one of " +
                                        other->fingerprint().to_string());
    EXPECT_EQ(to_dot(*other, *r).error().code, ErrorCode::wrong_graph);
    bool called = false;
    Status rewritten = rewrite_partitions(*other, r->partitioning, [&](const Candidate&, const ExtractedFunction&) {
      called = true;
    });
    EXPECT_EQ(rewritten.code(), ErrorCode::wrong_graph);
    EXPECT_FALSE(called);
    EXPECT_EQ(refine(*other, *r, *fitness).error().code, ErrorCode::wrong_graph);
    auto replayed = replay(*other, save_trace(*r));
    ASSERT_FALSE(replayed.ok());
    EXPECT_EQ(replayed.error().code, ErrorCode::wrong_graph) << replayed.error().message;
  }
  // A sub-graph knows only the size of its graph.
  const SubGraph& part = r->partitioning.parts.front().sub_graph;
  EXPECT_EQ(part.check(smaller, SubGraphConfig{}), Validity::other_graph);
  EXPECT_EQ(part.check(larger, SubGraphConfig{}), Validity::other_graph);
  EXPECT_EQ(candidates_to_json(larger, r->candidates, r->penalties).error().code, ErrorCode::wrong_graph);
  // A partitioning made by hand records no graph: its parts' graph size is checked.
  Partitioning by_hand;
  by_hand.parts = r->partitioning.parts;
  EXPECT_EQ(rewrite_partitions(larger, by_hand, [](const Candidate&, const ExtractedFunction&) {}).code(),
            ErrorCode::wrong_graph);
  EXPECT_TRUE(rewrite_partitions(g, by_hand, [](const Candidate&, const ExtractedFunction&) {}).ok());
}

}  // namespace
}  // namespace collage
