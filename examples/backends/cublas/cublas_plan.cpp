#include "backends/cublas/cublas_plan.hpp"

#include <optional>
#include <string>
#include <utility>

#include "backends/kit/epilogue.hpp"
#include "tensor/op_attrs.hpp"

namespace tc::cublas {

using collage::Error;
using collage::ErrorCode;
using collage::Result;

namespace {

Error refuse(const std::string& why) { return Error{ErrorCode::invalid_argument, why}; }

/// Whether `n` is a one-element constant; `value` receives it.
bool scalar_operand(const Graph& g, int n, float& value) {
  const std::optional<float> v = scalar_constant(g, n);
  if (v) value = *v;
  return v.has_value();
}

/// A value added to the product: which node, scaled by how much.
struct Addend {
  int node = -1;
  double scale = 1.0;
};

/// The shape of A or B as a batch of matrices, with numpy's promotion of 1-D operands.
struct MatrixStack {
  Shape batch;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

MatrixStack as_matrices(const Shape& s, bool is_a) {
  MatrixStack m;
  if (s.size() == 1) {
    m.rows = is_a ? 1 : s[0];
    m.cols = is_a ? s[0] : 1;
    return m;
  }
  m.batch.assign(s.begin(), s.end() - 2);
  m.rows = s[s.size() - 2];
  m.cols = s[s.size() - 1];
  return m;
}

Result<CallPlan> plan_anchor(const Graph& g, int anchor, std::vector<Addend>& addends) {
  const Node& node = g.node(anchor);
  CallPlan p;
  p.a = node.inputs[0];
  p.b = node.inputs[1];
  const Shape& sa = g.node(p.a).shape;
  const Shape& sb = g.node(p.b).shape;
  if (node.op == Op::gemm) {
    if (sa.size() != 2 || sb.size() != 2) return refuse("Gemm operands must be matrices");
    const GemmAttrs attrs = gemm_attrs(node);
    p.trans_a = attrs.trans_a;
    p.trans_b = attrs.trans_b;
    p.m = p.trans_a ? sa[1] : sa[0];
    p.k = p.trans_a ? sa[0] : sa[1];
    p.n = p.trans_b ? sb[0] : sb[1];
    p.alpha = attrs.alpha;
    if (node.inputs.size() == 3 && attrs.beta != 0.0) addends.push_back({node.inputs[2], attrs.beta});
  } else if (node.op == Op::matmul) {
    if (sa.empty() || sb.empty()) return refuse("MatMul of a scalar");
    const MatrixStack a = as_matrices(sa, true);
    const MatrixStack b = as_matrices(sb, false);
    if (a.cols != b.rows) return refuse("MatMul inner dimensions " + to_string(sa) + " x " + to_string(sb) + " differ");
    const std::optional<Shape> batch = broadcast_shapes(a.batch, b.batch);
    if (!batch) return refuse("MatMul batch dimensions " + to_string(sa) + " x " + to_string(sb) + " do not broadcast");
    p.m = a.rows;
    p.k = a.cols;
    p.n = b.cols;
    p.batch = numel(*batch);
    const std::int64_t na = numel(a.batch);
    const std::int64_t nb = numel(b.batch);
    // One strided batch: each operand either repeats one matrix (stride 0) or has them all.
    if ((na != 1 && na != p.batch) || (nb != 1 && nb != p.batch)) {
      return refuse("MatMul batch dimensions " + to_string(sa) + " x " + to_string(sb) +
                    " broadcast partly, which one strided batch cannot express");
    }
    p.stride_a = na == 1 ? 0 : p.m * p.k;
    p.stride_b = nb == 1 ? 0 : p.k * p.n;
    if (p.stride_b == 0 && p.stride_a != 0) {
      // A stack of A against one B is one taller matrix product.
      p.m *= p.batch;
      p.batch = 1;
      p.stride_a = 0;
    }
    if (p.batch == 1) p.stride_a = p.stride_b = 0;
  } else {
    return refuse(describe(g, anchor) + " is not a MatMul or Gemm");
  }
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0) return refuse("empty matrix product " + describe(g, anchor));
  return p;
}

/// Sorts the addends into the plan's C and bias.
collage::Status place_addends(const Graph& g, const std::vector<Addend>& addends, const Shape& result, CallPlan& p) {
  for (const Addend& add : addends) {
    const Shape& s = g.node(add.node).shape;
    const bool row_vector = numel(s) == p.n && (p.n == 1 || (!s.empty() && s.back() == p.n));
    if (s == result && p.c < 0) {
      p.c = add.node;
      p.beta = add.scale;
    } else if (row_vector && p.bias < 0 && add.scale == 1.0) {
      p.bias = add.node;
    } else if (row_vector && p.bias < 0) {
      return refuse("a bias scaled by " + std::to_string(add.scale));
    } else {
      return refuse("cannot add " + describe(g, add.node) + " of shape " + to_string(s) + " to a " + to_string(result) +
                    " product (one bias of length " + std::to_string(p.n) + " and one tensor of the product's shape)");
    }
  }
  return collage::Status::success();
}

}  // namespace

std::vector<int> operands(const CallPlan& plan) { return {plan.a, plan.b, plan.c, plan.bias}; }

Result<CallPlan> plan(const Graph& g, const LibraryCall& call, const Options& options) {
  if (call.nodes.empty()) return refuse("an empty call");
  std::vector<Addend> addends;
  Result<CallPlan> planned = plan_anchor(g, call.nodes.front(), addends);
  if (!planned.ok()) return planned.error();
  Result<AnchorChain> chain = read_anchor_chain(g, call);
  if (!chain.ok()) return chain.error();
  CallPlan p = *planned;
  int cur = chain->anchor;
  bool scaled = false;
  const std::vector<EpilogueStep>& steps = chain->epilogue;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const EpilogueStep& step = steps[i];
    const bool last = i + 1 == steps.size();
    float s = 0.0f;
    const bool by_scalar = step.kind == EpilogueStep::Kind::binary && scalar_operand(g, step.operand, s);
    if (step.kind == EpilogueStep::Kind::gelu_erf && options.approximate_gelu && last) {
      p.activation = Activation::gelu_tanh;
    } else if (step.kind == EpilogueStep::Kind::unary && step.op == Op::relu && last) {
      p.activation = Activation::relu;
    } else if (!scaled && by_scalar && step.op == Op::div && !step.operand_first && s != 0.0f) {
      scaled = true;
      p.alpha /= s;
      for (Addend& a : addends) a.scale /= s;
    } else if (!scaled && by_scalar && step.op == Op::mul) {
      scaled = true;
      p.alpha *= s;
      for (Addend& a : addends) a.scale *= s;
    } else if (step.kind == EpilogueStep::Kind::binary && step.op == Op::add && addends.size() < 2) {
      addends.push_back({step.operand, 1.0});
      scaled = true;  // a scale after an Add would scale the addend: not fused
    } else {
      return refuse("cannot fuse " + describe(g, step.node) + " after " + describe(g, cur));
    }
    cur = step.node;
  }
  p.result = cur;
  const Shape& result = g.node(cur).shape;
  if (numel(result) != p.batch * p.m * p.n) {
    return refuse(describe(g, cur) + " of shape " + to_string(result) + " is not the product's shape");
  }
  if (collage::Status st = place_addends(g, addends, result, p); !st.ok()) return st.error();
  return p;
}

LtProblem lt_problem(const CallPlan& p) {
  LtProblem lt;
  lt.batch = p.batch;
  const auto m = static_cast<std::uint64_t>(p.m);
  const auto n = static_cast<std::uint64_t>(p.n);
  const auto k = static_cast<std::uint64_t>(p.k);
  // cuBLASLt's A is the plan's B: stored k x n row-major (n x k column-major), or n x k when
  // transposed (k x n column-major, used transposed).
  lt.trans_a = p.trans_b;
  lt.a = p.trans_b ? LtMatrix{k, n, p.k, p.stride_b} : LtMatrix{n, k, p.n, p.stride_b};
  // cuBLASLt's B is the plan's A: stored m x k row-major (k x m column-major), or k x m.
  lt.trans_b = p.trans_a;
  lt.b = p.trans_a ? LtMatrix{m, k, p.m, p.stride_a} : LtMatrix{k, m, p.k, p.stride_a};
  lt.d = LtMatrix{n, m, p.n, p.batch == 1 ? 0 : p.m * p.n};
  return lt;
}

}  // namespace tc::cublas
