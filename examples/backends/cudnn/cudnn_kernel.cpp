#include "backends/cudnn/cudnn_kernel.hpp"

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cudnn.h>

#include "backends/kit/kernel_operands.hpp"

namespace tc::cudnn {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

namespace {

Status check(cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return Status::success();
  return Error{ErrorCode::io, "cudnn: " + what + ": " + cudnnGetErrorString(s)};
}

/// A cuDNN descriptor destroyed when it goes.
template <class T>
using Owned = std::unique_ptr<std::remove_pointer_t<T>, cudnnStatus_t (*)(T)>;

template <class T>
Result<Owned<T>> create(cudnnStatus_t (*make)(T*), cudnnStatus_t (*destroy)(T), const char* what) {
  T raw = nullptr;
  if (Status st = check(make(&raw), std::string("creating a ") + what + " descriptor"); !st.ok()) return st.error();
  return Owned<T>(raw, destroy);
}

using TensorDesc = Owned<cudnnTensorDescriptor_t>;

Result<TensorDesc> tensor_desc(const std::vector<int>& dims) {
  Result<TensorDesc> d = create(cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor, "tensor");
  if (!d.ok()) return d;
  Status st = check(cudnnSetTensorNdDescriptorEx(d->get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                 static_cast<int>(dims.size()), dims.data()),
                    "setting a tensor descriptor");
  if (!st.ok()) return st.error();
  return d;
}

Result<std::shared_ptr<void>> make_handle(CudaDevice& device) {
  cudnnHandle_t handle = nullptr;
  if (Status st = check(cudnnCreate(&handle), "creating a cuDNN handle"); !st.ok()) return st.error();
  std::shared_ptr<void> owned(handle, [](void* h) { (void)cudnnDestroy(static_cast<cudnnHandle_t>(h)); });
  if (Status st = check(cudnnSetStream(handle, device.stream()), "setting the stream"); !st.ok()) return st.error();
  return owned;
}

/// What every cuDNN kernel has: the device, the shared handle, where its operands are.
class CudnnKernel : public Kernel {
 public:
  CudnnKernel(CudaDevice& device, std::shared_ptr<void> handle, KernelOperands operands)
      : device_(device), handle_(std::move(handle)), operands_(std::move(operands)) {}

  Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (Status st = operands_.check_buffers(inputs, outputs, "cudnn"); !st.ok()) return st;
    return launch(inputs, outputs);
  }

 protected:
  /// Runs the call, writing outputs[0].
  virtual Status launch(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) = 0;
  cudnnHandle_t handle() const { return static_cast<cudnnHandle_t>(handle_.get()); }
  const float* address(int node, const std::vector<const float*>& inputs, const std::vector<float*>& outputs) const {
    return operands_.address(node, inputs, outputs);
  }

  CudaDevice& device_;
  static constexpr float kOne = 1.0f;
  static constexpr float kZero = 0.0f;

 private:
  std::shared_ptr<void> handle_;
  KernelOperands operands_;
};

class ConvKernel final : public CudnnKernel {
 public:
  struct Descriptors {
    TensorDesc x{nullptr, cudnnDestroyTensorDescriptor};
    TensorDesc y{nullptr, cudnnDestroyTensorDescriptor};
    TensorDesc bias{nullptr, cudnnDestroyTensorDescriptor};
    Owned<cudnnFilterDescriptor_t> w{nullptr, cudnnDestroyFilterDescriptor};
    Owned<cudnnConvolutionDescriptor_t> conv{nullptr, cudnnDestroyConvolutionDescriptor};
    Owned<cudnnActivationDescriptor_t> activation{nullptr, cudnnDestroyActivationDescriptor};
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t workspace_bytes = 0;
  };

  ConvKernel(CudaDevice& device, std::shared_ptr<void> handle, KernelOperands operands, const ConvPlan& plan,
             Descriptors d, OwnedBuffer zero_bias)
      : CudnnKernel(device, std::move(handle), std::move(operands)), plan_(plan), d_(std::move(d)),
        zero_bias_(std::move(zero_bias)) {}

  /// The fused call: relu, or a residual (identity then needs the implicit precomputed GEMM).
  static bool fused(const ConvPlan& p) { return p.relu || p.z >= 0; }

 protected:
  Status launch(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    float* y = outputs[0];
    const float* x = address(plan_.x, inputs, outputs);
    const float* w = address(plan_.w, inputs, outputs);
    const float* bias = plan_.bias >= 0 ? address(plan_.bias, inputs, outputs) : zero_bias_.floats();
    void* ws = device_.workspace().data;
    if (fused(plan_)) {
      const float* z = plan_.z >= 0 ? address(plan_.z, inputs, outputs) : y;
      const float alpha2 = plan_.z >= 0 ? 1.0f : 0.0f;
      return check(cudnnConvolutionBiasActivationForward(handle(), &kOne, d_.x.get(), x, d_.w.get(), w, d_.conv.get(),
                                                         d_.algo, ws, d_.workspace_bytes, &alpha2, d_.y.get(), z,
                                                         d_.bias.get(), bias, d_.activation.get(), d_.y.get(), y),
                   "cudnnConvolutionBiasActivationForward");
    }
    Status st = check(cudnnConvolutionForward(handle(), &kOne, d_.x.get(), x, d_.w.get(), w, d_.conv.get(), d_.algo, ws,
                                              d_.workspace_bytes, &kZero, d_.y.get(), y),
                      "cudnnConvolutionForward");
    if (!st.ok() || plan_.bias < 0) return st;
    return check(cudnnAddTensor(handle(), &kOne, d_.bias.get(), bias, &kOne, d_.y.get(), y), "cudnnAddTensor");
  }

 private:
  ConvPlan plan_;
  Descriptors d_;
  OwnedBuffer zero_bias_;
};

class PoolKernel final : public CudnnKernel {
 public:
  PoolKernel(CudaDevice& device, std::shared_ptr<void> handle, KernelOperands operands, int x, TensorDesc x_desc,
             TensorDesc y_desc, Owned<cudnnPoolingDescriptor_t> pool)
      : CudnnKernel(device, std::move(handle), std::move(operands)), x_(x), x_desc_(std::move(x_desc)),
        y_desc_(std::move(y_desc)), pool_(std::move(pool)) {}

 protected:
  Status launch(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    return check(cudnnPoolingForward(handle(), pool_.get(), &kOne, x_desc_.get(), address(x_, inputs, outputs), &kZero,
                                     y_desc_.get(), outputs[0]),
                 "cudnnPoolingForward");
  }

 private:
  int x_;
  TensorDesc x_desc_;
  TensorDesc y_desc_;
  Owned<cudnnPoolingDescriptor_t> pool_;
};

class SoftmaxKernel final : public CudnnKernel {
 public:
  SoftmaxKernel(CudaDevice& device, std::shared_ptr<void> handle, KernelOperands operands, int x, TensorDesc desc)
      : CudnnKernel(device, std::move(handle), std::move(operands)), x_(x), desc_(std::move(desc)) {}

 protected:
  Status launch(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    return check(cudnnSoftmaxForward(handle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, desc_.get(),
                                     address(x_, inputs, outputs), &kZero, desc_.get(), outputs[0]),
                 "cudnnSoftmaxForward");
  }

 private:
  int x_;
  TensorDesc desc_;
};

/// The fastest algorithm by cuDNN's heuristic that fits the workspace limit and, without
/// options.tf32, runs with FMA arithmetic; the descriptor's math type is set for it.
Status choose_algorithm(cudnnHandle_t handle, const Options& options, ConvKernel::Descriptors& d) {
  const cudnnMathType_t fp32 = CUDNN_FMA_MATH;
  auto workspace_of = [&](cudnnConvolutionFwdAlgo_t algo, cudnnMathType_t math, std::size_t& bytes) {
    return cudnnSetConvolutionMathType(d.conv.get(), math) == CUDNN_STATUS_SUCCESS &&
           cudnnGetConvolutionForwardWorkspaceSize(handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo, &bytes) ==
               CUDNN_STATUS_SUCCESS &&
           bytes <= options.max_workspace_bytes;
  };
  if (d.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
    if (workspace_of(d.algo, options.tf32 ? CUDNN_DEFAULT_MATH : fp32, d.workspace_bytes)) return Status::success();
    return Error{ErrorCode::invalid_argument, "cudnn: the implicit precomputed GEMM algorithm (needed for a residual "
                                              "without relu) does not take this convolution"};
  }
  int count = 0;
  if (Status st = check(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &count), "counting algorithms"); !st.ok()) {
    return st;
  }
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(count));
  int returned = 0;
  if (Status st = check(cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), count,
                                                               &returned, perf.data()),
                        "choosing an algorithm");
      !st.ok()) {
    return st;
  }
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& p = perf[static_cast<std::size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (workspace_of(p.algo, options.tf32 ? p.mathType : fp32, d.workspace_bytes)) {
      d.algo = p.algo;
      return Status::success();
    }
  }
  return Error{ErrorCode::invalid_argument, "cudnn: no convolution algorithm fits " +
                                                std::to_string(options.max_workspace_bytes) + " bytes of workspace"};
}

Result<std::unique_ptr<Kernel>> compile_conv(const ConvPlan& plan, CudaDevice& device,
                                             const Options& options, std::shared_ptr<void> handle,
                                             KernelOperands operands) {
  const auto h = static_cast<cudnnHandle_t>(handle.get());
  ConvKernel::Descriptors d;
  Result<TensorDesc> x = tensor_desc(plan.x_dims);
  if (!x.ok()) return x.error();
  Result<TensorDesc> y = tensor_desc(plan.y_dims);
  if (!y.ok()) return y.error();
  std::vector<int> bias_dims(plan.y_dims.size(), 1);
  bias_dims[1] = plan.y_dims[1];
  Result<TensorDesc> bias = tensor_desc(bias_dims);
  if (!bias.ok()) return bias.error();
  d.x = std::move(x).value();
  d.y = std::move(y).value();
  d.bias = std::move(bias).value();
  auto w = create(cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor, "filter");
  if (!w.ok()) return w.error();
  d.w = std::move(w).value();
  auto conv = create(cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor, "convolution");
  if (!conv.ok()) return conv.error();
  d.conv = std::move(conv).value();
  auto act = create(cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor, "activation");
  if (!act.ok()) return act.error();
  d.activation = std::move(act).value();

  const int spatial = static_cast<int>(plan.pads.size());
  Status st = check(cudnnSetFilterNdDescriptor(d.w.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                               static_cast<int>(plan.w_dims.size()), plan.w_dims.data()),
                    "setting the filter descriptor");
  if (st.ok()) {
    st = check(cudnnSetConvolutionNdDescriptor(d.conv.get(), spatial, plan.pads.data(), plan.strides.data(),
                                               plan.dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "setting the convolution descriptor");
  }
  if (st.ok()) st = check(cudnnSetConvolutionGroupCount(d.conv.get(), plan.groups), "setting the group count");
  if (st.ok()) {
    st = check(cudnnSetActivationDescriptor(d.activation.get(), plan.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                            CUDNN_PROPAGATE_NAN, 0.0),
               "setting the activation descriptor");
  }
  if (!st.ok()) return st.error();
  std::vector<int> out(plan.y_dims.size());
  st = check(cudnnGetConvolutionNdForwardOutputDim(d.conv.get(), d.x.get(), d.w.get(), static_cast<int>(out.size()),
                                                   out.data()),
             "computing the output shape");
  if (!st.ok()) return st.error();
  if (out != plan.y_dims) return Error{ErrorCode::internal, "cudnn: cuDNN's output shape differs from the graph's"};

  if (ConvKernel::fused(plan) && !plan.relu) d.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  if (st = choose_algorithm(h, options, d); !st.ok()) return st.error();
  if (st = device.reserve_workspace(d.workspace_bytes); !st.ok()) return Error{st.code(), "cudnn: " + st.message()};

  OwnedBuffer zero_bias;
  if (ConvKernel::fused(plan) && plan.bias < 0) {
    const std::vector<float> zeros(static_cast<std::size_t>(plan.y_dims[1]), 0.0f);
    Result<OwnedBuffer> b = allocate_owned(device, zeros.size() * sizeof(float));
    if (!b.ok()) return Error{b.error().code, "cudnn: " + b.error().message};
    if (st = device.upload(b->get(), 0, zeros.data(), zeros.size() * sizeof(float)); !st.ok()) {
      return Error{st.code(), "cudnn: " + st.message()};
    }
    zero_bias = std::move(b).value();
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConvKernel>(device, std::move(handle), std::move(operands), plan,
                                                              std::move(d), std::move(zero_bias)));
}

Result<std::unique_ptr<Kernel>> compile_pool(const PoolPlan& plan, CudaDevice& device, std::shared_ptr<void> handle,
                                             KernelOperands operands) {
  Result<TensorDesc> x = tensor_desc(plan.x_dims);
  if (!x.ok()) return x.error();
  Result<TensorDesc> y = tensor_desc(plan.y_dims);
  if (!y.ok()) return y.error();
  auto pool = create(cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor, "pooling");
  if (!pool.ok()) return pool.error();
  const cudnnPoolingMode_t mode = plan.mode == PoolMode::max                   ? CUDNN_POOLING_MAX
                                  : plan.mode == PoolMode::average_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                               : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  Status st = check(cudnnSetPoolingNdDescriptor(pool->get(), mode, CUDNN_PROPAGATE_NAN, static_cast<int>(plan.window.size()),
                                                plan.window.data(), plan.pads.data(), plan.strides.data()),
                    "setting the pooling descriptor");
  if (!st.ok()) return st.error();
  std::vector<int> out(plan.y_dims.size());
  st = check(cudnnGetPoolingNdForwardOutputDim(pool->get(), x->get(), static_cast<int>(out.size()), out.data()),
             "computing the output shape");
  if (!st.ok()) return st.error();
  if (out != plan.y_dims) return Error{ErrorCode::internal, "cudnn: cuDNN's pooling output shape differs from the graph's"};
  return std::unique_ptr<Kernel>(std::make_unique<PoolKernel>(device, std::move(handle), std::move(operands), plan.x,
                                                              std::move(x).value(), std::move(y).value(),
                                                              std::move(pool).value()));
}

}  // namespace

Result<std::unique_ptr<Kernel>> kernel(const Function& function, const LibraryCall& call, const CallPlan& plan,
                                       Device& on, const Options& options) {
  Result<CudaDevice*> cuda = usable_cuda_device(on, "cudnn");
  if (!cuda.ok()) return cuda.error();
  CudaDevice& device = **cuda;
  Result<std::shared_ptr<void>> handle = device.context("cudnn", [&device] { return make_handle(device); });
  if (!handle.ok()) return handle.error();
  Result<KernelOperands> operands = KernelOperands::bind(function, {call}, cudnn::operands(plan), device);
  if (!operands.ok()) return operands.error();
  if (const auto* conv = std::get_if<ConvPlan>(&plan)) {
    return compile_conv(*conv, device, options, std::move(handle).value(), std::move(operands).value());
  }
  if (const auto* pool = std::get_if<PoolPlan>(&plan)) {
    return compile_pool(*pool, device, std::move(handle).value(), std::move(operands).value());
  }
  const SoftmaxPlan& softmax = std::get<SoftmaxPlan>(plan);
  Result<TensorDesc> desc = tensor_desc(softmax.dims);
  if (!desc.ok()) return desc.error();
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel>(device, std::move(handle).value(),
                                                                 std::move(operands).value(), softmax.x,
                                                                 std::move(desc).value()));
}

}  // namespace tc::cudnn
