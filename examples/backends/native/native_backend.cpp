#include "backends/native/native_backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include <collage/rules/partition_spec.hpp>

#include "backends/native/conv.hpp"
#include "backends/native/gemm.hpp"
#include "loops/lower.hpp"
#include "backends/native/row_kernels.hpp"
#include "backends/native/tile_loop.hpp"

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;
using loops::ConvCore;
using loops::Core;
using loops::GemmCore;
using loops::LayerNormCore;
using loops::LoweredFunction;
using loops::PoolCore;
using loops::ReduceCore;
using loops::ReduceKind;
using loops::SoftmaxCore;
using loops::Source;
using loops::Stage;
using namespace native;

/// Reduction input points per interleaved chunk (the chunk's input stays in L1/L2 for the
/// epilogue that re-reads it).
constexpr std::int64_t kReduceChunkPoints = 4096;

/// One stage ready to run: its kernels, tile loops and working memory.
class StageRun {
 public:
  explicit StageRun(const Stage& stage) : stage_(&stage) {
    if (stage.has_epilogue) epilogue_.emplace(stage.epilogue);
    if (const auto* r = std::get_if<ReduceCore>(&stage.core)) input_.emplace(r->input);
    if (const auto* c = std::get_if<ConvCore>(&stage.core)) conv_.emplace(c->geom);
    if (const auto* p = std::get_if<PoolCore>(&stage.core)) pool_.emplace(p->geom);
  }

  void run(const float* const* read, float* const* write) {
    float* dst = write[stage_->dst];
    float* core_dst = stage_->core_dst >= 0 ? write[stage_->core_dst] : nullptr;
    const bool blockwise = epilogue_ && stage_->core_dst == stage_->dst;
    auto finished = [&](std::int64_t begin, std::int64_t end) {
      if (blockwise) epilogue_->store(read, dst, begin, end);
    };
    const Core& core = stage_->core;
    if (std::holds_alternative<std::monostate>(core)) {
      epilogue_->store(read, dst, 0, stage_->size);
      return;
    }
    if (const auto* r = std::get_if<ReduceCore>(&core)) {
      run_reduce(*r, read, dst, core_dst);
      return;
    }
    if (const auto* g = std::get_if<GemmCore>(&core)) {
      run_gemm(*g, read, core_dst, finished);
    } else if (const auto* c = std::get_if<ConvCore>(&core)) {
      conv_->run(read[c->x], read[c->w], core_dst, finished);
    } else if (const auto* p = std::get_if<PoolCore>(&core)) {
      pool_->run(read[p->x], core_dst, finished);
    } else if (const auto* s = std::get_if<SoftmaxCore>(&core)) {
      softmax(*s, read[s->x], core_dst, scratch_, finished);
    } else if (const auto* l = std::get_if<LayerNormCore>(&core)) {
      layer_norm(*l, read[l->x], read[l->scale], l->bias >= 0 ? read[l->bias] : nullptr, core_dst, scratch_, finished);
    }
    if (epilogue_ && !blockwise) epilogue_->store(read, dst, 0, stage_->size);
  }

 private:
  void run_gemm(const GemmCore& g, const float* const* read, float* c, RangeDone finished) {
    const std::int64_t batches = numel(g.batch);
    const std::size_t rank = g.batch.size();
    std::vector<std::int64_t> index(rank, 0);
    const std::int64_t block = g.m * g.n;
    for (std::int64_t b = 0; b < batches; ++b) {
      std::int64_t a_off = 0;
      std::int64_t b_off = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        a_off += index[d] * g.a_batch_strides[d];
        b_off += index[d] * g.b_batch_strides[d];
      }
      const MatrixRef a{read[g.a] + a_off, g.a_rs, g.a_cs};
      const MatrixRef bm{read[g.b] + b_off, g.b_rs, g.b_cs};
      const std::int64_t base = b * block;
      if (g.k > 0 && gemm_small_m(g.m, g.n, g.k, a, bm, c + base, g.n, workspace_)) {
        finished(base, base + block);
      } else {
        auto pack = [&](std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* dst) {
          pack_b_matrix(bm, k0, kc, j0, nc, dst);
        };
        auto done = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
          if (j0 == 0 && j1 == g.n) {
            finished(base + i0 * g.n, base + i1 * g.n);
            return;
          }
          for (std::int64_t i = i0; i < i1; ++i) finished(base + i * g.n + j0, base + i * g.n + j1);
        };
        gemm(g.m, g.n, g.k, a, pack, c + base, g.n, workspace_, done);
      }
      for (std::size_t d = rank; d-- > 0;) {
        if (++index[d] < g.batch[d]) break;
        index[d] = 0;
      }
    }
  }

  void run_reduce(const ReduceCore& r, const float* const* read, float* dst, float* acc) {
    const bool max = r.kind == ReduceKind::max;
    std::fill(acc, acc + r.size, max ? -std::numeric_limits<float>::infinity() : 0.0f);
    auto finalize = [&](std::int64_t r0, std::int64_t r1) {
      if (r.kind != ReduceKind::mean) return;
      const auto count = static_cast<float>(r.count);
      for (std::int64_t i = r0; i < r1; ++i) acc[i] /= count;
    };
    const std::int64_t per = stage_->rows_per_result;
    if (per > 0 && epilogue_) {
      const std::int64_t chunk = std::max<std::int64_t>(1, kReduceChunkPoints / std::max<std::int64_t>(1, r.count));
      for (std::int64_t r0 = 0; r0 < r.size; r0 += chunk) {
        const std::int64_t r1 = std::min(r.size, r0 + chunk);
        input_->reduce(read, acc, max, r0 * r.count, r1 * r.count);
        finalize(r0, r1);
        epilogue_->store(read, dst, r0 * per, r1 * per);
      }
      return;
    }
    input_->reduce(read, acc, max, 0, r.size * r.count);
    finalize(0, r.size);
    if (epilogue_) epilogue_->store(read, dst, 0, stage_->size);
  }

  const Stage* stage_;
  std::optional<TileLoop> epilogue_;
  std::optional<TileLoop> input_;
  std::optional<ConvKernel> conv_;
  std::optional<PoolKernel> pool_;
  GemmWorkspace workspace_;
  std::vector<float> scratch_;
};

/// A compiled partition: its lowered stages, their kernels and the scratch buffers between them.
class NativeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> make(LoweredFunction lowered) {
    std::unique_ptr<NativeKernel> kernel(new NativeKernel(std::move(lowered)));
    for (const Stage& stage : kernel->lowered_.stages) kernel->stages_.emplace_back(stage);
    for (std::int64_t size : kernel->lowered_.scratch_sizes) kernel->scratch_.emplace_back(static_cast<std::size_t>(size));
    for (const Source& s : kernel->lowered_.sources) {
      if (s.kind == Source::Kind::param) kernel->params_ = std::max(kernel->params_, static_cast<std::size_t>(s.index) + 1);
    }
    kernel->read_.resize(kernel->lowered_.sources.size());
    kernel->write_.resize(kernel->lowered_.sources.size());
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
    if (inputs.size() < params_ || outputs.size() != lowered_.output_sizes.size()) {
      return Error{ErrorCode::invalid_argument, "native: kernel expects " + std::to_string(params_) + " inputs and " +
                                                    std::to_string(lowered_.output_sizes.size()) + " outputs, got " +
                                                    std::to_string(inputs.size()) + " and " + std::to_string(outputs.size())};
    }
    for (std::size_t i = 0; i < lowered_.sources.size(); ++i) {
      const Source& s = lowered_.sources[i];
      const auto at = static_cast<std::size_t>(s.index);
      float* w = nullptr;
      switch (s.kind) {
        case Source::Kind::param: read_[i] = inputs[at]; break;
        case Source::Kind::constant: read_[i] = lowered_.constants[at]->data.data(); break;
        case Source::Kind::scratch: w = scratch_[at].data(); break;
        case Source::Kind::output: w = outputs[at]; break;
      }
      if (w != nullptr) read_[i] = w;
      write_[i] = w;
    }
    for (StageRun& stage : stages_) stage.run(read_.data(), write_.data());
    for (const auto& [to, from] : lowered_.output_copies) {
      const auto size = static_cast<std::size_t>(lowered_.output_sizes[static_cast<std::size_t>(to)]);
      std::memcpy(outputs[static_cast<std::size_t>(to)], outputs[static_cast<std::size_t>(from)], size * sizeof(float));
    }
    return Status::success();
  }

 private:
  explicit NativeKernel(LoweredFunction lowered) : lowered_(std::move(lowered)) {}

  LoweredFunction lowered_;
  std::vector<StageRun> stages_;
  std::vector<std::vector<float>> scratch_;
  std::size_t params_ = 0;
  std::vector<const float*> read_;
  std::vector<float*> write_;
};

}  // namespace

collage::PartitionSpec<Graph> NativeBackend::spec() const { return collage::native_fusion_spec<Graph>(name(), max_depth_); }

Result<std::unique_ptr<Kernel>> NativeBackend::do_compile(const Function& function, Device&) const {
  auto lowered = loops::lower(function);
  if (!lowered.ok()) return lowered.error();
  return NativeKernel::make(std::move(*lowered));
}

BackendRegistration native_registration() {
  return {"native", DeviceKind::cpu, "", [](const BackendOptions&) { return std::make_unique<NativeBackend>(); }};
}

}  // namespace tc
