#include "tensor/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include "tensor/op_attrs.hpp"
#include "tensor/shape_inference.hpp"

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;

/// Element `i` of `t` (a signed index, checked by the callers' loop bounds).
float at(const Tensor& t, std::int64_t i) { return t.data[static_cast<std::size_t>(i)]; }
float& at(Tensor& t, std::int64_t i) { return t.data[static_cast<std::size_t>(i)]; }
std::int64_t dim(const Shape& s, std::size_t d) { return s[d]; }

double nan_max(double a, double b) { return std::isnan(a) || a > b ? a : b; }
double nan_min(double a, double b) { return std::isnan(a) || a < b ? a : b; }

// ---------------------------------------------------------------------------------------------
// Elementwise.

double unary_value(Op op, const UnaryAttrs& attrs, double x) {
  switch (op) {
    case Op::identity: return x;
    case Op::relu: return x < 0 ? 0.0 : x;
    case Op::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Op::tanh: return std::tanh(x);
    case Op::exp: return std::exp(x);
    case Op::log: return std::log(x);
    case Op::sqrt: return std::sqrt(x);
    case Op::erf: return std::erf(x);
    case Op::neg: return -x;
    case Op::abs: return std::fabs(x);
    case Op::reciprocal: return 1.0 / x;
    case Op::sin: return std::sin(x);
    case Op::cos: return std::cos(x);
    case Op::tan: return std::tan(x);
    case Op::asin: return std::asin(x);
    case Op::acos: return std::acos(x);
    case Op::atan: return std::atan(x);
    case Op::sinh: return std::sinh(x);
    case Op::cosh: return std::cosh(x);
    case Op::asinh: return std::asinh(x);
    case Op::acosh: return std::acosh(x);
    case Op::atanh: return std::atanh(x);
    case Op::floor: return std::floor(x);
    case Op::ceil: return std::ceil(x);
    case Op::round: return std::nearbyint(x);  // halves to even under the default rounding mode
    case Op::sign: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
    case Op::clip: {
      if (std::isnan(x)) return x;
      return std::min(std::max(x, attrs.min), attrs.max);
    }
    case Op::leaky_relu: return x < 0 ? attrs.alpha * x : x;
    case Op::hard_sigmoid: return std::max(0.0, std::min(1.0, attrs.alpha * x + attrs.beta));
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

Tensor unary(const Node& node, const Tensor& x) {
  Tensor y(node.shape);
  const UnaryAttrs attrs = unary_attrs(node);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    at(y, i) = static_cast<float>(unary_value(node.op, attrs, static_cast<double>(at(x, i))));
  }
  return y;
}

double binary_value(Op op, double a, double b) {
  switch (op) {
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::div: return a / b;
    case Op::pow: return std::pow(a, b);
    case Op::max: return std::isnan(b) ? b : nan_max(a, b);
    case Op::min: return std::isnan(b) ? b : nan_min(a, b);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

Tensor binary(const Node& node, const Tensor& a, const Tensor& b) {
  Tensor y(node.shape);
  const Ints sa = broadcast_strides(a.shape, y.shape);
  const Ints sb = broadcast_strides(b.shape, y.shape);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    const double va = at(a, broadcast_offset(i, y.shape, sa));
    const double vb = at(b, broadcast_offset(i, y.shape, sb));
    // Rounding each operand's exact double result once to float gives IEEE float semantics for
    // + - * / and a correctly rounded pow.
    at(y, i) = static_cast<float>(binary_value(node.op, va, vb));
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Windows (convolution and pooling) over 1 to 3 spatial dimensions, laid out as 3 (leading unit
// dimensions added) so one loop nest serves all.

/// The window of `geometry` over three spatial dimensions; false for more than three.
bool three_dims(const WindowGeometry& geometry, WindowGeometry& w) {
  if (geometry.rank() < 1 || geometry.rank() > 3) return false;
  w = geometry.expanded_to(3);
  return true;
}

/// Input coordinate along window dimension `j` of output position `o`, kernel tap `t`.
std::int64_t input_coord(const WindowGeometry& w, std::size_t j, std::int64_t o, std::int64_t t) {
  return o * w.stride[j] - w.pad_begin[j] + t * w.dilation[j];
}

Result<Tensor> conv(const Graph& g, int n, const Tensor& x, const Tensor& weight, const Tensor* bias) {
  Tensor y(g.node(n).shape);
  WindowGeometry w;
  if (!three_dims(conv_geometry(g, n), w)) {
    return Error{ErrorCode::invalid_argument, "the reference runs 1 to 3 spatial dimensions"};
  }
  const std::int64_t batch = w.batch;
  const std::int64_t channels = w.channels;
  const std::int64_t features = w.out_channels;
  const std::int64_t group_in = w.group_channels();
  const std::int64_t group_out = w.group_out_channels();
  const std::int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const std::int64_t kernel_plane = w.kernel[0] * w.kernel[1] * w.kernel[2];
  std::int64_t yi = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t m = 0; m < features; ++m) {
      const std::int64_t grp = m / group_out;
      for (std::int64_t o0 = 0; o0 < w.out[0]; ++o0) {
        for (std::int64_t o1 = 0; o1 < w.out[1]; ++o1) {
          for (std::int64_t o2 = 0; o2 < w.out[2]; ++o2) {
            double acc = bias != nullptr ? static_cast<double>(at(*bias, m)) : 0.0;
            for (std::int64_t c = 0; c < group_in; ++c) {
              const std::int64_t x_base = (b * channels + grp * group_in + c) * in_plane;
              const std::int64_t w_base = (m * group_in + c) * kernel_plane;
              for (std::int64_t t0 = 0; t0 < w.kernel[0]; ++t0) {
                const std::int64_t i0 = input_coord(w, 0, o0, t0);
                if (i0 < 0 || i0 >= w.in[0]) continue;
                for (std::int64_t t1 = 0; t1 < w.kernel[1]; ++t1) {
                  const std::int64_t i1 = input_coord(w, 1, o1, t1);
                  if (i1 < 0 || i1 >= w.in[1]) continue;
                  for (std::int64_t t2 = 0; t2 < w.kernel[2]; ++t2) {
                    const std::int64_t i2 = input_coord(w, 2, o2, t2);
                    if (i2 < 0 || i2 >= w.in[2]) continue;
                    const double xv = at(x, x_base + (i0 * w.in[1] + i1) * w.in[2] + i2);
                    const double wv = at(weight, w_base + (t0 * w.kernel[1] + t1) * w.kernel[2] + t2);
                    acc += xv * wv;
                  }
                }
              }
            }
            at(y, yi++) = static_cast<float>(acc);
          }
        }
      }
    }
  }
  return y;
}

/// MaxPool and AveragePool. Padding never wins a max; an average divides by the taps inside the
/// input, or with count_include_pad by the taps inside the padded input.
Result<Tensor> pool(const Graph& g, int n, const Tensor& x) {
  const Node& node = g.node(n);
  Tensor y(node.shape);
  WindowGeometry w;
  if (!three_dims(pool_geometry(g, n), w)) {
    return Error{ErrorCode::invalid_argument, "the reference runs 1 to 3 spatial dimensions"};
  }
  const bool is_max = node.op == Op::max_pool;
  const bool include_pad = pool_attrs(node).count_include_pad;
  std::int64_t padded_end[3];  // end of the padded input along each window dimension
  for (std::size_t j = 0; j < 3; ++j) padded_end[j] = w.in[j] + w.pad_end[j];
  const std::int64_t planes = w.batch * w.channels;
  const std::int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  std::int64_t yi = 0;
  for (std::int64_t p = 0; p < planes; ++p) {
    for (std::int64_t o0 = 0; o0 < w.out[0]; ++o0) {
      for (std::int64_t o1 = 0; o1 < w.out[1]; ++o1) {
        for (std::int64_t o2 = 0; o2 < w.out[2]; ++o2) {
          double best = -std::numeric_limits<double>::infinity();
          double sum = 0.0;
          std::int64_t inside = 0;
          std::int64_t inside_padded = 0;
          for (std::int64_t t0 = 0; t0 < w.kernel[0]; ++t0) {
            const std::int64_t i0 = input_coord(w, 0, o0, t0);
            for (std::int64_t t1 = 0; t1 < w.kernel[1]; ++t1) {
              const std::int64_t i1 = input_coord(w, 1, o1, t1);
              for (std::int64_t t2 = 0; t2 < w.kernel[2]; ++t2) {
                const std::int64_t i2 = input_coord(w, 2, o2, t2);
                if (i0 < padded_end[0] && i1 < padded_end[1] && i2 < padded_end[2]) ++inside_padded;
                if (i0 < 0 || i0 >= w.in[0] || i1 < 0 || i1 >= w.in[1] || i2 < 0 || i2 >= w.in[2]) continue;
                const double v = at(x, p * in_plane + (i0 * w.in[1] + i1) * w.in[2] + i2);
                best = nan_max(v, best);
                sum += v;
                ++inside;
              }
            }
          }
          double value = best;
          if (!is_max) {
            const std::int64_t count = include_pad ? inside_padded : inside;
            value = count > 0 ? sum / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
          }
          at(y, yi++) = static_cast<float>(value);
        }
      }
    }
  }
  return y;
}

Tensor global_pool(const Node& node, const Tensor& x) {
  Tensor y(node.shape);
  const std::int64_t planes = dim(x.shape, 0) * dim(x.shape, 1);
  const std::int64_t plane = product(x.shape, 2, x.shape.size());
  for (std::int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    double best = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < plane; ++i) {
      const double v = at(x, p * plane + i);
      sum += v;
      best = nan_max(v, best);
    }
    const double mean = plane > 0 ? sum / static_cast<double>(plane) : std::numeric_limits<double>::quiet_NaN();
    at(y, p) = static_cast<float>(node.op == Op::global_max_pool ? best : mean);
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Matrix products.

Tensor gemm(const Node& node, const Tensor& a, const Tensor& b, const Tensor* c) {
  Tensor y(node.shape);
  const GemmAttrs attrs = gemm_attrs(node);
  const bool trans_a = attrs.trans_a;
  const bool trans_b = attrs.trans_b;
  const double alpha = attrs.alpha;
  const double beta = attrs.beta;
  const std::int64_t m_dim = dim(y.shape, 0);
  const std::int64_t n_dim = dim(y.shape, 1);
  const std::int64_t k_dim = trans_a ? dim(a.shape, 0) : dim(a.shape, 1);
  Ints c_strides;
  if (c != nullptr) c_strides = broadcast_strides(c->shape, y.shape);
  for (std::int64_t m = 0; m < m_dim; ++m) {
    for (std::int64_t n = 0; n < n_dim; ++n) {
      double acc = 0.0;
      for (std::int64_t k = 0; k < k_dim; ++k) {
        const double av = trans_a ? at(a, k * m_dim + m) : at(a, m * k_dim + k);
        const double bv = trans_b ? at(b, n * k_dim + k) : at(b, k * n_dim + n);
        acc += av * bv;
      }
      double v = alpha * acc;
      if (c != nullptr) v += beta * static_cast<double>(at(*c, broadcast_offset(m * n_dim + n, y.shape, c_strides)));
      at(y, m * n_dim + n) = static_cast<float>(v);
    }
  }
  return y;
}

/// numpy matmul: 1-D operands become [1,K] / [K,1] and lose that dimension in the result; the
/// batch dimensions broadcast.
Tensor matmul(const Node& node, const Tensor& a, const Tensor& b) {
  Shape as = a.shape;
  Shape bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const std::int64_t m_dim = as[as.size() - 2];
  const std::int64_t k_dim = as.back();
  const std::int64_t n_dim = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2);
  const Shape b_batch(bs.begin(), bs.end() - 2);
  const Shape batch = *broadcast_shapes(a_batch, b_batch);
  const Ints a_strides = broadcast_strides(a_batch, batch);
  const Ints b_strides = broadcast_strides(b_batch, batch);
  Tensor y(node.shape);
  const std::int64_t batches = numel(batch);
  for (std::int64_t p = 0; p < batches; ++p) {
    const std::int64_t a_base = broadcast_offset(p, batch, a_strides) * m_dim * k_dim;
    const std::int64_t b_base = broadcast_offset(p, batch, b_strides) * k_dim * n_dim;
    for (std::int64_t m = 0; m < m_dim; ++m) {
      for (std::int64_t n = 0; n < n_dim; ++n) {
        double acc = 0.0;
        for (std::int64_t k = 0; k < k_dim; ++k) {
          acc += static_cast<double>(at(a, a_base + m * k_dim + k)) * static_cast<double>(at(b, b_base + k * n_dim + n));
        }
        at(y, (p * m_dim + m) * n_dim + n) = static_cast<float>(acc);
      }
    }
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Normalisations.

Tensor batch_norm(const Node& node, const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean,
                  const Tensor& var) {
  Tensor y(node.shape);
  const double epsilon = epsilon_attr(node);
  const std::int64_t batch = dim(x.shape, 0);
  const std::int64_t channels = dim(x.shape, 1);
  const std::int64_t plane = product(x.shape, 2, x.shape.size());
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t c = 0; c < channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(at(var, c)) + epsilon);
      for (std::int64_t i = 0; i < plane; ++i) {
        const std::int64_t e = (n * channels + c) * plane + i;
        const double normalized = (static_cast<double>(at(x, e)) - at(mean, c)) * inv_std;
        at(y, e) = static_cast<float>(normalized * at(scale, c) + at(bias, c));
      }
    }
  }
  return y;
}

/// Mean and (population) variance over [axis, rank), then scale and bias broadcast to those dims.
Tensor layer_norm(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* bias) {
  Tensor y(node.shape);
  const std::size_t axis = axis_attr(node);
  const double epsilon = epsilon_attr(node);
  const Shape normalized(x.shape.begin() + static_cast<std::ptrdiff_t>(axis), x.shape.end());
  const std::int64_t rows = product(x.shape, 0, axis);
  const std::int64_t cols = numel(normalized);
  const Ints scale_strides = broadcast_strides(scale.shape, normalized);
  Ints bias_strides;
  if (bias != nullptr) bias_strides = broadcast_strides(bias->shape, normalized);
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < cols; ++i) sum += at(x, r * cols + i);
    const double mean = sum / static_cast<double>(cols);
    double squares = 0.0;
    for (std::int64_t i = 0; i < cols; ++i) {
      const double d = at(x, r * cols + i) - mean;
      squares += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(cols) + epsilon);
    for (std::int64_t i = 0; i < cols; ++i) {
      double v = (at(x, r * cols + i) - mean) * inv_std * at(scale, broadcast_offset(i, normalized, scale_strides));
      if (bias != nullptr) v += at(*bias, broadcast_offset(i, normalized, bias_strides));
      at(y, r * cols + i) = static_cast<float>(v);
    }
  }
  return y;
}

Tensor softmax(const Node& node, const Tensor& x) {
  Tensor y(node.shape);
  const std::size_t axis = axis_attr(node);
  const std::int64_t outer = product(x.shape, 0, axis);
  const std::int64_t len = dim(x.shape, axis);
  const std::int64_t inner = product(x.shape, axis + 1, x.shape.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * len * inner + i;
      double best = -std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < len; ++k) best = nan_max(at(x, base + k * inner), best);
      double sum = 0.0;
      for (std::int64_t k = 0; k < len; ++k) sum += std::exp(at(x, base + k * inner) - best);
      for (std::int64_t k = 0; k < len; ++k) {
        at(y, base + k * inner) = static_cast<float>(std::exp(at(x, base + k * inner) - best) / sum);
      }
    }
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Reductions: every input element is folded into the output element its kept coordinates name.

Tensor reduction(const Node& node, const Tensor& x) {
  const Ints axes = reduce_attrs(node).axes;
  Shape kept = x.shape;  // the output shape with reduced dimensions as 1 (keepdims)
  for (std::int64_t a : axes) kept[static_cast<std::size_t>(a)] = 1;
  const Ints strides = broadcast_strides(kept, x.shape);
  const std::int64_t outputs = numel(kept);
  std::vector<double> acc(static_cast<std::size_t>(outputs),
                          node.op == Op::reduce_max ? -std::numeric_limits<double>::infinity() : 0.0);
  for (std::int64_t i = 0; i < x.size(); ++i) {
    double& a = acc[static_cast<std::size_t>(broadcast_offset(i, x.shape, strides))];
    a = node.op == Op::reduce_max ? nan_max(at(x, i), a) : a + at(x, i);
  }
  const std::int64_t count = outputs > 0 ? x.size() / outputs : 0;
  Tensor y(node.shape);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    double v = acc[static_cast<std::size_t>(i)];
    if (node.op == Op::reduce_mean) v = count > 0 ? v / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
    at(y, i) = static_cast<float>(v);
  }
  return y;
}

// ---------------------------------------------------------------------------------------------
// Data movement.

Tensor transpose(const Node& node, const Tensor& x) {
  Tensor y(node.shape);
  const Ints perm = perm_attr(node);
  const Ints x_strides = row_major_strides(x.shape);
  Ints strides(perm.size());  // input stride of each output dimension
  for (std::size_t d = 0; d < perm.size(); ++d) strides[d] = x_strides[static_cast<std::size_t>(perm[d])];
  for (std::int64_t i = 0; i < y.size(); ++i) at(y, i) = at(x, broadcast_offset(i, y.shape, strides));
  return y;
}

Tensor concat(const Node& node, const std::vector<const Tensor*>& args) {
  Tensor y(node.shape);
  const std::size_t axis = axis_attr(node);
  const std::int64_t outer = product(y.shape, 0, axis);
  const std::int64_t inner = product(y.shape, axis + 1, y.shape.size());
  const std::int64_t y_row = dim(y.shape, axis) * inner;
  std::int64_t offset = 0;  // where the current input starts within an output row
  for (const Tensor* t : args) {
    const std::int64_t row = dim(t->shape, axis) * inner;
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t i = 0; i < row; ++i) at(y, o * y_row + offset + i) = at(*t, o * row + i);
    }
    offset += row;
  }
  return y;
}

/// Output element i along dimension d reads input element starts[d] + i * steps[d].
Tensor slice(const Node& node, const Tensor& x) {
  Tensor y(node.shape);
  const SliceAttrs attrs = slice_attrs(node);
  const Ints& starts = attrs.starts;
  const Ints& steps = attrs.steps;
  const Ints x_strides = row_major_strides(x.shape);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    const Ints index = unravel_index(i, y.shape);
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) offset += (starts[d] + index[d] * steps[d]) * x_strides[d];
    at(y, i) = at(x, offset);
  }
  return y;
}

/// Negative pads crop first; the positive pads then extend the cropped tensor (constant value,
/// reflection without repeating the border, or the border repeated).
Tensor pad(const Node& node, const Tensor& x) {
  Tensor y(node.shape);
  const std::size_t rank = x.shape.size();
  const PadAttrs attrs = pad_attrs(node);
  const Ints& pads = attrs.pads;
  const PadAttrs::Mode mode = attrs.mode;
  const auto value = static_cast<float>(attrs.value);
  const Ints x_strides = row_major_strides(x.shape);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    const Ints index = unravel_index(i, y.shape);
    std::int64_t offset = 0;
    bool outside = false;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t crop_begin = std::max<std::int64_t>(0, -pads[d]);
      const std::int64_t cropped = x.shape[d] - crop_begin - std::max<std::int64_t>(0, -pads[d + rank]);
      std::int64_t c = index[d] - std::max<std::int64_t>(0, pads[d]);  // coordinate in the cropped tensor
      if (c < 0 || c >= cropped) {
        if (mode == PadAttrs::Mode::constant) {
          outside = true;
          break;
        }
        if (mode == PadAttrs::Mode::edge) {
          c = std::clamp<std::int64_t>(c, 0, cropped - 1);
        } else {
          c = c < 0 ? -c : 2 * (cropped - 1) - c;
        }
      }
      offset += (c + crop_begin) * x_strides[d];
    }
    at(y, i) = outside ? value : at(x, offset);
  }
  return y;
}

Tensor same_data(const Node& node, const Tensor& x) { return Tensor(node.shape, x.data); }

/// Output [outer, i, inner] reads data [outer, indices[i], inner] along the axis.
Result<Tensor> gather(const Node& node, const Tensor& data, const Tensor& indices) {
  Tensor y(node.shape);
  const std::size_t axis = axis_attr(node);
  const std::int64_t outer = product(data.shape, 0, axis);
  const std::int64_t size = dim(data.shape, axis);
  const std::int64_t inner = product(data.shape, axis + 1, data.shape.size());
  const std::int64_t count = indices.size();
  for (std::int64_t i = 0; i < count; ++i) {
    const double v = std::trunc(at(indices, i));  // as a cast to an integer type
    if (!(v >= static_cast<double>(-size) && v < static_cast<double>(size))) {
      return Error{ErrorCode::invalid_argument, "index " + std::to_string(at(indices, i)) + " (element " +
                                                    std::to_string(i) + ") is out of range for an axis of " +
                                                    std::to_string(size)};
    }
    const auto k = static_cast<std::int64_t>(v) + (v < 0 ? size : 0);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t r = 0; r < inner; ++r) at(y, (o * count + i) * inner + r) = at(data, (o * size + k) * inner + r);
    }
  }
  return y;
}

/// The value of node `n` of `g` (shapes inferred) for its operands `args`.
Result<Tensor> run_node(const Graph& g, int n, const std::vector<const Tensor*>& args) {
  const Node& node = g.node(n);
  const Op op = node.op;
  if (is_unary_elementwise(op)) return unary(node, *args[0]);
  if (is_binary_elementwise(op)) return binary(node, *args[0], *args[1]);
  if (is_reduction(op)) return reduction(node, *args[0]);
  if (is_reshape_like(op)) return same_data(node, *args[0]);
  const Tensor* third = args.size() > 2 ? args[2] : nullptr;
  switch (op) {
    case Op::conv: return conv(g, n, *args[0], *args[1], third);
    case Op::gemm: return gemm(node, *args[0], *args[1], third);
    case Op::matmul: return matmul(node, *args[0], *args[1]);
    case Op::max_pool:
    case Op::average_pool: return pool(g, n, *args[0]);
    case Op::global_average_pool:
    case Op::global_max_pool: return global_pool(node, *args[0]);
    case Op::batch_norm: return batch_norm(node, *args[0], *args[1], *args[2], *args[3], *args[4]);
    case Op::layer_norm: return layer_norm(node, *args[0], *args[1], third);
    case Op::softmax: return softmax(node, *args[0]);
    case Op::transpose: return transpose(node, *args[0]);
    case Op::concat: return concat(node, args);
    case Op::slice: return slice(node, *args[0]);
    case Op::pad: return pad(node, *args[0]);
    case Op::gather: return gather(node, *args[0], *args[1]);
    default: return Error{ErrorCode::invalid_argument, "not an operator the reference runs"};
  }
}

bool well_formed(const Tensor& t) { return numel(t.shape) == t.size(); }

}  // namespace

Result<Tensor> evaluate_node(const Node& node, const std::vector<const Tensor*>& args) {
  Graph g;
  std::vector<int> ids;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] == nullptr || !well_formed(*args[k])) {
      return Error{ErrorCode::invalid_argument, "node '" + node.name + "' (" + std::string(op_name(node.op)) +
                                                    "): input " + std::to_string(k) + " is malformed"};
    }
    ids.push_back(g.add_input("x" + std::to_string(k), args[k]->shape));
  }
  Result<int> n = g.add_op(node.op, std::move(ids), node.attrs, node.name);
  if (!n.ok()) return n.error();
  g.mutable_node(*n).shape = node.shape;
  if (collage::Status s = infer_shapes(g); !s.ok()) return s.error();
  Result<Tensor> value = run_node(g, *n, args);
  if (!value.ok()) return Error{value.error().code, describe(g, *n) + ": " + value.error().message};
  return value;
}

Result<std::vector<Tensor>> evaluate_all(const Graph& graph, const std::vector<Tensor>& inputs) {
  Graph g = graph;
  if (collage::Status s = infer_shapes(g); !s.ok()) return s.error();
  if (inputs.size() != g.inputs().size()) {
    return Error{ErrorCode::invalid_argument, std::to_string(inputs.size()) + " input values for " +
                                                  std::to_string(g.inputs().size()) + " graph inputs"};
  }
  std::vector<Tensor> values(g.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Node& node = g.node(g.inputs()[k]);
    if (inputs[k].shape != node.shape || !well_formed(inputs[k])) {
      return Error{ErrorCode::invalid_argument, "input '" + node.name + "' must be a tensor of shape " +
                                                    to_string(node.shape) + ", got " + to_string(inputs[k].shape)};
    }
    values[static_cast<std::size_t>(g.inputs()[k])] = inputs[k];
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    const Node& node = g.node(static_cast<int>(i));
    if (node.op == Op::input) continue;
    for (int in : node.inputs) {
      if (in < 0 || static_cast<std::size_t>(in) >= i) {
        return Error{ErrorCode::invalid_argument, describe(g, static_cast<int>(i)) + ": an input is not an earlier node"};
      }
    }
    if (node.op == Op::constant) {
      if (node.value == nullptr || node.value->shape != node.shape || !well_formed(*node.value)) {
        return Error{ErrorCode::invalid_argument, describe(g, static_cast<int>(i)) + ": malformed value"};
      }
      values[i] = *node.value;
      continue;
    }
    std::vector<const Tensor*> args;
    for (int in : node.inputs) args.push_back(&values[static_cast<std::size_t>(in)]);
    Result<Tensor> value = run_node(g, static_cast<int>(i), args);
    if (!value.ok()) return Error{value.error().code, describe(g, static_cast<int>(i)) + ": " + value.error().message};
    values[i] = std::move(value).value();
  }
  return values;
}

Result<std::vector<Tensor>> evaluate(const Graph& graph, const std::vector<Tensor>& inputs) {
  Result<std::vector<Tensor>> all = evaluate_all(graph, inputs);
  if (!all.ok()) return all.error();
  std::vector<Tensor> out;
  for (int n : graph.outputs()) {
    if (n < 0 || static_cast<std::size_t>(n) >= graph.size()) {
      return Error{ErrorCode::invalid_argument, "output " + std::to_string(n) + " is not a node"};
    }
    out.push_back(all.value()[static_cast<std::size_t>(n)]);
  }
  return out;
}

}  // namespace tc
