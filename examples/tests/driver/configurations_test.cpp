#include "driver/configurations.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/reference/reference_backend.hpp"

namespace tc {
namespace {

/// Backends named like the real ones, placed on the CPU or a CUDA device (never compiled here).
BackendSet backends_named(const std::vector<std::pair<std::string, DeviceKind>>& named) {
  BackendSet set;
  for (const auto& [name, device] : named) set.add(make_reference_backend(name, 2, device));
  return set;
}

const Configuration* find(const std::vector<Configuration>& all, const std::string& name) {
  for (const Configuration& c : all) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(Configurations, ALibraryAloneFallsBackToItsDevicesOwnCodeGenerator) {
  const BackendSet set = backends_named({{"cublas", DeviceKind::cuda},
                                         {"cudnn", DeviceKind::cuda},
                                         {"cuda", DeviceKind::cuda},
                                         {"onednn", DeviceKind::cpu},
                                         {"native", DeviceKind::cpu}});
  const std::vector<Configuration> all = standard_configurations(set);
  const Configuration* cublas = find(all, "cublas");
  ASSERT_NE(cublas, nullptr);
  EXPECT_EQ(cublas->fallback, "cuda");
  EXPECT_EQ(cublas->targets, (std::vector<std::string>{"cublas", "cuda"}));
  EXPECT_TRUE(cublas->single);
  const Configuration* onednn = find(all, "onednn");
  ASSERT_NE(onednn, nullptr);
  EXPECT_EQ(onednn->fallback, "native");
  EXPECT_EQ(onednn->targets, (std::vector<std::string>{"onednn", "native"}));
  const Configuration* cuda = find(all, "cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->targets, (std::vector<std::string>{"cuda"}));
  EXPECT_EQ(cuda->fallback, "cuda");
}

TEST(Configurations, TheGpuLibrariesRunWithCudaTakingTheRest) {
  const BackendSet set = backends_named(
      {{"cublas", DeviceKind::cuda}, {"cudnn", DeviceKind::cuda}, {"cuda", DeviceKind::cuda}, {"native", DeviceKind::cpu}});
  const std::vector<Configuration> all = standard_configurations(set);
  const Configuration* libraries = find(all, "gpu-libraries");
  ASSERT_NE(libraries, nullptr);
  EXPECT_EQ(libraries->targets, (std::vector<std::string>{"cublas", "cudnn", "cuda"}));
  EXPECT_EQ(libraries->algorithm, collage::SearchAlgorithm::greedy);
  EXPECT_EQ(libraries->fallback, "cuda");
  EXPECT_FALSE(libraries->single);
  std::vector<std::string> names;
  for (const Configuration& c : all) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cublas", "cudnn", "cuda", "native", "gpu-libraries", "greedy", "collage"}));
}

TEST(Configurations, WithoutCudaAGpuLibraryFallsBackToNativeAndThereIsNoGpuLibrariesConfiguration) {
  const BackendSet set = backends_named({{"cudnn", DeviceKind::cuda}, {"native", DeviceKind::cpu}});
  const std::vector<Configuration> all = standard_configurations(set);
  EXPECT_EQ(find(all, "gpu-libraries"), nullptr);
  ASSERT_NE(find(all, "cudnn"), nullptr);
  EXPECT_EQ(find(all, "cudnn")->fallback, "native");
}

TEST(Configurations, OnTheCpuEveryBackendFallsBackToNative) {
  const BackendSet set = backends_named({{"onednn", DeviceKind::cpu}, {"eigen", DeviceKind::cpu}, {"native", DeviceKind::cpu}});
  for (const Configuration& c : standard_configurations(set)) {
    if (c.single) {
      EXPECT_EQ(c.fallback, "native") << c.name;
    } else {
      EXPECT_EQ(c.fallback, "") << c.name;
    }
  }
  EXPECT_EQ(find(standard_configurations(set), "gpu-libraries"), nullptr);
}

}  // namespace
}  // namespace tc
