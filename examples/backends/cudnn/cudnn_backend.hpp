#pragma once

/// \file
/// The cudnn backend: convolution (with the bias, residual and relu cuDNN fuses into it),
/// pooling and softmax through cuDNN's legacy API, one cuDNN call per partition (two for a
/// convolution with a bias but no relu or residual), proposed by its pattern table
/// (cudnn_table.hpp). Algorithms are chosen by cuDNN's heuristic when compiling, weights are
/// uploaded then, scratch memory is reserved then.

#include <memory>

#include "backends/backend.hpp"
#include "backends/cudnn/cudnn_plan.hpp"

namespace tc {

/// The cudnn backend (a LibraryBackend of cudnn::table, cudnn::plan and cudnn::kernel). It exists
/// in every build; in one without cuDNN its compile() says so.
std::unique_ptr<Backend> make_cudnn_backend(cudnn::Options options = {});

/// The cudnn backend's entry in the registry (built with the CUDA toolkit and cuDNN).
BackendRegistration cudnn_registration();

}  // namespace tc
