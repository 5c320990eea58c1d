#pragma once

/// \file
/// CpuDevice: the host as a Device. Kernels run on the calling thread.

#include <string>

#include "runtime/device.hpp"

namespace tc {

/// The host CPU. Buffers are 64-byte aligned host memory; copies are memcpy; synchronize() has
/// nothing to wait for.
class CpuDevice final : public Device {
 public:
  CpuDevice();
  DeviceKind kind() const override { return DeviceKind::cpu; }
  std::string name() const override { return name_; }
  bool available() const override { return true; }
  collage::Result<Buffer> allocate(std::size_t bytes) override;
  void release(Buffer buffer) override;
  collage::Status upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override;
  collage::Status download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override;
  collage::Status copy(const Buffer& dst, std::size_t dst_offset, const Buffer& src, std::size_t src_offset,
                       std::size_t bytes) override;
  collage::Status synchronize() override { return collage::Status::success(); }
  /// tc::evict_caches() on the calling thread.
  collage::Status evict_caches() override;

 private:
  std::string name_;
};

/// The CPU's model name from /proc/cpuinfo ("AMD EPYC 7B13"), or "unknown CPU".
std::string cpu_model_name();

}  // namespace tc
