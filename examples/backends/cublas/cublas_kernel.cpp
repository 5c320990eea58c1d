#include "backends/cublas/cublas_kernel.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <cublasLt.h>
#include <dlfcn.h>

#include "backends/kit/kernel_operands.hpp"

namespace tc::cublas {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

namespace {

/// The cuBLASLt functions the backend calls, looked up when the first cublas kernel is compiled:
/// the library takes a third of a second to load, which every process linking it would pay at
/// start (every test, every collage-run) whether or not it runs a matmul.
struct LtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

/// Opens cuBLASLt by its soname (the search path of the executable, LD_LIBRARY_PATH, the system's
/// cache), then at the path CMake found it.
Result<LtApi> load_lt_api() {
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen(TC_CUBLASLT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Error{ErrorCode::io, "cublas: cannot load " + soname + ": " + (why != nullptr ? why : "not found")};
  }
  LtApi api;
  std::string missing;
  auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  find(api.create, "cublasLtCreate");
  find(api.destroy, "cublasLtDestroy");
  find(api.status_string, "cublasLtGetStatusString");
  find(api.desc_create, "cublasLtMatmulDescCreate");
  find(api.desc_destroy, "cublasLtMatmulDescDestroy");
  find(api.desc_set, "cublasLtMatmulDescSetAttribute");
  find(api.layout_create, "cublasLtMatrixLayoutCreate");
  find(api.layout_destroy, "cublasLtMatrixLayoutDestroy");
  find(api.layout_set, "cublasLtMatrixLayoutSetAttribute");
  find(api.pref_create, "cublasLtMatmulPreferenceCreate");
  find(api.pref_destroy, "cublasLtMatmulPreferenceDestroy");
  find(api.pref_set, "cublasLtMatmulPreferenceSetAttribute");
  find(api.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  find(api.matmul, "cublasLtMatmul");
  if (!missing.empty()) return Error{ErrorCode::io, "cublas: " + soname + " lacks " + missing};
  return api;
}

/// The cuBLASLt functions, loaded once per process (never unloaded).
Result<const LtApi*> lt_api() {
  static const Result<LtApi> api = load_lt_api();
  if (!api.ok()) return api.error();
  return &api.value();
}

Status check(const LtApi& lt, cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::success();
  return Error{ErrorCode::io, "cublas: " + what + ": " + lt.status_string(s)};
}

using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, cublasStatus_t (*)(cublasLtMatmulDesc_t)>;
using MatrixLayout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, cublasStatus_t (*)(cublasLtMatrixLayout_t)>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)>;

template <class T>
Status set_attribute(const LtApi& lt, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  return check(lt, lt.desc_set(desc, attr, &value, sizeof(value)), "setting a matmul attribute");
}
template <class T>
Status set_attribute(const LtApi& lt, cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const T& value) {
  return check(lt, lt.layout_set(layout, attr, &value, sizeof(value)), "setting a layout attribute");
}
template <class T>
Status set_attribute(const LtApi& lt, cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                     const T& value) {
  return check(lt, lt.pref_set(pref, attr, &value, sizeof(value)), "setting a preference");
}

/// The alignment cuBLASLt's algorithm is chosen for and run() checks. The executor's arenas give
/// 64 bytes, uploaded constants 256.
constexpr std::uintptr_t kAlignment = 16;

Result<MatrixLayout> make_layout(const LtApi& lt, const LtMatrix& m, std::int64_t batch) {
  cublasLtMatrixLayout_t raw = nullptr;
  if (Status st = check(lt, lt.layout_create(&raw, CUDA_R_32F, m.rows, m.cols, m.ld), "creating a matrix layout");
      !st.ok()) {
    return st.error();
  }
  MatrixLayout layout(raw, lt.layout_destroy);
  if (batch > 1) {
    Status st = set_attribute(lt, raw, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<std::int32_t>(batch));
    if (st.ok()) st = set_attribute(lt, raw, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, m.batch_stride);
    if (!st.ok()) return st.error();
  }
  return layout;
}

cublasLtEpilogue_t epilogue_of(const CallPlan& p) {
  const bool bias = p.bias >= 0;
  switch (p.activation) {
    case Activation::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::gelu_tanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::none: break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

/// "128x64x32 (m x n x k), batch 4, epilogue 6" for messages.
std::string describe(const CallPlan& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " (m x n x k), batch " +
         std::to_string(p.batch) + ", epilogue " + std::to_string(static_cast<int>(epilogue_of(p)));
}

class CublasKernel final : public Kernel {
 public:
  CublasKernel(const LtApi& lt, CudaDevice& device, std::shared_ptr<void> handle, KernelOperands operands,
               const CallPlan& plan, MatmulDesc desc, MatrixLayout a, MatrixLayout b, MatrixLayout d,
               cublasLtMatmulAlgo_t algo, std::size_t workspace_bytes)
      : lt_(lt),
        device_(device),
        handle_(std::move(handle)),
        operands_(std::move(operands)),
        plan_(plan),
        desc_(std::move(desc)),
        a_(std::move(a)),
        b_(std::move(b)),
        d_(std::move(d)),
        algo_(algo),
        workspace_bytes_(workspace_bytes) {}

  Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (Status st = operands_.check_buffers(inputs, outputs, "cublas"); !st.ok()) return st;
    const float* a = operands_.address(plan_.a, inputs, outputs);
    const float* b = operands_.address(plan_.b, inputs, outputs);
    const float* c = operands_.address(plan_.c, inputs, outputs);
    const float* bias = operands_.address(plan_.bias, inputs, outputs);
    float* d = outputs[0];
    for (const void* p : {static_cast<const void*>(a), static_cast<const void*>(b), static_cast<const void*>(c),
                          static_cast<const void*>(bias), static_cast<const void*>(d)}) {
      if (reinterpret_cast<std::uintptr_t>(p) % kAlignment != 0) {
        return Error{ErrorCode::invalid_argument, "cublas: an operand is not " + std::to_string(kAlignment) + "-byte aligned"};
      }
    }
    if (bias != nullptr) {
      if (Status st = set_attribute(lt_, desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
          !st.ok()) {
        return st;
      }
    }
    const float alpha = static_cast<float>(plan_.alpha);
    const float beta = static_cast<float>(plan_.beta);
    // cuBLASLt's A is the plan's B and its B the plan's A (see lt_problem).
    return check(lt_,
                 lt_.matmul(static_cast<cublasLtHandle_t>(handle_.get()), desc_.get(), &alpha, b, a_.get(), a, b_.get(),
                            &beta, c != nullptr ? c : d, d_.get(), d, d_.get(), &algo_, device_.workspace().data,
                            workspace_bytes_, device_.stream()),
                 "cublasLtMatmul");
  }

 private:
  const LtApi& lt_;
  CudaDevice& device_;
  std::shared_ptr<void> handle_;
  KernelOperands operands_;
  CallPlan plan_;
  MatmulDesc desc_;
  MatrixLayout a_;
  MatrixLayout b_;
  MatrixLayout d_;
  cublasLtMatmulAlgo_t algo_;
  std::size_t workspace_bytes_;
};

Result<std::shared_ptr<void>> make_handle(const LtApi& lt) {
  cublasLtHandle_t handle = nullptr;
  if (Status st = check(lt, lt.create(&handle), "creating a cuBLASLt handle"); !st.ok()) return st.error();
  return std::shared_ptr<void>(handle, [destroy = lt.destroy](void* h) { (void)destroy(static_cast<cublasLtHandle_t>(h)); });
}

}  // namespace

Status load_cublaslt() {
  Result<const LtApi*> loaded = lt_api();
  return loaded.ok() ? Status::success() : Status(loaded.error());
}

Result<std::unique_ptr<Kernel>> kernel(const Function& function, const LibraryCall& call, const CallPlan& plan,
                                       Device& on, const Options& options) {
  Result<CudaDevice*> cuda = usable_cuda_device(on, "cublas");
  if (!cuda.ok()) return cuda.error();
  CudaDevice& device = **cuda;
  if (plan.batch > std::numeric_limits<std::int32_t>::max()) {
    return Error{ErrorCode::invalid_argument, "cublas: a batch of " + std::to_string(plan.batch) + " matrices"};
  }
  Result<const LtApi*> loaded = lt_api();
  if (!loaded.ok()) return loaded.error();
  const LtApi& lt = **loaded;
  Result<std::shared_ptr<void>> handle = device.context("cublasLt", [&lt] { return make_handle(lt); });
  if (!handle.ok()) return handle.error();
  Result<KernelOperands> operands = KernelOperands::bind(function, {call}, cublas::operands(plan), device);
  if (!operands.ok()) return operands.error();
  const LtProblem problem = lt_problem(plan);

  cublasLtMatmulDesc_t raw_desc = nullptr;
  const cublasComputeType_t compute = options.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (Status st = check(lt, lt.desc_create(&raw_desc, compute, CUDA_R_32F), "creating a matmul descriptor"); !st.ok()) {
    return st.error();
  }
  MatmulDesc desc(raw_desc, lt.desc_destroy);
  auto op = [](bool trans) { return static_cast<std::int32_t>(trans ? CUBLAS_OP_T : CUBLAS_OP_N); };
  Status st = set_attribute(lt, raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, op(problem.trans_a));
  if (st.ok()) st = set_attribute(lt, raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, op(problem.trans_b));
  if (st.ok()) st = set_attribute(lt, raw_desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<std::uint32_t>(epilogue_of(plan)));
  if (st.ok() && plan.bias >= 0) {
    // The heuristic reads the bias pointer's alignment only: a constant's own address, else an
    // address with the alignment run() guarantees.
    const bool constant = function.graph.node(plan.bias).op == Op::constant;
    const void* bias = constant ? static_cast<const void*>(operands->address(plan.bias, {}, {}))
                                : reinterpret_cast<const void*>(kAlignment);
    st = set_attribute(lt, raw_desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  }
  if (!st.ok()) return st.error();

  Result<MatrixLayout> a = make_layout(lt, problem.a, problem.batch);
  if (!a.ok()) return a.error();
  Result<MatrixLayout> b = make_layout(lt, problem.b, problem.batch);
  if (!b.ok()) return b.error();
  Result<MatrixLayout> d = make_layout(lt, problem.d, problem.batch);
  if (!d.ok()) return d.error();

  cublasLtMatmulPreference_t raw_pref = nullptr;
  if (st = check(lt, lt.pref_create(&raw_pref), "creating a matmul preference"); !st.ok()) return st.error();
  Preference pref(raw_pref, lt.pref_destroy);
  st = set_attribute(lt, raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                     static_cast<std::uint64_t>(options.max_workspace_bytes));
  for (const cublasLtMatmulPreferenceAttributes_t attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    if (st.ok()) st = set_attribute(lt, raw_pref, attr, static_cast<std::uint32_t>(kAlignment));
  }
  if (!st.ok()) return st.error();

  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t searched = lt.heuristic(static_cast<cublasLtHandle_t>(handle->get()), raw_desc, a->get(), b->get(),
                                               d->get(), d->get(), raw_pref, 1, &best, &found);
  if (searched != CUBLAS_STATUS_SUCCESS || found == 0) {
    return Error{ErrorCode::invalid_argument,
                 "cublas: cuBLASLt has no algorithm for " + describe(plan) + ": " + lt.status_string(searched)};
  }
  if (st = device.reserve_workspace(best.workspaceSize); !st.ok()) return Error{st.code(), "cublas: " + st.message()};
  return std::unique_ptr<Kernel>(std::make_unique<CublasKernel>(lt, device, std::move(handle).value(),
                                                                std::move(operands).value(), plan, std::move(desc),
                                                                std::move(a).value(), std::move(b).value(),
                                                                std::move(d).value(), best.algo, best.workspaceSize));
}

}  // namespace tc::cublas
