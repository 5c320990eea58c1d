#include "backends/kit/epilogue.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "backends/gpu_test_support.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc {
namespace {

using testing::GraphBuilder;
using testing::operator_nodes;
using Kind = EpilogueStep::Kind;

/// The kinds of `chain`'s steps.
std::vector<Kind> kinds(const AnchorChain& chain) {
  std::vector<Kind> out;
  for (const EpilogueStep& s : chain.epilogue) out.push_back(s.kind);
  return out;
}

TEST(KitEpilogue, ReadsBiasActivationsAndResiduals) {
  GraphBuilder b;
  const int x = b.input({3, 4}, "x");
  const int mm = b.op(Op::matmul, {x, b.weight({4, 4})});
  const int bias = b.weight({4});
  const int add = b.op(Op::add, {bias, mm});
  const int gelu = b.gelu(add);
  const int silu = b.op(Op::mul, {b.op(Op::sigmoid, {gelu}), gelu});
  const int scaled = b.op(Op::sub, {b.scalar(1.0f), silu});
  const int relu = b.op(Op::relu, {scaled});
  const Graph g = b.done(relu);
  collage::Result<AnchorChain> chain = read_anchor_chain(g, LibraryCall{"", operator_nodes(g)});
  ASSERT_TRUE(chain.ok()) << chain.error().message;
  EXPECT_EQ(chain->anchor, mm);
  EXPECT_EQ(kinds(*chain), (std::vector<Kind>{Kind::binary, Kind::gelu_erf, Kind::silu, Kind::binary, Kind::unary}));
  EXPECT_EQ(chain->epilogue[0].operand, bias);
  EXPECT_TRUE(chain->epilogue[0].operand_first);
  EXPECT_EQ(chain->epilogue[1].node, gelu);
  EXPECT_EQ(chain->epilogue[2].node, silu);
  EXPECT_EQ(chain->epilogue[3].op, Op::sub);
  EXPECT_TRUE(chain->epilogue[3].operand_first);
  EXPECT_EQ(chain->epilogue[4].op, Op::relu);
}

TEST(KitEpilogue, ReadsBothGeluFormsOnAValueOutsideTheCall) {
  for (int form = 0; form < 2; ++form) {
    GraphBuilder b;
    const int x = b.input({5}, "x");
    const int y = form == 0 ? b.gelu(x) : b.gelu_swapped(x);
    const Graph g = b.done(y);
    collage::Result<std::vector<EpilogueStep>> steps = read_epilogue(g, LibraryCall{"", operator_nodes(g)}, x);
    ASSERT_TRUE(steps.ok()) << steps.error().message;
    ASSERT_EQ(steps->size(), 1u);
    EXPECT_EQ(steps->front().kind, Kind::gelu_erf);
    EXPECT_EQ(steps->front().node, y);
  }
}

TEST(KitEpilogue, GeluMustReadOneValueWithItsConstants) {
  {
    // (mm * (erf(x / sqrt 2) + 1)) * 0.5: erf of another value.
    GraphBuilder b;
    const int x = b.input({3, 4}, "x");
    const int mm = b.op(Op::matmul, {b.input({3, 5}, "a"), b.weight({5, 4})});
    const int e = b.op(Op::erf, {b.op(Op::div, {x, b.scalar(1.4142135f)})});
    const Graph g = b.done(b.op(Op::mul, {b.op(Op::mul, {mm, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
    EXPECT_FALSE(read_anchor_chain(g, LibraryCall{"", operator_nodes(g)}).ok());
  }
  {
    // Divided by 2 rather than sqrt 2.
    GraphBuilder b;
    const int mm = b.op(Op::matmul, {b.input({3, 5}, "a"), b.weight({5, 4})});
    const int e = b.op(Op::erf, {b.op(Op::div, {mm, b.scalar(2.0f)})});
    const Graph g = b.done(b.op(Op::mul, {b.op(Op::mul, {mm, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
    EXPECT_FALSE(read_anchor_chain(g, LibraryCall{"", operator_nodes(g)}).ok());
  }
}

TEST(KitEpilogue, RefusesWhatIsNotAChain) {
  GraphBuilder b;
  const int mm = b.op(Op::matmul, {b.input({3, 5}, "a"), b.weight({5, 4})});
  const int r = b.op(Op::relu, {mm});
  const int s = b.op(Op::sigmoid, {mm});
  const Graph g = b.done(b.op(Op::add, {r, s}));
  collage::Result<AnchorChain> chain = read_anchor_chain(g, LibraryCall{"", operator_nodes(g)});
  ASSERT_FALSE(chain.ok());
  EXPECT_NE(chain.error().message.find("cannot read the nodes after"), std::string::npos) << chain.error().message;
}

TEST(KitActivationForms, PatternsNameXOncePerAlternative) {
  using P = collage::Pattern<Graph>;
  EXPECT_EQ(silu_form().pattern(P::op("Conv")).to_string(), "Mul(Conv, Sigmoid(*)) | Mul(Sigmoid(Conv), *)");
  const std::string gelu = gelu_erf_form().pattern(P::op("Conv")).to_string();
  EXPECT_NE(gelu.find("Mul(Mul(Conv, Add(Erf(Div(*, const) | Mul(*, const) | Mul(const, *)), const)"),
            std::string::npos)
      << gelu;
}

}  // namespace
}  // namespace tc
