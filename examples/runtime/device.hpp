#pragma once

/// \file
/// Device: the runtime shim between the executor and the hardware. Buffers, copies, kernel
/// launches, synchronisation and timing, with every failure an error value. The CPU device runs
/// on the host; the CUDA device (when the toolkit is present) on an NVIDIA GPU.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

namespace tc {

/// Where a buffer lives and a kernel runs.
enum class DeviceKind { cpu, cuda };

/// "cpu" or "cuda".
const char* to_string(DeviceKind kind);

/// A block of device memory. A plain handle: the device that allocated it frees it.
struct Buffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  DeviceKind device = DeviceKind::cpu;

  float* floats() const { return static_cast<float*>(data); }
};

/// Work recorded on a device (a CUDA graph), replayed as one launch.
class Recording {
 public:
  virtual ~Recording() = default;
  /// Whether replaying still does what was recorded (false once memory the recorded work refers
  /// to, such as a device's shared workspace, may have moved: record again).
  virtual bool current() const = 0;
  /// Launches the recorded work; asynchronous like a kernel (Device::synchronize waits).
  virtual collage::Status replay() = 0;
};

/// A device. Not thread-safe: one executor drives one device from one thread.
class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceKind kind() const = 0;
  /// The hardware, for reports and measurement keys ("cpu: AMD EPYC 7B13 (2 threads)").
  virtual std::string name() const = 0;
  /// Whether the device can run kernels here; when not, unavailable_reason() says why in one line.
  virtual bool available() const = 0;
  virtual std::string unavailable_reason() const { return ""; }

  /// `bytes` of device memory, aligned for any kernel (64 bytes at least).
  virtual collage::Result<Buffer> allocate(std::size_t bytes) = 0;
  /// Returns `buffer` to the device; a null buffer is ignored.
  virtual void release(Buffer buffer) = 0;
  /// Copies `bytes` from host memory into `dst` at byte `offset`.
  virtual collage::Status upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) = 0;
  /// Copies `bytes` from `src` at byte `offset` into host memory.
  virtual collage::Status download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) = 0;
  /// Copies `bytes` between two of this device's buffers (byte offsets into each).
  virtual collage::Status copy(const Buffer& dst, std::size_t dst_offset, const Buffer& src, std::size_t src_offset,
                               std::size_t bytes) = 0;
  /// Waits until every launched kernel and copy has finished; reports an asynchronous failure.
  virtual collage::Status synchronize() = 0;

  /// Seconds of device time `region` (which launches work on this device) takes. By default the
  /// wall-clock time of `region` and a synchronize(); a device with its own timers (CUDA events)
  /// counts only the time its work ran.
  virtual collage::Result<double> time_seconds(const std::function<collage::Status()>& region);
  /// Seconds of device time of each of `regions` (each launches work on this device), launched
  /// one after another as a model's run launches its steps: one value per region, in order. By
  /// default each region is timed alone (time_seconds); a GPU records them as one graph with a
  /// timer between each two and replays it, so that each value is what the region adds inside the
  /// replayed run.
  virtual collage::Result<std::vector<double>> time_regions(
      const std::vector<std::function<collage::Status()>>& regions);

  /// Evicts what earlier work left in the device's caches, queued like a kernel (on a GPU, a read
  /// of a buffer twice the size of its L2 cache, which leaves no lines to write back), so that the
  /// next work starts cold. An error when the device cannot.
  virtual collage::Status evict_caches();
  /// The bytes of the cache this device's kernels share (a GPU's L2 cache), 0 when not known.
  virtual std::size_t cache_bytes() const { return 0; }
  /// Reads `bytes` of this device's memory at `data`, queued like a kernel, so that they are in
  /// its caches as a kernel's outputs are for the kernel after it. An error when the device cannot.
  virtual collage::Status touch(const void* data, std::size_t bytes);

  /// Whether the device can record the work launched on it and replay it (begin_recording).
  virtual bool can_record() const { return false; }
  /// From now on, kernels and copies launched on this device are recorded instead of run, until
  /// end_recording(). An error when the device cannot record.
  virtual collage::Status begin_recording();
  /// Ends recording and returns what was recorded, or an error naming what could not be recorded
  /// (the device then runs work as it is launched again, and nothing recorded has run).
  virtual collage::Result<std::unique_ptr<Recording>> end_recording();
};

/// `launches` back-to-back runs of `launch` recorded on `device`: the recording, or the first
/// error (of recording, or of a launch).
collage::Result<std::unique_ptr<Recording>> record_launches(Device& device, std::size_t launches,
                                                            const std::function<collage::Status()>& launch);

/// A buffer released when the owner goes (or when reset).
class OwnedBuffer {
 public:
  OwnedBuffer() = default;
  OwnedBuffer(Device& device, Buffer buffer) : device_(&device), buffer_(buffer) {}
  OwnedBuffer(OwnedBuffer&& other) noexcept : device_(other.device_), buffer_(other.buffer_) { other.buffer_ = {}; }
  OwnedBuffer& operator=(OwnedBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      buffer_ = other.buffer_;
      other.buffer_ = {};
    }
    return *this;
  }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  ~OwnedBuffer() { reset(); }

  void reset() {
    if (device_ != nullptr && buffer_.data != nullptr) device_->release(buffer_);
    buffer_ = {};
  }
  const Buffer& get() const { return buffer_; }
  float* floats() const { return buffer_.floats(); }

 private:
  Device* device_ = nullptr;
  Buffer buffer_;
};

/// Allocates `bytes` on `device` as an OwnedBuffer.
collage::Result<OwnedBuffer> allocate_owned(Device& device, std::size_t bytes);

}  // namespace tc
