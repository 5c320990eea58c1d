#pragma once

/// \file
/// Small stand-ins of the ONNX model zoo's architectures (AlexNet, ZFNet-512, VGG-19, SqueezeNet
/// 1.1, ResNet-50 v1 and v2, Inception v1 and v2, DenseNet-121, ShuffleNet, an FPN-style head),
/// written at the old opsets (7 to 10) and IR versions of the zoo's files with the operator forms
/// those files use (LRN, Dropout with a ratio attribute, BatchNormalization with `spatial`,
/// Upsample, Pad/Clip/Slice/Unsqueeze with attributes, weights made by ConstantOfShape ...), and
/// PyTorch-style exports at opsets 13 to 20 (a U-Net with ConvTranspose, an LSTM / GRU tagger,
/// ResNet-18 and BERT). Each is a few MFLOPs on a 32x32 to 64x64 input with
/// seeded random weights, so the reference interpreter checks it in well under a second.

#include <cstdint>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "onnx/model.hpp"

namespace tc {

/// A stand-in the zoo check runs.
struct ZooStandin {
  std::string name;
  /// What it stands for and the operator forms it uses.
  std::string description;
};

/// Every stand-in, old opsets first.
const std::vector<ZooStandin>& zoo_standins();

/// The stand-in `name` with weights drawn from `seed`; an error for an unknown name.
collage::Result<OnnxModel> make_zoo_standin(const std::string& name, std::uint64_t seed = 1);

}  // namespace tc
