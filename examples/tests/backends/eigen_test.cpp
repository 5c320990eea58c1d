// Built only with the eigen backend (Eigen found at configure time).
#if TC_HAVE_EIGEN

#include "backends/eigen/eigen_backend.hpp"

#include <gtest/gtest.h>

#include <collage/rules/pattern_parser.hpp>

#include "backends/eigen/eigen_plan.hpp"
#include "backends/eigen/eigen_table.hpp"
#include "library_backends.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc {
namespace {

using testing::gemm_attributes;
using testing::GraphBuilder;
using testing::pick;

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
  for (const LibraryPattern& entry : eigen::table()) {
    auto parsed = collage::parse_pattern<Graph>(entry.pattern.to_string());
    EXPECT_TRUE(parsed.ok()) << entry.label << ": " << parsed.error().message;
  }
  EXPECT_EQ(eigen::table().size(), 16u);
}

// Conv with groups (depthwise included), odd sizes, asymmetric padding, strides and dilations,
// 1-D and 2-D, with the Conv's own bias, an added bias of each broadcast form, and each
// activation: the candidate over the whole graph matches the reference.
TEST(EigenBackend, ConvCompositesMatchTheReference) {
  const std::unique_ptr<Backend> made = make_eigen_backend();
  const Backend& backend = *made;
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 48; ++trial) {
    const std::size_t spatial = static_cast<std::size_t>(pick(rng, 1, 2));
    const testing::RandomConv c = testing::random_conv(rng, spatial, 3);
    GraphBuilder b(static_cast<std::uint64_t>(trial));
    int y = c.add_to(b, rng);
    const Shape out = b.shape(y);
    std::string label = "eigen.conv";
    const std::int64_t form = pick(rng, 0, 4);
    if (form > 0) {
      Shape bias;
      if (form == 1) bias = Shape(spatial + 1, 1), bias[0] = out[1];   // [M,1(,1)]
      if (form == 2) bias = Shape(spatial + 2, 1), bias[1] = out[1];   // [1,M,1(,1)]
      if (form == 3) bias = Shape(out.begin() + 1, out.end());         // per pixel and channel
      y = b.op(Op::add, {y, b.weight(bias)});
      label += "_bias";
    }
    const std::string act = kActivations[pick(rng, 0, 3)];
    y = activate(b, y, act);
    b.output(y);
    EXPECT_TRUE(testing::whole_candidate_matches(backend, b.done(), label + act, static_cast<std::uint64_t>(trial)))
        << "trial " << trial << ": x " << to_string(c.x) << " w " << to_string(c.w) << " group " << c.group << " "
        << label + act;
  }
}

// MatMul with batch broadcasting and 1-D operands, then a bias of each form and an activation.
TEST(EigenBackend, MatMulCompositesMatchTheReference) {
  const std::unique_ptr<Backend> made = make_eigen_backend();
  const Backend& backend = *made;
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
    const int a = b.input(a_shape, "a");
    const int bb = pick(rng, 0, 1) == 0 ? b.input(b_shape, "b") : b.weight(b_shape);
    int y = b.op(Op::matmul, {a, bb});
    const Shape out = b.shape(y);
    std::string label = "eigen.dense";
    if (!vector && pick(rng, 0, 2) > 0) {
      const std::int64_t form = pick(rng, 0, 3);
      const Shape bias = form == 0 ? Shape{n} : form == 1 ? Shape{1, n} : form == 2 ? Shape{m, n} : Shape{m, 1};
      y = pick(rng, 0, 1) == 0 ? b.op(Op::add, {y, b.weight(bias)}) : b.op(Op::add, {b.weight(bias), y});
      label += "_bias";
    }
    const std::string act = kActivations[pick(rng, 0, 3)];
    y = activate(b, y, act);
    b.output(y);
    EXPECT_TRUE(testing::whole_candidate_matches(backend, b.done(), label + act, static_cast<std::uint64_t>(trial)))
        << "trial " << trial << ": " << to_string(a_shape) << " x " << to_string(b_shape) << " " << label + act;
  }
}

// On three threads each product is shared by output columns or rows (and im2col by channels):
// large shapes of each kind, with epilogues, match the reference, and the parts ran on threads.
TEST(EigenBackend, OnThreadsLargeProductsMatchTheReference) {
  const std::unique_ptr<Backend> made = make_eigen_backend(3);
  EXPECT_EQ(made->configuration(), cpu_threads_available() ? "threads=3" : "");
  struct Case {
    Shape a, b;
    bool conv;
    const char* label;
  };
  const Case cases[] = {
      {{1, 32, 28, 28}, {48, 32, 3, 3}, true, "eigen.conv_bias_relu"},   // columns
      {{1, 128, 7, 7}, {96, 128, 3, 3}, true, "eigen.conv_bias_relu"},   // rows: few columns
      {{2, 64, 16, 16}, {64, 64, 1, 1}, true, "eigen.conv_bias_relu"},   // pointwise, two images
      {{256, 384}, {384, 512}, false, "eigen.dense_bias_relu"},          // columns
      {{512, 256}, {256, 24}, false, "eigen.dense_bias_relu"},           // rows
      {{4, 64, 128}, {4, 128, 96}, false, "eigen.dense_bias_relu"},      // batched
  };
  for (const Case& c : cases) {
    GraphBuilder b(9);
    int y = -1;
    if (c.conv) {
      Attributes a;
      if (c.b[2] == 3) a.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
      y = b.op(Op::conv, {b.input(c.a), b.weight(c.b)}, a);
      y = b.op(Op::add, {y, b.weight({c.b[0], 1, 1})});
    } else {
      y = b.op(Op::matmul, {b.input(c.a), b.weight(c.b)});
      y = b.op(Op::add, {y, b.weight({c.b.back()})});
    }
    b.output(b.op(Op::relu, {y}));
    const std::size_t before = parallel_runs();
    EXPECT_TRUE(testing::whole_candidate_matches(*made, b.done(), c.label, 9, 1e-4, 1e-3)) << to_string(c.a);
    if (cpu_threads_available()) {
      EXPECT_GT(parallel_runs(), before) << to_string(c.a) << " ran on one thread";
    }
  }
}

// Gemm with each transposition, alpha and beta, and C of each broadcast form (or none).
TEST(EigenBackend, GemmMatchesTheReference) {
  const std::unique_ptr<Backend> made = make_eigen_backend();
  const Backend& backend = *made;
  std::mt19937_64 rng(29);
  for (int trial = 0; trial < 32; ++trial) {
    const std::int64_t m = pick(rng, 1, 9), k = pick(rng, 1, 13), n = pick(rng, 1, 11);
    const bool ta = pick(rng, 0, 1) == 1, tb = pick(rng, 0, 1) == 1;
    GraphBuilder b(static_cast<std::uint64_t>(200 + trial));
    const int a = b.input(ta ? Shape{k, m} : Shape{m, k}, "a");
    const int w = b.weight(tb ? Shape{n, k} : Shape{k, n});
    std::vector<int> inputs{a, w};
    const std::int64_t form = pick(rng, 0, 5);
    const Shape c = form == 1 ? Shape{n} : form == 2 ? Shape{1, n} : form == 3 ? Shape{m, 1} : form == 4 ? Shape{m, n} : Shape{};
    if (form > 0 && form < 5) inputs.push_back(pick(rng, 0, 1) == 0 ? b.weight(c) : b.input(c, "c"));
    if (form == 5) inputs.push_back(b.scalar(0.75f));
    const Attributes attrs = gemm_attributes(ta, tb, trial % 3 == 0 ? 1.0f : 0.5f, trial % 4 == 0 ? 1.0f : -2.0f);
    const std::string act = kActivations[pick(rng, 0, 3)];
    b.output(activate(b, b.op(Op::gemm, inputs, attrs), act));
    EXPECT_TRUE(testing::whole_candidate_matches(backend, b.done(), "eigen.dense" + act, static_cast<std::uint64_t>(trial)))
        << "trial " << trial << " m " << m << " k " << k << " n " << n << " ta " << ta << " tb " << tb << " C form " << form;
  }
}

// What eigen declines is never proposed, and compiling it anyway is an error value naming it.
TEST(EigenBackend, DeclinesWhatItCannotRun) {
  const std::unique_ptr<Backend> made = make_eigen_backend();
  const Backend& backend = *made;
  CpuDevice cpu;
  {
    // A 3-D convolution.
    GraphBuilder b(1);
    b.output(b.op(Op::conv, {b.input({1, 2, 4, 4, 4}, "x"), b.weight({3, 2, 2, 2, 2})}));
    const Graph model = b.done();
    EXPECT_TRUE(testing::candidate_functions(backend, model).empty());
    auto kernel = backend.compile(whole_model_function(model), cpu);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message, "eigen: Conv with 3 spatial dims");
  }
  {
    // A bias that varies along the batch, and an added tensor computed at run time: the dense
    // alone is proposed, the fusion is not.
    GraphBuilder b(2);
    const int a = b.input({2, 3, 4}, "a");
    const int mm = b.op(Op::matmul, {a, b.weight({4, 5})});
    b.output(b.op(Op::add, {b.op(Op::add, {mm, b.weight({2, 1, 5})}), b.input({2, 3, 5}, "r")}));
    const Graph model = b.done();
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
    const int x = b.input({3, 4}, "x");
    const int w = b.weight({4, 4});
    const int d1 = b.op(Op::matmul, {x, w});
    const int d2 = b.op(Op::matmul, {x, w});
    const int e = b.op(Op::erf, {b.op(Op::div, {d2, b.scalar(1.4142135f)})});
    b.output(b.op(Op::mul, {b.op(Op::mul, {d1, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
    const Graph model = b.done();
    for (const Function& f : testing::candidate_functions(backend, model)) {
      EXPECT_EQ(testing::composite_labels(f), std::vector<std::string>{"eigen.dense"});
    }
  }
  {
    // Not a GELU: the constants are not 1/sqrt(2), 1 and 0.5.
    GraphBuilder b(4);
    const int d = b.op(Op::matmul, {b.input({3, 4}, "x"), b.weight({4, 4})});
    const int e = b.op(Op::erf, {b.op(Op::div, {d, b.scalar(2.0f)})});
    b.output(b.op(Op::mul, {b.op(Op::mul, {d, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
    const Graph model = b.done();
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
    b.output(b.op(Op::matmul, {b.input({3, 4}, "x"), b.weight({4, 4})}));
    auto kernel = backend.compile(whole_model_function(b.done()), cuda);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message, "eigen: runs on the CPU, not on cuda");
  }
}

// Every candidate on real-ish graphs compiles and matches the reference.
TEST(EigenBackend, EveryCandidateOfRealGraphsMatchesTheReference) {
  const std::unique_ptr<Backend> made = make_eigen_backend();
  const Backend& backend = *made;
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
  const std::unique_ptr<Backend> made = make_eigen_backend();
  const Backend& backend = *made;
  GraphBuilder b(8);
  const int x = b.input({5, 6}, "x");
  const int h = b.op(Op::matmul, {x, b.weight({6, 7})});
  const int y = b.op(Op::matmul, {h, b.weight({7, 3})});
  b.output(y);
  b.output(h);
  b.output(y);
  const Graph model = b.done();
  EXPECT_TRUE(testing::runs_like_reference(backend, whole_model_function(model), 3));
}

}  // namespace
}  // namespace tc

#endif  // TC_HAVE_EIGEN
