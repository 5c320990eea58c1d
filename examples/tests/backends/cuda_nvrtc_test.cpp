// The cuda backend's generated kernels compile with NVRTC (which needs no GPU) for an H100
// (sm_90): every candidate of the rule on random graphs and on model-like graphs.
#if TC_HAVE_NVRTC

#include "backends/cuda/nvrtc.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cuda_testing.hpp"

namespace tc {
namespace {

/// Compute capability of the GPUs this backend is written for (H100, H200).
constexpr int kHopper = 90;

TEST(CudaNvrtc, LoadsWithoutAGpu) {
  collage::Status loaded = cudagen::load_nvrtc();
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto version = cudagen::nvrtc_version();
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_NE(version->find('.'), std::string::npos) << *version;
}

TEST(CudaNvrtc, CompilesForTheArchitectureOrItsNewestVirtualOne) {
  const std::string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  auto cubin = cudagen::compile_cuda(source, kHopper);
  ASSERT_TRUE(cubin.ok()) << cubin.error().message;
  EXPECT_EQ(cubin->target, "sm_90");
  EXPECT_FALSE(cubin->ptx);
  EXPECT_EQ(cubin->image.compare(0, 4, "\x7f" "ELF"), 0);
  // A capability newer than the toolkit: PTX for the driver to finish.
  auto ptx = cudagen::compile_cuda(source, 990);
  ASSERT_TRUE(ptx.ok()) << ptx.error().message;
  EXPECT_TRUE(ptx->ptx);
  EXPECT_EQ(ptx->target.rfind("compute_", 0), 0u) << ptx->target;
  EXPECT_NE(ptx->image.find(".entry k("), std::string::npos);
  auto none = cudagen::compile_cuda(source, 10);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "cuda: NVRTC cannot compile for compute capability 10");
}

TEST(CudaNvrtc, CompileErrorsAreValuesWithTheLog) {
  auto bad = cudagen::compile_cuda("extern \"C\" __global__ void k() { undeclared = 1; }\n", kHopper);
  ASSERT_FALSE(bad.ok());
  const std::string expected = "cuda: NVRTC could not compile the generated kernels (NVRTC_ERROR_COMPILATION): ";
  EXPECT_EQ(bad.error().message.rfind(expected, 0), 0u) << bad.error().message;
  EXPECT_NE(bad.error().message.find("undeclared"), std::string::npos) << bad.error().message;
}

TEST(CudaNvrtc, CompilesManyProgramsAtOnceAsItDoesOneByOne) {
  std::vector<std::string> sources;
  for (int k = 0; k < 5; ++k) {
    sources.push_back("extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= " + std::to_string(k + 2) + ".0f; }\n");
  }
  sources.insert(sources.begin() + 2, "extern \"C\" __global__ void k() { undeclared = 1; }\n");
  auto all = cudagen::compile_cuda_all(sources, kHopper, 3);
  ASSERT_EQ(all.size(), sources.size());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    auto alone = cudagen::compile_cuda(sources[k], kHopper);
    ASSERT_EQ(all[k].ok(), alone.ok()) << k;
    if (alone.ok()) {
      EXPECT_EQ(all[k]->image, alone->image) << k;
    } else {
      EXPECT_EQ(all[k].error().message, alone.error().message);
    }
  }
  EXPECT_FALSE(all[2].ok());
  EXPECT_TRUE(cudagen::compile_cuda_all({}, kHopper).empty());
}

TEST(CudaNvrtc, KernelMathCompilesForTheDevice) {
  // Every function of kernel_math.hpp and index_math.hpp, called from a kernel.
  const std::string source = R"(#include "backends/cuda/kernel_math.hpp"
extern "C" __global__ void k(float* out, const float* x, const float* w, tc::loops::ConvGeom c,
                             tc::loops::PoolGeom p, tc::cudagen::GemmGeom g, tc::cudagen::ReduceGeom r) {
  std::int64_t a, b, coords[16];
  tc::cudagen::gemm_batch_offsets(g, blockIdx.x, &a, &b);
  tc::cudagen::reduce_coords(r, blockIdx.x, threadIdx.x, coords);
  std::int64_t j0 = 0, j1 = 8;
  tc::loops::clip_to_check(a, b, 0, 4, &j0, &j1);
  const std::int64_t at = tc::cudagen::conv_image_offset(c, 0, threadIdx.x, blockIdx.x) +
                          tc::cudagen::conv_weight_offset(c, 0, 1, 2) + tc::cudagen::conv_output_offset(c, 0, 1, 2) +
                          tc::cudagen::gemm_output_offset(g, 0, 1, 2) + tc::loops::ravel(coords, r.dims, r.rank) +
                          tc::loops::row_carry(r.dims, r.dims, r.rank, 0) + j0 + j1;
  out[at] = tc::cudagen::conv_direct(c, x, w, threadIdx.x) + tc::cudagen::pool_value(p, x, threadIdx.x) +
            tc::cudagen::clamp(x[0], 0.0f, 6.0f) + tc::cudagen::nan_min(x[1], x[2]) + tc::cudagen::quiet_nan();
}
)";
  auto compiled = cudagen::compile_cuda(source, kHopper);
  EXPECT_TRUE(compiled.ok()) << compiled.error().message;
}

/// Compiles the distinct programs generated for candidates, in batches: NVRTC takes ~0.1 s per
/// translation unit however small, so the kernels of up to kBatch programs (each program's
/// kernels renamed apart, after one copy of the preamble they share) go to one NVRTC call. A batch
/// that fails is compiled program by program, so the failure names its candidate.
class BatchCompiler {
 public:
  static constexpr std::size_t kBatch = 48;

  ~BatchCompiler() { flush(); }

  /// Generates `function`'s program and queues it unless an identical one was.
  void add(const std::string& label, const Function& function) {
    ++candidates_;
    auto generated = cuda_testing::generate(function);
    ASSERT_TRUE(generated.ok()) << label << ": " << generated.error().message;
    const std::string& source = generated->program.source;
    if (!seen_.insert(source).second) return;
    const std::size_t body = source.find("\nextern \"C\"");
    ASSERT_NE(body, std::string::npos);
    if (preamble_.empty()) preamble_ = source.substr(0, body);
    ASSERT_EQ(source.compare(0, body, preamble_), 0) << "the preamble is not shared";
    std::string kernels = source.substr(body);
    const std::string prefix = "p" + std::to_string(seen_.size()) + "_";
    for (std::size_t at = kernels.find(" tc_stage"); at != std::string::npos; at = kernels.find(" tc_stage", at + 1)) {
      kernels.insert(at + 1, prefix);
    }
    pending_.push_back(Pending{label, source, std::move(kernels)});
    if (pending_.size() == kBatch) flush();
  }

  /// Compiles what is queued.
  void flush() {
    if (pending_.empty()) return;
    std::string batch = preamble_;
    for (const Pending& p : pending_) batch += p.kernels;
    const auto start = std::chrono::steady_clock::now();
    auto compiled = cudagen::compile_cuda(batch, kHopper);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++calls_;
    if (!compiled.ok()) {
      for (const Pending& p : pending_) {
        auto alone = cudagen::compile_cuda(p.source, kHopper);
        EXPECT_TRUE(alone.ok()) << p.label << ": " << alone.error().message << "\n" << p.source;
      }
      ADD_FAILURE() << compiled.error().message;
    }
    programs_ += pending_.size();
    pending_.clear();
  }

  std::string summary() {
    flush();
    return std::to_string(candidates_) + " candidates, " + std::to_string(programs_) +
           " distinct programs compiled for sm_90 in " + std::to_string(calls_) + " NVRTC calls, " +
           std::to_string(static_cast<int>(seconds_)) + " s";
  }
  std::size_t candidates() const { return candidates_; }
  std::size_t programs() const { return programs_ + pending_.size(); }

 private:
  struct Pending {
    std::string label, source, kernels;
  };
  std::set<std::string> seen_;
  std::string preamble_;
  std::vector<Pending> pending_;
  std::size_t candidates_ = 0;
  std::size_t programs_ = 0;
  std::size_t calls_ = 0;
  double seconds_ = 0;
};

TEST(CudaNvrtc, EveryRuleCandidateOfRandomGraphsCompilesForSm90) {
  BatchCompiler compiler;
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    native_testing::RandomGraph random(seed);
    cuda_testing::for_each_candidate(random.make(static_cast<int>(6 + seed % 8)),
                                     [&](const std::string& label, const Function& f) { compiler.add(label, f); });
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "seed " << seed;
      break;
    }
  }
  std::printf("random graphs: %s\n", compiler.summary().c_str());
  EXPECT_GT(compiler.candidates(), 1000u);
  EXPECT_GT(compiler.programs(), 1000u);
}

TEST(CudaNvrtc, ModelGraphsCompileForSm90) {
  for (const auto& [name, graph] : cuda_testing::model_graphs()) {
    SCOPED_TRACE(name);
    BatchCompiler compiler;
    cuda_testing::for_each_candidate(graph,
                                     [&](const std::string& label, const Function& f) { compiler.add(label, f); });
    // And the whole model as one function (several stages).
    compiler.add("whole", whole_model_function(graph));
    std::printf("%s: %s\n", name.c_str(), compiler.summary().c_str());
  }
}

}  // namespace
}  // namespace tc

#endif  // TC_HAVE_NVRTC
