#include "models/model_zoo.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "models/exporter.hpp"
#include "models/zoo_standins.hpp"

namespace tc {

namespace {

using zoo::Exporter;
using zoo::Ints;
using zoo::Layers;

std::string basic_block(Layers& l, const std::string& x, std::int64_t in, std::int64_t out, std::int64_t stride) {
  std::string y = l.relu(l.conv(x, in, out, 3, stride));
  y = l.conv(y, out, out, 3, 1);
  const std::string shortcut = (stride != 1 || in != out) ? l.conv(x, in, out, 1, stride) : x;
  return l.relu(l.add(y, shortcut));
}

std::string bottleneck(Layers& l, const std::string& x, std::int64_t in, std::int64_t mid, std::int64_t stride) {
  const std::int64_t out = mid * 4;
  std::string y = l.relu(l.conv(x, in, mid, 1, 1));
  y = l.relu(l.conv(y, mid, mid, 3, stride));
  y = l.conv(y, mid, out, 1, 1);
  const std::string shortcut = (stride != 1 || in != out) ? l.conv(x, in, out, 1, stride) : x;
  return l.relu(l.add(y, shortcut));
}

std::int64_t scaled(std::int64_t channels, int percent) {
  const std::int64_t c = (channels * percent + 50) / 100;
  return std::max<std::int64_t>(8, (c + 4) / 8 * 8);
}

/// The gains over 1 / fan-in of the variance of the weights `conv` draws, so that the input still
/// moves the outputs of the deep plain stacks of SqueezeNet, GoogLeNet and EfficientNet rather
/// than fading under the biases (at Layers::conv's gain of 1 EfficientNet-B0's logits move by
/// under 1e-6 of their spread between two random images): He's 2 before a Relu; 2.4 before a
/// SiLU (E[silu(x)^2] / E[x^2] grows from 0.25 to 0.5 with the scale of x, so no gain keeps it:
/// 2.8 blows up, 2 fades); 4 into the projection after the squeeze-excitation's gate (about 0.5);
/// 1 where the projection is added to a residual, which would otherwise double at every block.
/// Chosen by measurement: over seeds 1 to 10 EfficientNet-B0's logits keep a spread of 0.1 to
/// 0.2, of which 5 to 16% follows the input.
constexpr float relu_gain = 2.0f;
constexpr float silu_gain = 2.4f;
constexpr float gated_gain = 4.0f;
constexpr float residual_gain = 1.0f;

/// Conv with bias (batch norm folded in), square kernel, `pad` on every side, its weights
/// uniform with variance `gain` / fan-in (Layers::conv's scale at gain 1).
std::string conv(Exporter& b, const std::string& x, std::int64_t in, std::int64_t out, std::int64_t k,
                 std::int64_t stride, std::int64_t pad, float gain, std::int64_t group = 1) {
  const float scale = std::sqrt(3.0f * gain / static_cast<float>(in / group * k * k));
  const std::string w = b.random_weight("w", {out, in / group, k, k}, scale);
  const std::string bias = b.random_weight("b", {out}, 0.1f);
  return b.node("Conv", {x, w, bias},
                {{"kernel_shape", Ints{k, k}}, {"strides", Ints{stride, stride}},
                 {"pads", Ints{pad, pad, pad, pad}}, {"dilations", Ints{1, 1}},
                 {"group", group}});
}

/// Conv (padded k / 2, stride 1 unless given) + Relu, as a torchvision BasicConv2d or a Fire
/// module's convolution exports with batch norm folded in.
std::string conv_relu(Exporter& b, const std::string& x, std::int64_t in, std::int64_t out, std::int64_t k,
                      std::int64_t stride = 1) {
  return b.node("Relu", {conv(b, x, in, out, k, stride, k / 2, relu_gain)});
}

/// nn.MaxPool2d(k, stride, pad, ceil_mode=True) as torch.onnx.export writes it.
std::string ceil_max_pool(Exporter& b, const std::string& x, std::int64_t k, std::int64_t stride, std::int64_t pad) {
  return b.node("MaxPool", {x},
                {{"ceil_mode", std::int64_t{1}}, {"kernel_shape", Ints{k, k}},
                 {"pads", Ints{pad, pad, pad, pad}}, {"strides", Ints{stride, stride}}});
}

/// nn.SiLU as torch.onnx.export writes it: Mul(x, Sigmoid(x)).
std::string silu(Exporter& b, const std::string& x) {
  const std::string s = b.node("Sigmoid", {x});
  return b.node("Mul", {x, s});
}

/// nn.Linear on a [1, in] input as torch.onnx.export writes it: Gemm with the [out, in] weight
/// transposed and the bias; the weights' variance `gain` / in.
std::string gemm(Exporter& b, const std::string& x, std::int64_t in, std::int64_t out, float gain) {
  const std::string w = b.random_weight("w", {out, in}, std::sqrt(3.0f * gain / static_cast<float>(in)));
  const std::string bias = b.random_weight("b", {out}, 0.1f);
  return b.node("Gemm", {x, w, bias}, {{"transB", std::int64_t{1}}});
}

/// torchvision's Fire module: a squeeze Conv 1x1 + Relu, then Conv 1x1 + Relu and Conv 3x3 + Relu
/// over it joined on the channels.
std::string fire(Exporter& b, const std::string& x, std::int64_t in, std::int64_t squeeze, std::int64_t expand) {
  const std::string s = conv_relu(b, x, in, squeeze, 1);
  const std::string e1 = conv_relu(b, s, squeeze, expand, 1);
  const std::string e3 = conv_relu(b, s, squeeze, expand, 3);
  return b.node("Concat", {e1, e3}, {{"axis", std::int64_t{1}}});
}

/// The widths of torchvision's GoogLeNet Inception module: its input, the 1x1 branch, the 1x1
/// reduce and 3x3 of the second branch, the 1x1 reduce and 3x3 of the third (5x5 in the paper,
/// 3x3 in torchvision), and the 1x1 after the max pool.
struct InceptionWidths {
  std::int64_t in, b1, b2_reduce, b2, b3_reduce, b3, b4;
  std::int64_t out() const { return b1 + b2 + b3 + b4; }
};

/// torchvision's Inception module, each BasicConv2d a Conv with folded batch norm and a Relu.
std::string inception(Exporter& b, const std::string& x, const InceptionWidths& w) {
  const std::string b1 = conv_relu(b, x, w.in, w.b1, 1);
  const std::string b2 = conv_relu(b, conv_relu(b, x, w.in, w.b2_reduce, 1), w.b2_reduce, w.b2, 3);
  const std::string b3 = conv_relu(b, conv_relu(b, x, w.in, w.b3_reduce, 1), w.b3_reduce, w.b3, 3);
  const std::string b4 = conv_relu(b, ceil_max_pool(b, x, 3, 1, 1), w.in, w.b4, 1);
  return b.node("Concat", {b1, b2, b3, b4}, {{"axis", std::int64_t{1}}});
}

/// torchvision's MBConv: expand Conv 1x1 + SiLU (not at ratio 1), depthwise Conv k x k + SiLU,
/// squeeze-excitation to max(1, in / 4) channels (its gate times the depthwise output, as
/// `scale * input` exports), project Conv 1x1, and the residual Add when the shape is kept.
std::string mbconv(Exporter& b, const std::string& x, std::int64_t in, std::int64_t out, std::int64_t ratio,
                   std::int64_t k, std::int64_t stride) {
  const std::int64_t expanded = in * ratio;
  const std::int64_t squeeze = std::max<std::int64_t>(1, in / 4);
  std::string y = ratio == 1 ? x : silu(b, conv(b, x, in, expanded, 1, 1, 0, silu_gain));
  y = silu(b, conv(b, y, expanded, expanded, k, stride, k / 2, silu_gain, expanded));
  const std::string pooled = b.node("GlobalAveragePool", {y});
  const std::string squeezed = silu(b, conv(b, pooled, expanded, squeeze, 1, 1, 0, silu_gain));
  const std::string gate = b.node("Sigmoid", {conv(b, squeezed, squeeze, expanded, 1, 1, 0, 1.0f)});
  const bool residual = stride == 1 && in == out;
  y = conv(b, b.node("Mul", {gate, y}), expanded, out, 1, 1, 0, residual ? residual_gain : gated_gain);
  return residual ? b.node("Add", {y, x}) : y;
}

}  // namespace

OnnxModel make_resnet(int depth, int width, int size, int classes, std::uint64_t seed, int opset) {
  Exporter b("resnet" + std::to_string(depth), seed, opset);
  Layers l(b);
  const std::vector<int> blocks = depth == 18 ? std::vector<int>{2, 2, 2, 2}
                                  : depth == 34 ? std::vector<int>{3, 4, 6, 3}
                                                : std::vector<int>{3, 4, 6, 3};
  const bool bottlenecks = depth >= 50;
  std::string x = b.input("input", {1, 3, size, size});
  x = l.relu(l.conv(x, 3, width, 7, 2));
  x = b.node("MaxPool", {x},
             {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}},
              {"pads", Ints{1, 1, 1, 1}}});
  std::int64_t channels = width;
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    const std::int64_t mid = static_cast<std::int64_t>(width) << stage;
    for (int k = 0; k < blocks[stage]; ++k) {
      const std::int64_t stride = (stage > 0 && k == 0) ? 2 : 1;
      if (bottlenecks) {
        x = bottleneck(l, x, channels, mid, stride);
        channels = mid * 4;
      } else {
        x = basic_block(l, x, channels, mid, stride);
        channels = mid;
      }
    }
  }
  b.output(l.head(x, channels, classes), {1, classes});
  return b.take();
}

OnnxModel make_mobilenet_v2(int width_percent, int size, int classes, std::uint64_t seed) {
  Exporter b("mobilenet_v2", seed);
  Layers l(b);
  // (expansion, channels, repeats, stride) as in the paper.
  const int settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                              {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::string x = b.input("input", {1, 3, size, size});
  std::int64_t channels = scaled(32, width_percent);
  x = l.relu6(l.conv(x, 3, channels, 3, 2));
  for (const auto& s : settings) {
    const std::int64_t out = scaled(s[1], width_percent);
    for (int k = 0; k < s[2]; ++k) {
      const std::int64_t stride = k == 0 ? s[3] : 1;
      const std::int64_t hidden = channels * s[0];
      std::string y = x;
      if (s[0] != 1) y = l.relu6(l.conv(y, channels, hidden, 1, 1));
      y = l.relu6(l.conv(y, hidden, hidden, 3, stride, hidden));
      y = l.conv(y, hidden, out, 1, 1);
      x = (stride == 1 && channels == out) ? l.add(x, y) : y;
      channels = out;
    }
  }
  const std::int64_t last = scaled(1280, width_percent);
  x = l.relu6(l.conv(x, channels, last, 1, 1));
  b.output(l.head(x, last, classes), {1, classes});
  return b.take();
}

OnnxModel make_bert(int layers, int hidden, int heads, int ffn, int seq, std::uint64_t seed, int opset, int vocab) {
  Exporter b("bert", seed, opset);
  Layers l(b);
  const std::int64_t dh = hidden / heads;
  std::string x;
  std::string mask_value;
  if (vocab > 0) {
    const std::string ids = b.integer_input("input_ids", {1, seq});
    const std::string types = b.integer_input("token_type_ids", {1, seq});
    const std::string mask = b.integer_input("attention_mask", {1, seq});
    Ints positions(static_cast<std::size_t>(seq));
    for (int k = 0; k < seq; ++k) positions[static_cast<std::size_t>(k)] = k;
    const std::string position_ids = b.int64_initializer("position_ids", positions, {1, seq});
    auto embedding = [&](const std::string& indices, std::int64_t rows) {
      return b.node("Gather", {b.random_weight("embedding", {rows, hidden}, 1.0f), indices});
    };
    const std::string words = embedding(ids, vocab);
    const std::string with_types = l.add(words, embedding(types, 2));
    x = l.layer_norm(l.add(with_types, embedding(position_ids, seq)), hidden);
    const std::string axes = b.int64_initializer("axes", {1, 2}, {2});
    const std::string unsqueezed = b.node("Unsqueeze", {mask, axes});
    const std::string as_float = b.node("Cast", {unsqueezed}, {{"to", std::int64_t{1}}});
    const std::string kept = b.node("Sub", {l.scalar(1.0f), as_float});
    mask_value = b.node("Mul", {kept, l.scalar(-10000.0f)});
  } else {
    x = b.input("hidden_states", {1, seq, hidden});
    // An additive attention mask with the last quarter of the positions masked out.
    Tensor mask({1, 1, 1, seq});
    for (int k = 0; k < seq; ++k) mask.data[static_cast<std::size_t>(k)] = k < seq - seq / 4 ? 0.0f : -10000.0f;
    mask_value = b.initializer("mask", mask);
  }
  for (int layer = 0; layer < layers; ++layer) {
    // The dynamo exporter (opset 18 on) writes static reshape targets as constants.
    auto heads_of = [&](const std::string& t, const std::vector<std::int64_t>& perm) {
      const std::string target = opset >= 18 ? b.int64_initializer("shape", {1, seq, heads, dh}, {4})
                                             : l.split_heads_shape(t, heads, dh);
      return b.node("Transpose", {b.node("Reshape", {t, target})}, {{"perm", perm}});
    };
    // From opset 18 one packed projection chunked in three, as nn.MultiheadAttention's in_proj
    // exports.
    std::vector<std::string> packed;
    if (opset >= 18) {
      packed = b.node_outputs("Split", {l.linear(x, hidden, 3 * hidden)}, 3,
                              {{"axis", std::int64_t{-1}}, {"num_outputs", std::int64_t{3}}});
    }
    auto projected = [&](std::size_t k) { return packed.empty() ? l.linear(x, hidden, hidden) : packed[k]; };
    const std::string q = heads_of(projected(0), {0, 2, 1, 3});
    const std::string k = heads_of(projected(1), {0, 2, 3, 1});
    const std::string v = heads_of(projected(2), {0, 2, 1, 3});
    std::string scores = b.node("MatMul", {q, k});
    scores = b.node("Div", {scores, l.scalar(std::sqrt(static_cast<float>(dh)))});
    scores = b.node("Add", {scores, mask_value});
    const std::string probs = b.node("Softmax", {scores}, {{"axis", std::int64_t{-1}}});
    std::string ctx = b.node("MatMul", {probs, v});
    ctx = b.node("Transpose", {ctx}, {{"perm", Ints{0, 2, 1, 3}}});
    ctx = b.node("Reshape", {ctx, opset >= 18 ? b.int64_initializer("shape", {1, seq, hidden}, {3})
                                              : l.merge_heads_shape(ctx)});
    const std::string attn = l.layer_norm(l.add(l.linear(ctx, hidden, hidden), x), hidden);
    const std::string up = l.gelu(l.linear(attn, hidden, ffn));
    x = l.layer_norm(l.add(l.linear(up, ffn, hidden), attn), hidden);
  }
  b.output(x, {1, seq, hidden});
  return b.take();
}

OnnxModel make_mnist(std::uint64_t seed) {
  Exporter b("mnist", seed);
  Layers l(b);
  std::string x = b.input("Input3", {1, 1, 28, 28});
  auto conv_block = [&](const std::string& in, std::int64_t cin, std::int64_t cout, std::int64_t pool) {
    const std::string w = b.random_weight("w", {cout, cin, 5, 5}, std::sqrt(3.0f / static_cast<float>(cin * 25)));
    std::string y = b.node("Conv", {in, w},
                           {{"kernel_shape", Ints{5, 5}}, {"strides", Ints{1, 1}},
                            {"pads", Ints{2, 2, 2, 2}}, {"dilations", Ints{1, 1}},
                            {"group", std::int64_t{1}}});
    y = b.node("Add", {y, b.random_weight("b", {cout, 1, 1}, 0.1f)});
    y = l.relu(y);
    return b.node("MaxPool", {y},
                  {{"kernel_shape", Ints{pool, pool}}, {"strides", Ints{pool, pool}},
                   {"pads", Ints{0, 0, 0, 0}}});
  };
  x = conv_block(x, 1, 8, 2);
  x = conv_block(x, 8, 16, 3);
  x = b.node("Reshape", {x, b.int64_initializer("shape", {1, 256}, {2})});
  x = b.node("MatMul", {x, b.random_weight("w", {256, 10}, std::sqrt(3.0f / 256.0f))});
  b.output(b.node("Add", {x, b.random_weight("b", {1, 10}, 0.1f)}), {1, 10});
  return b.take();
}

OnnxModel make_squeezenet1_1(int size, int classes, std::uint64_t seed) {
  Exporter b("squeezenet1_1", seed);
  std::string x = b.input("input", {1, 3, size, size});
  x = ceil_max_pool(b, b.node("Relu", {conv(b, x, 3, 64, 3, 2, 0, relu_gain)}), 3, 2, 0);
  x = fire(b, x, 64, 16, 64);
  x = ceil_max_pool(b, fire(b, x, 128, 16, 64), 3, 2, 0);
  x = fire(b, x, 128, 32, 128);
  x = ceil_max_pool(b, fire(b, x, 256, 32, 128), 3, 2, 0);
  x = fire(b, x, 256, 48, 192);
  x = fire(b, x, 384, 48, 192);
  x = fire(b, x, 384, 64, 256);
  x = fire(b, x, 512, 64, 256);
  x = b.node("GlobalAveragePool", {conv_relu(b, x, 512, classes, 1)});
  b.output(b.node("Flatten", {x}, {{"axis", std::int64_t{1}}}), {1, classes});
  return b.take();
}

OnnxModel make_googlenet(int size, int classes, std::uint64_t seed) {
  Exporter b("googlenet", seed);
  Layers l(b);
  const InceptionWidths stage3[2] = {{192, 64, 96, 128, 16, 32, 32}, {256, 128, 128, 192, 32, 96, 64}};
  const InceptionWidths stage4[5] = {{480, 192, 96, 208, 16, 48, 64},
                                     {512, 160, 112, 224, 24, 64, 64},
                                     {512, 128, 128, 256, 24, 64, 64},
                                     {512, 112, 144, 288, 32, 64, 64},
                                     {528, 256, 160, 320, 32, 128, 128}};
  const InceptionWidths stage5[2] = {{832, 256, 160, 320, 32, 128, 128}, {832, 384, 192, 384, 48, 128, 128}};
  std::string x = b.input("input", {1, 3, size, size});
  x = ceil_max_pool(b, conv_relu(b, x, 3, 64, 7, 2), 3, 2, 0);
  x = conv_relu(b, x, 64, 64, 1);
  x = ceil_max_pool(b, conv_relu(b, x, 64, 192, 3), 3, 2, 0);
  for (const InceptionWidths& w : stage3) x = inception(b, x, w);
  x = ceil_max_pool(b, x, 3, 2, 0);
  for (const InceptionWidths& w : stage4) x = inception(b, x, w);
  x = ceil_max_pool(b, x, 2, 2, 0);
  for (const InceptionWidths& w : stage5) x = inception(b, x, w);
  b.output(l.head(x, stage5[1].out(), classes), {1, classes});
  return b.take();
}

OnnxModel make_efficientnet_b0(int size, int classes, std::uint64_t seed) {
  Exporter b("efficientnet_b0", seed);
  Layers l(b);
  // (expand ratio, kernel, stride, in, out, layers) as in torchvision's efficientnet_b0.
  const std::int64_t stages[7][6] = {{1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},  {6, 5, 2, 24, 40, 2},
                                     {6, 3, 2, 40, 80, 3},  {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4},
                                     {6, 3, 1, 192, 320, 1}};
  std::string x = b.input("input", {1, 3, size, size});
  x = silu(b, conv(b, x, 3, 32, 3, 2, 1, silu_gain));
  for (const auto& s : stages) {
    for (std::int64_t k = 0; k < s[5]; ++k) x = mbconv(b, x, k == 0 ? s[3] : s[4], s[4], s[0], s[1], k == 0 ? s[2] : 1);
  }
  x = silu(b, conv(b, x, 320, 1280, 1, 1, 0, silu_gain));
  b.output(l.head(x, 1280, classes), {1, classes});
  return b.take();
}

OnnxModel make_mlp(const std::vector<int>& widths, std::uint64_t seed) {
  Exporter b("mlp", seed);
  std::string x = b.input("input", {1, widths.front()});
  for (std::size_t k = 1; k < widths.size(); ++k) {
    const bool last = k + 1 == widths.size();
    x = gemm(b, x, widths[k - 1], widths[k], last ? 1.0f : relu_gain);
    if (!last) x = b.node("Relu", {x});
  }
  b.output(x, {1, widths.back()});
  return b.take();
}

const std::vector<ZooModel>& zoo_models() {
  static const std::vector<ZooModel> models = {
      {"mnist", "the Collage RFC's MNIST network (mnist-8's structure), 1x1x28x28", true},
      {"resnet-mini", "ResNet-18 structure at 1/4 width (16 base channels), 1x3x64x64", true},
      {"mobilenet-mini", "MobileNet-v2 at 35% width, 1x3x96x96", true},
      {"bert-mini", "BERT encoder, 2 layers, hidden 128, 2 heads, ffn 512, sequence 32", true},
      {"resnet18", "ResNet-18, 1x3x224x224", false},
      {"resnet50", "ResNet-50, 1x3x224x224", false},
      {"mobilenet_v2", "MobileNet-v2, 1x3x224x224", false},
      {"bert-base", "BERT-base encoder, 12 layers, hidden 768, 12 heads, ffn 3072, sequence 128", false},
      {"bert-base-tokens", "bert-base as Hugging Face exports it: int64 token ids, token types and mask, "
                           "embeddings gathered from a 30522-token vocabulary", false},
      {"squeezenet1_1", "torchvision SqueezeNet 1.1 as torch.onnx.export writes it (opset 17), 1x3x224x224", false},
      {"googlenet", "torchvision GoogLeNet, batch norm folded, no aux heads (opset 17), 1x3x224x224", false},
      {"efficientnet_b0", "torchvision EfficientNet-B0, SiLU as Sigmoid and Mul (opset 17), 1x3x224x224", false},
      {"mlp", "MLP of nn.Linear as Gemm, 784-1024-1024-10 with Relu, 1x784", false},
  };
  return models;
}

collage::Result<std::string> make_zoo_model(const std::string& name, std::uint64_t seed) {
  if (name == "mnist") return serialize(make_mnist(seed));
  if (name == "resnet-mini") return serialize(make_resnet(18, 16, 64, 10, seed));
  if (name == "mobilenet-mini") return serialize(make_mobilenet_v2(35, 96, 10, seed));
  if (name == "bert-mini") return serialize(make_bert(2, 128, 2, 512, 32, seed));
  if (name == "resnet18") return serialize(make_resnet(18, 64, 224, 1000, seed));
  if (name == "resnet50") return serialize(make_resnet(50, 64, 224, 1000, seed));
  if (name == "mobilenet_v2") return serialize(make_mobilenet_v2(100, 224, 1000, seed));
  if (name == "bert-base") return serialize(make_bert(12, 768, 12, 3072, 128, seed));
  if (name == "bert-base-tokens") return serialize(make_bert(12, 768, 12, 3072, 128, seed, 17, 30522));
  if (name == "squeezenet1_1") return serialize(make_squeezenet1_1(224, 1000, seed));
  if (name == "googlenet") return serialize(make_googlenet(224, 1000, seed));
  if (name == "efficientnet_b0") return serialize(make_efficientnet_b0(224, 1000, seed));
  if (name == "mlp") return serialize(make_mlp({784, 1024, 1024, 10}, seed));
  if (collage::Result<OnnxModel> standin = make_zoo_standin(name, seed); standin.ok()) return serialize(*standin);
  return collage::Error{collage::ErrorCode::invalid_argument, "unknown model '" + name + "'"};
}

}  // namespace tc
