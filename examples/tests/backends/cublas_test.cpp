#include "backends/cublas/cublas_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cublas/cublas_kernel.hpp"
#include "backends/cublas/cublas_plan.hpp"
#include "backends/registry.hpp"
#include "backends/gpu_test_support.hpp"
#include "backends/kit/epilogue.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc {
namespace {

using cublas::Activation;
using cublas::CallPlan;
using cublas::LtProblem;
using testing::Claim;
using testing::claims;
using testing::gemm_attributes;
using testing::GraphBuilder;
using testing::operator_nodes;

collage::Result<CallPlan> plan_all(const Graph& g, bool approximate_gelu = false) {
  cublas::Options options;
  options.approximate_gelu = approximate_gelu;
  return cublas::plan(g, LibraryCall{"", operator_nodes(g)}, options);
}

/// The rule of the cublas backend made with `options`.
collage::PartitionSpec<Graph> cublas_spec(const cublas::Options& options = {}) { return make_cublas_backend(options)->spec(); }

/// A graph the cublas backend runs as one call, with what it exercises.
struct MatmulCase {
  std::string name;
  Graph graph;
  bool gelu = false;
};

/// Gemm in every transpose, with each kind of C, and batched MatMul in each way of sharing
/// batches, with the epilogues; sizes drawn at random (odd ones included).
std::vector<MatmulCase> matmul_cases() {
  std::mt19937_64 rng(5);
  auto dim = [&] { return std::uniform_int_distribution<std::int64_t>(1, 9)(rng); };
  std::vector<MatmulCase> cases;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (int c = 0; c < 4; ++c) {
        GraphBuilder b(rng());
        const std::int64_t m = dim(), k = dim() + 8, n = dim() + 16;
        const int a = b.input(ta ? Shape{k, m} : Shape{m, k});
        const int w = b.weight(tb ? Shape{n, k} : Shape{k, n});
        const bool bias = c == 1 || c == 2;
        const float alpha = ta ? 0.5f : 1.0f;
        const float beta = c == 3 ? 0.75f : 1.0f;
        std::vector<int> in{a, w};
        if (c == 1) in.push_back(b.weight({n}));
        if (c == 2) in.push_back(b.weight({1, n}));
        if (c == 3) in.push_back(b.input({m, n}));
        int out = b.op(Op::gemm, in, gemm_attributes(ta != 0, tb != 0, alpha, beta));
        if (tb) out = b.op(Op::relu, {out});
        cases.push_back({"gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " c=" + std::to_string(c) +
                             (bias ? " (bias)" : ""),
                         b.done(out)});
      }
    }
  }
  struct Shapes {
    std::string name;
    Shape a, b;
  };
  const std::int64_t m = dim() + 3, k = dim() + 20, n = dim() + 5;
  const std::vector<Shapes> shapes{
      {"2-D", {m, k}, {k, n}},
      {"stacked A, shared B (one taller product)", {2, 3, m, k}, {k, n}},
      {"batched", {4, m, k}, {4, k, n}},
      {"batched 2x3", {2, 3, m, k}, {2, 3, k, n}},
      {"shared A", {m, k}, {3, k, n}},
      {"shared A of unit batch", {1, m, k}, {3, k, n}},
      {"vector A", {k}, {k, n}},
      {"vector B", {2, m, k}, {k}},
      {"both unit batches", {1, 1, m, k}, {1, k, n}},
  };
  for (const Shapes& s : shapes) {
    for (int epilogue = 0; epilogue < 3; ++epilogue) {
      GraphBuilder b(rng());
      const int a = b.input(s.a);
      const int w = s.b.size() == 2 ? b.weight(s.b) : b.input(s.b);
      int out = b.op(Op::matmul, {a, w});
      std::string name = "matmul " + s.name;
      if (epilogue == 1) {
        out = b.op(Op::div, {out, b.scalar(3.0f)});
        const std::int64_t cols = s.b.size() == 1 ? 1 : s.b.back();
        out = b.op(Op::add, {b.weight({cols}), out});
        out = b.op(Op::relu, {out});
        name += " / 3 + bias, relu";
      } else if (epilogue == 2) {
        out = b.op(Op::mul, {b.scalar(0.25f), out});
        name += " * 0.25";
      }
      cases.push_back({name, b.done(out)});
    }
  }
  {
    GraphBuilder b(rng());
    const int x = b.input({2, 5, 24});
    const int y = b.op(Op::add, {b.op(Op::matmul, {x, b.weight({24, 40})}), b.weight({40})});
    const int r = b.op(Op::relu, {b.op(Op::add, {y, b.input({2, 5, 40})})});
    cases.push_back({"linear + bias + residual, relu", b.done(r)});
  }
  {
    GraphBuilder b(rng());
    const int q = b.input({1, 2, 7, 8});
    const int kt = b.input({1, 2, 8, 7});
    const int s = b.op(Op::add, {b.op(Op::div, {b.op(Op::matmul, {q, kt}), b.scalar(2.828427f)}), b.weight({1, 1, 1, 7})});
    cases.push_back({"attention scores / sqrt(d) + mask", b.done(s)});
  }
  {
    GraphBuilder b(rng());
    const int x = b.input({1, 6, 16});
    cases.push_back({"linear + bias, GELU (nn.GELU form)",
                     b.done(b.gelu(b.op(Op::add, {b.op(Op::matmul, {x, b.weight({16, 33})}), b.weight({33})}))), true});
  }
  {
    GraphBuilder b(rng());
    const int x = b.input({5, 12});
    cases.push_back({"gemm, GELU (other form)",
                     b.done(b.gelu_swapped(b.op(Op::gemm, {x, b.weight({7, 12}), b.weight({7})}, gemm_attributes(false, true)))),
                     true});
  }
  return cases;
}

double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

/// D as cuBLASLt computes it from `lt` (column-major, batched): its A is the plan's B, its B the
/// plan's A; the bias runs along D's rows.
Tensor emulate_cublaslt(const CallPlan& p, const LtProblem& lt, const std::vector<Tensor>& values, const Shape& out) {
  const float* a = values[static_cast<std::size_t>(p.b)].data.data();
  const float* b = values[static_cast<std::size_t>(p.a)].data.data();
  const float* c = p.c >= 0 ? values[static_cast<std::size_t>(p.c)].data.data() : nullptr;
  const float* bias = p.bias >= 0 ? values[static_cast<std::size_t>(p.bias)].data.data() : nullptr;
  const auto rows = static_cast<std::int64_t>(lt.d.rows);
  const auto cols = static_cast<std::int64_t>(lt.d.cols);
  // op(A) is rows x k and op(B) k x cols: the layouts must say so.
  EXPECT_EQ(lt.trans_a ? lt.a.cols : lt.a.rows, lt.d.rows);
  EXPECT_EQ(lt.trans_a ? lt.a.rows : lt.a.cols, static_cast<std::uint64_t>(p.k));
  EXPECT_EQ(lt.trans_b ? lt.b.rows : lt.b.cols, lt.d.cols);
  EXPECT_EQ(lt.trans_b ? lt.b.cols : lt.b.rows, static_cast<std::uint64_t>(p.k));
  EXPECT_GE(static_cast<std::uint64_t>(lt.a.ld), lt.a.rows);
  EXPECT_GE(static_cast<std::uint64_t>(lt.b.ld), lt.b.rows);
  EXPECT_GE(static_cast<std::uint64_t>(lt.d.ld), lt.d.rows);
  Tensor d(out);
  for (std::int64_t batch = 0; batch < lt.batch; ++batch) {
    const float* ab = a + batch * lt.a.batch_stride;
    const float* bb = b + batch * lt.b.batch_stride;
    for (std::int64_t j = 0; j < cols; ++j) {
      for (std::int64_t i = 0; i < rows; ++i) {
        double acc = 0.0;
        for (std::int64_t l = 0; l < p.k; ++l) {
          const double x = lt.trans_a ? ab[l + i * lt.a.ld] : ab[i + l * lt.a.ld];
          const double y = lt.trans_b ? bb[j + l * lt.b.ld] : bb[l + j * lt.b.ld];
          acc += x * y;
        }
        const std::int64_t at = batch * lt.d.batch_stride + i + j * lt.d.ld;
        double v = p.alpha * acc + (c != nullptr ? p.beta * c[at] : 0.0) + (bias != nullptr ? bias[i] : 0.0);
        if (p.activation == Activation::relu) v = std::max(v, 0.0);
        if (p.activation == Activation::gelu_tanh) v = gelu_tanh(v);
        d.data[static_cast<std::size_t>(at)] = static_cast<float>(v);
      }
    }
  }
  return d;
}

// ---- The plan --------------------------------------------------------------------------------

TEST(CublasPlan, GemmWithABiasVector) {
  GraphBuilder b;
  const int x = b.input({3, 5});
  const int w = b.weight({4, 5});
  const int bias = b.weight({4});
  const int gemm = b.op(Op::gemm, {x, w, bias}, gemm_attributes(false, true, 2.0f));
  const Graph g = b.done(gemm);
  collage::Result<CallPlan> p = plan_all(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->a, x);
  EXPECT_EQ(p->b, w);
  EXPECT_EQ(p->bias, bias);
  EXPECT_EQ(p->c, -1);
  EXPECT_EQ(p->result, gemm);
  EXPECT_EQ(std::vector<std::int64_t>({p->m, p->n, p->k, p->batch}), std::vector<std::int64_t>({3, 4, 5, 1}));
  EXPECT_FALSE(p->trans_a);
  EXPECT_TRUE(p->trans_b);
  EXPECT_EQ(p->alpha, 2.0);
  EXPECT_EQ(p->beta, 0.0);
  EXPECT_EQ(p->activation, Activation::none);
}

TEST(CublasPlan, GemmWithAFullCKeepsItsBeta) {
  GraphBuilder b;
  const int c = b.input({3, 4});
  const Graph g = b.done(b.op(Op::gemm, {b.input({5, 3}), b.weight({5, 4}), c}, gemm_attributes(true, false, 1.0f, 0.5f)));
  collage::Result<CallPlan> p = plan_all(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->c, c);
  EXPECT_EQ(p->beta, 0.5);
  EXPECT_EQ(p->bias, -1);
  EXPECT_TRUE(p->trans_a);
}

TEST(CublasPlan, RefusesAddendsCuBlasLtCannotTake) {
  {
    GraphBuilder b;  // a column addend
    const Graph g = b.done(b.op(Op::gemm, {b.input({3, 5}), b.weight({5, 4}), b.weight({3, 1})}, gemm_attributes(false, false)));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("cannot add"), std::string::npos) << p.error().message;
  }
  {
    GraphBuilder b;  // a scaled bias
    const Graph g = b.done(b.op(Op::gemm, {b.input({3, 5}), b.weight({5, 4}), b.weight({4})}, gemm_attributes(false, false, 1, 2)));
    EXPECT_FALSE(plan_all(g).ok());
  }
  {
    GraphBuilder b;  // two biases
    const int mm = b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})});
    const Graph g = b.done(b.op(Op::add, {b.op(Op::add, {mm, b.weight({4})}), b.weight({4})}));
    EXPECT_FALSE(plan_all(g).ok());
  }
}

TEST(CublasPlan, BatchesShareOrStack) {
  {
    GraphBuilder b;  // a stack of A against one B: one taller product
    const Graph g = b.done(b.op(Op::matmul, {b.input({2, 3, 4, 5}), b.weight({5, 6})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(std::vector<std::int64_t>({p->m, p->n, p->k, p->batch}), std::vector<std::int64_t>({24, 6, 5, 1}));
  }
  {
    GraphBuilder b;
    const Graph g = b.done(b.op(Op::matmul, {b.input({2, 3, 4, 5}), b.input({2, 3, 5, 6})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->batch, 6);
    EXPECT_EQ(p->stride_a, 20);
    EXPECT_EQ(p->stride_b, 30);
  }
  {
    GraphBuilder b;  // one A for every batch of B
    const Graph g = b.done(b.op(Op::matmul, {b.input({1, 4, 5}), b.input({3, 5, 6})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->batch, 3);
    EXPECT_EQ(p->stride_a, 0);
    EXPECT_EQ(p->stride_b, 30);
  }
  {
    GraphBuilder b;  // partly broadcast: no single stride
    const Graph g = b.done(b.op(Op::matmul, {b.input({2, 1, 4, 5}), b.input({1, 3, 5, 6})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("broadcast partly"), std::string::npos) << p.error().message;
  }
}

TEST(CublasPlan, VectorsArePromoted) {
  {
    GraphBuilder b;
    const Graph g = b.done(b.op(Op::matmul, {b.input({5}), b.weight({5, 6})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(std::vector<std::int64_t>({p->m, p->n, p->k}), std::vector<std::int64_t>({1, 6, 5}));
  }
  {
    GraphBuilder b;
    const Graph g = b.done(b.op(Op::matmul, {b.input({2, 4, 5}), b.input({5})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(std::vector<std::int64_t>({p->m, p->n, p->k, p->batch}), std::vector<std::int64_t>({8, 1, 5, 1}));
  }
}

TEST(CublasPlan, ScaleThenMaskBias) {
  GraphBuilder b;
  const int mask = b.weight({1, 1, 1, 7});
  const int scores = b.op(Op::matmul, {b.input({1, 2, 7, 8}), b.input({1, 2, 8, 7})});
  const Graph g = b.done(b.op(Op::add, {b.op(Op::div, {scores, b.scalar(4.0f)}), mask}));
  collage::Result<CallPlan> p = plan_all(g);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->alpha, 0.25);
  EXPECT_EQ(p->bias, mask);
  EXPECT_EQ(p->batch, 2);
}

TEST(CublasPlan, RefusesWhatItCannotFuse) {
  {
    GraphBuilder b;  // relu before the bias
    const int mm = b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})});
    const Graph g = b.done(b.op(Op::add, {b.op(Op::relu, {mm}), b.weight({4})}));
    EXPECT_FALSE(plan_all(g).ok());
  }
  {
    GraphBuilder b;  // a scale after the bias would scale the bias
    const int mm = b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})});
    const Graph g = b.done(b.op(Op::mul, {b.op(Op::add, {mm, b.weight({4})}), b.scalar(2.0f)}));
    EXPECT_FALSE(plan_all(g).ok());
  }
  {
    GraphBuilder b;  // a scale by a tensor
    const int mm = b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})});
    const Graph g = b.done(b.op(Op::mul, {mm, b.weight({3, 4})}));
    EXPECT_FALSE(plan_all(g).ok());
  }
  {
    GraphBuilder b;  // another operator
    const Graph g = b.done(b.op(Op::sigmoid, {b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})})}));
    collage::Result<CallPlan> p = plan_all(g);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("cannot fuse"), std::string::npos) << p.error().message;
  }
}

TEST(CublasPlan, GeluOnlyWhenApproximationIsAllowed) {
  for (int form = 0; form < 2; ++form) {
    GraphBuilder b;
    const int mm = b.op(Op::add, {b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})}), b.weight({4})});
    const Graph g = b.done(form == 0 ? b.gelu(mm) : b.gelu_swapped(mm));
    EXPECT_FALSE(plan_all(g).ok());
    collage::Result<CallPlan> p = plan_all(g, true);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->activation, Activation::gelu_tanh);
    EXPECT_GE(p->bias, 0);
  }
}

TEST(CublasPlan, GeluMustReadOneValueThroughout) {
  GraphBuilder b;
  const int x = b.input({3, 4});
  const int mm = b.op(Op::matmul, {b.input({3, 5}), b.weight({5, 4})});
  // (mm * (erf(x / sqrt 2) + 1)) * 0.5: erf of another value
  const int e = b.op(Op::erf, {b.op(Op::div, {x, b.scalar(1.4142135f)})});
  const Graph g = b.done(b.op(Op::mul, {b.op(Op::mul, {mm, b.op(Op::add, {e, b.scalar(1.0f)})}), b.scalar(0.5f)}));
  EXPECT_FALSE(read_anchor_chain(g, LibraryCall{"", operator_nodes(g)}).ok());
  EXPECT_FALSE(plan_all(g, true).ok());
}

TEST(CublasPlan, ColumnMajorProblemComputesTheGraph) {
  for (const MatmulCase& c : matmul_cases()) {
    SCOPED_TRACE(c.name);
    collage::Result<CallPlan> p = plan_all(c.graph, c.gelu);
    ASSERT_TRUE(p.ok()) << p.error().message;
    const std::vector<Tensor> inputs = testing::random_inputs(c.graph, 3);
    collage::Result<std::vector<Tensor>> values = evaluate_all(c.graph, inputs);
    ASSERT_TRUE(values.ok()) << values.error().message;
    const Tensor& expected = (*values)[static_cast<std::size_t>(p->result)];
    const Tensor got = emulate_cublaslt(*p, cublas::lt_problem(*p), *values, expected.shape);
    std::string worst;
    // GELU: cuBLASLt's tanh form against the graph's erf form.
    EXPECT_TRUE(all_close(got, expected, 1e-5, c.gelu ? 6e-4 : 1e-5, &worst)) << worst;
  }
}

// ---- The rule ---------------------------------------------------------------------------------

std::vector<Claim> sorted(std::vector<Claim> v) {
  std::sort(v.begin(), v.end(), [](const Claim& a, const Claim& b) { return a.composite < b.composite; });
  return v;
}

TEST(CublasRule, ClaimsALinearLayerWithItsBiasAndRelu) {
  GraphBuilder b;
  const int mm = b.op(Op::matmul, {b.input({4, 8}), b.weight({8, 16})});
  const int add = b.op(Op::add, {mm, b.weight({16})});
  const int relu = b.op(Op::relu, {add});
  const Graph g = b.done(relu);
  EXPECT_EQ(sorted(claims(cublas_spec(), g)),
            (std::vector<Claim>{{"cublas.dense", {mm}}, {"cublas.dense_add", {mm, add}}, {"cublas.dense_add_relu", {mm, add, relu}}}));
  EXPECT_EQ(cublas_spec().target, "cublas");
}

TEST(CublasRule, ClaimsGeluOnlyWhenApproximationIsAllowed) {
  GraphBuilder b;
  const int mm = b.op(Op::matmul, {b.input({1, 6, 8}), b.weight({8, 16})});
  const int add = b.op(Op::add, {mm, b.weight({16})});
  const int gelu = b.gelu(add);
  const Graph g = b.done(gelu);
  EXPECT_EQ(sorted(claims(cublas_spec(), g)), (std::vector<Claim>{{"cublas.dense", {mm}}, {"cublas.dense_add", {mm, add}}}));
  cublas::Options approximate;
  approximate.approximate_gelu = true;
  std::vector<int> all = operator_nodes(g);
  EXPECT_EQ(sorted(claims(cublas_spec(approximate), g)),
            (std::vector<Claim>{{"cublas.dense", {mm}}, {"cublas.dense_add", {mm, add}}, {"cublas.dense_add_gelu", all}}));
}

TEST(CublasRule, ClaimsScaledAttentionScoresWithTheirMask) {
  GraphBuilder b;
  const int mm = b.op(Op::matmul, {b.input({1, 2, 5, 4}), b.input({1, 2, 4, 5})});
  const int scaled = b.op(Op::div, {mm, b.scalar(2.0f)});
  const int masked = b.op(Op::add, {scaled, b.weight({1, 1, 1, 5})});
  const Graph g = b.done(b.op(Op::softmax, {masked}));
  EXPECT_EQ(sorted(claims(cublas_spec(), g)),
            (std::vector<Claim>{{"cublas.dense", {mm}}, {"cublas.dense_scale", {mm, scaled}},
                                {"cublas.dense_scale_add", {mm, scaled, masked}}}));
}

TEST(CublasRule, ClaimsBiasAndResidualTogether) {
  GraphBuilder b;
  const int x = b.input({3, 8});
  const int mm = b.op(Op::matmul, {x, b.weight({8, 8})});
  const int bias = b.op(Op::add, {mm, b.weight({8})});
  const int residual = b.op(Op::add, {x, bias});
  const int relu = b.op(Op::relu, {residual});
  const Graph g = b.done(relu);
  EXPECT_EQ(sorted(claims(cublas_spec(), g)),
            (std::vector<Claim>{{"cublas.dense", {mm}},
                                {"cublas.dense_add", {mm, bias}},
                                {"cublas.dense_add_add", {mm, bias, residual}},
                                {"cublas.dense_add_add_relu", {mm, bias, residual, relu}}}));
}

TEST(CublasRule, LeavesWhatItCannotRun) {
  {
    GraphBuilder b;  // partly broadcast batches
    const Graph g = b.done(b.op(Op::matmul, {b.input({2, 1, 3, 4}), b.input({1, 5, 4, 6})}));
    EXPECT_TRUE(claims(cublas_spec(), g).empty());
  }
  {
    GraphBuilder b;  // Gemm with a column C
    const Graph g = b.done(b.op(Op::gemm, {b.input({3, 5}), b.weight({5, 4}), b.weight({3, 1})}, gemm_attributes(false, false)));
    EXPECT_TRUE(claims(cublas_spec(), g).empty());
  }
  {
    GraphBuilder b;  // no matrix product at all
    const Graph g = b.done(b.op(Op::relu, {b.op(Op::add, {b.input({3, 4}), b.input({3, 4})})}));
    EXPECT_TRUE(claims(cublas_spec(), g).empty());
  }
}

TEST(CublasRule, DoesNotFuseAProductThatIsAlsoUsedElsewhere) {
  GraphBuilder b;
  const int mm = b.op(Op::matmul, {b.input({4, 8}), b.weight({8, 16})});
  const int relu = b.op(Op::relu, {b.op(Op::add, {mm, b.weight({16})})});
  const int other = b.op(Op::sigmoid, {mm});
  const int out = b.op(Op::add, {relu, other});
  const Graph g = b.done(out);
  EXPECT_EQ(claims(cublas_spec(), g), (std::vector<Claim>{{"cublas.dense", {mm}}}));
}

// ---- The backend ------------------------------------------------------------------------------

TEST(CublasBackend, IsACudaTarget) { testing::expect_cuda_target(*make_cublas_backend(), "cublas"); }

TEST(CublasBackend, LoadsCuBlasLtWhenBuiltWithIt) {
#if TC_HAVE_CUBLASLT
  const collage::Status loaded = cublas::load_cublaslt();
  EXPECT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_TRUE(cublas::load_cublaslt().ok());
#else
  GTEST_SKIP() << cublas_registration().not_built;
#endif
}

TEST(CublasBackend, CompileSaysWhyWithoutAGpu) {
  GraphBuilder b;
  const Graph g = b.done(b.op(Op::matmul, {b.input({4, 8}), b.weight({8, 16})}));
  const Function f = whole_model_function(g);
  testing::expect_refusals_without_a_gpu(*make_cublas_backend(), f);
}

// ---- On a GPU ---------------------------------------------------------------------------------

using CublasGpu = testing::GpuTest;

TEST_F(CublasGpu, KernelsMatchTheReference) {
  cublas::Options approximate;
  approximate.approximate_gelu = true;
  std::unique_ptr<Backend> exact = make_cublas_backend();
  std::unique_ptr<Backend> with_gelu = make_cublas_backend(approximate);
  for (const MatmulCase& c : matmul_cases()) {
    testing::expect_kernel_matches_reference(c.gelu ? *with_gelu : *exact, testing::cuda_device(), c.graph, c.name, 1e-3,
                                             c.gelu ? 6e-4 : 1e-4);
  }
}

TEST_F(CublasGpu, Tf32KernelsMatchTheReferenceLoosely) {
  cublas::Options tf32;
  tf32.tf32 = true;
  std::unique_ptr<Backend> backend = make_cublas_backend(tf32);
  for (const MatmulCase& c : matmul_cases()) {
    if (!c.gelu) testing::expect_kernel_matches_reference(*backend, testing::cuda_device(), c.graph, c.name, 2e-2, 2e-2);
  }
}

TEST_F(CublasGpu, MisalignedOperandsAreAnError) {
  GraphBuilder b;
  const Graph g = b.done(b.op(Op::matmul, {b.input({4, 8}), b.weight({8, 16})}));
  collage::Result<std::unique_ptr<Kernel>> kernel = make_cublas_backend()->compile(whole_model_function(g), testing::cuda_device());
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  collage::Result<OwnedBuffer> buffer = allocate_owned(testing::cuda_device(), 1024);
  ASSERT_TRUE(buffer.ok());
  const float* in = buffer->floats() + 1;
  collage::Status st = (*kernel)->run({in}, {buffer->floats() + 64});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("aligned"), std::string::npos) << st.message();
  EXPECT_FALSE((*kernel)->run({buffer->floats()}, {}).ok());
}

}  // namespace
}  // namespace tc
