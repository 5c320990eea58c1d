#include "tensor/ops.hpp"

#include <array>
#include <vector>

namespace tc {

namespace {

using collage::OpKind;

struct Entry {
  Op op;
  OpInfo info;
};

// TVM's registrations: elementwise activations kElemWise, binary ops kBroadcast, conv/dense/matmul
// and pooling kOutEWiseFusable (anchor), reductions kCommReduce, data movement kInjective, softmax
// and layer norm kOpaque.
const std::array kOps = {
    Entry{Op::input, {"Input", OpKind::opaque, 0, 0}},
    Entry{Op::constant, {"Constant", OpKind::opaque, 0, 0}},
    Entry{Op::identity, {"Identity", OpKind::elemwise, 1, 1}},
    Entry{Op::relu, {"Relu", OpKind::elemwise, 1, 1}},
    Entry{Op::sigmoid, {"Sigmoid", OpKind::elemwise, 1, 1}},
    Entry{Op::tanh, {"Tanh", OpKind::elemwise, 1, 1}},
    Entry{Op::exp, {"Exp", OpKind::elemwise, 1, 1}},
    Entry{Op::log, {"Log", OpKind::elemwise, 1, 1}},
    Entry{Op::sqrt, {"Sqrt", OpKind::elemwise, 1, 1}},
    Entry{Op::erf, {"Erf", OpKind::elemwise, 1, 1}},
    Entry{Op::neg, {"Neg", OpKind::elemwise, 1, 1}},
    Entry{Op::abs, {"Abs", OpKind::elemwise, 1, 1}},
    Entry{Op::reciprocal, {"Reciprocal", OpKind::elemwise, 1, 1}},
    Entry{Op::sin, {"Sin", OpKind::elemwise, 1, 1}},
    Entry{Op::cos, {"Cos", OpKind::elemwise, 1, 1}},
    Entry{Op::tan, {"Tan", OpKind::elemwise, 1, 1}},
    Entry{Op::asin, {"Asin", OpKind::elemwise, 1, 1}},
    Entry{Op::acos, {"Acos", OpKind::elemwise, 1, 1}},
    Entry{Op::atan, {"Atan", OpKind::elemwise, 1, 1}},
    Entry{Op::sinh, {"Sinh", OpKind::elemwise, 1, 1}},
    Entry{Op::cosh, {"Cosh", OpKind::elemwise, 1, 1}},
    Entry{Op::asinh, {"Asinh", OpKind::elemwise, 1, 1}},
    Entry{Op::acosh, {"Acosh", OpKind::elemwise, 1, 1}},
    Entry{Op::atanh, {"Atanh", OpKind::elemwise, 1, 1}},
    Entry{Op::floor, {"Floor", OpKind::elemwise, 1, 1}},
    Entry{Op::ceil, {"Ceil", OpKind::elemwise, 1, 1}},
    Entry{Op::round, {"Round", OpKind::elemwise, 1, 1}},
    Entry{Op::sign, {"Sign", OpKind::elemwise, 1, 1}},
    Entry{Op::clip, {"Clip", OpKind::elemwise, 1, 1}},
    Entry{Op::leaky_relu, {"LeakyRelu", OpKind::elemwise, 1, 1}},
    Entry{Op::hard_sigmoid, {"HardSigmoid", OpKind::elemwise, 1, 1}},
    Entry{Op::add, {"Add", OpKind::broadcast, 2, 2}},
    Entry{Op::sub, {"Sub", OpKind::broadcast, 2, 2}},
    Entry{Op::mul, {"Mul", OpKind::broadcast, 2, 2}},
    Entry{Op::div, {"Div", OpKind::broadcast, 2, 2}},
    Entry{Op::pow, {"Pow", OpKind::broadcast, 2, 2}},
    Entry{Op::max, {"Max", OpKind::broadcast, 2, 2}},
    Entry{Op::min, {"Min", OpKind::broadcast, 2, 2}},
    Entry{Op::conv, {"Conv", OpKind::anchor, 2, 3}},
    Entry{Op::gemm, {"Gemm", OpKind::anchor, 2, 3}},
    Entry{Op::matmul, {"MatMul", OpKind::anchor, 2, 2}},
    Entry{Op::max_pool, {"MaxPool", OpKind::anchor, 1, 1}},
    Entry{Op::average_pool, {"AveragePool", OpKind::anchor, 1, 1}},
    Entry{Op::global_average_pool, {"GlobalAveragePool", OpKind::anchor, 1, 1}},
    Entry{Op::global_max_pool, {"GlobalMaxPool", OpKind::anchor, 1, 1}},
    Entry{Op::batch_norm, {"BatchNormalization", OpKind::broadcast, 5, 5}},
    Entry{Op::layer_norm, {"LayerNormalization", OpKind::opaque, 2, 3}},
    Entry{Op::softmax, {"Softmax", OpKind::opaque, 1, 1}},
    Entry{Op::reduce_mean, {"ReduceMean", OpKind::reduce, 1, 1}},
    Entry{Op::reduce_sum, {"ReduceSum", OpKind::reduce, 1, 1}},
    Entry{Op::reduce_max, {"ReduceMax", OpKind::reduce, 1, 1}},
    Entry{Op::reshape, {"Reshape", OpKind::injective, 1, 1}},
    Entry{Op::flatten, {"Flatten", OpKind::injective, 1, 1}},
    Entry{Op::squeeze, {"Squeeze", OpKind::injective, 1, 1}},
    Entry{Op::unsqueeze, {"Unsqueeze", OpKind::injective, 1, 1}},
    Entry{Op::transpose, {"Transpose", OpKind::injective, 1, 1}},
    Entry{Op::concat, {"Concat", OpKind::injective, 1, 1 << 20}},
    Entry{Op::slice, {"Slice", OpKind::injective, 1, 1}},
    Entry{Op::pad, {"Pad", OpKind::injective, 1, 1}},
    // TVM's take is kInjective; as a kernel of its own (its reads depend on data) it is kept out of
    // fused groups here.
    Entry{Op::gather, {"Gather", OpKind::opaque, 2, 2}},
};

}  // namespace

const OpInfo& info(Op op) {
  for (const Entry& e : kOps) {
    if (e.op == op) return e.info;
  }
  return kOps[0].info;
}

std::optional<Op> op_from_name(std::string_view name) {
  for (const Entry& e : kOps) {
    if (e.info.name == name) return e.op;
  }
  return std::nullopt;
}

const std::vector<Op>& all_ops() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> out;
    for (const Entry& e : kOps) out.push_back(e.op);
    return out;
  }();
  return ops;
}

bool is_unary_elementwise(Op op) { return info(op).kind == OpKind::elemwise; }

bool is_binary_elementwise(Op op) {
  switch (op) {
    case Op::add: case Op::sub: case Op::mul: case Op::div: case Op::pow: case Op::max: case Op::min: return true;
    default: return false;
  }
}

bool is_reshape_like(Op op) {
  switch (op) {
    case Op::reshape: case Op::flatten: case Op::squeeze: case Op::unsqueeze: case Op::identity: return true;
    default: return false;
  }
}

bool is_reduction(Op op) { return op == Op::reduce_mean || op == Op::reduce_sum || op == Op::reduce_max; }

}  // namespace tc
