#pragma once

/// \file
/// ProgressBar: a progress line on a terminal's stderr, shown only once work has run longer
/// than a second.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "collage/cost/budgeted_oracle.hpp"

namespace collage::cli {

/// Draws "collage: PHASE [#####.....] DONE/TOTAL  ELAPSED s" (a spinner for a phase without steps)
/// on `out` every 100 ms once a second has passed, from a thread of its own (so the line moves
/// even while one phase runs long). The line is erased when the bar stops. A disabled bar does
/// nothing.
class ProgressBar {
 public:
  ProgressBar(bool enabled, std::FILE* out) : enabled_(enabled), out_(out), start_(Clock::now()) {
    if (enabled_) thread_ = std::thread([this] { loop(); });
  }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { stop(); }

  /// Records the current phase and how far it is.
  void update(std::string_view phase, std::size_t done, std::size_t total) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = std::string(phase);
    done_ = done;
    total_ = total;
  }

  /// A callback for PartitionerOptions::progress (empty when disabled).
  ProgressCallback callback() {
    if (!enabled_) return {};
    return [this](std::string_view phase, std::size_t done, std::size_t total) { update(phase, done, total); };
  }

  /// Stops drawing and erases the line.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    if (drawn_) {
      std::fputs("\r\033[K", out_);
      std::fflush(out_);
    }
  }

 private:
  using Clock = std::chrono::steady_clock;

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      if (stopping_) break;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
      if (elapsed < 1.0) continue;
      draw(elapsed);
    }
  }

  void draw(double elapsed) {
    constexpr std::size_t kWidth = 30;
    std::string bar;
    if (total_ > 1) {
      const std::size_t filled = done_ >= total_ ? kWidth : done_ * kWidth / total_;
      bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " + std::to_string(done_) + "/" +
            std::to_string(total_);
    } else {
      static const char kSpin[] = "|/-\\";
      bar = std::string(1, kSpin[spin_++ % 4]);
    }
    std::fprintf(out_, "\r\033[Kcollage: %-10s %s  %.1f s", phase_.c_str(), bar.c_str(), elapsed);
    std::fflush(out_);
    drawn_ = true;
  }

  bool enabled_;
  std::FILE* out_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool stopping_ = false;
  bool drawn_ = false;
  std::string phase_ = "reading";
  std::size_t done_ = 0;
  std::size_t total_ = 0;
  std::size_t spin_ = 0;
};

}  // namespace collage::cli
