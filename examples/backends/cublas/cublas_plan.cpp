#include "backends/cublas/cublas_plan.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

namespace tc {

using collage::Error;
using collage::ErrorCode;
using collage::Result;

namespace {

Error refuse(const std::string& why) { return Error{ErrorCode::invalid_argument, "cublas: " + why}; }

/// The value of `n` when it is a one-element constant.
bool scalar_value(const Graph& g, int n, double& value) {
  const Node& node = g.node(n);
  if (node.op != Op::constant || node.value == nullptr || node.value->data.size() != 1) return false;
  value = node.value->data.front();
  return true;
}

bool is_scalar(const Graph& g, int n, double want) {
  double v = 0.0;
  return scalar_value(g, n, v) && std::fabs(v - want) <= 1e-4 * std::fabs(want);
}

/// Whether `n` is `op` of `a` and a node for which `other` holds, in either order (or only a
/// first when `commutes` is false); `other` receives that node.
template <class Pred>
bool binary_of(const Graph& g, int n, Op op, int a, Pred other, bool commutes = true) {
  const Node& node = g.node(n);
  if (node.op != op || node.inputs.size() != 2) return false;
  if (node.inputs[0] == a && other(node.inputs[1])) return true;
  return commutes && node.inputs[1] == a && other(node.inputs[0]);
}

/// The first node of `nodes` for which `pred` holds, or -1.
template <class Pred>
int find_node(const std::vector<int>& nodes, Pred pred) {
  auto it = std::find_if(nodes.begin(), nodes.end(), pred);
  return it == nodes.end() ? -1 : *it;
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

Result<MatmulPlan> plan_anchor(const Graph& g, int anchor, std::vector<Addend>& addends) {
  const Node& node = g.node(anchor);
  MatmulPlan p;
  p.a = node.inputs[0];
  p.b = node.inputs[1];
  const Shape& sa = g.node(p.a).shape;
  const Shape& sb = g.node(p.b).shape;
  if (node.op == Op::gemm) {
    if (sa.size() != 2 || sb.size() != 2) return refuse("Gemm operands must be matrices");
    p.trans_a = node.attrs.get_int("trans_a") != 0;
    p.trans_b = node.attrs.get_int("trans_b") != 0;
    p.m = p.trans_a ? sa[1] : sa[0];
    p.k = p.trans_a ? sa[0] : sa[1];
    p.n = p.trans_b ? sb[0] : sb[1];
    p.alpha = node.attrs.get_float("alpha", 1.0);
    const double beta = node.attrs.get_float("beta", 1.0);
    if (node.inputs.size() == 3 && beta != 0.0) addends.push_back({node.inputs[2], beta});
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
collage::Status place_addends(const Graph& g, const std::vector<Addend>& addends, const Shape& result, MatmulPlan& p) {
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

int match_gelu_erf(const Graph& g, int x, const std::vector<int>& rest) {
  if (rest.size() != 5) return -1;
  auto scalar = [&](double v) { return [&g, v](int n) { return is_scalar(g, n, v); }; };
  auto is_node = [](int want) { return [want](int n) { return n == want; }; };
  const int scaled = find_node(rest, [&](int n) {
    return binary_of(g, n, Op::div, x, scalar(1.4142135623730951), false) ||
           binary_of(g, n, Op::mul, x, scalar(0.7071067811865476));
  });
  if (scaled < 0) return -1;
  const int erf = find_node(rest, [&](int n) { return g.node(n).op == Op::erf && g.node(n).inputs[0] == scaled; });
  if (erf < 0) return -1;
  const int plus = find_node(rest, [&](int n) { return binary_of(g, n, Op::add, erf, scalar(1.0)); });
  if (plus < 0) return -1;
  std::vector<int> used{scaled, erf, plus};
  // (x * (erf + 1)) * 0.5
  int inner = find_node(rest, [&](int n) { return binary_of(g, n, Op::mul, x, is_node(plus)); });
  int last = inner < 0 ? -1 : find_node(rest, [&](int n) { return binary_of(g, n, Op::mul, inner, scalar(0.5)); });
  if (last < 0) {
    // (x * 0.5) * (erf + 1)
    inner = find_node(rest, [&](int n) { return binary_of(g, n, Op::mul, x, scalar(0.5)); });
    last = inner < 0 ? -1 : find_node(rest, [&](int n) { return binary_of(g, n, Op::mul, inner, is_node(plus)); });
  }
  if (last < 0 || last != rest.back()) return -1;
  used.push_back(inner);
  used.push_back(last);
  std::sort(used.begin(), used.end());
  std::vector<int> sorted_rest = rest;
  std::sort(sorted_rest.begin(), sorted_rest.end());
  return used == sorted_rest ? last : -1;
}

Result<MatmulPlan> plan_matmul(const Graph& g, const std::vector<int>& nodes, const CublasOptions& options) {
  if (nodes.empty()) return refuse("an empty call");
  std::vector<Addend> addends;
  Result<MatmulPlan> planned = plan_anchor(g, nodes.front(), addends);
  if (!planned.ok()) return planned.error();
  MatmulPlan p = *planned;
  auto inside = [&](int n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
  int cur = nodes.front();
  bool scaled = false;
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const int n = nodes[i];
    const Node& node = g.node(n);
    auto other_operand = [&] { return node.inputs[0] == cur ? node.inputs[1] : node.inputs[0]; };
    const std::vector<int> rest(nodes.begin() + static_cast<std::ptrdiff_t>(i), nodes.end());
    double s = 0.0;
    if (options.approximate_gelu && match_gelu_erf(g, cur, rest) >= 0) {
      p.activation = MatmulActivation::gelu_tanh;
      cur = rest.back();
      break;
    }
    const bool reads_cur = std::find(node.inputs.begin(), node.inputs.end(), cur) != node.inputs.end();
    if (!reads_cur) return refuse(describe(g, n) + " does not read " + describe(g, cur));
    if (node.op == Op::relu && i + 1 == nodes.size()) {
      p.activation = MatmulActivation::relu;
    } else if (!scaled && node.op == Op::div && node.inputs[0] == cur &&
               scalar_value(g, node.inputs[1], s) && s != 0.0) {
      scaled = true;
      p.alpha /= s;
      for (Addend& a : addends) a.scale /= s;
    } else if (!scaled && node.op == Op::mul && node.inputs[0] != node.inputs[1] && scalar_value(g, other_operand(), s)) {
      scaled = true;
      p.alpha *= s;
      for (Addend& a : addends) a.scale *= s;
    } else if (node.op == Op::add && node.inputs[0] != node.inputs[1] && !inside(other_operand()) && addends.size() < 2) {
      addends.push_back({other_operand(), 1.0});
      scaled = true;  // a scale after an Add would scale the addend: not fused
    } else {
      return refuse("cannot fuse " + describe(g, n) + " after " + describe(g, cur));
    }
    cur = n;
  }
  if (cur != nodes.back()) return refuse("the call does not end at " + describe(g, nodes.back()));
  p.result = cur;
  const Shape& result = g.node(cur).shape;
  if (numel(result) != p.batch * p.m * p.n) {
    return refuse(describe(g, cur) + " of shape " + to_string(result) + " is not the product's shape");
  }
  if (collage::Status st = place_addends(g, addends, result, p); !st.ok()) return st.error();
  return p;
}

LtProblem lt_problem(const MatmulPlan& p) {
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

}  // namespace tc
