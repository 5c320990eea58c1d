#pragma once

/// \file
/// TapeDevice and TapeBackend: a host-backed stand-in for a GPU that records work the way a CUDA
/// stream capture does, so that recording and replaying (CUDA graphs) are tested on any machine.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/reference/reference_backend.hpp"
#include "runtime/cpu_device.hpp"

namespace tc::testing {

/// A host-backed device of kind cuda that records the way a CUDA stream is captured: while it
/// records, kernels of TapeBackend append their launch (with its buffers) to a tape instead of
/// running; a recording replays the tape. Recording can be made to fail.
class TapeDevice final : public Device {
 public:
  DeviceKind kind() const override { return DeviceKind::cuda; }
  std::string name() const override { return "tape"; }
  bool available() const override { return true; }
  collage::Result<Buffer> allocate(std::size_t bytes) override {
    auto b = host_.allocate(bytes);
    if (b.ok()) b->device = DeviceKind::cuda;
    return b;
  }
  void release(Buffer b) override { host_.release(b); }
  collage::Status upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override {
    return host_.upload(dst, offset, src, bytes);
  }
  collage::Status download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override {
    return host_.download(dst, src, offset, bytes);
  }
  collage::Status copy(const Buffer& dst, std::size_t d, const Buffer& src, std::size_t s, std::size_t bytes) override {
    if (recording_) {
      tape_.push_back([this, dst, d, src, s, bytes] { (void)host_.copy(dst, d, src, s, bytes); });
      return collage::Status::success();
    }
    return host_.copy(dst, d, src, s, bytes);
  }
  collage::Status synchronize() override { return collage::Status::success(); }
  /// Device time: `replay_seconds` per recording replayed and `launch_seconds` per kernel run
  /// inside `region` when either is set, else the default (wall clock).
  collage::Result<double> time_seconds(const std::function<collage::Status()>& region) override {
    ++timed;
    if (replay_seconds <= 0 && launch_seconds <= 0) return Device::time_seconds(region);
    const int replays_before = replays;
    const int runs_before = kernel_runs;
    if (collage::Status st = region(); !st.ok()) return st.error();
    return replay_seconds * (replays - replays_before) + launch_seconds * (kernel_runs - runs_before);
  }

  /// Device time of regions run one after another: `region_seconds` each when set, else the
  /// default (each timed alone).
  collage::Result<std::vector<double>> time_regions(
      const std::vector<std::function<collage::Status()>>& regions) override {
    ++timed_sequences;
    if (region_seconds <= 0) return Device::time_regions(regions);
    for (const auto& region : regions) {
      if (collage::Status st = region(); !st.ok()) return st.error();
    }
    return std::vector<double>(regions.size(), region_seconds);
  }

  collage::Status evict_caches() override {
    ++evictions;
    return collage::Status::success();
  }
  std::size_t cache_bytes() const override { return cache; }
  collage::Status touch(const void*, std::size_t) override {
    ++touches;
    if (refuse_touch) return collage::Error{collage::ErrorCode::io, "tape: cannot touch"};
    return collage::Status::success();
  }

  bool can_record() const override { return true; }
  collage::Status begin_recording() override {
    ++begun;
    recording_ = true;
    tape_.clear();
    return collage::Status::success();
  }
  collage::Result<std::unique_ptr<Recording>> end_recording() override {
    recording_ = false;
    if (refuse) return collage::Error{collage::ErrorCode::invalid_argument, "tape: recording refused"};
    return std::unique_ptr<Recording>(std::make_unique<Tape>(std::move(tape_), replays));
  }

  bool recording() const { return recording_; }
  /// Runs a kernel's `work`, or records it while recording.
  void launch(std::function<void()> work) {
    auto counted = [this, work = std::move(work)] {
      ++kernel_runs;
      work();
    };
    if (recording_) {
      tape_.push_back(std::move(counted));
    } else {
      counted();
    }
  }

  bool refuse = false;
  bool refuse_touch = false;
  double replay_seconds = 0;
  double launch_seconds = 0;
  double region_seconds = 0;
  std::size_t cache = 0;
  int kernel_runs = 0;
  int touches = 0;
  int timed_sequences = 0;
  int begun = 0;
  int replays = 0;
  int timed = 0;
  int evictions = 0;

 private:
  class Tape final : public Recording {
   public:
    Tape(std::vector<std::function<void()>> work, int& replays) : work_(std::move(work)), replays_(replays) {}
    bool current() const override { return true; }
    collage::Status replay() override {
      ++replays_;
      for (const auto& w : work_) w();
      return collage::Status::success();
    }

   private:
    std::vector<std::function<void()>> work_;
    int& replays_;
  };

  CpuDevice host_;
  bool recording_ = false;
  std::vector<std::function<void()>> tape_;
};

/// The reference backend on a TapeDevice: its kernels launch through the device.
class TapeBackend final : public Backend {
 public:
  explicit TapeBackend(std::string name) : Backend(name, DeviceKind::cuda), inner_(make_reference_backend(name, 4, DeviceKind::cuda)) {}
  collage::PartitionSpec<Graph> spec() const override { return inner_->spec(); }

 private:
  class TapeKernel final : public Kernel {
   public:
    TapeKernel(std::unique_ptr<Kernel> inner, TapeDevice& device) : inner_(std::move(inner)), device_(device) {}
    collage::Status run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs) override {
      device_.launch([this, inputs, outputs] { (void)inner_->run(inputs, outputs); });
      return collage::Status::success();
    }

   private:
    std::shared_ptr<Kernel> inner_;
    TapeDevice& device_;
  };
  collage::Result<std::unique_ptr<Kernel>> do_compile(const Function& function, Device& device) const override {
    auto inner = inner_->compile(function, device);
    if (!inner.ok()) return inner.error();
    return std::unique_ptr<Kernel>(std::make_unique<TapeKernel>(std::move(inner).value(), static_cast<TapeDevice&>(device)));
  }
  std::unique_ptr<Backend> inner_;
};

}  // namespace tc::testing
