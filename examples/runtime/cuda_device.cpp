#include "runtime/cuda_device.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#if TC_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "runtime/cuda_check.hpp"
#endif

namespace tc {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

struct CudaDevice::State {
  /// Why the device cannot be used; empty when it can.
  std::string reason;
  std::string name;
  int capability = 0;
#if TC_HAVE_CUDA
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
#endif
  Buffer workspace;
  /// Written over by evict_caches(): twice the L2 cache.
  Buffer eviction;
  std::size_t l2_bytes = 0;
  /// Bumped whenever the workspace moves, so recordings that baked in its address know.
  std::uint64_t workspace_generation = 0;
  std::map<std::string, std::shared_ptr<void>> contexts;

  Error unavailable() const { return Error{ErrorCode::invalid_argument, reason}; }
};

std::unique_ptr<Device> make_cuda_device(int ordinal) { return std::make_unique<CudaDevice>(ordinal); }

Result<CudaDevice*> usable_cuda_device(Device& device, const std::string& who) {
  auto* cuda = dynamic_cast<CudaDevice*>(&device);
  if (cuda == nullptr) return Error{ErrorCode::invalid_argument, who + ": needs a CUDA device, got " + device.name()};
  if (!cuda->available()) return Error{ErrorCode::invalid_argument, who + ": " + cuda->unavailable_reason()};
  return cuda;
}

std::string CudaDevice::name() const { return state_->reason.empty() ? state_->name : "cuda: unavailable"; }
bool CudaDevice::available() const { return state_->reason.empty(); }
std::string CudaDevice::unavailable_reason() const { return state_->reason; }
int CudaDevice::compute_capability() const { return state_->capability; }
Buffer CudaDevice::workspace() const { return state_->workspace; }

Result<std::shared_ptr<void>> CudaDevice::context(const std::string& key,
                                                 const std::function<Result<std::shared_ptr<void>>()>& make) {
  if (!available()) return state_->unavailable();
  auto it = state_->contexts.find(key);
  if (it != state_->contexts.end()) return it->second;
  Result<std::shared_ptr<void>> made = make();
  if (!made.ok()) return made.error();
  state_->contexts.emplace(key, *made);
  return made;
}

#if TC_HAVE_CUDA

namespace {

/// Whether [offset, offset + bytes) lies in `buffer`, a buffer of a CUDA device.
Status check_range(const char* what, const Buffer& buffer, std::size_t offset, std::size_t bytes) {
  if (buffer.device != DeviceKind::cuda || buffer.data == nullptr) {
    return Error{ErrorCode::invalid_argument, std::string("cuda: ") + what + " with a buffer that is not CUDA memory"};
  }
  if (offset > buffer.bytes || bytes > buffer.bytes - offset) {
    return Error{ErrorCode::invalid_argument, std::string("cuda: ") + what + " of " + std::to_string(bytes) +
                                                  " bytes at offset " + std::to_string(offset) +
                                                  " overruns a buffer of " + std::to_string(buffer.bytes) + " bytes"};
  }
  return Status::success();
}

char* at(const Buffer& buffer, std::size_t offset) { return static_cast<char*>(buffer.data) + offset; }

}  // namespace

CudaDevice::CudaDevice(int ordinal) : state_(std::make_unique<State>()) {
  State& s = *state_;
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    (void)cudaGetLastError();
    s.reason = std::string("cuda: no CUDA device: ") + cudaGetErrorString(e);
    return;
  }
  if (count == 0) {
    s.reason = "cuda: no CUDA device: the driver reports none";
    return;
  }
  if (ordinal < 0 || ordinal >= count) {
    s.reason = "cuda: no CUDA device " + std::to_string(ordinal) + " (this machine has " + std::to_string(count) + ")";
    return;
  }
  cudaDeviceProp prop{};
  Status st =
      cuda_check(cudaGetDeviceProperties(&prop, ordinal), "reading the properties of GPU " + std::to_string(ordinal));
  if (st.ok()) st = cuda_check(cudaSetDevice(ordinal), "selecting GPU " + std::to_string(ordinal));
  if (st.ok()) st = cuda_check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "creating a stream");
  if (st.ok()) st = cuda_check(cudaEventCreate(&s.start), "creating an event");
  if (st.ok()) st = cuda_check(cudaEventCreate(&s.stop), "creating an event");
  if (!st.ok()) {
    s.reason = st.message();
    return;
  }
  s.capability = prop.major * 10 + prop.minor;
  s.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  s.name = std::string("cuda: ") + prop.name + " (sm_" + std::to_string(s.capability) + ")";
}

CudaDevice::~CudaDevice() {
  State& s = *state_;
  s.contexts.clear();
  if (s.workspace.data != nullptr) (void)cudaFree(s.workspace.data);
  if (s.eviction.data != nullptr) (void)cudaFree(s.eviction.data);
  if (s.start != nullptr) (void)cudaEventDestroy(s.start);
  if (s.stop != nullptr) (void)cudaEventDestroy(s.stop);
  if (s.stream != nullptr) (void)cudaStreamDestroy(s.stream);
  (void)cudaGetLastError();
}

CUstream_st* CudaDevice::stream() const { return state_->stream; }

Result<Buffer> CudaDevice::allocate(std::size_t bytes) {
  if (!available()) return state_->unavailable();
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, std::max<std::size_t>(bytes, 1)); e != cudaSuccess) {
    return cuda_failure("cannot allocate " + std::to_string(bytes) + " bytes", e);
  }
  return Buffer{p, bytes, DeviceKind::cuda};
}

void CudaDevice::release(Buffer buffer) {
  if (buffer.data == nullptr || !available()) return;
  if (cudaFree(buffer.data) != cudaSuccess) (void)cudaGetLastError();
}

Status CudaDevice::upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) {
  if (!available()) return state_->unavailable();
  if (Status st = check_range("upload", dst, offset, bytes); !st.ok() || bytes == 0) return st;
  Status st =
      cuda_check(cudaMemcpyAsync(at(dst, offset), src, bytes, cudaMemcpyHostToDevice, state_->stream), "upload");
  return st.ok() ? cuda_check(cudaStreamSynchronize(state_->stream), "upload") : st;
}

Status CudaDevice::download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) {
  if (!available()) return state_->unavailable();
  if (Status st = check_range("download", src, offset, bytes); !st.ok() || bytes == 0) return st;
  Status st =
      cuda_check(cudaMemcpyAsync(dst, at(src, offset), bytes, cudaMemcpyDeviceToHost, state_->stream), "download");
  return st.ok() ? cuda_check(cudaStreamSynchronize(state_->stream), "download") : st;
}

Status CudaDevice::copy(const Buffer& dst, std::size_t dst_offset, const Buffer& src, std::size_t src_offset,
                        std::size_t bytes) {
  if (!available()) return state_->unavailable();
  if (Status st = check_range("copy", dst, dst_offset, bytes); !st.ok()) return st;
  if (Status st = check_range("copy", src, src_offset, bytes); !st.ok() || bytes == 0) return st;
  return cuda_check(
      cudaMemcpyAsync(at(dst, dst_offset), at(src, src_offset), bytes, cudaMemcpyDeviceToDevice, state_->stream),
      "copy");
}

Status CudaDevice::synchronize() {
  if (!available()) return state_->unavailable();
  return cuda_check(cudaStreamSynchronize(state_->stream), "synchronize");
}

Result<double> CudaDevice::time_ms(const std::function<Status()>& region) {
  if (!available()) return state_->unavailable();
  State& s = *state_;
  if (Status st = cuda_check(cudaEventRecord(s.start, s.stream), "recording an event"); !st.ok()) return st.error();
  if (Status st = region(); !st.ok()) return st.error();
  if (Status st = cuda_check(cudaEventRecord(s.stop, s.stream), "recording an event"); !st.ok()) return st.error();
  if (Status st = cuda_check(cudaEventSynchronize(s.stop), "waiting for the timed region"); !st.ok()) return st.error();
  float ms = 0.0f;
  if (Status st = cuda_check(cudaEventElapsedTime(&ms, s.start, s.stop), "reading the timer"); !st.ok()) {
    return st.error();
  }
  return static_cast<double>(ms);
}

Status CudaDevice::reserve_workspace(std::size_t bytes) {
  if (!available()) return state_->unavailable();
  Buffer& ws = state_->workspace;
  if (bytes == 0 || (ws.data != nullptr && bytes <= ws.bytes)) return Status::success();
  Result<Buffer> grown = allocate(bytes);
  if (!grown.ok()) return Error{grown.error().code, grown.error().message + " (workspace)"};
  release(ws);
  ws = *grown;
  ++state_->workspace_generation;
  return Status::success();
}

namespace {

/// A CUDA graph instantiated from a stream capture.
class CudaRecording final : public Recording {
 public:
  CudaRecording(cudaGraph_t graph, cudaGraphExec_t exec, cudaStream_t stream, const std::uint64_t& generation)
      : graph_(graph), exec_(exec), stream_(stream), generation_(generation), recorded_at_(generation) {}
  ~CudaRecording() override {
    (void)cudaGraphExecDestroy(exec_);
    (void)cudaGraphDestroy(graph_);
    (void)cudaGetLastError();
  }
  CudaRecording(const CudaRecording&) = delete;
  CudaRecording& operator=(const CudaRecording&) = delete;

  bool current() const override { return generation_ == recorded_at_; }
  Status replay() override { return cuda_check(cudaGraphLaunch(exec_, stream_), "launching a recorded graph"); }

 private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
  const std::uint64_t& generation_;
  std::uint64_t recorded_at_;
};

}  // namespace

Result<double> CudaDevice::time_seconds(const std::function<Status()>& region) {
  Result<double> ms = time_ms(region);
  if (!ms.ok()) return ms.error();
  return *ms * 1e-3;
}

Status CudaDevice::evict_caches() {
  if (!available()) return state_->unavailable();
  Buffer& b = state_->eviction;
  if (b.data == nullptr) {
    Result<Buffer> made = allocate(2 * std::max<std::size_t>(state_->l2_bytes, std::size_t{1} << 20));
    if (!made.ok()) return Error{made.error().code, made.error().message + " (to evict the L2 cache)"};
    b = *made;
  }
  return cuda_check(cudaMemsetAsync(b.data, 0, b.bytes, state_->stream), "evicting the L2 cache");
}

Status CudaDevice::begin_recording() {
  if (!available()) return state_->unavailable();
  return cuda_check(cudaStreamBeginCapture(state_->stream, cudaStreamCaptureModeThreadLocal), "beginning a stream capture");
}

Result<std::unique_ptr<Recording>> CudaDevice::end_recording() {
  if (!available()) return state_->unavailable();
  State& s = *state_;
  cudaGraph_t graph = nullptr;
  if (Status st = cuda_check(cudaStreamEndCapture(s.stream, &graph), "recording the launches as a graph"); !st.ok()) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return st.error();
  }
  cudaGraphExec_t exec = nullptr;
  if (Status st = cuda_check(cudaGraphInstantiate(&exec, graph, 0), "instantiating a recorded graph"); !st.ok()) {
    (void)cudaGraphDestroy(graph);
    return st.error();
  }
  return std::unique_ptr<Recording>(std::make_unique<CudaRecording>(graph, exec, s.stream, s.workspace_generation));
}

#else  // built without the CUDA toolkit: a device that is never available

CudaDevice::CudaDevice(int /*ordinal*/) : state_(std::make_unique<State>()) {
  state_->reason = "cuda: built without the CUDA toolkit";
}
CudaDevice::~CudaDevice() = default;
CUstream_st* CudaDevice::stream() const { return nullptr; }
Result<Buffer> CudaDevice::allocate(std::size_t) { return state_->unavailable(); }
void CudaDevice::release(Buffer) {}
Status CudaDevice::upload(const Buffer&, std::size_t, const void*, std::size_t) { return state_->unavailable(); }
Status CudaDevice::download(void*, const Buffer&, std::size_t, std::size_t) { return state_->unavailable(); }
Status CudaDevice::copy(const Buffer&, std::size_t, const Buffer&, std::size_t, std::size_t) {
  return state_->unavailable();
}
Status CudaDevice::synchronize() { return state_->unavailable(); }
Result<double> CudaDevice::time_ms(const std::function<Status()>&) { return state_->unavailable(); }
Status CudaDevice::reserve_workspace(std::size_t) { return state_->unavailable(); }
Result<double> CudaDevice::time_seconds(const std::function<Status()>&) { return state_->unavailable(); }
Status CudaDevice::evict_caches() { return state_->unavailable(); }
Status CudaDevice::begin_recording() { return state_->unavailable(); }
Result<std::unique_ptr<Recording>> CudaDevice::end_recording() { return state_->unavailable(); }

#endif

}  // namespace tc
