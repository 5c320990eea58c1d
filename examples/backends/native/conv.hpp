#pragma once

/// \file
/// The native backend's convolution: implicit-im2col GEMM (the GEMM packs its B panels straight
/// from the image) for ordinary convolutions, a direct row-vectorised loop for depthwise and
/// grouped convolutions with few channels per group; and pooling. Both loop over the loop IR's
/// geometry (loops/window.hpp).

#include <cstdint>

#include "backends/native/function_ref.hpp"
#include "backends/native/gemm.hpp"
#include "loops/window.hpp"

namespace tc::native {

/// A convolution (without bias) prepared for one geometry.
class ConvKernel {
 public:
  explicit ConvKernel(const loops::ConvGeom& geom);

  /// Part `part` of `parts` of out = conv(x, w) (a share of the output columns, or of the output
  /// channels where the columns are few); done() for each finished range of out. The parts may
  /// run at once, each on its own ConvKernel.
  void run(const float* x, const float* w, float* out, RangeDone done, int part = 0, int parts = 1);

 private:
  void run_direct(const float* x, const float* w, float* out, RangeDone done, int part, int parts);
  void pack_image(const float* x, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst);

  loops::ConvGeom g_;
  std::int64_t cg_ = 0, mg_ = 0;  // input and output channels per group
  bool direct_ = false;
  bool pointwise_ = false;  // 1x1, stride 1, no padding: the image is B as it is
  GemmWorkspace workspace_;
};

/// Max or average pooling prepared for one geometry.
class PoolKernel {
 public:
  explicit PoolKernel(const loops::PoolGeom& geom) : g_(geom) {}
  /// Part `part` of `parts` of out = pool(x) (a share of the planes); done() per finished range.
  void run(const float* x, float* out, RangeDone done, int part = 0, int parts = 1) const;

 private:
  loops::PoolGeom g_;
};

}  // namespace tc::native
