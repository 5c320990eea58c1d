#include "backends/kit/fusion_patterns.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <collage/rules/pattern_parser.hpp>

#include "backends/gpu_test_support.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc {
namespace {

using testing::Claim;
using testing::claims;
using testing::GraphBuilder;

std::vector<std::string> labels(const LibraryTable& table) {
  std::vector<std::string> out;
  for (const LibraryPattern& entry : table) out.push_back(entry.label);
  return out;
}

TEST(KitFusionPatterns, EnumeratesBiasScaleAddsAndActivationsInOrder) {
  Fusion dense;
  dense.name = "dense";
  dense.anchor = dense_anchor();
  dense.bias = true;
  dense.scale = true;
  dense.adds = 1;
  dense.add_label = "_sum";
  dense.activations = {FusedActivation::relu, FusedActivation::silu};
  dense.alone = false;
  const LibraryTable table = fusion_table("lib.", {dense}, {});
  EXPECT_EQ(labels(table), (std::vector<std::string>{
                               "lib.dense_relu",          "lib.dense_swish",          "lib.dense_sum",
                               "lib.dense_sum_relu",      "lib.dense_sum_swish",      "lib.dense_scale",
                               "lib.dense_scale_relu",    "lib.dense_scale_swish",    "lib.dense_scale_sum",
                               "lib.dense_scale_sum_relu", "lib.dense_scale_sum_swish", "lib.dense_bias",
                               "lib.dense_bias_relu",     "lib.dense_bias_swish",     "lib.dense_bias_sum",
                               "lib.dense_bias_sum_relu", "lib.dense_bias_sum_swish", "lib.dense_bias_scale",
                               "lib.dense_bias_scale_relu", "lib.dense_bias_scale_swish", "lib.dense_bias_scale_sum",
                               "lib.dense_bias_scale_sum_relu", "lib.dense_bias_scale_sum_swish"}));
  // Every pattern prints in the text form parse_pattern reads back.
  for (const LibraryPattern& entry : table) {
    collage::Result<collage::Pattern<Graph>> parsed = collage::parse_pattern<Graph>(entry.pattern.to_string());
    ASSERT_TRUE(parsed.ok()) << entry.label << ": " << parsed.error().message;
    EXPECT_EQ(parsed->to_string(), entry.pattern.to_string());
  }
}

TEST(KitFusionPatterns, TheRuleProposesWhatTheChecksAccept) {
  GraphBuilder b;
  const int mm = b.op(Op::matmul, {b.input({4, 8}, "x"), b.weight({8, 16})});
  const int add = b.op(Op::add, {mm, b.weight({16})});
  const int relu = b.op(Op::relu, {add});
  const Graph g = b.done(relu);
  Fusion dense;
  dense.name = "dense";
  dense.anchor = dense_anchor();
  dense.bias = true;
  dense.activations = {FusedActivation::relu};
  const collage::PartitionSpec<Graph> all{"lib", table_rule(fusion_table("lib.", {dense}, {}), "lib")};
  EXPECT_EQ(claims(all, g), (std::vector<Claim>{{"lib.dense", {mm}}, {"lib.dense_bias", {mm, add}},
                                                 {"lib.dense_bias_relu", {mm, add, relu}}}));
  // A check refusing calls of three operators, and single operators proposed alone.
  const CallCheck short_calls = [](const Graph&, const LibraryCall& call) { return call.nodes.size() < 3; };
  const collage::PartitionSpec<Graph> checked{"lib", table_rule(fusion_table("lib.", {dense}, short_calls), "lib", short_calls)};
  EXPECT_EQ(claims(checked, g), (std::vector<Claim>{{"", {mm}}, {"lib.dense", {mm}}, {"lib.dense_bias", {mm, add}}, {"", {add}}, {"", {relu}}}));
}

}  // namespace
}  // namespace tc
