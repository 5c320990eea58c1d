#pragma once

/// \file
/// CudaDevice: an NVIDIA GPU as a Device, through the CUDA runtime. Buffers are cudaMalloc'd,
/// copies and kernels go to one stream of the device, every CUDA failure becomes an error value.
/// Without a GPU (or a driver) the device reports itself unavailable with one line saying why;
/// in a build without the CUDA toolkit it says that instead. This header needs no CUDA headers.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <collage/support/result.hpp>

#include "runtime/device.hpp"

/// The CUDA runtime's stream object (cudaStream_t is CUstream_st*).
struct CUstream_st;

namespace tc {

/// GPU number `ordinal` of this machine. Not thread-safe, like every Device; one CudaDevice per
/// GPU per process (it makes its GPU the current one when it is created).
///
/// Copies and kernels are ordered on the device's stream. upload() and download() return when the
/// host memory may be reused or read; copy() and kernels are asynchronous (synchronize() waits and
/// reports a failure of anything launched before it).
class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal = 0);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  DeviceKind kind() const override { return DeviceKind::cuda; }
  /// "cuda: NVIDIA H100 80GB HBM3 (sm_90)", or "cuda: unavailable" when unavailable.
  std::string name() const override;
  bool available() const override;
  /// "cuda: no CUDA device: <the CUDA runtime's reason>" and the like; "" when available.
  std::string unavailable_reason() const override;

  /// Device memory, 256-byte aligned; at least one byte is allocated for `bytes` = 0.
  collage::Result<Buffer> allocate(std::size_t bytes) override;
  void release(Buffer buffer) override;
  collage::Status upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override;
  collage::Status download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override;
  collage::Status copy(const Buffer& dst, std::size_t dst_offset, const Buffer& src, std::size_t src_offset,
                       std::size_t bytes) override;
  collage::Status synchronize() override;
  /// Work launched on the stream between begin_recording() and end_recording() becomes a CUDA
  /// graph (stream capture), replayed with one cudaGraphLaunch. A recording stops being current
  /// when the shared workspace moves (reserve_workspace grew it).
  bool can_record() const override { return available(); }
  /// GPU time from events recorded on the stream around `region` (time_ms).
  collage::Result<double> time_seconds(const std::function<collage::Status()>& region) override;
  /// The regions recorded as one graph with an event recorded between each two, replayed; where
  /// recording fails, launched on the stream with the events between them.
  collage::Result<std::vector<double>> time_regions(
      const std::vector<std::function<collage::Status()>>& regions) override;
  /// A read of a buffer twice the L2 cache's size (allocated at the first call, which must not be
  /// made while recording) by a kernel of the device's own; where that kernel cannot be loaded, a
  /// cudaMemsetAsync over the buffer.
  collage::Status evict_caches() override;
  /// The L2 cache's size.
  std::size_t cache_bytes() const override;
  /// Reads the 16-byte-aligned part of [data, data + bytes) with the device's read kernel.
  collage::Status touch(const void* data, std::size_t bytes) override;
  collage::Status begin_recording() override;
  collage::Result<std::unique_ptr<Recording>> end_recording() override;

  /// The stream this device's copies and kernels run on; null when unavailable.
  CUstream_st* stream() const;
  /// The compute capability as major * 10 + minor (90 for sm_90); 0 when unavailable.
  int compute_capability() const;

  /// Milliseconds of GPU time `region` takes: events recorded on the stream before and after it,
  /// waited for. `region` launches work on the stream; its failure is returned as is.
  collage::Result<double> time_ms(const std::function<collage::Status()>& region);

  /// Grows the scratch memory the kernels of this device share to at least `bytes` (kernels run
  /// one at a time on the stream, so one buffer serves them all). Called when compiling.
  collage::Status reserve_workspace(std::size_t bytes);
  /// The shared scratch memory (empty until reserved). Read it when running, not when compiling:
  /// a later reservation may move it.
  Buffer workspace() const;

  /// A per-device object that kernels share, such as a library handle: made by `make` on the first
  /// request for `key`, kept until the device goes (kernels must go before their device).
  collage::Result<std::shared_ptr<void>> context(const std::string& key,
                                                 const std::function<collage::Result<std::shared_ptr<void>>()>& make);

 private:
  /// Whether work launched on the stream is being recorded (then nothing may be loaded or
  /// allocated: that would end the recording).
  bool recording() const;
  /// Launches the read kernel over the 16-byte-aligned part of [data, data + bytes) (touch,
  /// evict_caches); an error when the kernel cannot be loaded, or is not yet and a recording is
  /// under way.
  collage::Status read_into_caches(const void* data, std::size_t bytes);

  struct State;
  std::unique_ptr<State> state_;
};

/// A CUDA device of this machine (GPU 0), available or saying why not.
std::unique_ptr<Device> make_cuda_device(int ordinal = 0);

/// `device` as an available CudaDevice, or an error for `who` (a backend name): "cublas: needs a
/// CUDA device, got cpu: ..." or "cublas: cuda: no CUDA device: ...".
collage::Result<CudaDevice*> usable_cuda_device(Device& device, const std::string& who);

}  // namespace tc
