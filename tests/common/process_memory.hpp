#pragma once

// The process's resident memory from /proc/self (Linux), for memory bounds in tests and peak
// memory in benchmarks, and its page faults.

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace testing_ir {

/// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"), or -1 where there is none.
inline long proc_status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size() + 1, field + ":") == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

/// Resets the peak resident set size (VmHWM) to the current one (Linux >= 4.0); false where
/// unsupported.
inline bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

/// The peak resident set size in MiB (0 where unknown).
inline double peak_rss_mib() {
  const long kib = proc_status_kib("VmHWM");
  return kib < 0 ? 0.0 : static_cast<double>(kib) / 1024.0;
}

/// The minor page faults the process has taken so far (first touches of fresh memory).
inline long minor_page_faults() {
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_minflt : 0;
}

}  // namespace testing_ir
