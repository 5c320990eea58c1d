#pragma once

/// \file
/// ProgressReporter: a progress line for the partitioner's progress callback
/// (PartitionerOptions::progress), redrawn in place on a terminal or printed as separate lines
/// to a file. Standard library only.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace collage {

/// How a ProgressReporter shows progress.
struct ProgressOptions {
  /// Where the line goes; nothing is written when null.
  std::FILE* out = nullptr;
  /// Redraw one line in place ("\r" and erase-line) rather than printing a line per report.
  bool terminal = false;
  /// Written before each line, e.g. "collage: ".
  std::string prefix;
  /// Only this phase is shown (every phase when empty).
  std::string only_phase;
  /// Nothing is shown before this many seconds have passed.
  double delay_s = 0;
  /// Off a terminal: at most one line per this many seconds, besides the first line and the line
  /// that ends a phase.
  double line_interval_s = 10;
  /// Also redraw every this many milliseconds from a thread of its own, so that the line moves
  /// (a spinner for a phase without steps) while one step runs long; no thread when 0.
  unsigned redraw_ms = 0;
  /// Add an estimate of the seconds left ("~12 s left"), from the rate so far.
  bool eta = false;
  /// When stopped, erase the line (rather than end it with a line feed).
  bool erase_on_stop = false;
};

/// "[#####.........] 3/10": `done` of `total` steps as a bar of `width` characters and the
/// counts.
inline std::string progress_bar(std::size_t done, std::size_t total, std::size_t width = 30) {
  const std::size_t filled = total == 0 || done >= total ? width : done * width / total;
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + std::to_string(done) + "/" +
         std::to_string(total);
}

/// Shows the progress the partitioner reports: "PREFIX PHASE [####....] DONE/TOTAL  ELAPSED s"
/// (with "~N s left" when asked for; a spinner in place of the bar for a phase without steps).
/// Thread-safe: the callback may be called from the oracle's threads.
class ProgressReporter {
 public:
  explicit ProgressReporter(ProgressOptions options) : options_(std::move(options)), start_(Clock::now()) {
    if (options_.out != nullptr && options_.redraw_ms > 0) thread_ = std::thread([this] { loop(); });
  }
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;
  ~ProgressReporter() { stop(); }

  /// Whether anything is ever shown.
  bool enabled() const { return options_.out != nullptr; }

  /// Records that `phase` has done `done` of `total` steps, and shows it when due.
  void update(std::string_view phase, std::size_t done, std::size_t total) {
    if (!enabled()) return;
    if (!options_.only_phase.empty() && phase != options_.only_phase) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    phase_ = std::string(phase);
    done_ = done;
    total_ = total;
    const Clock::time_point now = Clock::now();
    if (!options_.terminal && drawn_ && done != total && now - last_line_ < seconds(options_.line_interval_s)) return;
    draw(now);
  }

  /// A callback for PartitionerOptions::progress (empty when nothing is shown). The reporter must
  /// outlive its use.
  std::function<void(std::string_view, std::size_t, std::size_t)> callback() {
    if (!enabled()) return {};
    return [this](std::string_view phase, std::size_t done, std::size_t total) { update(phase, done, total); };
  }

  /// Stops showing progress: erases the line or ends it (ProgressOptions::erase_on_stop).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (drawn_ && options_.terminal) {
      std::fputs(options_.erase_on_stop ? "\r\033[K" : "\n", options_.out);
      std::fflush(options_.out);
    }
  }

 private:
  using Clock = std::chrono::steady_clock;

  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopped_) {
      wake_.wait_for(lock, std::chrono::milliseconds(options_.redraw_ms));
      if (!stopped_ && !phase_.empty()) draw(Clock::now());
    }
  }

  /// Draws the line; the mutex is held.
  void draw(Clock::time_point now) {
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < options_.delay_s) return;
    last_line_ = now;
    std::string line = options_.terminal ? "\r\033[K" : "";
    line += options_.prefix + phase_;
    if (phase_.size() < 10) line.append(10 - phase_.size(), ' ');
    if (total_ > 1) {
      line += " " + progress_bar(done_, total_);
    } else {
      static const char kSpin[] = "|/-\\";
      line += ' ';
      line += kSpin[spin_++ % 4];
    }
    char number[64];
    std::snprintf(number, sizeof number, "  %.1f s", elapsed);
    line += number;
    if (options_.eta && total_ > 1 && done_ > 0 && done_ < total_) {
      const double left = elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_);
      std::snprintf(number, sizeof number, ", ~%.0f s left", left);
      line += number;
    }
    if (!options_.terminal) line += '\n';
    std::fputs(line.c_str(), options_.out);
    std::fflush(options_.out);
    drawn_ = true;
  }

  ProgressOptions options_;
  Clock::time_point start_;
  Clock::time_point last_line_{};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool stopped_ = false;
  bool drawn_ = false;
  std::string phase_;
  std::size_t done_ = 0;
  std::size_t total_ = 0;
  std::size_t spin_ = 0;
};

}  // namespace collage
