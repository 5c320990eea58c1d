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
#include "backends/native/row_kernels.hpp"
#include "backends/native/tile_loop.hpp"
#include "loops/lower.hpp"
#include "runtime/cpu_threads.hpp"

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;
using loops::ConvCore;
using loops::Core;
using loops::GatherCore;
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

/// Work per part of a stage (see parts_for): output points of an elementwise loop or a reduction's
/// input, multiply-adds of a GEMM or convolution.
constexpr std::int64_t kPointsPerPart = std::int64_t{1} << 15;
constexpr std::int64_t kMultiplyAddsPerPart = std::int64_t{1} << 18;

/// What one thread of a stage works with: tile loops hold their tile buffers, kernels their packed
/// panels.
struct Lane {
  std::optional<TileLoop> epilogue;
  std::optional<TileLoop> input;
  std::optional<ConvKernel> conv;
  GemmWorkspace workspace;
  std::vector<float> scratch;
};

/// The callback a kernel calls for each finished range of its output: the lane's epilogue over it
/// when the stage's epilogue runs block by block.
struct Finished {
  Lane& lane;
  const float* const* read;
  float* dst;
  bool blockwise;

  void operator()(std::int64_t begin, std::int64_t end) const {
    if (blockwise) lane.epilogue->store(read, dst, begin, end);
  }
};

/// One stage ready to run: its kernels, tile loops and working memory, one lane per thread.
class StageRun {
 public:
  StageRun(const Stage& stage, int threads) : stage_(&stage), lanes_(static_cast<std::size_t>(std::max(threads, 1))) {
    for (Lane& lane : lanes_) {
      if (stage.has_epilogue) lane.epilogue.emplace(stage.epilogue);
      if (const auto* r = std::get_if<ReduceCore>(&stage.core)) lane.input.emplace(r->input);
      if (const auto* c = std::get_if<ConvCore>(&stage.core)) lane.conv.emplace(c->geom);
    }
    if (const auto* p = std::get_if<PoolCore>(&stage.core)) pool_.emplace(p->geom);
  }

  void run(const float* const* read, float* const* write) {
    float* dst = write[stage_->dst];
    float* core_dst = stage_->core_dst >= 0 ? write[stage_->core_dst] : nullptr;
    const bool has_epilogue = stage_->has_epilogue;
    const bool blockwise = has_epilogue && stage_->core_dst == stage_->dst;
    const Core& core = stage_->core;
    if (std::holds_alternative<std::monostate>(core)) {
      store_epilogue(read, dst);
      return;
    }
    if (const auto* r = std::get_if<ReduceCore>(&core)) {
      run_reduce(*r, read, dst, core_dst);
      return;
    }
    if (const auto* g = std::get_if<GemmCore>(&core)) {
      run_gemm(*g, read, core_dst, dst, blockwise);
    } else if (const auto* c = std::get_if<ConvCore>(&core)) {
      const loops::ConvGeom& geom = c->geom;
      const std::int64_t work = loops::conv_group_channels(geom) * loops::conv_window(geom) * stage_->size;
      in_parts(parts_for(work, kMultiplyAddsPerPart), [&](Lane& lane, int part, int parts) {
        lane.conv->run(read[c->x], read[c->w], core_dst, Finished{lane, read, dst, blockwise}, part, parts);
      });
    } else if (const auto* p = std::get_if<PoolCore>(&core)) {
      const std::int64_t work = p->geom.k[0] * p->geom.k[1] * p->geom.k[2] * stage_->size;
      in_parts(parts_for(work, kPointsPerPart), [&](Lane& lane, int part, int parts) {
        pool_->run(read[p->x], core_dst, Finished{lane, read, dst, blockwise}, part, parts);
      });
    } else if (const auto* s = std::get_if<SoftmaxCore>(&core)) {
      in_parts(parts_for(stage_->size, kPointsPerPart), [&](Lane& lane, int part, int parts) {
        softmax(*s, read[s->x], core_dst, lane.scratch, Finished{lane, read, dst, blockwise}, part, parts);
      });
    } else if (const auto* l = std::get_if<LayerNormCore>(&core)) {
      in_parts(parts_for(stage_->size, kPointsPerPart), [&](Lane& lane, int part, int parts) {
        layer_norm(*l, read[l->x], read[l->scale], l->bias >= 0 ? read[l->bias] : nullptr, core_dst, lane.scratch,
                   Finished{lane, read, dst, blockwise}, part, parts);
      });
    } else if (const auto* x = std::get_if<GatherCore>(&core)) {
      in_parts(parts_for(stage_->size, kPointsPerPart), [&](Lane& lane, int part, int parts) {
        gather(*x, read[x->data], read[x->indices], core_dst, Finished{lane, read, dst, blockwise}, part, parts);
      });
    }
    if (has_epilogue && !blockwise) store_epilogue(read, dst);
  }

 private:
  /// Parts worth running at once for `work` units of which a part should have at least `per_part`.
  int parts_for(std::int64_t work, std::int64_t per_part) const {
    return tc::parts_for(work, per_part, static_cast<int>(lanes_.size()));
  }

  /// Runs f(lane, part, parts) for every part, on a thread each when there are several.
  template <class F>
  void in_parts(int parts, F&& f) {
    if (parts <= 1) {
      f(lanes_.front(), 0, 1);
      return;
    }
    parallel_parts(parts, [&](int part) { f(lanes_[static_cast<std::size_t>(part)], part, parts); });
  }

  /// Rows [i0, i1) and columns [j0, j1) of batch `batch` of the GEMM into c.
  void gemm_block(Lane& lane, const GemmCore& g, const float* const* read, float* c, float* dst, bool blockwise,
                  std::int64_t batch, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
    std::int64_t a_off = 0;
    std::int64_t b_off = 0;
    std::int64_t rest = batch;
    for (std::size_t d = g.batch.size(); d-- > 0;) {
      const std::int64_t index = rest % g.batch[d];
      rest /= g.batch[d];
      a_off += index * g.a_batch_strides[d];
      b_off += index * g.b_batch_strides[d];
    }
    const MatrixRef a{read[g.a] + a_off + i0 * g.a_rs, g.a_rs, g.a_cs};
    const MatrixRef bm{read[g.b] + b_off + j0 * g.b_cs, g.b_rs, g.b_cs};
    const std::int64_t rows = i1 - i0;
    const std::int64_t cols = j1 - j0;
    // Element (i, j) of the block is c[corner + i * n + j].
    const std::int64_t corner = batch * g.m * g.n + i0 * g.n + j0;
    auto epilogue = Finished{lane, read, dst, blockwise};
    auto done = [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
      if (c0 == 0 && c1 == g.n) {
        epilogue(corner + r0 * g.n, corner + r1 * g.n);
        return;
      }
      for (std::int64_t i = r0; i < r1; ++i) epilogue(corner + i * g.n + c0, corner + i * g.n + c1);
    };
    if (g.k > 0 && gemm_small_m(rows, cols, g.k, a, bm, c + corner, g.n, lane.workspace)) {
      done(0, rows, 0, cols);
      return;
    }
    auto pack = [&](std::int64_t k0, std::int64_t kc, std::int64_t p0, std::int64_t nc, float* to) {
      pack_b_matrix(bm, k0, kc, p0, nc, to);
    };
    gemm(rows, cols, g.k, a, pack, c + corner, g.n, lane.workspace, done);
  }

  /// The GEMM's batches, each split among the parts by columns (whole register tiles, at least two
  /// per part) or else by rows; or, with more batches than parts, whole batches per part.
  void run_gemm(const GemmCore& g, const float* const* read, float* c, float* dst, bool blockwise) {
    const std::int64_t batches = numel(g.batch);
    const int parts = parts_for(batches * g.m * g.n * std::max<std::int64_t>(g.k, 1), kMultiplyAddsPerPart);
    if (batches >= parts) {
      in_parts(parts, [&](Lane& lane, int part, int count) {
        const auto [b0, b1] = share(batches, 1, part, count);
        for (std::int64_t b = b0; b < b1; ++b) gemm_block(lane, g, read, c, dst, blockwise, b, 0, g.m, 0, g.n);
      });
      return;
    }
    for (std::int64_t b = 0; b < batches; ++b) {
      in_parts(parts, [&](Lane& lane, int part, int count) {
        const OutputBlock o = share_output(g.m, g.n, kGemmMr, kGemmNr, part, count);
        if (!o.empty()) gemm_block(lane, g, read, c, dst, blockwise, b, o.i0, o.i1, o.j0, o.j1);
      });
    }
  }

  /// Each part reduces a share of the results when each result's points are one contiguous run of
  /// the input, interleaving the epilogue chunk by chunk where it reads results row by row.
  void run_reduce(const ReduceCore& r, const float* const* read, float* dst, float* acc) {
    const bool max = r.kind == ReduceKind::max;
    const std::int64_t per = stage_->rows_per_result;
    const bool interleaved = per > 0 && stage_->has_epilogue;
    const int parts = r.rows ? parts_for(r.size * r.count, kPointsPerPart) : 1;
    in_parts(parts, [&](Lane& lane, int part, int count) {
      const auto [first, last] = share(r.size, 1, part, count);
      std::fill(acc + first, acc + last, max ? -std::numeric_limits<float>::infinity() : 0.0f);
      const std::int64_t chunk =
          interleaved ? std::max<std::int64_t>(1, kReduceChunkPoints / std::max<std::int64_t>(1, r.count)) : last - first;
      for (std::int64_t r0 = first; r0 < last; r0 += chunk) {
        const std::int64_t r1 = std::min(last, r0 + chunk);
        lane.input->reduce(read, acc, max, r0 * r.count, r1 * r.count);
        if (r.kind == ReduceKind::mean) {
          const auto divisor = static_cast<float>(r.count);
          for (std::int64_t i = r0; i < r1; ++i) acc[i] /= divisor;
        }
        if (interleaved) lane.epilogue->store(read, dst, r0 * per, r1 * per);
      }
    });
    if (stage_->has_epilogue && !interleaved) store_epilogue(read, dst);
  }

  /// The whole epilogue, its points shared among the parts.
  void store_epilogue(const float* const* read, float* dst) {
    in_parts(parts_for(stage_->size, kPointsPerPart), [&](Lane& lane, int part, int parts) {
      const auto [begin, end] = share(stage_->size, kTilePoints, part, parts);
      if (begin < end) lane.epilogue->store(read, dst, begin, end);
    });
  }

  const Stage* stage_;
  std::vector<Lane> lanes_;
  std::optional<PoolKernel> pool_;
};

/// A compiled partition: its lowered stages, their kernels and the scratch buffers between them.
class NativeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> make(LoweredFunction lowered, int threads) {
    std::unique_ptr<NativeKernel> kernel(new NativeKernel(std::move(lowered)));
    for (const Stage& stage : kernel->lowered_.stages) kernel->stages_.emplace_back(stage, threads);
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
  return NativeKernel::make(std::move(*lowered), threads_);
}

NativeBackend::NativeBackend(std::size_t max_depth, int threads)
    : Backend("native", DeviceKind::cpu),
      max_depth_(max_depth),
      threads_(cpu_threads_available() ? std::max(threads, 1) : 1) {}

std::string NativeBackend::configuration() const { return threads_configuration(threads_); }

BackendRegistration native_registration() {
  return {"native", DeviceKind::cpu, "", [](const BackendOptions& options) {
            return std::make_unique<NativeBackend>(loops::kFusionMaxDepth, options.cpu_threads);
          }};
}

}  // namespace tc
