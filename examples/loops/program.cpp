#include "loops/program.hpp"

#include <sstream>

namespace tc::loops {

const char* to_string(TileOpCode code) {
  switch (code) {
    case TileOpCode::load: return "load";
    case TileOpCode::fill: return "fill";
    case TileOpCode::select: return "select";
    case TileOpCode::copy: return "copy";
    case TileOpCode::relu: return "relu";
    case TileOpCode::sigmoid: return "sigmoid";
    case TileOpCode::tanh: return "tanh";
    case TileOpCode::exp: return "exp";
    case TileOpCode::log: return "log";
    case TileOpCode::sqrt: return "sqrt";
    case TileOpCode::erf: return "erf";
    case TileOpCode::neg: return "neg";
    case TileOpCode::abs: return "abs";
    case TileOpCode::reciprocal: return "reciprocal";
    case TileOpCode::square: return "square";
    case TileOpCode::sin: return "sin";
    case TileOpCode::cos: return "cos";
    case TileOpCode::tan: return "tan";
    case TileOpCode::asin: return "asin";
    case TileOpCode::acos: return "acos";
    case TileOpCode::atan: return "atan";
    case TileOpCode::sinh: return "sinh";
    case TileOpCode::cosh: return "cosh";
    case TileOpCode::asinh: return "asinh";
    case TileOpCode::acosh: return "acosh";
    case TileOpCode::atanh: return "atanh";
    case TileOpCode::floor: return "floor";
    case TileOpCode::ceil: return "ceil";
    case TileOpCode::round: return "round";
    case TileOpCode::sign: return "sign";
    case TileOpCode::clip: return "clip";
    case TileOpCode::leaky_relu: return "leaky_relu";
    case TileOpCode::hard_sigmoid: return "hard_sigmoid";
    case TileOpCode::add: return "add";
    case TileOpCode::sub: return "sub";
    case TileOpCode::mul: return "mul";
    case TileOpCode::div: return "div";
    case TileOpCode::pow: return "pow";
    case TileOpCode::max: return "max";
    case TileOpCode::min: return "min";
    case TileOpCode::add_s: return "add_s";
    case TileOpCode::sub_s: return "sub_s";
    case TileOpCode::mul_s: return "mul_s";
    case TileOpCode::div_s: return "div_s";
    case TileOpCode::pow_s: return "pow_s";
    case TileOpCode::max_s: return "max_s";
    case TileOpCode::min_s: return "min_s";
    case TileOpCode::rsub_s: return "rsub_s";
    case TileOpCode::rdiv_s: return "rdiv_s";
    case TileOpCode::rpow_s: return "rpow_s";
  }
  return "?";
}

namespace {

void print(std::ostream& os, const Affine& a) {
  os << a.offset;
  for (std::size_t d = 0; d < a.coef.size(); ++d) {
    if (a.coef[d] != 0) os << (a.coef[d] < 0 ? " - " : " + ") << (a.coef[d] < 0 ? -a.coef[d] : a.coef[d]) << "*c" << d;
  }
}

void print(std::ostream& os, const Access& a) {
  if (a.table) {
    os << "table";
    return;
  }
  print(os, a.linear);
  for (const Check& c : a.checks) {
    os << " if " << c.lo << " <= ";
    print(os, c.expr);
    os << " < " << c.hi;
  }
}

const char* kind_name(const Core& core) {
  switch (core.index()) {
    case 1: return "gemm";
    case 2: return "conv";
    case 3: return "pool";
    case 4: return "reduce";
    case 5: return "softmax";
    case 6: return "layer_norm";
    case 7: return "gather";
    default: return "none";
  }
}

}  // namespace

std::string TileProgram::to_string() const {
  std::ostringstream os;
  os << "domain " << tc::to_string(dims) << " slots " << slots << "\n";
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    os << "  leaf " << i << ": source " << leaves[i].source << " at ";
    print(os, leaves[i].access);
    os << "\n";
  }
  for (std::size_t i = 0; i < masks.size(); ++i) {
    os << "  mask " << i << ": ";
    print(os, masks[i]);
    os << "\n";
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TileOp& op = ops[i];
    os << "  %" << i << " = " << tc::loops::to_string(op.code);
    if (op.ref >= 0) os << (op.code == TileOpCode::load ? " leaf " : " mask ") << op.ref;
    if (op.a >= 0) os << " %" << op.a;
    if (op.b >= 0) os << " %" << op.b;
    if (op.code == TileOpCode::fill || op.code >= TileOpCode::clip) {
      if (op.a < 0 || op.b < 0) os << " p0=" << op.p0;
      if (op.code == TileOpCode::clip || op.code == TileOpCode::hard_sigmoid) os << " p1=" << op.p1;
    }
    os << "\n";
  }
  os << "  sink ";
  print(os, sink);
  os << "\n";
  return os.str();
}

std::string LoweredFunction::to_string() const {
  std::ostringstream os;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Stage& st = stages[s];
    os << "stage " << s << ": " << kind_name(st.core) << " -> source " << st.core_dst << "; dst source " << st.dst
       << " (" << st.size << " elements)";
    if (st.rows_per_result > 0) os << ", interleaved " << st.rows_per_result << " per result";
    os << "\n";
    if (const auto* r = std::get_if<ReduceCore>(&st.core)) os << " input: " << r->input.to_string();
    if (st.has_epilogue) os << " epilogue: " << st.epilogue.to_string();
  }
  return os.str();
}

}  // namespace tc::loops
