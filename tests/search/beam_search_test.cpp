#include "collage/search/beam_search.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "collage/search/exact_search.hpp"
#include "common/adjacency_ir.hpp"
#include "common/random_candidates.hpp"

namespace collage {
namespace {

using testing_ir::AdjacencyGraph;

TEST(BeamSearch, NeverBetterThanExactAndCloseToItOnRandomDags) {
  int compared = 0;
  const std::vector<std::size_t> kWidths = {1, 4, 16};
  std::vector<double> beam_gap(kWidths.size(), 0.0);
  testing_ir::for_each_random_problem(2024, 1000, [&](int trial, const DataflowGraph<AdjacencyGraph>&,
                                                      const SearchProblem<AdjacencyGraph>& problem) {
    auto exact = exact_search(problem);
    if (!exact.ok()) return;
    ++compared;
    // Beam search is never better than exact, and always valid when it succeeds.
    for (std::size_t w = 0; w < kWidths.size(); ++w) {
      auto beam = beam_search(problem, {kWidths[w]});
      ASSERT_TRUE(beam.ok()) << "trial " << trial << ": " << beam.error().message;
      EXPECT_GE(beam->effective_total.raw() + 1e-9, exact->effective_total.raw());
      beam_gap[w] += beam->effective_total.raw() / exact->effective_total.raw() - 1.0;
    }
  });
  EXPECT_EQ(compared, 1000);
  // How far beam search is from exact on these graphs, on average, by width.
  for (std::size_t w = 0; w < kWidths.size(); ++w) {
    std::printf("beam width %zu: mean cost %.3f%% above exact\n", kWidths[w], 100 * beam_gap[w] / compared);
  }
  EXPECT_LT(beam_gap[1] / compared, 0.05);
  EXPECT_LE(beam_gap[2], beam_gap[1] + 1e-9);
}

}  // namespace
}  // namespace collage
