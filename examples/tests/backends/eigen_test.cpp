// Built only with the eigen backend (Eigen found at configure time).
#if TC_HAVE_EIGEN

#include "backends/eigen/eigen_backend.hpp"

#include <gtest/gtest.h>

#include <collage/rules/pattern.hpp>

#include "backends/eigen/eigen_plan.hpp"
#include "library_backends.hpp"

namespace tc {
namespace {

using testing::GraphBuilder;
using testing::ints;

std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

const char* const kActivations[] = {"", "_relu", "_clip", "_gelu"};

/// Appends activation `act` ("", "_relu", "_clip", "_gelu") to `y`.
int activate(GraphBuilder& b, int y, const std::string& act) {
  if (act == "_relu") return b.op(Op::relu, {y});
  if (act == "_clip") {
    Attributes a;
    a.set("min", -0.25);
    a.set("max", 0.5);
    return b.op(Op::clip, {y}, a);
  }
  if (act == "_gelu") return b.gelu(y);
  return y;
}

TEST(EigenBackend, PatternTableParses) {
  for (const LabelledPattern& entry : eigen_pattern_table()) {
    auto parsed = collage::parse_pattern<Graph>(entry.text);
    EXPECT_TRUE(parsed.ok()) << entry.label << ": " << parsed.error().message;
  }
  EXPECT_EQ(eigen_pattern_table().size(), 16u);
}

// Conv with groups (depthwise included), odd sizes, asymmetric padding, strides and dilations,
// 1-D and 2-D, with the Conv's own bias, an added bias of each broadcast form, and each
// activation: the candidate over the whole graph matches the reference.
TEST(EigenBackend, ConvCompositesMatchTheReference) {
  EigenBackend backend;
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 48; ++trial) {
    const std::size_t spatial = static_cast<std::size_t>(pick(rng, 1, 2));
    const std::int64_t group = pick(rng, 1, 3);
    const bool depthwise = pick(rng, 0, 3) == 0;
    const std::int64_t cg = depthwise ? 1 : pick(rng, 1, 3);
    const std::int64_t mg = depthwise ? 1 : pick(rng, 1, 3);
    const std::int64_t n = pick(rng, 1, 2);
    Shape x_shape{n, group * cg};
    Shape w_shape{group * mg, cg};
    std::vector<std::int64_t> strides, dilations, pads(2 * spatial);
    for (std::size_t d = 0; d < spatial; ++d) {
      const std::int64_t k = pick(rng, 1, 3);
      strides.push_back(pick(rng, 1, 3));
      dilations.push_back(pick(rng, 1, 2));
      pads[d] = pick(rng, 0, 2);
      pads[d + spatial] = pick(rng, 0, 2);
      const std::int64_t extent = dilations.back() * (k - 1) + 1;
      const std::int64_t lo = std::max<std::int64_t>(1, extent - pads[d] - pads[d + spatial]);
      x_shape.push_back(pick(rng, lo, lo + 6));
      w_shape.push_back(k);
    }
    GraphBuilder b(static_cast<std::uint64_t>(trial));
    const int x = b.input("x", x_shape);
    std::vector<int> conv_inputs = {x, b.constant(w_shape)};
    if (pick(rng, 0, 1) == 1) conv_inputs.push_back(b.constant({w_shape[0]}));
    int y = b.op(Op::conv, conv_inputs,
                 ints({{"strides", strides}, {"dilations", dilations}, {"pads", pads}}, {{"group", group}}));
    b.infer_now();
    const Shape out = b.shape(y);
    std::string label = "eigen.conv";
    const std::int64_t form = pick(rng, 0, 4);
    if (form > 0) {
      Shape bias;
      if (form == 1) bias = Shape(spatial + 1, 1), bias[0] = out[1];   // [M,1(,1)]
      if (form == 2) bias = Shape(spatial + 2, 1), bias[1] = out[1];   // [1,M,1(,1)]
      if (form == 3) bias = Shape(out.begin() + 1, out.end());         // per pixel and channel
      y = b.op(Op::add, {y, b.constant(bias)});
      label += "_bias";
    }
    const std::string act = kActivations[pick(rng, 0, 3)];
    y = activate(b, y, act);
    b.output(y);
    const Graph model = b.infer();
    const Function f = testing::whole_candidate(backend, model, label + act);
    EXPECT_TRUE(testing::runs_like_reference(backend, f, static_cast<std::uint64_t>(trial)))
        << "trial " << trial << ": x " << to_string(x_shape) << " w " << to_string(w_shape) << " group " << group
        << " " << label + act;
  }
}

// MatMul with batch broadcasting and 1-D operands, then a bias of each form and an activation.
TEST(EigenBackend, MatMulCompositesMatchTheReference) {
  EigenBackend backend;
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 48; ++trial) {
    const std::int64_t m = pick(rng, 1, 9), k = pick(rng, 1, 13), n = pick(rng, 1, 11);
    const std::size_t batch_rank = static_cast<std::size_t>(pick(rng, 0, 2));
    Shape a_batch, b_batch;
    for (std::size_t d = 0; d < batch_rank; ++d) {
      const std::int64_t size = pick(rng, 2, 3);
      const std::int64_t which = pick(rng, 0, 2);  // both, a only, b only
      a_batch.push_back(which == 2 ? 1 : size);
      b_batch.push_back(which == 1 ? 1 : size);
    }
    if (pick(rng, 0, 2) == 0 && !b_batch.empty()) b_batch.erase(b_batch.begin());  // ranks differ
    Shape a_shape = a_batch, b_shape = b_batch;
    a_shape.push_back(m), a_shape.push_back(k);
    b_shape.push_back(k), b_shape.push_back(n);
    const bool vector = pick(rng, 0, 5) == 0;
    if (vector) a_shape = {k};
    GraphBuilder b(static_cast<std::uint64_t>(100 + trial));
    const int a = b.input("a", a_shape);
    const int bb = pick(rng, 0, 1) == 0 ? b.input("b", b_shape) : b.constant(b_shape);
    int y = b.op(Op::matmul, {a, bb});
    b.infer_now();
    const Shape out = b.shape(y);
    std::string label = "eigen.dense";
    if (!vector && pick(rng, 0, 2) > 0) {
      const std::int64_t form = pick(rng, 0, 3);
      const Shape bias = form == 0 ? Shape{n} : form == 1 ? Shape{1, n} : form == 2 ? Shape{m, n} : Shape{m, 1};
      y = pick(rng, 0, 1) == 0 ? b.op(Op::add, {y, b.constant(bias)}) : b.op(Op::add, {b.constant(bias), y});
      label += "_bias";
    }
    const std::string act = kActivations[pick(rng, 0, 3)];
    y = activate(b, y, act);
    b.output(y);
    const Graph model = b.infer();
    const Function f = testing::whole_candidate(backend, model, label + act);
    EXPECT_TRUE(testing::runs_like_reference(backend, f, static_cast<std::uint64_t>(trial)))
        << "trial " << trial << ": " << to_string(a_shape) << " x " << to_string(b_shape) << " " << label + act;
  }
}

// Gemm with each transposition, alpha and beta, and C of each broadcast form (or none).
TEST(EigenBackend, GemmMatchesTheReference) {
  EigenBackend backend;
  std::mt19937_64 rng(29);
  for (int trial = 0; trial < 32; ++trial) {
    const std::int64_t m = pick(rng, 1, 9), k = pick(rng, 1, 13), n = pick(rng, 1, 11);
    const bool ta = pick(rng, 0, 1) == 1, tb = pick(rng, 0, 1) == 1;
    GraphBuilder b(static_cast<std::uint64_t>(200 + trial));
    const int a = b.input("a", ta ? Shape{k, m} : Shape{m, k});
    const int w = b.constant(tb ? Shape{n, k} : Shape{k, n});
    std::vector<int> inputs{a, w};
    const std::int64_t form = pick(rng, 0, 5);
    const Shape c = form == 1 ? Shape{n} : form == 2 ? Shape{1, n} : form == 3 ? Shape{m, 1} : form == 4 ? Shape{m, n} : Shape{};
    if (form > 0 && form < 5) inputs.push_back(pick(rng, 0, 1) == 0 ? b.constant(c) : b.input("c", c));
    if (form == 5) inputs.push_back(b.scalar(0.75f));
    Attributes attrs = ints({}, {{"trans_a", ta}, {"trans_b", tb}});
    attrs.set("alpha", trial % 3 == 0 ? 1.0 : 0.5);
    attrs.set("beta", trial % 4 == 0 ? 1.0 : -2.0);
    const std::string act = kActivations[pick(rng, 0, 3)];
    b.output(activate(b, b.op(Op::gemm, inputs, attrs), act));
    const Graph model = b.infer();
    const Function f = testing::whole_candidate(backend, model, "eigen.dense" + act);
    EXPECT_TRUE(testing::runs_like_reference(backend, f, static_cast<std::uint64_t>(trial)))
        << "trial " << trial << " m " << m << " k " << k << " n " << n << " ta " << ta << " tb " << tb << " C form " << form;
  }
}

// What eigen declines is never proposed, and compiling it anyway is an error value naming it.
TEST(EigenBackend, DeclinesWhatItCannotRun) {
  EigenBackend backend;
  CpuDevice cpu;
  {
    // A 3-D convolution.
    GraphBuilder b(1);
    b.output(b.op(Op::conv, {b.input("x", {1, 2, 4, 4, 4}), b.constant({3, 2, 2, 2, 2})}));
    const Graph model = b.infer();
    EXPECT_TRUE(testing::candidate_functions(backend, model).empty());
    auto kernel = backend.compile(whole_model_function(model), cpu);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message, "eigen: Conv with 3 spatial dims");
  }
  {
    // A bias that varies along the batch, and an added tensor computed at run time: the dense
    // alone is proposed, the fusion is not.
    GraphBuilder b(2);
    const int a = b.input("a", {2, 3, 4});
    const int mm = b.op(Op::matmul, {a, b.constant({4, 5})});
    b.output(b.op(Op::add, {b.op(Op::add, {mm, b.constant({2, 1, 5})}), b.input("r", {2, 3, 5})}));
    const Graph model = b.infer();
    const auto functions = testing::candidate_functions(backend, model);
    ASSERT_EQ(functions.size(), 1u);
    EXPECT_EQ(testing::composite_labels(functions[0]), std::vector<std::string>{"eigen.dense"});
    auto kernel = backend.compile(whole_model_function(model), cpu);
    ASSERT_FALSE(kernel.ok());
    EXPECT_NE(kernel.error().message.find("is not a MatMul, Gemm or Conv"), std::string::npos) << kernel.error().message;
  }
  {
    // The GELU pattern cannot say that both x are the same node; the check can.
    GraphBuilder b(3);
    const int x = b.input("x", {3, 4});
    const int w = b.constant({4, 4});
    const int d1 = b.op(Op::matmul, {x, w});
    const int d2 = b.op(Op::matmul, {x, w});
    const int e = b.op(Op::erf, {b.op(Op::div, {d2, b.scalar(1.4142135f)})});
    b.output(b.op(Op::mul, {b.op(Op::mul, {d1, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
    const Graph model = b.infer();
    for (const Function& f : testing::candidate_functions(backend, model)) {
      EXPECT_EQ(testing::composite_labels(f), std::vector<std::string>{"eigen.dense"});
    }
  }
  {
    // Not a GELU: the constants are not 1/sqrt(2), 1 and 0.5.
    GraphBuilder b(4);
    const int d = b.op(Op::matmul, {b.input("x", {3, 4}), b.constant({4, 4})});
    const int e = b.op(Op::erf, {b.op(Op::div, {d, b.scalar(2.0f)})});
    b.output(b.op(Op::mul, {b.op(Op::mul, {d, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
    const Graph model = b.infer();
    for (const Function& f : testing::candidate_functions(backend, model)) {
      EXPECT_EQ(testing::composite_labels(f), std::vector<std::string>{"eigen.dense"});
    }
  }
  {
    // Another device kind.
    class FakeCuda final : public Device {
     public:
      DeviceKind kind() const override { return DeviceKind::cuda; }
      std::string name() const override { return "fake"; }
      bool available() const override { return false; }
      collage::Result<Buffer> allocate(std::size_t) override { return collage::Error{}; }
      void release(Buffer) override {}
      collage::Status upload(const Buffer&, std::size_t, const void*, std::size_t) override { return {}; }
      collage::Status download(void*, const Buffer&, std::size_t, std::size_t) override { return {}; }
      collage::Status copy(const Buffer&, std::size_t, const Buffer&, std::size_t, std::size_t) override { return {}; }
      collage::Status synchronize() override { return {}; }
    } cuda;
    GraphBuilder b(5);
    b.output(b.op(Op::matmul, {b.input("x", {3, 4}), b.constant({4, 4})}));
    auto kernel = backend.compile(whole_model_function(b.infer()), cuda);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message, "eigen: runs on the CPU, not on cuda");
  }
}

// Every candidate on real-ish graphs compiles and matches the reference.
TEST(EigenBackend, EveryCandidateOfRealGraphsMatchesTheReference) {
  EigenBackend backend;
  const testing::CandidateReport cnn = testing::check_every_candidate(backend, testing::conv_bn_relu_block(7), 1);
  EXPECT_TRUE(cnn.failures.empty()) << ::testing::PrintToString(cnn.failures);
  EXPECT_EQ(cnn.matched, cnn.candidates);
  EXPECT_EQ(testing::count_label(cnn, "eigen.conv_relu"), 1u);  // conv2 (with its bias) + relu
  EXPECT_EQ(testing::count_label(cnn, "eigen.conv_bias"), 1u);  // conv3 + a [8,1,1] bias
  EXPECT_EQ(testing::count_label(cnn, "eigen.conv_clip"), 1u);  // the depthwise conv + relu6
  EXPECT_EQ(testing::count_label(cnn, "eigen.dense"), 1u);      // the classifier's Gemm

  const testing::CandidateReport bert = testing::check_every_candidate(backend, testing::transformer_layer(9), 2);
  EXPECT_TRUE(bert.failures.empty()) << ::testing::PrintToString(bert.failures);
  EXPECT_EQ(bert.matched, bert.candidates);
  EXPECT_EQ(testing::count_label(bert, "eigen.dense_bias"), 6u);       // every projection
  EXPECT_EQ(testing::count_label(bert, "eigen.dense_bias_gelu"), 1u);  // the feed-forward's first
  EXPECT_EQ(testing::count_label(bert, "eigen.dense"), 8u);            // 6 projections, 2 attention products
}

// A Function of several calls (as a combining rule would make) runs them in order through
// scratch buffers, and returns a result twice when asked.
TEST(EigenBackend, RunsSeveralCallsInOneKernel) {
  EigenBackend backend;
  GraphBuilder b(8);
  const int x = b.input("x", {5, 6});
  const int h = b.op(Op::matmul, {x, b.constant({6, 7})});
  const int y = b.op(Op::matmul, {h, b.constant({7, 3})});
  b.output(y);
  b.output(h);
  b.output(y);
  const Graph model = b.infer();
  EXPECT_TRUE(testing::runs_like_reference(backend, whole_model_function(model), 3));
}

}  // namespace
}  // namespace tc

#endif  // TC_HAVE_EIGEN
