#include "runtime/cuda_device.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "backends/gpu_test_support.hpp"
#include "runtime/cpu_device.hpp"

namespace tc {
namespace {

using testing::cuda_device;

TEST(CudaDevice, IsACudaDeviceEvenWhenUnavailable) {
  std::unique_ptr<Device> device = make_cuda_device();
  EXPECT_EQ(device->kind(), DeviceKind::cuda);
  EXPECT_EQ(device->available(), device->unavailable_reason().empty());
}

TEST(CudaDevice, SaysInOneLineWhyItIsUnavailable) {
  CudaDevice device;
  if (device.available()) GTEST_SKIP() << "a GPU is present: " << device.name();
  const std::string reason = device.unavailable_reason();
  EXPECT_EQ(reason.rfind("cuda: ", 0), 0u) << reason;
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  if (TC_HAVE_CUDA) {
    EXPECT_EQ(reason.rfind("cuda: no CUDA device", 0), 0u) << reason;
  } else {
    EXPECT_EQ(reason, "cuda: built without the CUDA toolkit");
  }
  EXPECT_EQ(device.name(), "cuda: unavailable");
  EXPECT_EQ(device.stream(), nullptr);
  EXPECT_EQ(device.compute_capability(), 0);
}

TEST(CudaDevice, UnavailableDeviceAnswersEveryCallWithItsReason) {
  CudaDevice device;
  if (device.available()) GTEST_SKIP() << "a GPU is present: " << device.name();
  const std::string reason = device.unavailable_reason();
  collage::Result<Buffer> b = device.allocate(64);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, reason);
  float host[4] = {1, 2, 3, 4};
  const Buffer fake{host, sizeof(host), DeviceKind::cuda};
  EXPECT_EQ(device.upload(fake, 0, host, sizeof(host)).message(), reason);
  EXPECT_EQ(device.download(host, fake, 0, sizeof(host)).message(), reason);
  EXPECT_EQ(device.copy(fake, 0, fake, 0, sizeof(host)).message(), reason);
  EXPECT_EQ(device.synchronize().message(), reason);
  EXPECT_EQ(device.reserve_workspace(1024).message(), reason);
  EXPECT_EQ(device.workspace().data, nullptr);
  bool ran = false;
  collage::Result<double> timed = device.time_ms([&] {
    ran = true;
    return collage::Status::success();
  });
  EXPECT_FALSE(timed.ok());
  EXPECT_FALSE(ran);
  collage::Result<std::shared_ptr<void>> context = device.context("x", [&]() -> collage::Result<std::shared_ptr<void>> {
    ran = true;
    return std::shared_ptr<void>(std::make_shared<int>(1));
  });
  EXPECT_FALSE(context.ok());
  EXPECT_FALSE(ran);
  device.release(Buffer{});  // nothing to release, nothing to crash
  EXPECT_EQ(host[0], 1.0f);  // never written through
}

TEST(CudaDevice, UsableCudaDeviceNamesWhoAsked) {
  CpuDevice cpu;
  collage::Result<CudaDevice*> not_cuda = usable_cuda_device(cpu, "cublas");
  ASSERT_FALSE(not_cuda.ok());
  EXPECT_EQ(not_cuda.error().message, "cublas: needs a CUDA device, got " + cpu.name());
  CudaDevice cuda;
  collage::Result<CudaDevice*> usable = usable_cuda_device(cuda, "cudnn");
  if (cuda.available()) {
    ASSERT_TRUE(usable.ok());
    EXPECT_EQ(*usable, &cuda);
  } else {
    ASSERT_FALSE(usable.ok());
    EXPECT_EQ(usable.error().message, "cudnn: " + cuda.unavailable_reason());
  }
}

// ---- On a GPU -------------------------------------------------------------------------------

using CudaDeviceGpu = testing::GpuTest;

TEST_F(CudaDeviceGpu, NamesTheGpuAndItsArchitecture) {
  CudaDevice& device = cuda_device();
  EXPECT_EQ(device.name().rfind("cuda: ", 0), 0u) << device.name();
  EXPECT_NE(device.name().find("(sm_" + std::to_string(device.compute_capability()) + ")"), std::string::npos)
      << device.name();
  EXPECT_NE(device.stream(), nullptr);
}

TEST_F(CudaDeviceGpu, UploadThenDownloadRoundTrips) {
  CudaDevice& device = cuda_device();
  std::vector<float> values(1001);
  std::iota(values.begin(), values.end(), -500.0f);
  collage::Result<OwnedBuffer> b = allocate_owned(device, values.size() * sizeof(float));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->get().data) % 256, 0u);
  EXPECT_EQ(b->get().device, DeviceKind::cuda);
  ASSERT_TRUE(device.upload(b->get(), 0, values.data(), values.size() * sizeof(float)).ok());
  std::vector<float> back(values.size(), 0.0f);
  ASSERT_TRUE(device.download(back.data(), b->get(), 0, back.size() * sizeof(float)).ok());
  EXPECT_EQ(back, values);
}

TEST_F(CudaDeviceGpu, CopiesBetweenBuffersAtOffsets) {
  CudaDevice& device = cuda_device();
  const std::vector<float> values{1, 2, 3, 4, 5, 6, 7, 8};
  collage::Result<OwnedBuffer> src = allocate_owned(device, values.size() * sizeof(float));
  collage::Result<OwnedBuffer> dst = allocate_owned(device, values.size() * sizeof(float));
  ASSERT_TRUE(src.ok() && dst.ok());
  ASSERT_TRUE(device.upload(src->get(), 0, values.data(), values.size() * sizeof(float)).ok());
  const std::vector<float> zeros(values.size(), 0.0f);
  ASSERT_TRUE(device.upload(dst->get(), 0, zeros.data(), zeros.size() * sizeof(float)).ok());
  ASSERT_TRUE(device.copy(dst->get(), 4 * sizeof(float), src->get(), 2 * sizeof(float), 3 * sizeof(float)).ok());
  ASSERT_TRUE(device.synchronize().ok());
  std::vector<float> back(values.size());
  ASSERT_TRUE(device.download(back.data(), dst->get(), 0, back.size() * sizeof(float)).ok());
  EXPECT_EQ(back, (std::vector<float>{0, 0, 0, 0, 3, 4, 5, 0}));
}

TEST_F(CudaDeviceGpu, OutOfRangeCopiesAreErrors) {
  CudaDevice& device = cuda_device();
  collage::Result<OwnedBuffer> b = allocate_owned(device, 16);
  ASSERT_TRUE(b.ok());
  float host[8] = {};
  collage::Status up = device.upload(b->get(), 8, host, 16);
  EXPECT_EQ(up.code(), collage::ErrorCode::invalid_argument);
  EXPECT_NE(up.message().find("overruns a buffer of 16 bytes"), std::string::npos) << up.message();
  EXPECT_FALSE(device.download(host, b->get(), 17, 0).ok());
  EXPECT_FALSE(device.copy(b->get(), 0, b->get(), 4, 16).ok());
  const Buffer host_buffer{host, sizeof(host), DeviceKind::cpu};
  EXPECT_FALSE(device.upload(host_buffer, 0, host, 4).ok());
  EXPECT_TRUE(device.synchronize().ok());
}

TEST_F(CudaDeviceGpu, AHugeAllocationIsAnErrorAndTheDeviceStaysUsable) {
  CudaDevice& device = cuda_device();
  collage::Result<Buffer> huge = device.allocate(std::size_t{1} << 50);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, collage::ErrorCode::io);
  EXPECT_NE(huge.error().message.find("cannot allocate"), std::string::npos) << huge.error().message;
  collage::Result<OwnedBuffer> small = allocate_owned(device, 64);
  EXPECT_TRUE(small.ok());
  EXPECT_TRUE(device.synchronize().ok());
}

TEST_F(CudaDeviceGpu, TimesARegionOnTheStream) {
  CudaDevice& device = cuda_device();
  collage::Result<OwnedBuffer> a = allocate_owned(device, std::size_t{64} << 20);
  collage::Result<OwnedBuffer> b = allocate_owned(device, std::size_t{64} << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  collage::Result<double> ms = device.time_ms([&] { return device.copy(b->get(), 0, a->get(), 0, a->get().bytes); });
  ASSERT_TRUE(ms.ok()) << ms.error().message;
  EXPECT_GT(*ms, 0.0);
  collage::Result<double> failed = device.time_ms([] { return collage::Status(collage::Error{collage::ErrorCode::io, "x"}); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "x");
}

TEST_F(CudaDeviceGpu, TimesRegionsOneAfterAnotherInsideOneReplayedRecording) {
  CudaDevice& device = cuda_device();
  collage::Result<OwnedBuffer> a = allocate_owned(device, std::size_t{64} << 20);
  collage::Result<OwnedBuffer> b = allocate_owned(device, std::size_t{64} << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  auto copy = [&](std::size_t bytes) { return [&, bytes] { return device.copy(b->get(), 0, a->get(), 0, bytes); }; };
  collage::Result<std::vector<double>> seconds = device.time_regions({copy(4096), copy(a->get().bytes), copy(4096)});
  ASSERT_TRUE(seconds.ok()) << seconds.error().message;
  ASSERT_EQ(seconds->size(), 3u);
  for (double s : *seconds) EXPECT_GT(s, 0.0);
  EXPECT_GT((*seconds)[1], 4 * (*seconds)[0]);  // 64 MiB against 4 KiB
  collage::Result<std::vector<double>> failed =
      device.time_regions({copy(4096), [] { return collage::Status(collage::Error{collage::ErrorCode::io, "x"}); }});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "x");
  EXPECT_TRUE(device.synchronize().ok());
}

TEST_F(CudaDeviceGpu, ReadsMemoryIntoItsCacheAndEvictsTheCacheByReading) {
  CudaDevice& device = cuda_device();
  EXPECT_GT(device.cache_bytes(), 0u);
  collage::Result<OwnedBuffer> a = allocate_owned(device, (std::size_t{1} << 20) + 12);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(device.touch(a->get().data, a->get().bytes).ok());
  EXPECT_TRUE(device.touch(static_cast<char*>(a->get().data) + 4, 8).ok());  // no aligned 16 bytes: nothing read
  EXPECT_TRUE(device.evict_caches().ok());
  EXPECT_TRUE(device.synchronize().ok());
  // Both record, as the oracle's cold-weight timing needs.
  collage::Result<std::unique_ptr<Recording>> recorded = record_launches(device, 2, [&] {
    collage::Status st = device.evict_caches();
    return st.ok() ? device.touch(a->get().data, a->get().bytes) : st;
  });
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  EXPECT_TRUE((*recorded)->replay().ok());
  EXPECT_TRUE(device.synchronize().ok());
}

TEST_F(CudaDeviceGpu, TheWorkspaceOnlyGrows) {
  CudaDevice& device = cuda_device();
  ASSERT_TRUE(device.reserve_workspace(4096).ok());
  const Buffer first = device.workspace();
  EXPECT_GE(first.bytes, 4096u);
  ASSERT_TRUE(device.reserve_workspace(16).ok());
  EXPECT_EQ(device.workspace().data, first.data);
  ASSERT_TRUE(device.reserve_workspace(first.bytes + 1).ok());
  EXPECT_GE(device.workspace().bytes, first.bytes + 1);
}

TEST_F(CudaDeviceGpu, AContextIsMadeOncePerKey) {
  CudaDevice& device = cuda_device();
  int made = 0;
  auto make = [&]() -> collage::Result<std::shared_ptr<void>> {
    ++made;
    return std::shared_ptr<void>(std::make_shared<int>(made));
  };
  collage::Result<std::shared_ptr<void>> a = device.context("test.once", make);
  collage::Result<std::shared_ptr<void>> b = device.context("test.once", make);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(made, 1);
}

}  // namespace
}  // namespace tc
