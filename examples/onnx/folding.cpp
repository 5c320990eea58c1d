#include "onnx/folding.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "onnx/definitions.hpp"
#include "onnx/proto_node.hpp"
#include "onnx/proto_tensor.hpp"
#include "tensor/op_attrs.hpp"
#include "tensor/reference.hpp"

namespace tc::detail {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using Folded = std::optional<std::vector<OnnxTensor>>;

Error invalid(const std::string& message) { return Error{ErrorCode::invalid_argument, message}; }

/// Integer arithmetic wraps (two's complement), as numpy's does, instead of overflowing.
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

/// `v` converted to int64 the way a saturating cast does (NaN to 0).
std::int64_t saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

/// `v` wrapped into the range of integer type `type` (bool: nonzero is 1).
std::int64_t narrow(std::int64_t v, ElemType type) {
  const auto u = static_cast<std::uint64_t>(v);
  switch (type) {
    case ElemType::boolean: return v != 0 ? 1 : 0;
    case ElemType::uint8: return static_cast<std::int64_t>(u & 0xffu);
    case ElemType::int8: return static_cast<std::int8_t>(u & 0xffu);
    case ElemType::uint16: return static_cast<std::int64_t>(u & 0xffffu);
    case ElemType::int16: return static_cast<std::int16_t>(u & 0xffffu);
    case ElemType::uint32: return static_cast<std::int64_t>(u & 0xffffffffu);
    case ElemType::int32: return static_cast<std::int32_t>(u & 0xffffffffu);
    default: return v;
  }
}

/// An empty tensor of `type` and `shape`, or an error when it would exceed `limit` elements.
Result<OnnxTensor> make(ElemType type, Shape shape, std::int64_t limit) {
  const std::optional<std::int64_t> n = checked_numel(shape, limit);
  if (!n) return invalid("the folded result " + to_string(shape) + " is too large (limit " + std::to_string(limit) + " elements)");
  OnnxTensor t;
  t.type = type;
  t.shape = std::move(shape);
  if (is_real_type(type)) resize_fresh(t.reals, static_cast<std::size_t>(*n));
  else resize_fresh(t.ints, static_cast<std::size_t>(*n));
  return t;
}

double real_at(const OnnxTensor& t, std::int64_t i) {
  const auto k = static_cast<std::size_t>(i);
  return is_real_type(t.type) ? static_cast<double>(t.reals[k]) : static_cast<double>(t.ints[k]);
}

/// The elements of an integer tensor read as a list (a shape, axes, pads ...).
Result<Ints> int_list(const OnnxTensor* t, const std::string& what) {
  if (t == nullptr || !is_integer_type(t->type) || t->shape.size() > 1) {
    return invalid(what + " must be a 1-D integer tensor");
  }
  return t->ints;
}

/// Copies element `from` of `src` to element `to` of `dst` (same element type).
void copy_element(const OnnxTensor& src, std::int64_t from, OnnxTensor& dst, std::int64_t to) {
  if (is_real_type(src.type)) dst.reals[static_cast<std::size_t>(to)] = src.reals[static_cast<std::size_t>(from)];
  else dst.ints[static_cast<std::size_t>(to)] = src.ints[static_cast<std::size_t>(from)];
}

// ---------------------------------------------------------------------------------------------
// Elementwise with numpy broadcasting.

/// The broadcast shape of all `shapes`, or an error.
Result<Shape> broadcast_all(const std::vector<const OnnxTensor*>& inputs) {
  Shape out;
  for (const OnnxTensor* t : inputs) {
    std::optional<Shape> b = broadcast_shapes(out, t->shape);
    if (!b) return invalid("shapes " + to_string(out) + " and " + to_string(t->shape) + " do not broadcast");
    out = *b;
  }
  return out;
}

/// out[i] = f(i, offsets of i in each input) over the broadcast of `inputs`.
Result<OnnxTensor> broadcast_map(ElemType type, const std::vector<const OnnxTensor*>& inputs, std::int64_t limit,
                                 const std::function<void(OnnxTensor&, std::int64_t, const Ints&)>& f) {
  Result<Shape> shape = broadcast_all(inputs);
  if (!shape.ok()) return shape.error();
  Result<OnnxTensor> out = make(type, *shape, limit);
  if (!out.ok()) return out;
  std::vector<Ints> strides;
  for (const OnnxTensor* t : inputs) strides.push_back(broadcast_strides(t->shape, *shape));
  Ints offsets(inputs.size());
  for (std::int64_t i = 0; i < out->size(); ++i) {
    for (std::size_t k = 0; k < inputs.size(); ++k) offsets[k] = broadcast_offset(i, *shape, strides[k]);
    f(*out, i, offsets);
  }
  return out;
}

Result<std::int64_t> int_binary(const std::string& op, std::int64_t a, std::int64_t b, bool fmod) {
  if (op == "Add" || op == "Sum") return wrap_add(a, b);
  if (op == "Sub") return wrap_sub(a, b);
  if (op == "Mul") return wrap_mul(a, b);
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Div" || op == "Mod") {
    if (b == 0) return invalid("integer division by zero");
    if (b == -1) return op == "Div" ? wrap_sub(0, a) : 0;
    if (op == "Div") return a / b;
    std::int64_t r = a % b;
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  if (op == "Pow") {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b % 2 == 0) ? 1 : -1) : 0;
    std::int64_t r = 1;
    std::int64_t base = a;
    for (std::int64_t e = b; e > 0; e >>= 1) {
      if ((e & 1) != 0) r = wrap_mul(r, base);
      base = wrap_mul(base, base);
    }
    return r;
  }
  return invalid("no integer rule for " + op);
}

double real_binary(const std::string& op, double a, double b, bool fmod) {
  if (op == "Add" || op == "Sum") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Pow") return std::pow(a, b);
  if (op == "Max") return std::isnan(a) || a > b ? a : b;
  if (op == "Min") return std::isnan(a) || a < b ? a : b;
  // Mod: fmod keeps the dividend's sign; otherwise the divisor's (Python's %).
  double r = std::fmod(a, b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// Add Sub Mul Div Mod Pow Max Min Sum Mean over constants of one element type.
Result<OnnxTensor> arithmetic(const std::string& op, const std::vector<const OnnxTensor*>& inputs, bool fmod,
                              std::int64_t limit) {
  const ElemType type = inputs[0]->type;
  for (const OnnxTensor* t : inputs) {
    if (t->type != type && !(op == "Pow" && (is_real_type(t->type) || is_integer_type(t->type)))) {
      return invalid("operands of " + op + " have different element types");
    }
  }
  const std::string step = op == "Mean" ? "Sum" : op;
  Result<OnnxTensor> acc = OnnxTensor(*inputs[0]);
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const OnnxTensor left = std::move(acc).value();
    std::optional<Error> failure;
    acc = broadcast_map(type, {&left, inputs[k]}, limit, [&](OnnxTensor& out, std::int64_t i, const Ints& at) {
      if (is_real_type(type)) {
        out.reals[static_cast<std::size_t>(i)] =
            static_cast<float>(real_binary(step, real_at(left, at[0]), real_at(*inputs[k], at[1]), fmod));
        return;
      }
      const double exponent = real_at(*inputs[k], at[1]);
      Result<std::int64_t> v =
          is_real_type(inputs[k]->type)
              ? Result<std::int64_t>(saturate(std::pow(real_at(left, at[0]), exponent)))
              : int_binary(step, left.ints[static_cast<std::size_t>(at[0])], inputs[k]->ints[static_cast<std::size_t>(at[1])], fmod);
      if (!v.ok()) failure = v.error();
      else out.ints[static_cast<std::size_t>(i)] = narrow(*v, type);
    });
    if (failure) return *failure;
    if (!acc.ok()) return acc;
  }
  if (op == "Mean") {
    if (!is_real_type(type)) return invalid("Mean of integers is not supported");
    for (float& v : acc->reals) v = static_cast<float>(static_cast<double>(v) / static_cast<double>(inputs.size()));
  }
  return acc;
}

Result<OnnxTensor> compare(const std::string& op, const OnnxTensor& a, const OnnxTensor& b, std::int64_t limit) {
  if (is_real_type(a.type) != is_real_type(b.type)) return invalid("operands of " + op + " have different element types");
  const bool logical = op == "And" || op == "Or" || op == "Xor";
  if (logical && (a.type != ElemType::boolean || b.type != ElemType::boolean)) return invalid(op + " needs bool operands");
  return broadcast_map(ElemType::boolean, {&a, &b}, limit, [&](OnnxTensor& out, std::int64_t i, const Ints& at) {
    bool r = false;
    if (is_real_type(a.type)) {
      const double x = real_at(a, at[0]);
      const double y = real_at(b, at[1]);
      r = op == "Equal" ? x == y : op == "Less" ? x < y : op == "Greater" ? x > y : op == "LessOrEqual" ? x <= y : x >= y;
    } else {
      const std::int64_t x = a.ints[static_cast<std::size_t>(at[0])];
      const std::int64_t y = b.ints[static_cast<std::size_t>(at[1])];
      if (op == "And") r = x != 0 && y != 0;
      else if (op == "Or") r = x != 0 || y != 0;
      else if (op == "Xor") r = (x != 0) != (y != 0);
      else r = op == "Equal" ? x == y : op == "Less" ? x < y : op == "Greater" ? x > y : op == "LessOrEqual" ? x <= y : x >= y;
    }
    out.ints[static_cast<std::size_t>(i)] = r ? 1 : 0;
  });
}

Result<OnnxTensor> where(const OnnxTensor& c, const OnnxTensor& x, const OnnxTensor& y, std::int64_t limit) {
  if (c.type != ElemType::boolean) return invalid("the condition of Where must be bool");
  if (x.type != y.type) return invalid("the branches of Where have different element types");
  return broadcast_map(x.type, {&c, &x, &y}, limit, [&](OnnxTensor& out, std::int64_t i, const Ints& at) {
    if (c.ints[static_cast<std::size_t>(at[0])] != 0) copy_element(x, at[1], out, i);
    else copy_element(y, at[2], out, i);
  });
}

/// Neg Abs Sign Floor Ceil Round Not Reciprocal Sqrt Exp Log Relu on one constant.
Result<OnnxTensor> unary(const std::string& op, const OnnxTensor& x) {
  OnnxTensor y = x;
  if (is_real_type(x.type)) {
    for (float& v : y.reals) {
      const double d = v;
      double r = d;
      if (op == "Neg") r = -d;
      else if (op == "Abs") r = std::fabs(d);
      else if (op == "Sign") r = d > 0 ? 1.0 : d < 0 ? -1.0 : d;
      else if (op == "Floor") r = std::floor(d);
      else if (op == "Ceil") r = std::ceil(d);
      else if (op == "Round") r = std::nearbyint(d);  // halves to even under the default rounding mode
      else if (op == "Reciprocal") r = 1.0 / d;
      else if (op == "Sqrt") r = std::sqrt(d);
      else if (op == "Exp") r = std::exp(d);
      else if (op == "Log") r = std::log(d);
      else if (op == "Relu") r = d < 0 ? 0.0 : d;
      else return invalid(op + " of a bool or float tensor is not supported");
      v = static_cast<float>(r);
    }
    return y;
  }
  for (std::int64_t& v : y.ints) {
    if (op == "Neg") v = narrow(wrap_sub(0, v), x.type);
    else if (op == "Abs") v = narrow(v < 0 ? wrap_sub(0, v) : v, x.type);
    else if (op == "Sign") v = v > 0 ? 1 : v < 0 ? -1 : 0;
    else if (op == "Not" && x.type == ElemType::boolean) v = v != 0 ? 0 : 1;
    else if (op == "Relu") v = std::max<std::int64_t>(v, 0);
    else if (op != "Floor" && op != "Ceil" && op != "Round") return invalid(op + " of an integer tensor is not supported");
  }
  return y;
}

}  // namespace

Result<OnnxTensor> cast_tensor(const OnnxTensor& x, ElemType to) {
  if (!is_real_type(to) && !is_integer_type(to)) return invalid("a cast to " + elem_type_name(to) + " is not supported");
  OnnxTensor y;
  y.type = to;
  y.shape = x.shape;
  if (is_real_type(to)) {
    if (is_real_type(x.type)) y.reals = x.reals;
    else for (std::int64_t v : x.ints) y.reals.push_back(static_cast<float>(v));
    return y;
  }
  if (is_real_type(x.type)) {
    for (float v : x.reals) y.ints.push_back(to == ElemType::boolean ? (v != 0.0f ? 1 : 0) : narrow(saturate(v), to));
  } else {
    for (std::int64_t v : x.ints) y.ints.push_back(narrow(v, to));
  }
  return y;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Indexing and generation.

Result<OnnxTensor> gather(const OnnxTensor& data, const OnnxTensor& indices, std::int64_t axis_attr, std::int64_t limit) {
  if (!is_integer_type(indices.type)) return invalid("Gather indices must be integers");
  const std::optional<std::int64_t> axis = normalize_axis(axis_attr, data.shape.size());
  if (!axis) return invalid("axis " + std::to_string(axis_attr) + " out of range for " + to_string(data.shape));
  const auto a = static_cast<std::size_t>(*axis);
  Shape shape(data.shape.begin(), data.shape.begin() + static_cast<std::ptrdiff_t>(a));
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(a) + 1, data.shape.end());
  Result<OnnxTensor> out = make(data.type, shape, limit);
  if (!out.ok() || out->size() == 0) return out;
  const std::int64_t outer = product(data.shape, 0, a);
  const std::int64_t len = data.shape[a];
  const std::int64_t inner = product(data.shape, a + 1, data.shape.size());
  std::int64_t o = 0;
  for (std::int64_t p = 0; p < outer; ++p) {
    for (std::int64_t index : indices.ints) {
      if (index < -len || index >= len) return invalid("index " + std::to_string(index) + " out of range for dimension " + std::to_string(len));
      const std::int64_t k = index < 0 ? index + len : index;
      for (std::int64_t i = 0; i < inner; ++i) copy_element(data, (p * len + k) * inner + i, *out, o++);
    }
  }
  return out;
}

/// Expand (numpy broadcast of `x` with `shape`) and Tile (`repeats` copies along each axis).
Result<OnnxTensor> expand(const OnnxTensor& x, const Shape& shape, std::int64_t limit) {
  for (std::int64_t d : shape) {
    if (d < 0) return invalid("negative dimension in the Expand shape " + to_string(shape));
  }
  std::optional<Shape> out_shape = broadcast_shapes(x.shape, shape);
  if (!out_shape) return invalid("cannot expand " + to_string(x.shape) + " to " + to_string(shape));
  Result<OnnxTensor> out = make(x.type, *out_shape, limit);
  if (!out.ok()) return out;
  const Ints strides = broadcast_strides(x.shape, *out_shape);
  for (std::int64_t i = 0; i < out->size(); ++i) copy_element(x, broadcast_offset(i, *out_shape, strides), *out, i);
  return out;
}

Result<OnnxTensor> tile(const OnnxTensor& x, const Ints& repeats, std::int64_t limit) {
  if (repeats.size() != x.shape.size()) return invalid("Tile needs one repeat per dimension of " + to_string(x.shape));
  Shape shape = x.shape;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0 || repeats[d] > kMaxDim) return invalid("Tile repeats must be non-negative");
    if (shape[d] != 0 && repeats[d] > kMaxDim / shape[d]) return invalid("Tile result too large");
    shape[d] *= repeats[d];
  }
  Result<OnnxTensor> out = make(x.type, shape, limit);
  if (!out.ok()) return out;
  const Ints x_strides = row_major_strides(x.shape);
  for (std::int64_t i = 0; i < out->size(); ++i) {
    std::int64_t flat = i;
    std::int64_t src = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      src += (flat % shape[d]) % x.shape[d] * x_strides[d];
      flat /= shape[d];
    }
    copy_element(x, src, *out, i);
  }
  return out;
}

Result<OnnxTensor> range(const OnnxTensor& start, const OnnxTensor& limit_t, const OnnxTensor& delta, std::int64_t limit) {
  if (start.size() != 1 || limit_t.size() != 1 || delta.size() != 1 || start.type != limit_t.type || start.type != delta.type) {
    return invalid("Range needs three scalars of one type");
  }
  std::int64_t n = 0;
  if (is_real_type(start.type)) {
    const double s = start.reals[0];
    const double d = delta.reals[0];
    if (d == 0 || !std::isfinite(s) || !std::isfinite(d) || !std::isfinite(static_cast<double>(limit_t.reals[0]))) {
      return invalid("Range needs a finite start and limit and a nonzero delta");
    }
    const double count = std::ceil((static_cast<double>(limit_t.reals[0]) - s) / d);
    if (count > static_cast<double>(limit)) return invalid("the folded Range is too large");
    n = count > 0 ? static_cast<std::int64_t>(count) : 0;
    Result<OnnxTensor> out = make(start.type, {n}, limit);
    if (!out.ok()) return out;
    for (std::int64_t i = 0; i < n; ++i) out->reals[static_cast<std::size_t>(i)] = static_cast<float>(s + static_cast<double>(i) * d);
    return out;
  }
  const std::int64_t s = start.ints[0];
  const std::int64_t l = limit_t.ints[0];
  const std::int64_t d = delta.ints[0];
  if (d == 0) return invalid("Range needs a nonzero delta");
  // ceil((l - s) / d) without overflow: the distance in uint64, then the count.
  if ((d > 0 && l > s) || (d < 0 && l < s)) {
    const std::uint64_t distance = d > 0 ? static_cast<std::uint64_t>(l) - static_cast<std::uint64_t>(s)
                                         : static_cast<std::uint64_t>(s) - static_cast<std::uint64_t>(l);
    const std::uint64_t step = d > 0 ? static_cast<std::uint64_t>(d) : 0 - static_cast<std::uint64_t>(d);
    const std::uint64_t count = (distance - 1) / step + 1;
    if (count > static_cast<std::uint64_t>(limit)) return invalid("the folded Range is too large");
    n = static_cast<std::int64_t>(count);
  }
  Result<OnnxTensor> out = make(start.type, {n}, limit);
  if (!out.ok()) return out;
  for (std::int64_t i = 0; i < n; ++i) out->ints[static_cast<std::size_t>(i)] = narrow(wrap_add(s, wrap_mul(i, d)), start.type);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reductions over constants (ReduceSum/Mean/Max/Min/Prod; double or int64 accumulation).

Result<OnnxTensor> reduce(const std::string& op, const OnnxTensor& x, Ints axes, bool keepdims, bool noop_when_empty,
                          std::int64_t limit) {
  if (axes.empty()) {
    if (noop_when_empty) return x;
    for (std::size_t d = 0; d < x.shape.size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
  }
  std::vector<bool> reduced(x.shape.size(), false);
  for (std::int64_t a : axes) {
    const std::optional<std::int64_t> na = normalize_axis(a, x.shape.size());
    if (!na) return invalid("axis " + std::to_string(a) + " out of range for " + to_string(x.shape));
    reduced[static_cast<std::size_t>(*na)] = true;
  }
  Shape kept = x.shape;  // the result's shape with keepdims
  Shape shape;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
    if (!reduced[d] || keepdims) shape.push_back(kept[d]);
  }
  Result<OnnxTensor> out = make(x.type, shape, limit);
  if (!out.ok()) return out;
  const Ints strides = broadcast_strides(kept, x.shape);
  const std::size_t outputs = static_cast<std::size_t>(numel(kept));
  const bool is_max = op == "ReduceMax";
  const bool is_min = op == "ReduceMin";
  const bool is_prod = op == "ReduceProd";
  const double start = is_max ? -HUGE_VAL : is_min ? HUGE_VAL : is_prod ? 1.0 : 0.0;
  std::vector<double> real_acc(outputs, start);
  std::vector<std::int64_t> int_acc(outputs, is_max ? std::numeric_limits<std::int64_t>::min()
                                             : is_min ? std::numeric_limits<std::int64_t>::max() : is_prod ? 1 : 0);
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const auto k = static_cast<std::size_t>(broadcast_offset(i, x.shape, strides));
    if (is_real_type(x.type)) {
      const double v = x.reals[static_cast<std::size_t>(i)];
      double& a = real_acc[k];
      a = is_max ? (std::isnan(v) || v > a ? v : a) : is_min ? (std::isnan(v) || v < a ? v : a) : is_prod ? a * v : a + v;
    } else {
      const std::int64_t v = x.ints[static_cast<std::size_t>(i)];
      std::int64_t& a = int_acc[k];
      a = is_max ? std::max(a, v) : is_min ? std::min(a, v) : is_prod ? wrap_mul(a, v) : wrap_add(a, v);
    }
  }
  const std::int64_t count = outputs > 0 ? x.size() / static_cast<std::int64_t>(outputs) : 0;
  for (std::size_t k = 0; k < outputs; ++k) {
    if (is_real_type(x.type)) {
      double v = real_acc[k];
      if (op == "ReduceMean") v /= static_cast<double>(count);
      out->reals[k] = static_cast<float>(v);
    } else {
      std::int64_t v = int_acc[k];
      if (op == "ReduceMean") v = count > 0 ? v / count : 0;
      out->ints[k] = narrow(v, x.type);
    }
  }
  return out;
}

/// The value of a Constant node.
Result<OnnxTensor> constant(const NodeAttrs& attrs) {
  if (const ::onnx::TensorProto* t = attrs.get_tensor("value")) return tensor_from_proto(*t);
  OnnxTensor out;
  if (attrs.has("value_float")) {
    Result<float> v = attrs.get_float("value_float", 0.0f);
    if (!v.ok()) return v.error();
    out.reals = {*v};
  } else if (attrs.has("value_floats")) {
    Result<std::vector<float>> v = attrs.get_floats("value_floats", {});
    if (!v.ok()) return v.error();
    out.reals = *v;
    out.shape = {static_cast<std::int64_t>(v->size())};
  } else if (attrs.has("value_int")) {
    Result<std::int64_t> v = attrs.get_int("value_int", 0);
    if (!v.ok()) return v.error();
    out.type = ElemType::int64;
    out.ints = {*v};
  } else if (attrs.has("value_ints")) {
    Result<Ints> v = attrs.get_ints("value_ints", {});
    if (!v.ok()) return v.error();
    out.type = ElemType::int64;
    out.ints = *v;
    out.shape = {static_cast<std::int64_t>(v->size())};
  } else {
    return invalid("a Constant without a tensor, float or int value (sparse or string) is not supported");
  }
  return out;
}

Result<OnnxTensor> constant_of_shape(const NodeAttrs& attrs, const OnnxTensor* shape_t, std::int64_t limit) {
  Result<Ints> shape = int_list(shape_t, "the shape");
  if (!shape.ok()) return shape.error();
  OnnxTensor value;
  value.reals = {0.0f};
  if (const ::onnx::TensorProto* t = attrs.get_tensor("value")) {
    Result<OnnxTensor> v = tensor_from_proto(*t);
    if (!v.ok()) return v;
    if (v->size() != 1) return invalid("the value of ConstantOfShape must have one element");
    value = std::move(v).value();
  }
  Result<OnnxTensor> out = make(value.type, *shape, limit);
  if (!out.ok()) return out;
  if (is_real_type(value.type)) std::fill(out->reals.begin(), out->reals.end(), value.reals[0]);
  else std::fill(out->ints.begin(), out->ints.end(), value.ints[0]);
  return out;
}

/// The present inputs' count and the required first ones.
bool has_inputs(const std::vector<const OnnxTensor*>& inputs, std::size_t required) {
  if (inputs.size() < required) return false;
  for (std::size_t k = 0; k < required; ++k) {
    if (inputs[k] == nullptr) return false;
  }
  return true;
}

template <class T>
Result<Folded> one(Result<T> r) {
  if (!r.ok()) return r.error();
  std::vector<OnnxTensor> out;  // not from an initializer list, which would copy the tensor
  out.push_back(std::move(r).value());
  return Folded(std::move(out));
}

}  // namespace

Result<Folded> fold_onnx_node(const ::onnx::NodeProto& node, int version, const std::vector<const OnnxTensor*>& inputs,
                              std::int64_t max_elements) {
  const std::string& op = node.op_type();
  const NodeAttrs attrs(node);
  const bool any_real = std::any_of(inputs.begin(), inputs.end(), [](const OnnxTensor* t) { return t != nullptr && is_real_type(t->type); });
  const std::size_t n_in = inputs.size();

  if (op == "Constant") return one(constant(attrs));
  if (op == "ConstantOfShape") {
    if (!has_inputs(inputs, 1)) return invalid("ConstantOfShape needs a shape");
    return one(constant_of_shape(attrs, inputs[0], max_elements));
  }
  if (op == "Cast" || op == "CastLike") {
    if (!has_inputs(inputs, op == "Cast" ? 1 : 2)) return invalid(op + " needs its inputs");
    ElemType to = op == "CastLike" ? inputs[1]->type : ElemType::undefined;
    if (op == "Cast") {
      Result<std::int64_t> t = attrs.get_int("to", 0);
      if (!t.ok()) return t.error();
      to = static_cast<ElemType>(*t);
    }
    return one(cast_tensor(*inputs[0], to));
  }
  if (op == "Gather") {
    if (!has_inputs(inputs, 2)) return invalid("Gather needs data and indices");
    Result<std::int64_t> axis = attrs.get_int("axis", 0);
    if (!axis.ok()) return axis.error();
    return one(gather(*inputs[0], *inputs[1], *axis, max_elements));
  }
  if (op == "Expand" || op == "Tile") {
    if (!has_inputs(inputs, 2)) return invalid(op + " needs two inputs");
    Result<Ints> list = int_list(inputs[1], op == "Expand" ? "the shape" : "the repeats");
    if (!list.ok()) return list.error();
    return one(op == "Expand" ? expand(*inputs[0], *list, max_elements) : tile(*inputs[0], *list, max_elements));
  }
  if (op == "Range") {
    if (!has_inputs(inputs, 3)) return invalid("Range needs start, limit and delta");
    return one(range(*inputs[0], *inputs[1], *inputs[2], max_elements));
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" || op == "And" ||
      op == "Or" || op == "Xor") {
    if (!has_inputs(inputs, 2)) return invalid(op + " needs two inputs");
    return one(compare(op, *inputs[0], *inputs[1], max_elements));
  }
  if (op == "Where") {
    if (!has_inputs(inputs, 3)) return invalid("Where needs three inputs");
    return one(where(*inputs[0], *inputs[1], *inputs[2], max_elements));
  }
  if (op == "Not" || op == "Sign" || op == "Floor" || op == "Ceil" || op == "Round" ||
      (!any_real && (op == "Neg" || op == "Abs" || op == "Relu"))) {
    if (!has_inputs(inputs, 1)) return invalid(op + " needs an input");
    return one(unary(op, *inputs[0]));
  }
  if (op == "Mod" || (!any_real && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
                                    op == "Max" || op == "Min" || op == "Sum"))) {
    if (!has_inputs(inputs, n_in) || n_in == 0 || ((op != "Max" && op != "Min" && op != "Sum") && n_in != 2)) {
      return invalid(op + " needs its inputs");
    }
    Result<std::int64_t> fmod = attrs.get_int("fmod", 0);
    if (!fmod.ok()) return fmod.error();
    return one(arithmetic(op, inputs, *fmod != 0, max_elements));
  }
  const bool ir_reduction = op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax";
  if (op == "ReduceMin" || op == "ReduceProd" || (ir_reduction && !any_real)) {
    if (!has_inputs(inputs, 1)) return invalid(op + " needs an input");
    Result<Ints> axes = attrs.get_ints("axes", {});
    if (!axes.ok()) return axes.error();
    if (reduction_axes_are_input(op, version) && n_in > 1 && inputs[1] != nullptr) {
      axes = int_list(inputs[1], "the axes");
      if (!axes.ok()) return axes.error();
    }
    Result<std::int64_t> keepdims = attrs.get_int("keepdims", 1);
    Result<std::int64_t> noop = attrs.get_int("noop_with_empty_axes", 0);
    if (!keepdims.ok()) return keepdims.error();
    if (!noop.ok()) return noop.error();
    return one(reduce(op, *inputs[0], *axes, *keepdims != 0, *noop != 0, max_elements));
  }
  return Folded();
}

bool folds(std::string_view op_type) {
  static const char* const kOps[] = {
      "Abs",   "Add",   "And",  "Cast", "CastLike", "Ceil",   "Constant", "ConstantOfShape", "Div",  "Equal",
      "Expand", "Floor", "Gather", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Min", "Mod",
      "Mul",   "Neg",   "Not",  "Or",   "Pow",      "Range",  "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
      "ReduceSum", "Relu", "Round", "Sign", "Sub",  "Sum",    "Tile",     "Where",           "Xor"};
  return std::find(std::begin(kOps), std::end(kOps), op_type) != std::end(kOps);
}

bool moves_data(Op op) {
  switch (op) {
    case Op::identity: case Op::reshape: case Op::flatten: case Op::squeeze: case Op::unsqueeze: case Op::transpose:
    case Op::concat: case Op::slice: case Op::pad: return true;
    default: return false;
  }
}

Result<OnnxTensor> move_data(const Node& node, const std::vector<const OnnxTensor*>& inputs) {
  constexpr std::int64_t kExact = std::int64_t{1} << 24;  // every index below it is exact in float
  std::int64_t total = 0;
  std::vector<Tensor> indexes;
  for (const OnnxTensor* t : inputs) {
    if (t->type != inputs[0]->type) return invalid("inputs have different element types");
    if (t->size() > kExact - total) return invalid("constants too large to fold (over 2^24 elements)");
    Tensor index(t->shape);
    for (std::int64_t i = 0; i < t->size(); ++i) index.data[static_cast<std::size_t>(i)] = static_cast<float>(total + i);
    total += t->size();
    indexes.push_back(std::move(index));
  }
  // A padded element reads index -1 and gets the pad value.
  Node indexed = node;
  double pad_value = 0.0;
  if (node.op == Op::pad) {
    pad_value = pad_attrs(node).value;
    indexed.attrs.set("value", -1.0);
  }
  std::vector<const Tensor*> args;
  for (const Tensor& t : indexes) args.push_back(&t);
  Result<Tensor> moved = evaluate_node(indexed, args);
  if (!moved.ok()) return moved.error();
  OnnxTensor out;
  out.type = inputs.empty() ? ElemType::float32 : inputs[0]->type;
  out.shape = moved->shape;
  for (float f : moved->data) {
    const auto src = static_cast<std::int64_t>(f);
    std::size_t k = 0;
    std::int64_t base = 0;
    while (src >= 0 && src - base >= inputs[k]->size()) base += inputs[k++]->size();
    if (is_real_type(out.type)) out.reals.push_back(src < 0 ? static_cast<float>(pad_value) : inputs[k]->reals[static_cast<std::size_t>(src - base)]);
    else out.ints.push_back(src < 0 ? saturate(pad_value) : inputs[k]->ints[static_cast<std::size_t>(src - base)]);
  }
  return out;
}

}  // namespace tc::detail
