#include "backends/cuda/cuda_kernel.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/nvrtc.hpp"
#include "runtime/cuda_check.hpp"

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;
using cudagen::CudaProgram;
using cudagen::KernelArg;
using loops::Source;

/// Scratch buffers start at multiples of this in the device's workspace.
constexpr std::size_t kScratchAlignment = 256;

/// A compiled program loaded on the device (through the runtime's library API: context
/// independent, loaded into the device's primary context when first launched).
class Module {
 public:
  static Result<std::shared_ptr<Module>> load(const cudagen::CompiledCuda& compiled) {
    cudaLibrary_t library = nullptr;
    const cudaError_t e =
        cudaLibraryLoadData(&library, compiled.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (Status st = cuda_check(e, "loading the kernels compiled for " + compiled.target); !st.ok()) return st.error();
    return std::shared_ptr<Module>(new Module(library));
  }
  ~Module() { (void)cudaLibraryUnload(library_); }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  Result<cudaKernel_t> kernel(const std::string& name) const {
    cudaKernel_t k = nullptr;
    if (Status st = cuda_check(cudaLibraryGetKernel(&k, library_, name.c_str()), "finding kernel " + name); !st.ok()) {
      return st.error();
    }
    return k;
  }

 private:
  explicit Module(cudaLibrary_t library) : library_(library) {}
  cudaLibrary_t library_;
};

/// The modules a device has loaded, by source text: a partition compiled again (by the executor
/// after the oracle measured it, or for another model with the same shapes) reuses its module.
/// Programs compiled ahead (precompile_cuda_programs) wait in `compiled` until first loaded.
struct ModuleCache {
  std::map<std::string, std::shared_ptr<Module>> modules;
  std::map<std::string, cudagen::CompiledCuda> compiled;
};

Result<ModuleCache*> module_cache(CudaDevice& device) {
  Result<std::shared_ptr<void>> context = device.context("cuda.modules", [] {
    return Result<std::shared_ptr<void>>(std::static_pointer_cast<void>(std::make_shared<ModuleCache>()));
  });
  if (!context.ok()) return context.error();
  return static_cast<ModuleCache*>(context->get());
}

Result<std::shared_ptr<Module>> module_for(CudaDevice& device, const std::string& source) {
  Result<ModuleCache*> cache = module_cache(device);
  if (!cache.ok()) return cache.error();
  auto& modules = (*cache)->modules;
  if (auto it = modules.find(source); it != modules.end()) return it->second;
  Result<std::shared_ptr<Module>> module = collage::Error{collage::ErrorCode::internal, "not loaded"};
  if (auto ahead = (*cache)->compiled.find(source); ahead != (*cache)->compiled.end()) {
    module = Module::load(ahead->second);
    (*cache)->compiled.erase(ahead);
  } else {
    Result<cudagen::CompiledCuda> compiled = cudagen::compile_cuda(source, device.compute_capability());
    if (!compiled.ok()) return compiled.error();
    module = Module::load(*compiled);
  }
  if (!module.ok()) return module.error();
  modules.emplace(source, *module);
  return module;
}

class CudaKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> make(loops::LoweredFunction lowered, CudaProgram program,
                                               CudaDevice& device) {
    std::unique_ptr<CudaKernel> k(new CudaKernel(std::move(lowered), std::move(program), device));
    if (Status st = k->prepare(); !st.ok()) return st.error();
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (inputs.size() < params_ || outputs.size() != lowered_.output_sizes.size()) {
      return Error{ErrorCode::invalid_argument, "cuda: kernel expects " + std::to_string(params_) + " inputs and " +
                                                    std::to_string(lowered_.output_sizes.size()) + " outputs, got " +
                                                    std::to_string(inputs.size()) + " and " +
                                                    std::to_string(outputs.size())};
    }
    char* workspace = static_cast<char*>(device_.workspace().data);
    for (std::size_t i = 0; i < lowered_.sources.size(); ++i) {
      const Source& s = lowered_.sources[i];
      const auto at = static_cast<std::size_t>(s.index);
      switch (s.kind) {
        case Source::Kind::param: buffers_[i] = const_cast<float*>(inputs[at]); break;
        case Source::Kind::constant: buffers_[i] = constants_[at].floats(); break;
        case Source::Kind::scratch: buffers_[i] = reinterpret_cast<float*>(workspace + scratch_offsets_[at]); break;
        case Source::Kind::output: buffers_[i] = outputs[at]; break;
      }
    }
    cudaStream_t stream = device_.stream();
    for (std::size_t l = 0; l < program_.launches.size(); ++l) {
      const cudagen::KernelLaunch& launch = program_.launches[l];
      std::vector<void*> values(launch.args.size());
      std::vector<void*> args(launch.args.size());
      for (std::size_t a = 0; a < launch.args.size(); ++a) {
        const KernelArg& arg = launch.args[a];
        const auto at = static_cast<std::size_t>(arg.index);
        values[a] = arg.kind == KernelArg::Kind::buffer ? static_cast<void*>(buffers_[at]) : tables_[at].get().data;
        args[a] = &values[a];
      }
      const dim3 grid(static_cast<unsigned>(launch.grid[0]), static_cast<unsigned>(launch.grid[1]),
                      static_cast<unsigned>(launch.grid[2]));
      const dim3 block(static_cast<unsigned>(launch.block));
      const void* function = reinterpret_cast<const void*>(functions_[l]);
      const cudaError_t e = cudaLaunchKernel(function, grid, block, args.data(), 0, stream);
      if (Status st = cuda_check(e, "launching " + launch.kernel); !st.ok()) return st;
    }
    for (const auto& [to, from] : lowered_.output_copies) {
      const auto t = static_cast<std::size_t>(to);
      const auto bytes = static_cast<std::size_t>(lowered_.output_sizes[t]) * sizeof(float);
      const cudaError_t e = cudaMemcpyAsync(outputs[t], outputs[static_cast<std::size_t>(from)], bytes,
                                            cudaMemcpyDeviceToDevice, stream);
      if (Status st = cuda_check(e, "copying an output"); !st.ok()) return st;
    }
    return Status::success();
  }

 private:
  CudaKernel(loops::LoweredFunction lowered, CudaProgram program, CudaDevice& device)
      : lowered_(std::move(lowered)), program_(std::move(program)), device_(device) {}

  Status prepare() {
    Result<std::shared_ptr<Module>> module = module_for(device_, program_.source);
    if (!module.ok()) return module.error();
    module_ = std::move(module).value();
    for (const cudagen::KernelLaunch& launch : program_.launches) {
      Result<cudaKernel_t> k = module_->kernel(launch.kernel);
      if (!k.ok()) return k.error();
      functions_.push_back(*k);
    }
    for (const auto& constant : lowered_.constants) {
      Result<OwnedBuffer> b = upload(constant->data.data(), constant->bytes());
      if (!b.ok()) return b.error();
      constants_.push_back(std::move(b).value());
    }
    for (const loops::IndexTable& table : program_.tables) {
      Result<OwnedBuffer> b = upload(table->data(), table->size() * sizeof(std::int64_t));
      if (!b.ok()) return b.error();
      tables_.push_back(std::move(b).value());
    }
    std::size_t total = 0;
    for (std::int64_t size : lowered_.scratch_sizes) {
      scratch_offsets_.push_back(total);
      const std::size_t bytes = static_cast<std::size_t>(size) * sizeof(float);
      total += (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
    }
    if (Status st = device_.reserve_workspace(total); !st.ok()) return st;
    for (const Source& s : lowered_.sources) {
      if (s.kind == Source::Kind::param) params_ = std::max(params_, static_cast<std::size_t>(s.index) + 1);
    }
    buffers_.resize(lowered_.sources.size());
    return Status::success();
  }

  Result<OwnedBuffer> upload(const void* data, std::size_t bytes) {
    Result<OwnedBuffer> b = allocate_owned(device_, bytes);
    if (!b.ok()) return b.error();
    if (Status st = device_.upload(b->get(), 0, data, bytes); !st.ok()) return st.error();
    return b;
  }

  loops::LoweredFunction lowered_;
  CudaProgram program_;
  CudaDevice& device_;
  std::shared_ptr<Module> module_;
  std::vector<cudaKernel_t> functions_;
  std::vector<OwnedBuffer> constants_;
  std::vector<OwnedBuffer> tables_;
  std::vector<std::size_t> scratch_offsets_;
  std::size_t params_ = 0;
  std::vector<float*> buffers_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> compile_cuda_kernel(loops::LoweredFunction lowered, CudaProgram program,
                                                    CudaDevice& device) {
  return CudaKernel::make(std::move(lowered), std::move(program), device);
}

void precompile_cuda_programs(CudaDevice& device, const std::vector<std::string>& sources) {
  Result<ModuleCache*> cache = module_cache(device);
  if (!cache.ok()) return;
  std::set<std::string> seen;
  std::vector<std::string> missing;
  for (const std::string& source : sources) {
    if ((*cache)->modules.count(source) == 0 && (*cache)->compiled.count(source) == 0 && seen.insert(source).second) {
      missing.push_back(source);
    }
  }
  std::vector<Result<cudagen::CompiledCuda>> compiled = cudagen::compile_cuda_all(missing, device.compute_capability());
  for (std::size_t k = 0; k < missing.size(); ++k) {
    if (compiled[k].ok()) (*cache)->compiled.emplace(std::move(missing[k]), std::move(compiled[k]).value());
  }
}

}  // namespace tc
