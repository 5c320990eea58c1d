#include "backends/cuda/nvrtc.hpp"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_codegen.hpp"

namespace tc::cudagen {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

/// The NVRTC functions the backend calls.
struct NvrtcApi {
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) num_archs = nullptr;
  decltype(&nvrtcGetSupportedArchs) archs = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
};

/// Opens NVRTC by its soname (the executable's search path, LD_LIBRARY_PATH, the system's cache),
/// then at the path CMake found it.
Result<NvrtcApi> load_api() {
  void* lib = dlopen(TC_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen(TC_NVRTC_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Error{ErrorCode::io, std::string("cuda: cannot load NVRTC (") + TC_NVRTC_SONAME + "): " +
                                    (why != nullptr ? why : "not found")};
  }
  NvrtcApi api;
  std::string missing;
  auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  find(api.version, "nvrtcVersion");
  find(api.error_string, "nvrtcGetErrorString");
  find(api.num_archs, "nvrtcGetNumSupportedArchs");
  find(api.archs, "nvrtcGetSupportedArchs");
  find(api.create, "nvrtcCreateProgram");
  find(api.destroy, "nvrtcDestroyProgram");
  find(api.compile, "nvrtcCompileProgram");
  find(api.log_size, "nvrtcGetProgramLogSize");
  find(api.log, "nvrtcGetProgramLog");
  find(api.cubin_size, "nvrtcGetCUBINSize");
  find(api.cubin, "nvrtcGetCUBIN");
  find(api.ptx_size, "nvrtcGetPTXSize");
  find(api.ptx, "nvrtcGetPTX");
  if (!missing.empty()) return Error{ErrorCode::io, std::string("cuda: ") + TC_NVRTC_SONAME + " lacks " + missing};
  return api;
}

/// The NVRTC functions, loaded once per process (never unloaded).
Result<const NvrtcApi*> api() {
  static const Result<NvrtcApi> loaded = load_api();
  if (!loaded.ok()) return loaded.error();
  return &loaded.value();
}

Status check(const NvrtcApi& nvrtc, nvrtcResult r, const std::string& what) {
  if (r == NVRTC_SUCCESS) return Status::success();
  return Error{ErrorCode::internal, "cuda: NVRTC " + what + ": " + nvrtc.error_string(r)};
}

/// The target for compute capability `capability`: its real architecture when NVRTC knows it,
/// else the newest virtual architecture below it.
Result<std::pair<std::string, bool>> target_for(const NvrtcApi& nvrtc, int capability) {
  int count = 0;
  if (Status st = check(nvrtc, nvrtc.num_archs(&count), "listing architectures"); !st.ok()) return st.error();
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (Status st = check(nvrtc, nvrtc.archs(archs.data()), "listing architectures"); !st.ok()) return st.error();
  if (std::find(archs.begin(), archs.end(), capability) != archs.end()) {
    return std::make_pair("sm_" + std::to_string(capability), false);
  }
  int best = 0;
  for (int a : archs) {
    if (a <= capability) best = std::max(best, a);
  }
  if (best == 0) {
    return Error{ErrorCode::invalid_argument,
                 "cuda: NVRTC cannot compile for compute capability " + std::to_string(capability)};
  }
  return std::make_pair("compute_" + std::to_string(best), true);
}

}  // namespace

Status load_nvrtc() {
  Result<const NvrtcApi*> nvrtc = api();
  return nvrtc.ok() ? Status::success() : Status(nvrtc.error());
}

Result<std::string> nvrtc_version() {
  Result<const NvrtcApi*> nvrtc = api();
  if (!nvrtc.ok()) return nvrtc.error();
  int major = 0;
  int minor = 0;
  if (Status st = check(**nvrtc, (*nvrtc)->version(&major, &minor), "version"); !st.ok()) return st.error();
  return std::to_string(major) + "." + std::to_string(minor);
}

Result<CompiledCuda> compile_cuda(const std::string& source, int capability) {
  Result<const NvrtcApi*> loaded = api();
  if (!loaded.ok()) return loaded.error();
  const NvrtcApi& nvrtc = **loaded;
  Result<std::pair<std::string, bool>> target = target_for(nvrtc, capability);
  if (!target.ok()) return target.error();
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const KernelHeader& h : kernel_headers()) {
    header_texts.push_back(h.text);
    header_names.push_back(h.name);
  }
  nvrtcProgram raw = nullptr;
  const nvrtcResult created = nvrtc.create(&raw, source.c_str(), "collage_cuda.cu",
                                           static_cast<int>(header_texts.size()), header_texts.data(),
                                           header_names.data());
  if (Status st = check(nvrtc, created, "creating a program"); !st.ok()) return st.error();
  auto destroy = [&nvrtc](nvrtcProgram* p) { (void)nvrtc.destroy(p); };
  std::unique_ptr<nvrtcProgram, decltype(destroy)> program(&raw, destroy);
  const std::string arch = "--gpu-architecture=" + target->first;
  const char* options[] = {arch.c_str(), "-std=c++17"};
  const nvrtcResult compiled = nvrtc.compile(raw, 2, options);
  if (compiled != NVRTC_SUCCESS) {
    std::size_t size = 0;
    std::string log;
    if (nvrtc.log_size(raw, &size) == NVRTC_SUCCESS && size > 1) {
      log.resize(size);
      if (nvrtc.log(raw, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    return Error{ErrorCode::internal, std::string("cuda: NVRTC could not compile the generated kernels (") +
                                          nvrtc.error_string(compiled) + "): " + log};
  }
  CompiledCuda out;
  out.target = target->first;
  out.ptx = target->second;
  const char* what = out.ptx ? "PTX" : "CUBIN";
  std::size_t size = 0;
  if (Status st = check(nvrtc, out.ptx ? nvrtc.ptx_size(raw, &size) : nvrtc.cubin_size(raw, &size), what); !st.ok()) {
    return st.error();
  }
  out.image.resize(size);
  if (Status st = check(nvrtc, out.ptx ? nvrtc.ptx(raw, out.image.data()) : nvrtc.cubin(raw, out.image.data()), what);
      !st.ok()) {
    return st.error();
  }
  return out;
}

std::vector<Result<CompiledCuda>> compile_cuda_all(const std::vector<std::string>& sources, int capability,
                                                  std::size_t threads) {
  std::vector<Result<CompiledCuda>> out(sources.size(), Result<CompiledCuda>(Error{ErrorCode::internal, "not compiled"}));
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, sources.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k = next++; k < sources.size(); k = next++) out[k] = compile_cuda(sources[k], capability);
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  return out;
}

}  // namespace tc::cudagen
