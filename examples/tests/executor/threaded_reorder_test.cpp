#include "executor/threaded_reorder.hpp"

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/cpu_threads.hpp"

namespace tc {
namespace {

TEST(ThreadedReorder, ALargeTensorIsReorderedOnSeveralThreadsAsOnOneAndASmallOneOnOneThread) {
  for (const Shape& shape : {Shape{1, 96, 56, 56}, Shape{1, 3, 4, 4}}) {
    const bool small = numel(shape) < 1000;
    std::vector<float> plain(static_cast<std::size_t>(numel(shape)));
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : plain) v = dist(rng);
    for (Layout layout : {Layout::nChw8c, Layout::nChw16c}) {
      std::vector<float> want(stored_floats(shape, layout)), got(want.size(), 7.0f), back(plain.size());
      reorder(plain.data(), Layout::plain, want.data(), layout, shape);
      const std::size_t runs_before = parallel_runs();
      reorder_on_threads(plain.data(), Layout::plain, got.data(), layout, shape, 2);
      reorder_on_threads(got.data(), layout, back.data(), Layout::plain, shape, 2);
      EXPECT_EQ(got, want) << to_string(shape) << " " << to_string(layout);
      EXPECT_EQ(back, plain) << to_string(shape) << " " << to_string(layout);
      const std::size_t on_threads = parallel_runs() - runs_before;
      if (small) {
        EXPECT_EQ(on_threads, 0u) << "a 48-float tensor is not worth a second thread";
      } else if (cpu_threads_available()) {
        EXPECT_EQ(on_threads, 2u) << to_string(layout);
      }
    }
  }
}

}  // namespace
}  // namespace tc
