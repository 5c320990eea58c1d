#include "backends/cuda/cuda_backend.hpp"

#include <string>
#include <utility>
#include <vector>

#include <collage/rules/partition_spec.hpp>

#include "backends/cuda/cuda_codegen.hpp"
#include "backends/cuda/cuda_kernel.hpp"
#include "loops/lower.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

constexpr const char* kNotBuilt = TC_HAVE_NVRTC ? "" : "the CUDA toolkit with NVRTC was not found when this build was configured";

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::size_t max_depth) : Backend("cuda", DeviceKind::cuda), max_depth_(max_depth) {}

  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name(), max_depth_); }

 private:
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    collage::Result<CudaDevice*> cuda = usable_cuda_device(device, name());
    if (!cuda.ok()) return cuda.error();
    collage::Result<loops::LoweredFunction> lowered = loops::lower(function);
    if (!lowered.ok()) return lowered.error();
    collage::Result<cudagen::CudaProgram> program = cudagen::generate_cuda(*lowered);
    if (!program.ok()) return program.error();
#if TC_HAVE_NVRTC
    return compile_cuda_kernel(std::move(lowered).value(), std::move(program).value(), **cuda);
#else
    return collage::Error{collage::ErrorCode::invalid_argument, kNotBuilt};
#endif
  }

  void do_prepare(const std::vector<const Function*>& functions, Device& device) const override {
#if TC_HAVE_NVRTC
    collage::Result<CudaDevice*> cuda = usable_cuda_device(device, name());
    if (!cuda.ok()) return;
    std::vector<std::string> sources;
    for (const Function* function : functions) {
      collage::Result<loops::LoweredFunction> lowered = loops::lower(*function);
      if (!lowered.ok()) continue;
      collage::Result<cudagen::CudaProgram> program = cudagen::generate_cuda(*lowered);
      if (program.ok()) sources.push_back(std::move(program->source));
    }
    precompile_cuda_programs(**cuda, sources);
#else
    (void)functions;
    (void)device;
#endif
  }

  std::size_t max_depth_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(std::size_t max_depth) { return std::make_unique<CudaBackend>(max_depth); }

BackendRegistration cuda_registration() {
  return {"cuda", DeviceKind::cuda, kNotBuilt, [](const BackendOptions&) { return make_cuda_backend(); }};
}

}  // namespace tc
