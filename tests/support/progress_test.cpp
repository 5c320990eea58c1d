#include "collage/support/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace collage {
namespace {

/// A temporary file for a reporter to write to, and what was written.
struct Sink {
  std::FILE* file = std::tmpfile();
  ~Sink() {
    if (file != nullptr) std::fclose(file);
  }
  std::string text() const {
    std::fflush(file);
    std::rewind(file);
    std::string out;
    for (int ch = std::fgetc(file); ch != EOF; ch = std::fgetc(file)) out += static_cast<char>(ch);
    return out;
  }
  /// Options of a reporter drawing to this file as to a terminal.
  ProgressOptions terminal_options() const {
    ProgressOptions options;
    options.out = file;
    options.terminal = true;
    return options;
  }
};

TEST(Progress, BarShowsTheShareDoneAndTheCounts) {
  EXPECT_EQ(progress_bar(0, 4, 8), "[........] 0/4");
  EXPECT_EQ(progress_bar(1, 4, 8), "[##......] 1/4");
  EXPECT_EQ(progress_bar(5, 4, 8), "[########] 5/4");
}

TEST(Progress, OffATerminalALineAtMostPerIntervalAndAtTheEndOfAPhase) {
  Sink sink;
  ASSERT_NE(sink.file, nullptr);
  ProgressOptions options;
  options.out = sink.file;
  options.prefix = "p: ";
  options.only_phase = "estimate";
  options.line_interval_s = 3600;
  ProgressReporter reporter(options);
  auto callback = reporter.callback();
  ASSERT_TRUE(callback);
  callback("candidates", 1, 2);  // another phase: not shown
  callback("estimate", 1, 4);
  callback("estimate", 2, 4);  // within the interval: not shown
  callback("estimate", 4, 4);
  reporter.stop();
  callback("estimate", 4, 4);  // stopped: not shown
  const std::string text = sink.text();
  EXPECT_EQ(text.rfind("p: estimate   [#######.......................] 1/4  ", 0), 0u) << text;
  EXPECT_NE(text.find("\np: estimate   [##############################] 4/4  "), std::string::npos) << text;
  std::size_t lines = 0;
  for (char ch : text) lines += ch == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 2u) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
}

TEST(Progress, OnATerminalRedrawsInPlaceWithEstimateAndErases) {
  Sink sink;
  ASSERT_NE(sink.file, nullptr);
  ProgressOptions options = sink.terminal_options();
  options.eta = true;
  options.erase_on_stop = true;
  ProgressReporter reporter(options);
  reporter.update("estimate", 1, 4);
  reporter.update("search", 0, 0);
  reporter.stop();
  const std::string text = sink.text();
  EXPECT_EQ(text.rfind("\r\033[Kestimate   [#######", 0), 0u) << text;
  EXPECT_NE(text.find(" s left\r\033[Ksearch     |  "), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K") << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

TEST(Progress, NothingBeforeTheDelayAndNothingWhenDisabled) {
  Sink sink;
  ASSERT_NE(sink.file, nullptr);
  ProgressOptions options = sink.terminal_options();
  options.delay_s = 3600;
  ProgressReporter reporter(options);
  reporter.update("estimate", 1, 4);
  reporter.stop();
  EXPECT_EQ(sink.text(), "");

  ProgressReporter disabled{ProgressOptions{}};
  EXPECT_FALSE(disabled.enabled());
  EXPECT_FALSE(disabled.callback());
  disabled.update("estimate", 1, 4);
}

TEST(Progress, RedrawThreadKeepsTheLineMovingUntilStopped) {
  // Redrawn every millisecond: one update draws once, the thread draws again. The thread needs
  // the CPU to draw, so on a loaded machine the run is repeated with a longer wait (30 ms, then
  // 0.3 s, then 3 s) before the test fails.
  std::size_t draws = 0;
  std::string text;
  for (int wait_ms = 30; wait_ms <= 3000 && draws < 2; wait_ms *= 10) {
    Sink sink;
    ASSERT_NE(sink.file, nullptr);
    ProgressOptions options = sink.terminal_options();
    options.redraw_ms = 1;
    ProgressReporter reporter(options);
    reporter.update("search", 0, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    reporter.stop();
    text = sink.text();
    draws = 0;
    for (std::size_t at = text.find("search"); at != std::string::npos; at = text.find("search", at + 1)) ++draws;
  }
  EXPECT_GE(draws, 2u) << text;
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << text;
}

}  // namespace
}  // namespace collage
