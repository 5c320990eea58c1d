#pragma once

/// \file
/// The cudnn backend: convolution (with the bias, residual and relu cuDNN fuses into it),
/// pooling and softmax through cuDNN's legacy API, one cuDNN call per partition (two for a
/// convolution with a bias but no relu or residual). Algorithms are chosen by cuDNN's heuristic
/// when compiling, weights are uploaded then, scratch memory is reserved then.

#include <memory>
#include <string>

#include <collage/rules/partition_spec.hpp>

#include "backends/backend.hpp"
#include "backends/cudnn/cudnn_plan.hpp"

namespace tc {

/// The patterns of the cudnn backend: "cudnn.conv" (Conv with or without its bias input),
/// "cudnn.conv_add" and "cudnn.conv_add_add" (one or two Adds: a per-channel bias, a residual of
/// the output's shape), each also with "_relu"; and "cudnn.max_pool", "cudnn.avg_pool",
/// "cudnn.global_avg_pool", "cudnn.global_max_pool", "cudnn.softmax".
collage::PatternTable<Graph> cudnn_patterns();

/// The rule of the cudnn backend: each match of cudnn_patterns that plan_cudnn accepts is one
/// partition for `target`.
collage::PartitionSpec<Graph> cudnn_spec(std::string target = "cudnn");

/// The cudnn backend. It exists in every build; in one without cuDNN its compile() says so.
std::unique_ptr<Backend> make_cudnn_backend(CudnnOptions options = {});

/// The cudnn backend's entry in the registry (built with the CUDA toolkit and cuDNN).
BackendRegistration cudnn_registration();

}  // namespace tc
