#include "backends/eigen/eigen_kernel.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "backends/kit/kernel_operands.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc::eigen {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using MatrixMap = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstRow = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;
using Row = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;

/// Work per part (see parts_for): multiply-adds of a GEMM, elements an epilogue or im2col writes.
constexpr std::int64_t kMultiplyAddsPerPart = std::int64_t{1} << 18;
constexpr std::int64_t kElementsPerPart = std::int64_t{1} << 15;

/// The row-major matrix of `rows` x `cols` at `data`, rows `stride` floats apart.
ConstMatrixMap matrix(const float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
  return ConstMatrixMap(data, rows, cols, Eigen::OuterStride<>(stride));
}

/// A GEMM's operands: op(A) is m x k, op(B) k x n, C m x n, all row-major with these strides.
struct GemmArgs {
  const float* a;
  const float* b;
  float* c;
  std::int64_t m, k, n;
  std::int64_t lda, ldb, ldc;
  bool trans_a, trans_b;
  float alpha;
};

/// C = alpha * op(A) * op(B).
void gemm(const GemmArgs& g) {
  MatrixMap c(g.c, g.m, g.n, Eigen::OuterStride<>(g.ldc));
  const ConstMatrixMap ma = matrix(g.a, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda);
  const ConstMatrixMap mb = matrix(g.b, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb);
  if (g.trans_a && g.trans_b) {
    c.noalias() = g.alpha * (ma.transpose() * mb.transpose());
  } else if (g.trans_a) {
    c.noalias() = g.alpha * (ma.transpose() * mb);
  } else if (g.trans_b) {
    c.noalias() = g.alpha * (ma * mb.transpose());
  } else {
    c.noalias() = g.alpha * (ma * mb);
  }
}

/// gemm(g) on up to `threads` threads, each computing a share of C's columns (or rows, where the
/// columns are few).
void parallel_gemm(const GemmArgs& g, int threads) {
  const int parts = parts_for(g.m * g.n * g.k, kMultiplyAddsPerPart, threads);
  if (parts == 1) {
    gemm(g);
    return;
  }
  constexpr std::int64_t kUnit = 16;  // one AVX-512 vector of floats
  parallel_parts(parts, [&](int part) {
    const OutputBlock o = share_output(g.m, g.n, kUnit, kUnit, part, parts);
    if (o.empty()) return;
    GemmArgs block = g;
    block.m = o.i1 - o.i0;
    block.n = o.j1 - o.j0;
    block.a += g.trans_a ? o.i0 : o.i0 * g.lda;
    block.b += g.trans_b ? o.j0 * g.ldb : o.j0;
    block.c += o.i0 * g.ldc + o.j0;
    gemm(block);
  });
}

/// Applies `e` to rows [row0, row0 + rows) of an output seen as [*, cols], stored at `out`.
void apply_epilogue(const EpiloguePlan& e, const std::vector<const float*>& addends, float* out, std::int64_t rows,
                    std::int64_t cols, std::int64_t row0) {
  if (e.addends.empty() && e.activation == Activation::none) return;
  constexpr float kSqrtHalf = 0.70710678118654752f;
  for (std::int64_t r = 0; r < rows; ++r) {
    Row row(out + r * cols, cols);
    for (std::size_t k = 0; k < e.addends.size(); ++k) {
      const AddendPlan& a = e.addends[k];
      const float* v = addends[k] + ((row0 + r) % a.period) * a.row_stride;
      if (a.col_stride == 0) {
        row += a.scale * v[0];
      } else if (a.scale == 1.0f) {
        row += ConstRow(v, cols);
      } else {
        row += a.scale * ConstRow(v, cols);
      }
    }
    switch (e.activation) {
      case Activation::none: break;
      case Activation::relu: row = row.max(0.0f); break;
      case Activation::clip: row = row.max(e.lo).min(e.hi); break;
      case Activation::gelu_erf: row = 0.5f * row * (1.0f + (row * kSqrtHalf).erf()); break;
    }
  }
}

/// apply_epilogue over rows [row0, row0 + rows) on up to `threads` threads.
void parallel_epilogue(const EpiloguePlan& e, const std::vector<const float*>& addends, float* out, std::int64_t rows,
                       std::int64_t cols, std::int64_t row0, int threads) {
  if (e.addends.empty() && e.activation == Activation::none) return;
  const int parts = parts_for(rows * cols, kElementsPerPart, threads);
  parallel_parts(parts, [&](int part) {
    const auto [r0, r1] = share(rows, 1, part, parts);
    if (r0 < r1) apply_epilogue(e, addends, out + r0 * cols, r1 - r0, cols, row0 + r0);
  });
}

/// Rows of channels [c0, c1) of the im2col matrix of one group of one image: row (c, kh, kw),
/// column (oh, ow).
void im2col(const ConvPlan& p, const float* x, float* col, std::int64_t c0, std::int64_t c1) {
  const std::int64_t pixels = p.out_h * p.out_w;
  for (std::int64_t c = c0; c < c1; ++c) {
    const float* plane = x + c * p.height * p.width;
    for (std::int64_t kh = 0; kh < p.kernel_h; ++kh) {
      for (std::int64_t kw = 0; kw < p.kernel_w; ++kw) {
        float* dst = col + ((c * p.kernel_h + kh) * p.kernel_w + kw) * pixels;
        // Output columns whose input column is inside the image: [ow_lo, ow_hi).
        const std::int64_t shift = kw * p.dilation_w - p.pad_left;
        std::int64_t ow_lo = shift >= 0 ? 0 : (-shift + p.stride_w - 1) / p.stride_w;
        std::int64_t ow_hi = p.width - shift <= 0 ? 0 : (p.width - shift - 1) / p.stride_w + 1;
        ow_lo = std::min(ow_lo, p.out_w);
        ow_hi = std::max(ow_lo, std::min(ow_hi, p.out_w));
        for (std::int64_t oh = 0; oh < p.out_h; ++oh, dst += p.out_w) {
          const std::int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
          if (ih < 0 || ih >= p.height) {
            std::fill(dst, dst + p.out_w, 0.0f);
            continue;
          }
          const float* src = plane + ih * p.width + shift;
          std::fill(dst, dst + ow_lo, 0.0f);
          if (p.stride_w == 1) {
            std::memcpy(dst + ow_lo, src + ow_lo, static_cast<std::size_t>(ow_hi - ow_lo) * sizeof(float));
          } else {
            for (std::int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = src[ow * p.stride_w];
          }
          std::fill(dst + ow_hi, dst + p.out_w, 0.0f);
        }
      }
    }
  }
}

/// Floats of the im2col matrix of one group of one image (0 for a pointwise convolution).
std::size_t im2col_floats(const ConvPlan& p) {
  if (p.pointwise()) return 0;
  return static_cast<std::size_t>(p.channels / p.group * p.kernel_h * p.kernel_w * p.out_h * p.out_w);
}

class EigenKernel final : public Kernel {
 public:
  EigenKernel(KernelOperands operands, std::vector<CallPlan> plans, int threads)
      : plans_(std::move(plans)), operands_(std::move(operands)), threads_(threads) {
    for (const CallPlan& p : plans_) {
      if (p.kind == CallPlan::Kind::conv) scratch_.resize(std::max(scratch_.size(), im2col_floats(p.conv)));
    }
  }

  collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (collage::Status st = operands_.check_buffers(inputs, outputs, "eigen"); !st.ok()) return st;
    std::vector<const float*> addends;
    for (const CallPlan& p : plans_) {
      auto at = [&](int n) { return operands_.address(n, inputs, outputs); };
      addends.clear();
      for (const AddendPlan& a : p.epilogue.addends) addends.push_back(at(a.node));
      float* out = at(p.root);
      if (p.kind == CallPlan::Kind::gemm) {
        run_gemm(p.gemm, p.epilogue, addends, at(p.gemm.a), at(p.gemm.b), out);
      } else {
        run_conv(p.conv, p.epilogue, addends, at(p.conv.x), at(p.conv.w), out);
      }
    }
    operands_.copy_outputs(inputs, outputs);
    return collage::Status::success();
  }

 private:
  void run_gemm(const GemmPlan& p, const EpiloguePlan& e, const std::vector<const float*>& addends, const float* a,
                const float* b, float* out) const {
    const std::size_t batch = p.a_offsets.size();
    const bool shared_b = std::all_of(p.b_offsets.begin(), p.b_offsets.end(), [](std::int64_t o) { return o == 0; });
    bool dense_a = !p.trans_a;
    for (std::size_t i = 0; i < batch && dense_a; ++i) dense_a = p.a_offsets[i] == static_cast<std::int64_t>(i) * p.m * p.k;
    const std::int64_t lda = p.trans_a ? p.m : p.k;
    const std::int64_t ldb = p.trans_b ? p.k : p.n;
    if (shared_b && dense_a) {
      const std::int64_t rows = static_cast<std::int64_t>(batch) * p.m;
      parallel_gemm({a, b, out, rows, p.k, p.n, lda, ldb, p.n, false, p.trans_b, p.alpha}, threads_);
      parallel_epilogue(e, addends, out, rows, p.n, 0, threads_);
      return;
    }
    for (std::size_t i = 0; i < batch; ++i) {
      float* c = out + static_cast<std::int64_t>(i) * p.m * p.n;
      parallel_gemm({a + p.a_offsets[i], b + p.b_offsets[i], c, p.m, p.k, p.n, lda, ldb, p.n, p.trans_a, p.trans_b,
                     p.alpha},
                    threads_);
      parallel_epilogue(e, addends, c, p.m, p.n, 0, threads_);
    }
  }

  void run_conv(const ConvPlan& p, const EpiloguePlan& e, const std::vector<const float*>& addends, const float* x,
                const float* w, float* y) {
    const std::int64_t cg = p.channels / p.group;
    const std::int64_t mg = p.out_channels / p.group;
    const std::int64_t k = cg * p.kernel_h * p.kernel_w;
    const std::int64_t pixels = p.out_h * p.out_w;
    for (std::int64_t n = 0; n < p.batch; ++n) {
      for (std::int64_t g = 0; g < p.group; ++g) {
        const float* xg = x + (n * p.channels + g * cg) * p.height * p.width;
        const float* col = xg;
        if (!p.pointwise()) {
          const int parts = parts_for(k * pixels, kElementsPerPart, threads_);
          parallel_parts(parts, [&](int part) {
            const auto [c0, c1] = share(cg, 1, part, parts);
            im2col(p, xg, scratch_.data(), c0, c1);
          });
          col = scratch_.data();
        }
        float* yg = y + (n * p.out_channels + g * mg) * pixels;
        parallel_gemm({w + g * mg * k, col, yg, mg, k, pixels, k, pixels, pixels, false, false, 1.0f}, threads_);
        parallel_epilogue(e, addends, yg, mg, pixels, g * mg, threads_);
      }
    }
  }

  std::vector<CallPlan> plans_;
  KernelOperands operands_;
  std::vector<float> scratch_;
  int threads_;
};

}  // namespace

collage::Result<std::unique_ptr<Kernel>> kernel(const Function& function, const std::vector<LibraryCall>& calls,
                                                std::vector<CallPlan> plans, Device& device, int threads) {
  collage::Result<KernelOperands> bound = KernelOperands::bind(function, calls, operands_of(plans), device);
  if (!bound.ok()) return bound.error();
  return std::unique_ptr<Kernel>(
      std::make_unique<EigenKernel>(std::move(bound).value(), std::move(plans), std::max(threads, 1)));
}

}  // namespace tc::eigen
