#include "collage/graph/dataflow_traits.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "common/adjacency_ir.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

/// x -> c -> relu, where c is a constant: `op` names each node, `results` the roots.
struct Ir {
  std::vector<std::string> op{"x", "const", "relu"};
  std::vector<std::vector<int>> args{{}, {}, {0, 1}};
  std::vector<int> results{2};
};

/// An IR whose traits misspell needs_kernel (needs_kernal): to the compiler, an unrelated member.
struct MisspeltIr : Ir {};
/// An IR whose traits return the other types collage accepts and are a final class.
struct LenientIr : Ir {};

/// A scope of the caller's own type: hashable and equality-comparable.
struct Block {
  int id = 0;
  friend bool operator==(Block a, Block b) { return a.id == b.id; }
};

}  // namespace
}  // namespace collage

template <>
struct std::hash<collage::Block> {
  std::size_t operator()(collage::Block b) const { return std::hash<int>{}(b.id); }
};

template <>
struct collage::dataflow_traits<collage::MisspeltIr> {
  using node_handle = int;
  static const std::vector<int>& roots(const collage::Ir& g) { return g.results; }
  static const std::vector<int>& inputs(const collage::Ir& g, int n) { return g.args[static_cast<std::size_t>(n)]; }
  static const std::string& op_name(const collage::Ir& g, int n) { return g.op[static_cast<std::size_t>(n)]; }
  static bool needs_kernal(const collage::Ir& g, int n) { return g.op[static_cast<std::size_t>(n)] == "relu"; }
};

template <>
struct collage::dataflow_traits<collage::LenientIr> final {
  using node_handle = int;
  static const std::vector<int>& roots(const collage::Ir& g) { return g.results; }
  static const std::vector<int>& inputs(const collage::Ir& g, int n) { return g.args[static_cast<std::size_t>(n)]; }
  static const collage::OpKind& kind(const collage::Ir&, const int&) {
    static const collage::OpKind k = collage::OpKind::elemwise;
    return k;
  }
  static std::string_view op_name(const collage::Ir& g, int n) { return g.op[static_cast<std::size_t>(n)]; }
  static const char* label(const collage::Ir&, int n) { return n == 2 ? "the relu" : ""; }
  static int projection_index(const collage::Ir&, int) { return 3; }
  static collage::Block scope(const collage::Ir&, int n) { return collage::Block{n == 0 ? 1 : 2}; }
  template <class Graph>
  static bool is_constant(const Graph& g, int n) {
    return g.op[static_cast<std::size_t>(n)] == "const";
  }
};

namespace collage {
namespace {

TEST(DataflowTraits, DetectedTraitsListTheOptionalMembersFound) {
  constexpr DetectedTraits expr = detected_traits<testing_ir::ExprGraph>();
  static_assert(expr.kind && expr.needs_kernel && expr.signature && !expr.label);
  EXPECT_EQ(expr.to_string(),
            "kind, op_name, is_inlinable, is_tuple, is_projection, projection_index, is_constant, needs_kernel, "
            "scope, signature");
  EXPECT_EQ(detected_traits<testing_ir::AdjacencyGraph>().to_string(), "");
  EXPECT_EQ(detected_traits<LenientIr>().to_string(), "kind, op_name, label, projection_index, is_constant, scope");
  struct NotAGraph {};
  EXPECT_EQ(detected_traits<NotAGraph>().to_string(), "");
}

TEST(DataflowTraits, AMisspeltMemberIsNotFoundAndDetectedTraitsShowsIt) {
  // The compiler cannot tell needs_kernal from a helper of the traits, so it is not an error;
  // a check of detected_traits() beside the specialisation (or in a test) catches it.
  static_assert(!detected_traits<MisspeltIr>().needs_kernel, "needs_kernal is not needs_kernel");
  EXPECT_EQ(detected_traits<MisspeltIr>().to_string(), "op_name");
  auto graph = DataflowGraph<MisspeltIr>::build(MisspeltIr{});
  ASSERT_TRUE(graph.ok());
  EXPECT_TRUE(graph->needs_kernel(graph->index_of(1)));  // the default: the constant is a kernel
}

TEST(DataflowTraits, ConvertibleAnswersAreUsed) {
  auto graph = DataflowGraph<LenientIr>::build(LenientIr{});
  ASSERT_TRUE(graph.ok());
  const std::size_t relu = graph->index_of(2);
  const std::size_t constant = graph->index_of(1);
  EXPECT_EQ(graph->kind(relu), OpKind::elemwise);
  EXPECT_EQ(graph->op_name(relu), "relu");
  EXPECT_EQ(graph->label(relu), "the relu");
  EXPECT_EQ(graph->label(constant), "%1");  // an empty label: the index
  EXPECT_EQ(graph->projection_index(relu), 3u);
  EXPECT_TRUE(graph->is_constant(constant));
  EXPECT_FALSE(graph->needs_kernel(constant));
  EXPECT_EQ(graph->num_scopes(), 2u);
  EXPECT_NE(graph->scope(graph->index_of(0)), graph->scope(relu));
}

}  // namespace
}  // namespace collage
