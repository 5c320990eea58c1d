#include "runtime/cpu_device.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "runtime/cpu_state.hpp"

namespace tc {

namespace {

collage::Status out_of_range(const char* what, std::size_t offset, std::size_t bytes, std::size_t size) {
  return collage::Error{collage::ErrorCode::invalid_argument,
                        std::string("cpu device: ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + " overruns a buffer of " + std::to_string(size) + " bytes"};
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

CpuDevice::CpuDevice() : name_("cpu: " + cpu_model_name()) {}

collage::Result<Buffer> CpuDevice::allocate(std::size_t bytes) {
  constexpr std::size_t kAlign = 64;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) {
    return collage::Error{collage::ErrorCode::io, "cpu device: cannot allocate " + std::to_string(bytes) + " bytes"};
  }
  return Buffer{p, bytes, DeviceKind::cpu};
}

void CpuDevice::release(Buffer buffer) { std::free(buffer.data); }

collage::Status CpuDevice::evict_caches() {
  tc::evict_caches();
  return collage::Status::success();
}

collage::Status CpuDevice::upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) {
  if (offset > dst.bytes || bytes > dst.bytes - offset) return out_of_range("upload", offset, bytes, dst.bytes);
  if (bytes != 0) std::memcpy(static_cast<char*>(dst.data) + offset, src, bytes);
  return collage::Status::success();
}

collage::Status CpuDevice::download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) {
  if (offset > src.bytes || bytes > src.bytes - offset) return out_of_range("download", offset, bytes, src.bytes);
  if (bytes != 0) std::memcpy(dst, static_cast<const char*>(src.data) + offset, bytes);
  return collage::Status::success();
}

collage::Status CpuDevice::copy(const Buffer& dst, std::size_t dst_offset, const Buffer& src, std::size_t src_offset,
                                std::size_t bytes) {
  if (dst_offset > dst.bytes || bytes > dst.bytes - dst_offset) return out_of_range("copy", dst_offset, bytes, dst.bytes);
  if (src_offset > src.bytes || bytes > src.bytes - src_offset) return out_of_range("copy", src_offset, bytes, src.bytes);
  if (bytes != 0) std::memmove(static_cast<char*>(dst.data) + dst_offset, static_cast<const char*>(src.data) + src_offset, bytes);
  return collage::Status::success();
}

}  // namespace tc
