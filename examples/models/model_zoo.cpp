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

OnnxModel make_bert(int layers, int hidden, int heads, int ffn, int seq, std::uint64_t seed, int opset) {
  Exporter b("bert", seed, opset);
  Layers l(b);
  const std::int64_t dh = hidden / heads;
  std::string x = b.input("hidden_states", {1, seq, hidden});
  // An additive attention mask with the last quarter of the positions masked out.
  Tensor mask({1, 1, 1, seq});
  for (int k = 0; k < seq; ++k) mask.data[static_cast<std::size_t>(k)] = k < seq - seq / 4 ? 0.0f : -10000.0f;
  const std::string mask_value = b.initializer("mask", mask);
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
  if (collage::Result<OnnxModel> standin = make_zoo_standin(name, seed); standin.ok()) return serialize(*standin);
  return collage::Error{collage::ErrorCode::invalid_argument, "unknown model '" + name + "'"};
}

}  // namespace tc
