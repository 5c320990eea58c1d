// The cuda backend's code generator on the CPU: which kernels each kind of partition becomes, and
// those kernels emulated launch by launch (their index arithmetic through the functions they
// call) against the reference interpreter, for every candidate of the rule on random graphs and
// on model-like graphs.

#include "backends/cuda/cuda_codegen.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>

#include "cuda_testing.hpp"

namespace tc {
namespace {

using cuda_testing::Generated;
using cuda_testing::ints_attr;
using cudagen::KernelKind;
using testing::GraphBuilder;
using Ints = std::vector<std::int64_t>;

/// Whether the generated kernels of `function`, emulated on the CPU, compute what the reference
/// interpreter does on random inputs.
::testing::AssertionResult emulation_matches(const Function& function, const Generated& generated, std::uint64_t seed,
                                             double rtol = 1e-4, double atol = 1e-4) {
  std::mt19937_64 rng(seed);
  const std::vector<Tensor> inputs = testing::random_inputs(function.graph, rng);
  auto expected = evaluate(function.graph, inputs);
  if (!expected.ok()) return ::testing::AssertionFailure() << "reference: " << expected.error().message;
  auto actual = cuda_testing::emulate(function, generated.lowered, generated.program, inputs);
  if (!actual.ok()) return ::testing::AssertionFailure() << "emulation: " << actual.error().message;
  for (std::size_t k = 0; k < expected->size(); ++k) {
    std::string worst;
    if (!all_close((*actual)[k], (*expected)[k], rtol, atol, &worst)) {
      return ::testing::AssertionFailure() << "output " << k << ": " << worst << "\n"
                                           << generated.lowered.to_string() << generated.program.source;
    }
  }
  return ::testing::AssertionSuccess();
}

/// The kinds of the launches of the whole of `graph`, with "+" after one that applies its epilogue.
std::vector<std::string> launch_kinds(const Graph& graph, Generated* out = nullptr) {
  const Function function = whole_model_function(graph);
  auto generated = cuda_testing::generate(function);
  EXPECT_TRUE(generated.ok()) << generated.error().message;
  if (!generated.ok()) return {};
  EXPECT_TRUE(emulation_matches(function, *generated, 5));
  std::vector<std::string> kinds;
  for (const cudagen::KernelLaunch& l : generated->program.launches) {
    kinds.push_back(std::string(cudagen::to_string(l.kind)) + (l.fused_epilogue ? "+" : ""));
  }
  if (out != nullptr) *out = std::move(generated).value();
  return kinds;
}

using Kinds = std::vector<std::string>;

TEST(CudaCodegen, FloatLiteralsReadBackBitForBit) {
  for (float v : {1.5f, -0.1f, 1e-30f, 3.4e38f, 1e-45f, 0.70710678f, 1.0f / 3.0f}) {
    const std::string s = cudagen::float_literal(v);
    ASSERT_EQ(s.back(), 'f') << s;
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(cudagen::float_literal(0.0f), "0.0f");
  EXPECT_EQ(cudagen::float_literal(-0.0f), "-0.0f");
  EXPECT_EQ(cudagen::float_literal(std::numeric_limits<float>::infinity()), "__int_as_float(0x7f800000)");
  EXPECT_EQ(cudagen::float_literal(-std::numeric_limits<float>::infinity()), "__int_as_float(0xff800000)");
}

TEST(CudaCodegen, AnchorsRunTiledWithTheirEpilogueInRegisters) {
  {
    GraphBuilder b(1);
    const int conv = b.op(Op::conv, {b.input({1, 5, 9, 11}), b.weight({7, 5, 3, 3}), b.weight({7})},
                          ints_attr("pads", {1, 1, 1, 1}));
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::relu, {conv}))), (Kinds{"conv_gemm+"}));
  }
  {
    GraphBuilder b(2);
    Attributes dw = ints_attr("pads", {1, 1, 1, 1});
    dw.set("group", std::int64_t{6});
    dw.set("strides", Ints{2, 2});
    const int conv = b.op(Op::conv, {b.input({2, 6, 9, 8}), b.weight({6, 1, 3, 3}), b.weight({6})}, dw);
    Attributes six;
    six.set("min", 0.0);
    six.set("max", 6.0);
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::clip, {conv}, six))), (Kinds{"conv_direct+"}));
  }
  {
    // Grouped, two channels per group, and a batch of two: one product per group.
    GraphBuilder b(3);
    Attributes grouped;
    grouped.set("group", std::int64_t{3});
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::conv, {b.input({2, 6, 5, 5}), b.weight({9, 2, 3, 3})}, grouped))),
              (Kinds{"conv_direct"}));
    GraphBuilder c(4);
    grouped.set("group", std::int64_t{2});
    EXPECT_EQ(launch_kinds(c.done(c.op(Op::conv, {c.input({2, 12, 5, 5}), c.weight({4, 6, 3, 3})}, grouped))),
              (Kinds{"conv_gemm"}));
  }
  {
    // MatMul + bias + GELU (erf form) as exporters write it: one tiled product.
    GraphBuilder b(5);
    const int y = cuda_testing::linear(b, b.input({3, 13, 24}), 24, 40);
    const int e = b.op(Op::add, {b.op(Op::erf, {b.op(Op::div, {y, b.scalar(1.41421356f)})}), b.scalar(1.0f)});
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::mul, {b.op(Op::mul, {y, e}), b.scalar(0.5f)}))), (Kinds{"gemm+"}));
  }
  {
    // Batched, broadcasting B, transposed operands through Gemm's flags and its alpha and beta.
    GraphBuilder b(6);
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::matmul, {b.input({2, 3, 5, 7}), b.input({3, 7, 4})}))), (Kinds{"gemm"}));
    GraphBuilder c(7);
    Attributes t;
    t.set("trans_a", std::int64_t{1});
    t.set("trans_b", std::int64_t{1});
    t.set("alpha", 0.5);
    t.set("beta", 2.0);
    EXPECT_EQ(launch_kinds(c.done(c.op(Op::gemm, {c.input({9, 6}), c.input({11, 9}), c.weight({6, 11})}, t))),
              (Kinds{"gemm+"}));
  }
}

TEST(CudaCodegen, ReductionsFuseTheirPrologueAndEpilogueAlongRows) {
  {
    // Softmax decomposed: the maximum, then the sum with its epilogue row by row.
    GraphBuilder b(8);
    const int x = b.input({2, 5, 37});
    const int m = b.reduce(Op::reduce_max, x, {-1});
    const int e = b.op(Op::exp, {b.op(Op::sub, {x, m})});
    const int s = b.reduce(Op::reduce_sum, e, {-1});
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::div, {e, s}))), (Kinds{"reduce_rows", "reduce_rows+"}));
  }
  {
    // Few elements per row: one thread per result.
    GraphBuilder b(9);
    const int x = b.input({40, 6});
    const int m = b.reduce(Op::reduce_mean, b.op(Op::mul, {x, x}), {1});
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::sub, {x, m}))), (Kinds{"reduce_columns+"}));
  }
  {
    // Over outer axes with an epilogue broadcasting the result: the native backend's buffer of
    // the results between two launches.
    GraphBuilder b(10);
    const int x = b.input({6, 5, 4});
    const int s = b.reduce(Op::reduce_sum, b.op(Op::mul, {x, x}), {0, 2});
    Generated g;
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::div, {x, b.op(Op::sqrt, {b.op(Op::add, {s, b.scalar(1.0f)})})})), &g),
              (Kinds{"reduce_columns", "elementwise"}));
    EXPECT_EQ(g.program.split_stages, 1);
  }
  {
    GraphBuilder b(11);
    const int y = b.input({1, 8, 5, 5});
    const int gate = b.op(Op::sigmoid, {b.op(Op::global_average_pool, {y})});
    EXPECT_EQ(launch_kinds(b.done(b.op(Op::mul, {y, gate}))), (Kinds{"reduce_columns+"}));  // squeeze-excite
  }
}

TEST(CudaCodegen, RowKernelsAndPooling) {
  Attributes last;
  last.set("axis", std::int64_t{2});
  GraphBuilder a(12);
  EXPECT_EQ(launch_kinds(a.done(a.op(Op::softmax, {a.input({2, 3, 50})}, last))), (Kinds{"softmax_rows"}));
  Attributes middle;
  middle.set("axis", std::int64_t{1});
  GraphBuilder b(13);
  EXPECT_EQ(launch_kinds(b.done(b.op(Op::relu, {b.op(Op::softmax, {b.input({2, 5, 7})}, middle)}))),
            (Kinds{"softmax_columns+"}));
  GraphBuilder c(14);
  const int ln = c.op(Op::layer_norm, {c.input({3, 4, 10}), c.weight({4, 1}), c.weight({10})}, middle);
  EXPECT_EQ(launch_kinds(c.done(c.op(Op::tanh, {ln}))), (Kinds{"layer_norm+"}));
  GraphBuilder d(15);
  Attributes pool = ints_attr("kernel_shape", {3, 2});
  pool.set("strides", Ints{2, 1});
  pool.set("pads", Ints{1, 0, 1, 1});
  pool.set("count_include_pad", std::int64_t{1});
  EXPECT_EQ(launch_kinds(d.done(d.op(Op::average_pool, {d.input({2, 3, 7, 6})}, pool))), (Kinds{"pool"}));
  GraphBuilder e(16);
  Attributes one_d = ints_attr("kernel_shape", {3});
  one_d.set("dilations", Ints{2});
  EXPECT_EQ(launch_kinds(e.done(e.op(Op::max_pool, {e.input({2, 3, 11})}, one_d))), (Kinds{"pool"}));
}

TEST(CudaCodegen, InjectiveMapsReadThroughStridesChecksAndTables) {
  GraphBuilder b(17);
  const int pad = b.op(Op::pad, {b.op(Op::exp, {b.input({1, 3, 5, 4})})}, ints_attr("pads", {0, 0, 1, 2, 0, 0, 1, 0}));
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  const int cat = b.op(Op::concat, {pad, b.input({1, 2, 7, 6}), b.op(Op::neg, {pad})}, axis);
  Generated checked;
  EXPECT_EQ(launch_kinds(b.done(b.op(Op::relu, {cat})), &checked), (Kinds{"elementwise"}));
  EXPECT_TRUE(checked.program.tables.empty());  // padding and pieces as bounds checks
  // Reflect padding has no affine form: an index table.
  GraphBuilder c(18);
  Attributes reflect = ints_attr("pads", {0, 2, 0, 1});
  reflect.set("mode", std::int64_t{kPadReflect});
  Generated g;
  const int padded = c.op(Op::pad, {c.input({3, 5})}, reflect);
  EXPECT_EQ(launch_kinds(c.done(c.op(Op::exp, {padded})), &g), (Kinds{"elementwise"}));
  EXPECT_EQ(g.program.tables.size(), 1u);
  EXPECT_NE(g.program.source.find("const std::int64_t* __restrict__ t0"), std::string::npos);
  // An output that is a parameter: a copy kernel.
  GraphBuilder d(19);
  const int x = d.input({5});
  d.output(x);
  EXPECT_EQ(launch_kinds(d.done(d.op(Op::relu, {x}))), (Kinds{"elementwise", "elementwise"}));
}

TEST(CudaCodegen, SourceIsDeterministicAndNamesItsKernels) {
  const Graph g = cuda_testing::encoder_layer();
  auto first = cuda_testing::generate(whole_model_function(g));
  auto second = cuda_testing::generate(whole_model_function(g));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->program.source, second->program.source);
  for (const cudagen::KernelLaunch& l : first->program.launches) {
    EXPECT_NE(first->program.source.find("void __launch_bounds__(" + std::to_string(l.block) + ") " + l.kernel + "("),
              std::string::npos)
        << l.kernel;
  }
}

TEST(CudaCodegen, UnsupportedGeometriesAreErrors) {
  Graph conv;
  const int x = conv.add_input("x", {1, 2, 3, 3, 3, 3});
  conv.add_output(*conv.add_op(Op::conv, {x, conv.add_constant("w", Tensor({2, 2, 1, 1, 1, 1}, 1.0f))}));
  ASSERT_TRUE(infer_shapes(conv).ok());
  auto c = cuda_testing::generate(whole_model_function(conv));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("Conv with 4 spatial dimensions (1 to 3 are supported)"), std::string::npos)
      << c.error().message;
  loops::GemmCore gemm;
  gemm.batch = Shape(9, 2);
  gemm.a_batch_strides = gemm.b_batch_strides = Ints(9, 0);
  auto g = cudagen::gemm_geometry(gemm);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "cuda: matrix product with 9 batch dimensions (at most 8)");
}

// ---------------------------------------------------------------------------------------------
// Every candidate of the rule, emulated.

/// What generating every candidate of a graph found.
struct Census {
  std::size_t candidates = 0;
  std::size_t split = 0;
  std::map<std::string, std::size_t> kinds;
};

void emulate_every_candidate(const Graph& graph, std::uint64_t seed, Census& census) {
  cuda_testing::for_each_candidate(graph, [&](const std::string& label, const Function& function) {
    ++census.candidates;
    auto generated = cuda_testing::generate(function);
    ASSERT_TRUE(generated.ok()) << label << ": " << generated.error().message;
    // One kernel per partition; two where the native backend keeps a buffer too.
    EXPECT_EQ(generated->program.launches.size(), 1u + static_cast<std::size_t>(generated->program.split_stages))
        << label << "\n" << generated->lowered.to_string();
    census.split += static_cast<std::size_t>(generated->program.split_stages);
    for (const cudagen::KernelLaunch& l : generated->program.launches) ++census.kinds[cudagen::to_string(l.kind)];
    EXPECT_TRUE(emulation_matches(function, *generated, seed)) << label;
  });
}

TEST(CudaEmulation, EveryRuleCandidateOfRandomGraphsMatchesTheReference) {
  Census census;
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    native_testing::RandomGraph random(seed);
    emulate_every_candidate(random.make(static_cast<int>(6 + seed % 8)), seed, census);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "seed " << seed;
      break;
    }
  }
  EXPECT_GT(census.candidates, 1000u);
  std::string mix;
  for (const auto& [kind, count] : census.kinds) mix += " " + kind + " " + std::to_string(count);
  std::printf("%zu candidates, %zu split; kernels:%s\n", census.candidates, census.split, mix.c_str());
  // The generator's mix gives every kind of kernel.
  for (const char* kind : {"elementwise", "reduce_rows", "reduce_columns", "gemm", "conv_gemm", "conv_direct", "pool",
                           "softmax_rows", "softmax_columns", "layer_norm"}) {
    EXPECT_GT(census.kinds[kind], 0u) << kind;
  }
}

TEST(CudaEmulation, ModelGraphsMatchTheReference) {
  for (const auto& [name, graph] : cuda_testing::model_graphs()) {
    SCOPED_TRACE(name);
    Census census;
    emulate_every_candidate(graph, 3, census);
    EXPECT_EQ(census.split, 0u);
    // The whole graph as one function: several stages, their buffers between them.
    const Function whole = whole_model_function(graph);
    auto generated = cuda_testing::generate(whole);
    ASSERT_TRUE(generated.ok()) << generated.error().message;
    EXPECT_TRUE(emulation_matches(whole, *generated, 4, 1e-3, 1e-4));
  }
}

}  // namespace
}  // namespace tc

