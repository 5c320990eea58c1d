#pragma once

/// \file
/// The native backend's convolution: implicit-im2col GEMM (the GEMM packs its B panels straight
/// from the image) for ordinary convolutions, a direct row-vectorised loop for depthwise and
/// grouped convolutions with few channels per group. 1 to 3 spatial dimensions.

#include <cstdint>
#include <vector>

#include <collage/support/result.hpp>

#include "backends/native/function_ref.hpp"
#include "backends/native/gemm.hpp"
#include "loops/program.hpp"

namespace tc::native {

/// A convolution (without bias) prepared for one geometry.
class ConvKernel {
 public:
  /// Fails for more than 3 spatial dimensions.
  static collage::Result<ConvKernel> make(const loops::ConvCore& core);

  /// out = conv(x, w); done() for each finished range of out.
  void run(const float* x, const float* w, float* out, RangeDone done);

 private:
  ConvKernel() = default;
  void run_direct(const float* x, const float* w, float* out, RangeDone done);
  void pack_image(const float* x, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst);

  // Geometry over three spatial dimensions (leading ones of size 1 when there are fewer).
  std::int64_t n_ = 0, c_ = 0, m_ = 0, group_ = 1, cg_ = 0, mg_ = 0;
  std::int64_t in_[3] = {1, 1, 1}, out_[3] = {1, 1, 1}, k_[3] = {1, 1, 1};
  std::int64_t stride_[3] = {1, 1, 1}, dil_[3] = {1, 1, 1}, pad_[3] = {0, 0, 0};
  bool direct_ = false;
  bool pointwise_ = false;  // 1x1, stride 1, no padding: the image is B as it is
  GemmWorkspace workspace_;
  std::vector<std::int64_t> column_base_[3];
};

/// Max or average pooling prepared for one geometry (1 to 3 spatial dimensions).
class PoolKernel {
 public:
  static collage::Result<PoolKernel> make(const loops::PoolCore& core);
  /// out = pool(x); done() per finished range.
  void run(const float* x, float* out, RangeDone done) const;

 private:
  PoolKernel() = default;
  bool max_ = true;
  bool count_include_pad_ = false;
  std::int64_t planes_ = 0;
  std::int64_t in_[3] = {1, 1, 1}, out_[3] = {1, 1, 1}, k_[3] = {1, 1, 1};
  std::int64_t stride_[3] = {1, 1, 1}, dil_[3] = {1, 1, 1}, pad_[3] = {0, 0, 0}, pad_end_[3] = {0, 0, 0};
};

}  // namespace tc::native
