#pragma once

// Helpers for the collage tool's tests: a scratch directory per test, files, and running the
// `collage` binary with its exit status, stdout and stderr.

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace collage_cli_test {

namespace fs = std::filesystem;

/// The example files under examples/mnist.
inline std::string example(const std::string& name) {
  return std::string(COLLAGE_SOURCE_DIR) + "/examples/mnist/" + name;
}

/// A fresh directory for the running test (wiped first).
inline fs::path scratch_dir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  fs::path dir = fs::path(COLLAGE_CLI_TEST_WORK_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// What one run of the binary did.
struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

/// Runs `collage args...` in `dir`, stdin from /dev/null, for at most 300 seconds.
inline CliRun run_cli(const fs::path& dir, const std::vector<std::string>& args) {
  // `timeout` turns a hang into a failure (status 124) instead of a stuck test.
  std::string command = "cd " + shell_quote(dir.string()) + " && timeout 300 " + shell_quote(COLLAGE_CLI_PATH);
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " </dev/null >stdout.txt 2>stderr.txt";
  const int raw = std::system(command.c_str());
  CliRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_text(dir / "stdout.txt");
  r.err = read_text(dir / "stderr.txt");
  return r;
}

/// Whether `text` is exactly one line (ending in a newline).
inline bool one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

}  // namespace collage_cli_test
