#pragma once

/// \file
/// The geometry of a convolution and of a pooling window over three spatial dimensions (leading
/// ones of size 1 when there are fewer), as plain structs of constants. The lowering fills them
/// once from tensor/op_attrs.hpp's WindowGeometry; the loop IR's Conv and pooling cores carry them;
/// the native backend's kernels loop over them and the cuda backend writes them into its generated
/// kernels as local constants (NVRTC compiles this header into every program, so it needs only
/// <cstdint>).

#include <cstdint>

#include "loops/index_math.hpp"

namespace tc::loops {

/// A convolution: input [n, c, in...], weights [m, c / group, k...], output [n, m, out...];
/// output position o along dimension d reads input o * stride[d] - pad[d] + tap * dil[d].
struct ConvGeom {
  std::int64_t n, c, m, group;
  std::int64_t in[3], out[3], k[3], stride[3], dil[3], pad[3];
};

/// Input channels per group.
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_group_channels(const ConvGeom& g) { return g.c / g.group; }
/// Output channels per group.
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_group_features(const ConvGeom& g) { return g.m / g.group; }
/// Taps of one kernel window.
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_window(const ConvGeom& g) { return g.k[0] * g.k[1] * g.k[2]; }
/// The reduction length of each output: input channels per group x taps (the depth of each
/// group's matrix product when the convolution runs as one).
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_depth(const ConvGeom& g) {
  return conv_group_channels(g) * conv_window(g);
}

/// Elements of the output.
COLLAGE_TC_HOST_DEVICE inline std::int64_t conv_outputs(const ConvGeom& g) {
  return g.n * g.m * g.out[0] * g.out[1] * g.out[2];
}

/// Max or average pooling of `planes` = batch x channels planes: padding never wins a max; an
/// average divides by the taps inside the input, or with count_include_pad by those inside the
/// input padded by pad (begins) and pad_end.
struct PoolGeom {
  bool max;
  bool count_include_pad;
  std::int64_t planes;
  std::int64_t in[3], out[3], k[3], stride[3], dil[3], pad[3], pad_end[3];
};

/// Elements of the output.
COLLAGE_TC_HOST_DEVICE inline std::int64_t pool_outputs(const PoolGeom& g) {
  return g.planes * g.out[0] * g.out[1] * g.out[2];
}

}  // namespace tc::loops
