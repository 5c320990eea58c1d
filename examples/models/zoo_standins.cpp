#include "models/zoo_standins.hpp"

#include <cmath>
#include <random>
#include <utility>

#include "models/exporter.hpp"
#include "models/model_zoo.hpp"

namespace tc {

namespace {

using zoo::Attrs;
using zoo::Exporter;
using zoo::Ints;
using I = std::int64_t;

/// An exporter writing as the zoo's old files were written: the IR version of the opset's ONNX
/// release (opsets 7-8: 3, 9: 4, 10: 5) and, through IR version 4, every initializer listed among
/// the graph inputs as the Caffe2 and MXNet conversions do.
Exporter old_exporter(const std::string& name, std::uint64_t seed, int opset) {
  Exporter b(name, seed, opset);
  b.set_ir_version(opset <= 8 ? 3 : opset == 9 ? 4 : 5);
  if (opset <= 9) b.list_initializers_as_inputs();
  return b;
}

/// The layers of the zoo's Caffe2 and MXNet conversions, in their opset 7 to 10 forms. (Calls
/// that make nodes are sequenced, never two in one argument list, so that every compiler names
/// and draws the same model.)
class Cnn {
 public:
  explicit Cnn(Exporter& b) : b_(b) {}

  /// Conv with a square kernel and explicit padding; without a bias where a batch norm follows.
  std::string conv(const std::string& x, I in, I out, I k, I stride, I pad, I group = 1, bool bias = true) {
    const float scale = std::sqrt(3.0f / static_cast<float>(in / group * k * k));
    std::vector<std::string> inputs = {x, b_.random_weight("w", {out, in / group, k, k}, scale)};
    if (bias) inputs.push_back(b_.random_weight("b", {out}, 0.1f));
    return b_.node("Conv", inputs,
                   {{"kernel_shape", Ints{k, k}}, {"strides", Ints{stride, stride}},
                    {"pads", Ints{pad, pad, pad, pad}}, {"group", group}});
  }
  /// Inference batch norm. Before opset 9 it has `spatial`, which the MXNet conversions write.
  std::string bn(const std::string& x, I channels) {
    Attrs attrs = {{"epsilon", 1e-5f}, {"momentum", 0.9f}};
    if (b_.opset() < 9) attrs.emplace_back("spatial", I{1});
    const std::string gamma = uniform("gamma", channels, 0.8f, 1.2f);
    const std::string beta = b_.random_weight("beta", {channels}, 0.1f);
    const std::string mean = b_.random_weight("mean", {channels}, 0.1f);
    const std::string var = uniform("var", channels, 0.5f, 1.5f);
    return b_.node("BatchNormalization", {x, gamma, beta, mean, var}, std::move(attrs));
  }
  std::string relu(const std::string& x) { return b_.node("Relu", {x}); }
  std::string bn_relu(const std::string& x, I channels) { return relu(bn(x, channels)); }
  std::string conv_relu(const std::string& x, I in, I out, I k, I stride, I pad, I group = 1) {
    return relu(conv(x, in, out, k, stride, pad, group));
  }
  std::string conv_bn(const std::string& x, I in, I out, I k, I stride, I pad, I group = 1) {
    return bn(conv(x, in, out, k, stride, pad, group, false), out);
  }
  std::string conv_bn_relu(const std::string& x, I in, I out, I k, I stride, I pad, I group = 1) {
    return relu(conv_bn(x, in, out, k, stride, pad, group));
  }
  /// AlexNet's and GoogLeNet's local response normalisation, with their constants.
  std::string lrn(const std::string& x) {
    return b_.node("LRN", {x}, {{"size", I{5}}, {"alpha", 1e-4f}, {"beta", 0.75f}, {"bias", 1.0f}});
  }
  /// MaxPool; Caffe's ceil-mode pooling is converted as extra padding at the end (`pads`).
  std::string max_pool(const std::string& x, I k, I stride, Ints pads = {0, 0, 0, 0}) {
    return b_.node("MaxPool", {x}, {{"kernel_shape", Ints{k, k}}, {"strides", Ints{stride, stride}}, {"pads", std::move(pads)}});
  }
  std::string avg_pool(const std::string& x, I k, I stride, I pad, I count_include_pad = 0) {
    return b_.node("AveragePool", {x},
                   {{"kernel_shape", Ints{k, k}}, {"strides", Ints{stride, stride}},
                    {"pads", Ints{pad, pad, pad, pad}}, {"count_include_pad", count_include_pad}});
  }
  /// Dropout-7: the ratio an attribute (an input from opset 12); the identity in inference.
  std::string dropout(const std::string& x) { return b_.node("Dropout", {x}, {{"ratio", 0.5f}}); }
  /// A fully connected layer as Gemm with its bias (Gemm-7 requires C); `weight` ([out, in]) is
  /// drawn at random when empty.
  std::string fc(const std::string& x, I in, I out, std::string weight = "") {
    if (weight.empty()) weight = b_.random_weight("fc_w", {out, in}, std::sqrt(3.0f / static_cast<float>(in)));
    return b_.node("Gemm", {x, weight, b_.random_weight("fc_b", {out}, 0.1f)}, {{"transB", I{1}}});
  }
  /// Reshape-5 to a constant target.
  std::string reshape(const std::string& x, const Ints& shape) {
    return b_.node("Reshape", {x, b_.int64_initializer("shape", shape, {static_cast<I>(shape.size())})});
  }
  std::string flatten(const std::string& x) { return b_.node("Flatten", {x}, {{"axis", I{1}}}); }
  std::string concat(const std::vector<std::string>& xs) { return b_.node("Concat", xs, {{"axis", I{1}}}); }
  std::string add(const std::string& a, const std::string& c) { return b_.node("Add", {a, c}); }
  /// Softmax-1 over the classes.
  std::string softmax(const std::string& x) { return b_.node("Softmax", {x}, {{"axis", I{1}}}); }
  /// Global average pool, flatten and fc: the MXNet conversions' heads.
  std::string pooled_fc(const std::string& x, I channels, I classes) {
    return fc(flatten(b_.node("GlobalAveragePool", {x})), channels, classes);
  }
  /// AlexNet's, ZFNet's and VGG's classifier: two fc-Relu-Dropout layers of `hidden`, an fc to
  /// `classes` and Softmax. `fc6_weight` replaces the first weight when given.
  std::string classifier(const std::string& x, I in, I hidden, I classes, const std::string& fc6_weight = "") {
    std::string y = dropout(relu(fc(x, in, hidden, fc6_weight)));
    y = dropout(relu(fc(y, hidden, hidden)));
    return softmax(fc(y, hidden, classes));
  }
  /// A [rows, cols] weight every element of which is `value`, made at load time by
  /// ConstantOfShape, as vgg19-caffe2's fc6_w_0 is.
  std::string constant_weight(I rows, I cols, float value) {
    OnnxTensor fill;
    fill.shape = {1};
    fill.reals = {value};
    return b_.node("ConstantOfShape", {b_.int64_initializer("shape", {rows, cols}, {2})}, {{"value", fill}});
  }

 private:
  std::string uniform(const std::string& hint, I n, float lo, float hi) {
    Tensor t({n});
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& v : t.data) v = dist(b_.rng());
    return b_.initializer(hint, t);
  }

  Exporter& b_;
};

/// What tells AlexNet's and ZFNet-512's stems apart.
struct ClassicStem {
  I k1, stride1, pad1;  ///< the first conv
  I stride2, pad2;      ///< the second (5x5) conv
  I group;              ///< AlexNet's two-GPU grouping of conv 2, 4 and 5
  Ints pool_pads;       ///< Caffe's ceil-mode pools, padded at the end
  I final_size;         ///< the spatial size before the classifier
};

/// AlexNet / ZFNet on 64x64 at opset 9: conv-Relu-LRN-pool twice, three 3x3 convs, a pool, the
/// Reshape-5 to [1, C*H*W] Caffe2 writes and the fc classifier.
OnnxModel classic_net(const std::string& name, const ClassicStem& s, std::uint64_t seed) {
  Exporter b = old_exporter(name, seed, 9);
  Cnn c(b);
  std::string x = b.input("data_0", {1, 3, 64, 64});
  x = c.max_pool(c.lrn(c.conv_relu(x, 3, 16, s.k1, s.stride1, s.pad1)), 3, 2, s.pool_pads);
  x = c.max_pool(c.lrn(c.conv_relu(x, 16, 32, 5, s.stride2, s.pad2, s.group)), 3, 2, s.pool_pads);
  x = c.conv_relu(x, 32, 48, 3, 1, 1);
  x = c.conv_relu(x, 48, 48, 3, 1, 1, s.group);
  x = c.max_pool(c.conv_relu(x, 48, 32, 3, 1, 1, s.group), 3, 2, s.pool_pads);
  const I flat = 32 * s.final_size * s.final_size;
  b.output(c.classifier(c.reshape(x, {1, flat}), flat, 64, 10), {1, 10});
  return b.take();
}

OnnxModel alexnet(std::uint64_t seed) { return classic_net("alexnet", {11, 2, 0, 1, 2, 2, {0, 0, 0, 0}, 2}, seed); }
OnnxModel zfnet(std::uint64_t seed) { return classic_net("zfnet512", {7, 2, 1, 2, 0, 1, {0, 0, 1, 1}, 1}, seed); }

/// VGG-19 on 32x32 at opset 9: stages of 2, 2, 4, 4, 4 3x3 convs, Flatten-9 and the classifier,
/// fc6's weight made by ConstantOfShape.
OnnxModel vgg19(std::uint64_t seed) {
  Exporter b = old_exporter("vgg19", seed, 9);
  Cnn c(b);
  std::string x = b.input("data_0", {1, 3, 32, 32});
  const int convs[5] = {2, 2, 4, 4, 4};
  const I widths[5] = {8, 16, 24, 32, 32};
  I in = 3;
  for (int stage = 0; stage < 5; ++stage) {
    for (int k = 0; k < convs[stage]; ++k) {
      x = c.conv_relu(x, in, widths[stage], 3, 1, 1);
      in = widths[stage];
    }
    x = c.max_pool(x, 2, 2);
  }
  const std::string fc6_weight = c.constant_weight(64, in, 0.02f);
  b.output(c.classifier(c.flatten(x), in, 64, 10, fc6_weight), {1, 10});
  return b.take();
}

/// SqueezeNet 1.1 on 64x64 at opset 9: fire modules (squeeze 1x1, expand 1x1 and 3x3 joined by
/// Concat-4), Dropout, a 1x1 conv classifier, GlobalAveragePool and Flatten.
OnnxModel squeezenet(std::uint64_t seed) {
  Exporter b = old_exporter("squeezenet1.1", seed, 9);
  Cnn c(b);
  auto fire = [&](const std::string& x, I in, I squeeze, I expand) {
    const std::string s = c.conv_relu(x, in, squeeze, 1, 1, 0);
    return c.concat({c.conv_relu(s, squeeze, expand, 1, 1, 0), c.conv_relu(s, squeeze, expand, 3, 1, 1)});
  };
  std::string x = b.input("data", {1, 3, 64, 64});
  x = c.max_pool(c.conv_relu(x, 3, 16, 3, 2, 0), 3, 2);
  x = c.max_pool(fire(fire(x, 16, 8, 16), 32, 8, 16), 3, 2);
  x = fire(fire(x, 32, 12, 24), 48, 12, 24);
  x = c.conv_relu(c.dropout(x), 48, 10, 1, 1, 0);
  b.output(c.flatten(b.node("GlobalAveragePool", {x})), {1, 10});
  return b.take();
}

/// ResNet-50 v1 (opset 7, BatchNormalization-7 with `spatial`) or v2 (opset 9, pre-activation)
/// as the MXNet conversions write them, one bottleneck per stage on 64x64 at width 8.
OnnxModel resnet50(bool v2, std::uint64_t seed) {
  Exporter b = old_exporter(v2 ? "resnet50_v2" : "resnet50_v1", seed, v2 ? 9 : 7);
  Cnn c(b);
  std::string x = b.input("data", {1, 3, 64, 64});
  x = v2 ? c.conv(x, 3, 8, 7, 2, 3, 1, false) : c.conv_bn_relu(x, 3, 8, 7, 2, 3);
  x = c.max_pool(x, 3, 2, {1, 1, 1, 1});
  I in = 8;
  const I mids[3] = {8, 16, 32};
  for (int stage = 0; stage < 3; ++stage) {
    const I mid = mids[stage];
    const I out = 4 * mid;
    const I stride = stage == 0 ? 1 : 2;
    if (v2) {
      const std::string pre = c.bn_relu(x, in);
      std::string y = c.conv_bn_relu(pre, in, mid, 1, 1, 0);
      y = c.conv(c.conv_bn_relu(y, mid, mid, 3, stride, 1), mid, out, 1, 1, 0, 1, false);
      x = c.add(y, c.conv(pre, in, out, 1, stride, 0, 1, false));
    } else {
      std::string y = c.conv_bn_relu(c.conv_bn_relu(x, in, mid, 1, 1, 0), mid, mid, 3, stride, 1);
      y = c.conv_bn(y, mid, out, 1, 1, 0);
      x = c.relu(c.add(y, c.conv_bn(x, in, out, 1, stride, 0)));
    }
    in = out;
  }
  if (v2) x = c.bn_relu(x, in);
  b.output(c.pooled_fc(x, in, 10), {1, 10});
  return b.take();
}

/// The widths of an inception module's branches: 1x1; 1x1 then 3x3; 1x1 then 5x5 (v1) or two 3x3
/// (v2); pool then 1x1.
struct InceptionWidths {
  I b1, b2_reduce, b2, b3_reduce, b3, b4;
  I out() const { return b1 + b2 + b3 + b4; }
};

/// GoogLeNet (v1: Conv-Relu, LRN, max-pool branch) or BN-Inception (v2: Conv-BN-Relu, double 3x3,
/// AveragePool-7 branch counting the padding) on 64x64 at opset 9; Caffe's ceil-mode pools as end
/// padding, AveragePool over the last 4x4, Dropout, Reshape, Gemm and Softmax.
OnnxModel inception(bool v2, std::uint64_t seed) {
  Exporter b = old_exporter(v2 ? "inception_v2" : "inception_v1", seed, 9);
  Cnn c(b);
  auto unit = [&](const std::string& x, I in, I out, I k, I stride) {
    const I pad = k / 2;
    return v2 ? c.conv_bn_relu(x, in, out, k, stride, pad) : c.conv_relu(x, in, out, k, stride, pad);
  };
  auto module = [&](const std::string& x, I in, const InceptionWidths& w) {
    const std::string b1 = unit(x, in, w.b1, 1, 1);
    const std::string b2 = unit(unit(x, in, w.b2_reduce, 1, 1), w.b2_reduce, w.b2, 3, 1);
    std::string b3 = unit(x, in, w.b3_reduce, 1, 1);
    b3 = v2 ? unit(unit(b3, w.b3_reduce, w.b3, 3, 1), w.b3, w.b3, 3, 1) : unit(b3, w.b3_reduce, w.b3, 5, 1);
    const std::string pooled = v2 ? c.avg_pool(x, 3, 1, 1, 1) : c.max_pool(x, 3, 1, {1, 1, 1, 1});
    return c.concat({b1, b2, b3, unit(pooled, in, w.b4, 1, 1)});
  };
  const Ints ceil_pads = {0, 0, 1, 1};
  std::string x = b.input("data_0", {1, 3, 64, 64});
  x = c.max_pool(unit(x, 3, 16, 7, 2), 3, 2, ceil_pads);
  if (!v2) x = c.lrn(x);
  x = unit(unit(x, 16, 16, 1, 1), 16, 32, 3, 1);
  if (!v2) x = c.lrn(x);
  x = c.max_pool(x, 3, 2, ceil_pads);
  const InceptionWidths a{8, 8, 16, 4, 8, 8}, bw{16, 12, 16, 4, 8, 8}, cw{16, 12, 24, 4, 12, 12};
  x = module(module(x, 32, a), a.out(), bw);
  x = c.max_pool(x, 3, 2, ceil_pads);
  x = module(x, bw.out(), cw);
  x = c.dropout(c.avg_pool(x, 4, 1, 0));
  b.output(c.softmax(c.fc(c.reshape(x, {1, cw.out()}), cw.out(), 10)), {1, 10});
  return b.take();
}

/// DenseNet-121 on 64x64 at opset 9: dense layers (BN-Relu-Conv 1x1, BN-Relu-Conv 3x3) each
/// Concat onto its input, a transition (BN-Relu-Conv 1x1, AveragePool 2x2), GlobalAveragePool,
/// Gemm and Softmax; growth 8, two blocks of three layers.
OnnxModel densenet(std::uint64_t seed) {
  Exporter b = old_exporter("densenet121", seed, 9);
  Cnn c(b);
  const I growth = 8;
  auto block = [&](std::string x, I& channels) {
    for (int k = 0; k < 3; ++k) {
      std::string y = c.conv(c.bn_relu(x, channels), channels, 4 * growth, 1, 1, 0, 1, false);
      y = c.conv(c.bn_relu(y, 4 * growth), 4 * growth, growth, 3, 1, 1, 1, false);
      x = c.concat({x, y});
      channels += growth;
    }
    return x;
  };
  std::string x = b.input("data_0", {1, 3, 64, 64});
  x = c.max_pool(c.conv_bn_relu(x, 3, 16, 7, 2, 3), 3, 2, {1, 1, 1, 1});
  I channels = 16;
  x = block(x, channels);
  x = c.avg_pool(c.conv(c.bn_relu(x, channels), channels, channels / 2, 1, 1, 0, 1, false), 2, 2, 0);
  channels /= 2;
  x = block(x, channels);
  x = c.bn_relu(x, channels);
  b.output(c.softmax(c.pooled_fc(x, channels, 10)), {1, 10});
  return b.take();
}

/// ShuffleNet (v1, 2 groups) on 64x64 at opset 9: units of group Conv 1x1, the channel shuffle
/// (Reshape to [1, g, C/g, H, W], Transpose, Reshape back), depthwise 3x3 and group Conv 1x1;
/// strided units Concat an AveragePool shortcut, the others Add the input.
OnnxModel shufflenet(std::uint64_t seed) {
  Exporter b = old_exporter("shufflenet", seed, 9);
  Cnn c(b);
  const I g = 2;
  I size = 16;
  auto unit = [&](const std::string& x, I in, I out, I stride) {
    const I branch = stride == 2 ? out - in : out;
    const I mid = branch / 4;
    std::string y = c.conv_bn_relu(x, in, mid, 1, 1, 0, g);
    y = c.reshape(y, {1, g, mid / g, size, size});
    y = b.node("Transpose", {y}, {{"perm", Ints{0, 2, 1, 3, 4}}});
    y = c.reshape(y, {1, mid, size, size});
    size /= stride;
    y = c.conv_bn(c.conv_bn(y, mid, mid, 3, stride, 1, mid), mid, branch, 1, 1, 0, g);
    return c.relu(stride == 2 ? c.concat({c.avg_pool(x, 3, 2, 1), y}) : c.add(x, y));
  };
  std::string x = b.input("gpu_0/data_0", {1, 3, 64, 64});
  x = c.max_pool(c.conv_bn_relu(x, 3, 24, 3, 2, 1), 3, 2, {1, 1, 1, 1});
  x = unit(unit(x, 24, 48, 2), 48, 48, 1);
  x = unit(unit(x, 48, 96, 2), 96, 96, 1);
  b.output(c.pooled_fc(x, 96, 10), {1, 10});
  return b.take();
}

/// An FPN-style head on 32x32 at opset 9 with the old attribute forms: PRelu, Pad-2 (`pads`),
/// LeakyRelu, Upsample-9 (nearest and linear, scales as input), Sum-8 of four, Clip-6 (min and max
/// attributes), Slice-1 (starts, ends, axes attributes), and Unsqueeze-1 (`axes`) on the logits.
OnnxModel fpn_opset9(std::uint64_t seed) {
  Exporter b = old_exporter("fpn_opset9", seed, 9);
  Cnn c(b);
  const std::string scales = b.initializer("scales", Tensor({4}, std::vector<float>{1, 1, 2, 2}));
  std::string x = b.input("data", {1, 3, 32, 32});
  const std::string p = b.node("PRelu", {c.conv(x, 3, 8, 3, 1, 1), b.random_weight("slope", {8, 1, 1}, 0.3f)});
  const std::string padded = b.node("Pad", {p}, {{"mode", std::string("constant")}, {"pads", Ints{0, 0, 1, 1, 0, 0, 1, 1}},
                                                {"value", 0.0f}});
  const std::string coarse = b.node("LeakyRelu", {c.conv(padded, 8, 16, 3, 2, 0)}, {{"alpha", 0.1f}});
  auto up = [&](const std::string& mode) {
    return b.node("Upsample", {c.conv(coarse, 16, 8, 1, 1, 0), scales}, {{"mode", mode}});
  };
  std::string y = b.node("Sum", {up("nearest"), up("linear"), c.conv(p, 8, 8, 1, 1, 0), p});
  y = b.node("Clip", {y}, {{"min", 0.0f}, {"max", 6.0f}});
  y = b.node("Slice", {y}, {{"starts", Ints{2, 2}}, {"ends", Ints{30, 30}}, {"axes", Ints{2, 3}}});
  y = c.pooled_fc(c.conv_relu(y, 8, 16, 3, 2, 1), 16, 10);
  b.output(b.node("Unsqueeze", {y}, {{"axes", Ints{1}}}), {1, 1, 10});
  return b.take();
}

/// A segmentation-style FPN on 32x32 at opset 10: Resize-10 (linear and nearest, scales as input),
/// Slice-10 (starts, ends, axes as inputs), Add of the laterals; a [1, 4, 32, 32] map out.
OnnxModel fpn_opset10(std::uint64_t seed) {
  Exporter b = old_exporter("fpn_opset10", seed, 10);
  Cnn c(b);
  const std::string scales = b.initializer("scales", Tensor({4}, std::vector<float>{1, 1, 2, 2}));
  auto resize = [&](const std::string& x, const std::string& mode) {
    return b.node("Resize", {x, scales}, {{"mode", mode}});
  };
  std::string x = b.input("data", {1, 3, 32, 32});
  const std::string f1 = c.conv_relu(x, 3, 8, 3, 2, 1);
  const std::string f2 = c.conv_relu(f1, 8, 16, 3, 2, 1);
  const std::string m1 = c.add(resize(c.conv(f2, 16, 8, 1, 1, 0), "linear"), f1);
  const std::string f0 = b.node("Slice", {c.conv(x, 3, 12, 3, 1, 1), b.int64_initializer("starts", {0}, {1}),
                                          b.int64_initializer("ends", {8}, {1}), b.int64_initializer("axes", {1}, {1})});
  const std::string m0 = c.add(resize(m1, "nearest"), f0);
  b.output(c.conv(m0, 8, 4, 3, 1, 1), {1, 4, 32, 32});
  return b.take();
}

/// A U-Net-style segmentation net on 32x32 at opset 13, as PyTorch exports one: InstanceNormalization
/// with Elu and LeakyRelu in the encoder, a Selu bottleneck, a 2x2 stride-2 ConvTranspose and a 3x3
/// stride-2 one (pads 1, output_padding 1) up, Concat skips, a SpaceToDepth / 1x1 Conv /
/// DepthToSpace (CRD) head and LogSoftmax over 4 classes.
OnnxModel unet_opset13(std::uint64_t seed) {
  Exporter b("unet_opset13", seed, 13);
  b.set_ir_version(7);
  Cnn c(b);
  auto instance_norm = [&](const std::string& x, I channels) {
    return b.node("InstanceNormalization", {x, b.random_weight("scale", {channels}, 1.0f), b.random_weight("bias", {channels}, 0.1f)},
                  {{"epsilon", 1e-5f}});
  };
  auto up = [&](const std::string& x, I in, I out, I k, I pad, I output_padding) {
    const std::string w = b.random_weight("up_w", {in, out, k, k}, std::sqrt(3.0f / static_cast<float>(in * k * k)));
    return b.node("ConvTranspose", {x, w, b.random_weight("up_b", {out}, 0.1f)},
                  {{"kernel_shape", Ints{k, k}}, {"strides", Ints{2, 2}}, {"pads", Ints{pad, pad, pad, pad}},
                   {"output_padding", Ints{output_padding, output_padding}}});
  };
  const std::string x = b.input("image", {1, 3, 32, 32});
  const std::string e1 = b.node("Elu", {instance_norm(c.conv(x, 3, 8, 3, 1, 1), 8)}, {{"alpha", 1.0f}});
  const std::string e2 = b.node("LeakyRelu", {instance_norm(c.conv(c.max_pool(e1, 2, 2), 8, 16, 3, 1, 1), 16)}, {{"alpha", 0.01f}});
  const std::string bottom = b.node("Selu", {c.conv(c.max_pool(e2, 2, 2), 16, 32, 3, 1, 1)});
  const std::string u2 = c.conv_relu(c.concat({up(bottom, 32, 16, 2, 0, 0), e2}), 32, 16, 3, 1, 1);
  const std::string u1 = c.conv_relu(c.concat({up(u2, 16, 8, 3, 1, 1), e1}), 16, 12, 3, 1, 1);
  const std::string folded = b.node("SpaceToDepth", {u1}, {{"blocksize", I{2}}});
  const std::string shuffled = b.node("DepthToSpace", {c.conv(folded, 48, 16, 1, 1, 0)}, {{"blocksize", I{2}}, {"mode", std::string("CRD")}});
  b.output(b.node("LogSoftmax", {shuffled}, {{"axis", I{1}}}), {1, 4, 32, 32});
  return b.take();
}

/// A sequence tagger at opset 14, as PyTorch exports nn.LSTM / nn.GRU with batch_first: a
/// bidirectional LSTM (layout 1, hidden 24) over 4 steps of 20 features, a GRU (layout 1,
/// linear_before_reset as PyTorch writes it, an initial state) on its outputs, then per step a
/// MatMul to 10 tags and LogSoftmax, and an L2-normalised max-pooled embedding.
OnnxModel lstm_opset14(std::uint64_t seed) {
  Exporter b("lstm_opset14", seed, 14);
  b.set_ir_version(7);
  Cnn c(b);
  const I seq = 4, features = 20, h1 = 24, h2 = 32, tags = 10;
  auto recurrent = [&](const std::string& op, const std::string& x, I in, I hidden, I dirs, I gates, Attrs attrs,
                       const std::string& initial) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(hidden));
    std::vector<std::string> inputs = {x, b.random_weight("w", {dirs, gates * hidden, in}, scale),
                                       b.random_weight("r", {dirs, gates * hidden, hidden}, scale),
                                       b.random_weight("b", {dirs, 2 * gates * hidden}, scale)};
    if (!initial.empty()) inputs.insert(inputs.end(), {"", initial});
    attrs.emplace_back("hidden_size", hidden);
    attrs.emplace_back("layout", I{1});
    return b.node(op, inputs, std::move(attrs));
  };
  const std::string x = b.input("frames", {1, seq, features});
  const std::string both = recurrent("LSTM", x, features, h1, 2, 4, {{"direction", std::string("bidirectional")}}, "");
  const std::string joined = c.reshape(both, {1, seq, 2 * h1});
  const std::string state = b.random_weight("h0", {1, 1, h2}, 0.5f);
  const std::string gru = recurrent("GRU", joined, 2 * h1, h2, 1, 3, {{"linear_before_reset", I{1}}}, state);
  const std::string steps = c.reshape(gru, {1, seq, h2});
  const std::string logits = b.node("Add", {b.node("MatMul", {steps, b.random_weight("tag_w", {h2, tags}, 0.3f)}),
                                            b.random_weight("tag_b", {tags}, 0.1f)});
  b.output(b.node("LogSoftmax", {logits}, {{"axis", I{-1}}}), {1, seq, tags});
  const std::string pooled = b.node("ReduceMax", {steps}, {{"axes", Ints{1}}, {"keepdims", I{0}}});
  b.output(b.node("LpNormalization", {pooled}, {{"axis", I{-1}}, {"p", I{2}}}), {1, h2});
  return b.take();
}

/// A decoder-only transformer at opset 24, as recent exporters write Llama-style blocks: per
/// layer RMSNormalization before the attention and before the MLP; queries and keys with
/// RotaryEmbedding, then Attention (causal, grouped: 4 query heads share 2 key/value heads); a
/// SwiGLU MLP (Swish of the gate projection times the up projection) and residual adds; a final
/// RMSNormalization and the vocabulary projection. 2 layers, hidden 64, MLP 128, sequence 16,
/// vocabulary 100. With `past` > 0, one decoding step instead: one token at position `past`, each
/// layer's Attention reading its past_key and past_value inputs ([1, 2, past, 16]) and handing on
/// present_key and present_value (graph outputs), RotaryEmbedding picking the token's row of the
/// caches by position_ids.
OnnxModel llama_opset24(std::uint64_t seed, I past) {
  Exporter b(past > 0 ? "llama_opset24_decode" : "llama_opset24", seed, 24);
  const I layers = 2, hidden = 64, heads = 4, kv_heads = 2, dh = hidden / heads, mlp = 128, vocab = 100;
  const I seq = past > 0 ? 1 : 16, positions = past + seq;
  // RoPE's caches for positions 0 .. positions - 1, frequencies 10000^(-2i / dh): as [1, seq,
  // dh / 2] read in order, or as [positions, dh / 2] rows picked by position_ids.
  const Shape cache_shape = past > 0 ? Shape{positions, dh / 2} : Shape{1, seq, dh / 2};
  Tensor cos(cache_shape), sin(cache_shape);
  for (I t = 0; t < positions; ++t) {
    for (I i = 0; i < dh / 2; ++i) {
      const double angle = static_cast<double>(t) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(dh));
      cos.data[static_cast<std::size_t>(t * (dh / 2) + i)] = static_cast<float>(std::cos(angle));
      sin.data[static_cast<std::size_t>(t * (dh / 2) + i)] = static_cast<float>(std::sin(angle));
    }
  }
  const std::string cos_cache = b.initializer("cos_cache", cos);
  const std::string sin_cache = b.initializer("sin_cache", sin);
  auto rms_norm = [&](const std::string& x) {
    const std::string weight = b.random_weight("norm_weight", {hidden}, 1.0f);
    return b.node("RMSNormalization", {x, weight}, {{"axis", I{-1}}, {"epsilon", 1e-6f}});
  };
  auto linear = [&](const std::string& x, I in, I out) {
    const std::string w = b.random_weight("w", {in, out}, std::sqrt(3.0f / static_cast<float>(in)));
    return b.node("MatMul", {x, w});
  };
  auto heads_of = [&](const std::string& t, I count) {  // [1, seq, count * dh] -> [1, count, seq, dh]
    const std::string target = b.int64_initializer("shape", {1, seq, count, dh}, {4});
    const std::string split = b.node("Reshape", {t, target});
    return b.node("Transpose", {split}, {{"perm", Ints{0, 2, 1, 3}}});
  };
  std::vector<std::string> rope_inputs = {"", cos_cache, sin_cache};
  if (past > 0) {
    Ints ids(static_cast<std::size_t>(seq));
    for (I t = 0; t < seq; ++t) ids[static_cast<std::size_t>(t)] = past + t;
    rope_inputs.push_back(b.int64_initializer("position_ids", ids, {1, seq}));
  }
  auto rope = [&](const std::string& t) {
    rope_inputs[0] = t;
    return b.node("RotaryEmbedding", rope_inputs);
  };
  std::string x = b.input("hidden_states", {1, seq, hidden});
  std::vector<std::string> presents;
  for (I layer = 0; layer < layers; ++layer) {
    const std::string normed = rms_norm(x);
    const std::string q = rope(heads_of(linear(normed, hidden, hidden), heads));
    const std::string k = rope(heads_of(linear(normed, hidden, kv_heads * dh), kv_heads));
    const std::string v = heads_of(linear(normed, hidden, kv_heads * dh), kv_heads);
    std::string attended;
    if (past > 0) {
      const std::string past_key = b.input("past_key_" + std::to_string(layer), {1, kv_heads, past, dh});
      const std::string past_value = b.input("past_value_" + std::to_string(layer), {1, kv_heads, past, dh});
      std::vector<std::string> outs = b.node_outputs("Attention", {q, k, v, "", past_key, past_value}, 3, {{"is_causal", I{1}}});
      attended = outs[0];
      presents.insert(presents.end(), {outs[1], outs[2]});
    } else {
      attended = b.node("Attention", {q, k, v}, {{"is_causal", I{1}}});
    }
    const std::string context = b.node("Transpose", {attended}, {{"perm", Ints{0, 2, 1, 3}}});
    const std::string merged = b.node("Reshape", {context, b.int64_initializer("shape", {1, seq, hidden}, {3})});
    x = b.node("Add", {x, linear(merged, hidden, hidden)});
    const std::string normed_mlp = rms_norm(x);
    const std::string gate = b.node("Swish", {linear(normed_mlp, hidden, mlp)});
    const std::string up = linear(normed_mlp, hidden, mlp);
    x = b.node("Add", {x, linear(b.node("Mul", {gate, up}), mlp, hidden)});
  }
  b.output(linear(rms_norm(x), hidden, vocab), {1, seq, vocab});
  for (const std::string& present : presents) b.output(present, {1, kv_heads, positions, dh});
  return b.take();
}

struct Entry {
  ZooStandin standin;
  OnnxModel (*make)(std::uint64_t seed);
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = {
      {{"alexnet-standin", "bvlc AlexNet at opset 9 (LRN, grouped Conv, Reshape-5, Gemm, Dropout-7, Softmax), 64x64"},
       alexnet},
      {{"zfnet512-standin", "ZFNet-512 at opset 9 (LRN, ceil-mode MaxPool as end pads, Reshape-5, Gemm), 64x64"}, zfnet},
      {{"vgg19-standin", "VGG-19 at opset 9 (Flatten-9, Gemm, fc6's weight a ConstantOfShape), 32x32"}, vgg19},
      {{"squeezenet1.1-standin", "SqueezeNet 1.1 at opset 9 (fire modules, Concat, Dropout, GlobalAveragePool), 64x64"},
       squeezenet},
      {{"resnet50-v1-standin", "ResNet-50 v1 at opset 7, IR 3 (BatchNormalization-7 with spatial, Add-7), 64x64"},
       [](std::uint64_t seed) { return resnet50(false, seed); }},
      {{"resnet50-v2-standin", "ResNet-50 v2 at opset 9 (pre-activation BatchNormalization-9, Add, Flatten), 64x64"},
       [](std::uint64_t seed) { return resnet50(true, seed); }},
      {{"inception-v1-standin", "GoogLeNet at opset 9 (LRN, inception Concat, padded MaxPool, AveragePool-7), 64x64"},
       [](std::uint64_t seed) { return inception(false, seed); }},
      {{"inception-v2-standin", "BN-Inception at opset 9 (BatchNormalization, AveragePool counting pads), 64x64"},
       [](std::uint64_t seed) { return inception(true, seed); }},
      {{"densenet121-standin", "DenseNet-121 at opset 9 (Concat chains, BatchNormalization, AveragePool), 64x64"},
       densenet},
      {{"shufflenet-standin", "ShuffleNet v1 at opset 9 (group Conv, 5-D Reshape + Transpose shuffle), 64x64"},
       shufflenet},
      {{"fpn-opset9-standin",
        "FPN head at opset 9 (PRelu, Pad-2, LeakyRelu, Upsample-9, Sum-8, Clip-6, Slice-1, Unsqueeze-1), 32x32"},
       fpn_opset9},
      {{"fpn-opset10-standin", "FPN segmentation head at opset 10 (Resize-10 linear and nearest, Slice-10), 32x32"},
       fpn_opset10},
      {{"resnet18-opset18-standin", "ResNet-18 at 1/8 width, dynamo-style opset 18 (ReduceMean-18 head), 32x32"},
       [](std::uint64_t seed) { return make_resnet(18, 8, 32, 10, seed, 18); }},
      {{"bert-opset18-standin",
        "BERT encoder, 2 layers, hidden 64, dynamo-style opset 18 (Split-18, ReduceMean-18), sequence 16"},
       [](std::uint64_t seed) { return make_bert(2, 64, 2, 256, 16, seed, 18); }},
      {{"bert-opset20-standin", "the opset-18 BERT encoder at opset 20 with GELU as Gelu-20, IR 9"},
       [](std::uint64_t seed) { return make_bert(2, 64, 2, 256, 16, seed, 20); }},
      {{"bert-tokens-opset17-standin",
        "BERT as Hugging Face exports it: int64 input_ids, token_type_ids and attention_mask, embeddings by "
        "Gather at run-time indices (vocabulary 1000), the mask through Unsqueeze and Cast, 2 layers, hidden 64, "
        "sequence 16"},
       [](std::uint64_t seed) { return make_bert(2, 64, 2, 256, 16, seed, 17, 1000); }},
      {{"unet-opset13-standin",
        "U-Net at opset 13 (InstanceNormalization, Elu, Selu, ConvTranspose 2x2 and 3x3 stride 2, SpaceToDepth, "
        "DepthToSpace, LogSoftmax), 32x32"},
       unet_opset13},
      {{"lstm-opset14-standin",
        "sequence tagger at opset 14 (bidirectional batch-first LSTM, GRU with linear_before_reset and an initial "
        "state, LogSoftmax, ReduceMax, LpNormalization), 4 steps"},
       lstm_opset14},
      {{"llama-opset24-standin",
        "Llama-style decoder at opset 24, IR 12 (RMSNormalization-23, RotaryEmbedding-23, causal grouped-query "
        "Attention-23, Swish-24 in a SwiGLU MLP), 2 layers, hidden 64, sequence 16"},
       [](std::uint64_t seed) { return llama_opset24(seed, 0); }},
      {{"llama-decode-opset24-standin",
        "the Llama-style decoder's step with a key/value cache: one token, Attention-23 reading past_key and "
        "past_value (15 positions) and handing on present_key and present_value, RotaryEmbedding-23 at position_ids"},
       [](std::uint64_t seed) { return llama_opset24(seed, 15); }},
  };
  return all;
}

}  // namespace

const std::vector<ZooStandin>& zoo_standins() {
  static const std::vector<ZooStandin> list = [] {
    std::vector<ZooStandin> out;
    for (const Entry& e : entries()) out.push_back(e.standin);
    return out;
  }();
  return list;
}

collage::Result<OnnxModel> make_zoo_standin(const std::string& name, std::uint64_t seed) {
  for (const Entry& e : entries()) {
    if (e.standin.name == name) return e.make(seed);
  }
  return collage::Error{collage::ErrorCode::invalid_argument, "unknown stand-in '" + name + "'"};
}

}  // namespace tc
