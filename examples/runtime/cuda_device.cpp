#include "runtime/cuda_device.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

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
  /// The timers time_regions() records between regions (made as needed).
  std::vector<cudaEvent_t> marks;
  /// The read kernel (kReadPtx), loaded at its first use; `read_failure` says why it could not be.
  cudaLibrary_t reader = nullptr;
  cudaKernel_t read = nullptr;
  std::string read_failure;
  /// Written by the read kernel only in a case that does not arise (see kReadPtx).
  Buffer sink;
  int multiprocessors = 1;
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

/// The device's read kernel, tc_read(const float4* p, unsigned long long n4, float* sink): reads
/// p[0..n4) in a grid-stride loop and sums the values, writing the sum to *sink (the device's own
/// scratch float) only if it is exactly 1.5e38, so that the loads cannot be dropped. Compiled by
/// `nvcc -arch=compute_75 -ptx` (CUDA 13) from that CUDA C++, its PTX version lowered to 7.0 so
/// that drivers since CUDA 11 load it; checked with ptxas for sm_75 and sm_90.
constexpr const char* kReadPtx = R"ptx(
.version 7.0
.target sm_75
.address_size 64

.visible .entry tc_read(
	.param .u64 tc_read_param_0,
	.param .u64 tc_read_param_1,
	.param .u64 tc_read_param_2
)
{
	.reg .pred 	%p<4>;
	.reg .f32 	%f<16>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<17>;

	ld.param.u64 	%rd8, [tc_read_param_0];
	ld.param.u64 	%rd9, [tc_read_param_1];
	ld.param.u64 	%rd10, [tc_read_param_2];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	cvt.u64.u32 	%rd1, %r2;
	mul.wide.u32 	%rd11, %r1, %r2;
	mov.u32 	%r3, %tid.x;
	cvt.u64.u32 	%rd12, %r3;
	add.s64 	%rd16, %rd11, %rd12;
	setp.ge.u64 	%p1, %rd16, %rd9;
	@%p1 bra 	$L__BB0_5;

	mov.u32 	%r4, %nctaid.x;
	cvt.u64.u32 	%rd13, %r4;
	mul.lo.s64 	%rd3, %rd13, %rd1;
	cvta.to.global.u64 	%rd4, %rd10;
	cvta.to.global.u64 	%rd5, %rd8;
	mov.f32 	%f15, 0f00000000;

$L__BB0_2:
	shl.b64 	%rd14, %rd16, 4;
	add.s64 	%rd15, %rd5, %rd14;
	ld.global.nc.v4.f32 	{%f4, %f5, %f6, %f7}, [%rd15];
	add.f32 	%f12, %f4, %f5;
	add.f32 	%f13, %f6, %f12;
	add.f32 	%f14, %f7, %f13;
	add.f32 	%f15, %f15, %f14;
	add.s64 	%rd16, %rd16, %rd3;
	setp.lt.u64 	%p2, %rd16, %rd9;
	@%p2 bra 	$L__BB0_2;

	setp.neu.f32 	%p3, %f15, 0f7EE1B1E6;
	@%p3 bra 	$L__BB0_5;

	mov.u32 	%r5, 2128720358;
	st.global.u32 	[%rd4], %r5;

$L__BB0_5:
	ret;
}
)ptx";

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
  s.multiprocessors = std::max(1, prop.multiProcessorCount);
  s.name = std::string("cuda: ") + prop.name + " (sm_" + std::to_string(s.capability) + ")";
}

CudaDevice::~CudaDevice() {
  State& s = *state_;
  s.contexts.clear();
  if (s.workspace.data != nullptr) (void)cudaFree(s.workspace.data);
  if (s.eviction.data != nullptr) (void)cudaFree(s.eviction.data);
  if (s.sink.data != nullptr) (void)cudaFree(s.sink.data);
  if (s.reader != nullptr) (void)cudaLibraryUnload(s.reader);
  if (s.start != nullptr) (void)cudaEventDestroy(s.start);
  if (s.stop != nullptr) (void)cudaEventDestroy(s.stop);
  for (cudaEvent_t e : s.marks) (void)cudaEventDestroy(e);
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

Result<std::vector<double>> CudaDevice::time_regions(const std::vector<std::function<Status()>>& regions) {
  if (!available()) return state_->unavailable();
  State& s = *state_;
  while (s.marks.size() < regions.size() + 1) {
    cudaEvent_t e = nullptr;
    if (Status st = cuda_check(cudaEventCreate(&e), "creating an event"); !st.ok()) return st.error();
    s.marks.push_back(e);
  }
  Status region_failed;
  auto launch = [&](unsigned flags) -> Status {
    for (std::size_t k = 0; k <= regions.size(); ++k) {
      if (Status st = cuda_check(cudaEventRecordWithFlags(s.marks[k], s.stream, flags), "recording an event"); !st.ok()) {
        return st;
      }
      if (k == regions.size()) break;
      if (region_failed = regions[k](); !region_failed.ok()) return region_failed;
    }
    return Status::success();
  };
  auto read = [&]() -> Result<std::vector<double>> {
    if (Status st = synchronize(); !st.ok()) return st.error();
    std::vector<double> out;
    for (std::size_t k = 0; k < regions.size(); ++k) {
      float ms = 0.0f;
      if (Status st = cuda_check(cudaEventElapsedTime(&ms, s.marks[k], s.marks[k + 1]), "reading a timer"); !st.ok()) {
        return st.error();
      }
      out.push_back(static_cast<double>(ms) * 1e-3);
    }
    return out;
  };
  // Recorded: the timers become event nodes of the graph; the first replay uploads it.
  if (begin_recording().ok()) {
    const Status launched = launch(cudaEventRecordExternal);
    Result<std::unique_ptr<Recording>> recording = end_recording();
    if (!region_failed.ok()) return region_failed.error();
    if (launched.ok() && recording.ok() && (*recording)->replay().ok() && (*recording)->replay().ok()) {
      Result<std::vector<double>> seconds = read();
      if (seconds.ok()) return seconds;
    }
    (void)cudaGetLastError();
  }
  if (Status st = launch(cudaEventRecordDefault); !st.ok()) return st.error();
  return read();
}

std::size_t CudaDevice::cache_bytes() const { return state_->l2_bytes; }

namespace {

/// The error of loading or allocating for `what` while a stream capture is under way (it would end
/// the capture).
Error needed_before_recording(const std::string& what) {
  return Error{ErrorCode::invalid_argument, "cuda: " + what + " needs one call outside a recording first"};
}

}  // namespace

bool CudaDevice::recording() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(state_->stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

Status CudaDevice::read_into_caches(const void* data, std::size_t bytes) {
  State& s = *state_;
  if (s.read == nullptr && s.read_failure.empty()) {
    if (recording()) return needed_before_recording("reading memory into the caches");
    Status st = cuda_check(cudaLibraryLoadData(&s.reader, kReadPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
                           "loading the read kernel");
    if (st.ok()) st = cuda_check(cudaLibraryGetKernel(&s.read, s.reader, "tc_read"), "finding the read kernel");
    if (st.ok() && s.sink.data == nullptr) {
      Result<Buffer> sink = allocate(sizeof(float));
      if (sink.ok()) s.sink = *sink;
      st = sink.ok() ? Status::success() : Status(sink.error());
    }
    if (!st.ok()) {
      s.read = nullptr;
      s.read_failure = st.message();
    }
  }
  if (s.read == nullptr) return Error{ErrorCode::io, s.read_failure};
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + 15) / 16 * 16;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / 16 * 16;
  if (end <= begin) return Status::success();
  void* first = reinterpret_cast<void*>(begin);
  unsigned long long quads = (end - begin) / 16;
  constexpr unsigned kThreads = 256;
  const unsigned long long wanted = (quads + kThreads - 1) / kThreads;
  const dim3 grid(static_cast<unsigned>(std::min<unsigned long long>(wanted, 4ull * static_cast<unsigned>(s.multiprocessors))));
  void* args[] = {&first, &quads, &s.sink.data};
  return cuda_check(cudaLaunchKernel(reinterpret_cast<const void*>(s.read), grid, dim3(kThreads), args, 0, s.stream),
                    "reading memory into the caches");
}

Status CudaDevice::touch(const void* data, std::size_t bytes) {
  if (!available()) return state_->unavailable();
  return read_into_caches(data, bytes);
}

Status CudaDevice::evict_caches() {
  if (!available()) return state_->unavailable();
  Buffer& b = state_->eviction;
  if (b.data == nullptr) {
    if (recording()) return needed_before_recording("evicting the L2 cache");
    Result<Buffer> made = allocate(2 * std::max<std::size_t>(state_->l2_bytes, std::size_t{1} << 20));
    if (!made.ok()) return Error{made.error().code, made.error().message + " (to evict the L2 cache)"};
    b = *made;
    if (Status st = cuda_check(cudaMemsetAsync(b.data, 0, b.bytes, state_->stream), "evicting the L2 cache"); !st.ok()) {
      return st;
    }
  }
  // Reading leaves clean lines that later work drops without writing them back.
  if (read_into_caches(b.data, b.bytes).ok()) return Status::success();
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
Result<std::vector<double>> CudaDevice::time_regions(const std::vector<std::function<Status()>>&) {
  return state_->unavailable();
}
Status CudaDevice::reserve_workspace(std::size_t) { return state_->unavailable(); }
Result<double> CudaDevice::time_seconds(const std::function<Status()>&) { return state_->unavailable(); }
Status CudaDevice::evict_caches() { return state_->unavailable(); }
std::size_t CudaDevice::cache_bytes() const { return 0; }
Status CudaDevice::touch(const void*, std::size_t) { return state_->unavailable(); }
Status CudaDevice::begin_recording() { return state_->unavailable(); }
Result<std::unique_ptr<Recording>> CudaDevice::end_recording() { return state_->unavailable(); }

#endif

}  // namespace tc
