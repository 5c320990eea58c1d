#include "runtime/cpu_threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime/cpu_state.hpp"

namespace tc {
namespace {

TEST(RunParts, RunsEveryPartOnceOnThreadsOfItsOwnAndWaitsForThem) {
  for (int parts : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(parts));
    std::mutex mutex;
    std::set<std::thread::id> threads;
    const std::size_t before = parallel_runs();
    parallel_parts(parts, [&](int part) {
      runs[static_cast<std::size_t>(part)].fetch_add(1);
      // Long enough that a team's threads overlap.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
    for (int part = 0; part < parts; ++part) EXPECT_EQ(runs[static_cast<std::size_t>(part)].load(), 1) << part;
    if (parts == 1 || !cpu_threads_available()) {
      EXPECT_EQ(threads.size(), 1u);
      EXPECT_EQ(parallel_runs(), before);
    } else {
      EXPECT_EQ(threads.size(), static_cast<std::size_t>(parts));
      EXPECT_EQ(parallel_runs(), before + 1);
    }
  }
}

TEST(RunParts, EveryThreadHandlesDenormalsAsTheCallerDoesAndKeepsItsOwnModeAfter) {
#if defined(__x86_64__) || defined(__i386__)
  constexpr int kParts = 4;
  std::atomic<int> flushed{0};
  auto count_flushed = [&](int) { flushed += denormals_flushed() ? 1 : 0; };
  {
    const DenormalsFlushed flush;
    parallel_parts(kParts, count_flushed);
  }
  EXPECT_EQ(flushed.load(), kParts);
  flushed = 0;
  parallel_parts(kParts, count_flushed);
  EXPECT_EQ(flushed.load(), 0);
#else
  GTEST_SKIP() << "denormal flushing is x86 only";
#endif
}

TEST(Share, SplitsARangeInOrderInWholeUnitsWithoutGapsOrOverlaps) {
  for (std::int64_t n : {0, 1, 5, 31, 32, 33, 100, 1000}) {
    for (std::int64_t unit : {1, 8, 32}) {
      for (int parts = 1; parts <= 5; ++parts) {
        std::int64_t next = 0;
        for (int part = 0; part < parts; ++part) {
          const auto [begin, end] = share(n, unit, part, parts);
          EXPECT_EQ(begin, next) << n << " " << unit << " " << part << "/" << parts;
          EXPECT_LE(begin, end);
          if (end < n) {
            EXPECT_EQ(end % unit, 0);
          }
          next = end;
        }
        EXPECT_EQ(next, n);
      }
    }
  }
}

TEST(PartsFor, IsOneForSmallWorkAndAtMostTheThreads) {
  EXPECT_EQ(parts_for(10, 100, 4), 1);
  EXPECT_EQ(parts_for(250, 100, 4), 2);
  EXPECT_EQ(parts_for(1'000'000, 100, 4), 4);
  EXPECT_EQ(parts_for(1'000'000, 100, 0), 1);
}

}  // namespace
}  // namespace tc
