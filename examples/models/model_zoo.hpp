#pragma once

/// \file
/// The project's own models, written as ONNX the way PyTorch's exporter writes them (convolutions
/// with folded batch norm as a bias, ReLU6 as Clip with constant bounds, layer norm and GELU
/// decomposed into elementwise ops and reductions, reshape targets computed by Shape / Gather /
/// Concat arithmetic), with seeded random weights.

#include <cstdint>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "onnx/model.hpp"

namespace tc {

/// A model the zoo can write.
struct ZooModel {
  std::string name;
  /// What it is, in a few words ("ResNet-18 at 1/4 width, 64x64 input").
  std::string description;
  /// Small enough for the demo and the tests on a 2-core machine.
  bool small = true;
};

/// Every model of the zoo, small ones first.
const std::vector<ZooModel>& zoo_models();

/// The ONNX bytes of the zoo model or stand-in (zoo_standins.hpp) `name`, with weights drawn
/// from `seed`; an error for an unknown name.
collage::Result<std::string> make_zoo_model(const std::string& name, std::uint64_t seed = 1);

/// ResNet (basic blocks for depth 18/34, bottlenecks for 50) at `width` base channels on a
/// `size` x `size` RGB image with `classes` outputs. From opset 18 the global pool is a
/// ReduceMean with its axes as input, as the dynamo exporter writes it.
OnnxModel make_resnet(int depth, int width, int size, int classes, std::uint64_t seed, int opset = 17);
/// MobileNet-v2 with its channel counts scaled by `width_percent` / 100 on a `size` x `size` image.
OnnxModel make_mobilenet_v2(int width_percent, int size, int classes, std::uint64_t seed);
/// A BERT encoder: `layers` layers of `hidden` width, `heads` heads, `ffn` feed-forward width,
/// over a [1, seq, hidden] input (the embeddings' output) with an additive attention mask. From
/// opset 18 written as the dynamo exporter does: constant reshape targets, one packed QKV
/// projection split by Split-18 (num_outputs), layer norm's ReduceMean with its axes as input;
/// from opset 20 GELU as the Gelu operator. With a `vocab`, as Hugging Face's BertModel exports:
/// int64 input_ids, token_type_ids and attention_mask of [1, seq], embeddings gathered from their
/// tables and summed, the mask made additive by Unsqueeze, Cast, Sub and Mul.
OnnxModel make_bert(int layers, int hidden, int heads, int ffn, int seq, std::uint64_t seed, int opset = 17,
                    int vocab = 0);
/// The MNIST network of the Collage RFC and the ONNX model zoo (mnist-8's structure).
OnnxModel make_mnist(std::uint64_t seed);
/// torchvision's SqueezeNet 1.1 as torch.onnx.export writes it in eval mode at opset 17: fire
/// modules joined by Concat, MaxPool with ceil_mode, no Dropout, a 1x1 Conv classifier with Relu,
/// GlobalAveragePool and Flatten.
OnnxModel make_squeezenet1_1(int size, int classes, std::uint64_t seed);
/// torchvision's GoogLeNet (no aux heads, no input transform) as torch.onnx.export writes it in
/// eval mode at opset 17: Conv with folded batch norm and Relu, Inception modules with torchvision's
/// 3x3 third branch and a ceil_mode MaxPool fourth, GlobalAveragePool, Flatten and Gemm.
OnnxModel make_googlenet(int size, int classes, std::uint64_t seed);
/// torchvision's EfficientNet-B0 as torch.onnx.export writes it in eval mode at opset 17: MBConv
/// blocks with folded batch norm, squeeze-excitation (GlobalAveragePool, two 1x1 Convs, Sigmoid,
/// Mul), SiLU as Sigmoid and Mul, residual Adds, GlobalAveragePool, Flatten and Gemm.
OnnxModel make_efficientnet_b0(int size, int classes, std::uint64_t seed);
/// A multilayer perceptron over a [1, widths[0]] input: nn.Linear layers exported as Gemm with
/// the transposed weight and a bias, Relu between them, none after the last.
OnnxModel make_mlp(const std::vector<int>& widths, std::uint64_t seed);

}  // namespace tc
