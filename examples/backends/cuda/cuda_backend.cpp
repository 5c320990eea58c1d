#include "backends/cuda/cuda_backend.hpp"

#include <string>
#include <utility>

#include <collage/rules/partition_spec.hpp>

#include "backends/cuda/cuda_codegen.hpp"
#include "backends/cuda/cuda_kernel.hpp"
#include "backends/native/lower.hpp"
#include "runtime/cuda_device.hpp"

namespace tc {

namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::size_t max_depth) : max_depth_(max_depth) {}

  const std::string& name() const override { return name_; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  collage::PartitionSpec<Graph> spec() const override { return collage::native_fusion_spec<Graph>(name_, max_depth_); }

  collage::Result<std::unique_ptr<Kernel>> compile(const Function& function, Device& device) const override {
    collage::Result<CudaDevice*> cuda = usable_cuda_device(device, name_);
    if (!cuda.ok()) return cuda.error();
    collage::Result<native::LoweredFunction> lowered = native::lower(function);
    if (!lowered.ok()) return collage::Error{lowered.error().code, name_ + ": " + lowered.error().message};
    collage::Result<cudagen::CudaProgram> program = cudagen::generate_cuda(*lowered);
    if (!program.ok()) return program.error();
    return compile_cuda_kernel(std::move(lowered).value(), std::move(program).value(), **cuda);
  }

 private:
  std::string name_ = "cuda";
  std::size_t max_depth_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(std::size_t max_depth) { return std::make_unique<CudaBackend>(max_depth); }

}  // namespace tc
