#include "tensor/compare.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace tc {
namespace {

using Floats = std::vector<float>;

TEST(AllClose, WithinRelativeAndAbsoluteTolerance) {
  const Tensor expected({2, 2}, Floats{1, 100, 0, -2});
  std::string worst;
  EXPECT_TRUE(all_close(Tensor({2, 2}, Floats{1.0005f, 100.05f, 1e-5f, -2}), expected, 1e-3, 1e-4, &worst)) << worst;
  EXPECT_NE(worst.find("0 of 4 elements differ"), std::string::npos) << worst;
  EXPECT_FALSE(all_close(Tensor({2, 2}, Floats{1, 100.2f, 0, -2}), expected, 1e-3, 1e-4, &worst));
  EXPECT_NE(worst.find("1 of 4 elements differ; worst at 1 [0,1]: 100.2 vs expected 100"), std::string::npos) << worst;
}

TEST(AllClose, NamesTheWorstElementByMultiIndex) {
  const Tensor expected({2, 3}, Floats{0, 0, 0, 0, 0, 0});
  std::string worst;
  EXPECT_FALSE(all_close(Tensor({2, 3}, Floats{0, 0.5f, 0, 0, 0, -3}), expected, 0, 0.1, &worst));
  EXPECT_NE(worst.find("2 of 6 elements differ; worst at 5 [1,2]: -3 vs expected 0"), std::string::npos) << worst;
}

TEST(AllClose, NansMatchNansAndInfinitiesOnlyThemselves) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(all_close(Tensor({2}, Floats{nan, inf}), Tensor({2}, Floats{nan, inf}), 1e-3, 1e-7));
  EXPECT_FALSE(all_close(Tensor({1}, Floats{nan}), Tensor({1}, Floats{0}), 1e-3, 1e-7));
  EXPECT_FALSE(all_close(Tensor({1}, Floats{1}), Tensor({1}, Floats{nan}), 1e-3, 1e-7));
  EXPECT_FALSE(all_close(Tensor({1}, Floats{-inf}), Tensor({1}, Floats{inf}), 1e-3, 1e-7));
  EXPECT_FALSE(all_close(Tensor({1}, Floats{1e30f}), Tensor({1}, Floats{inf}), 1e-3, 1e-7));
}

TEST(AllClose, ShapeMismatchIsNamed) {
  std::string worst;
  EXPECT_FALSE(all_close(Tensor({2, 3}), Tensor({3, 2}), 1e-3, 1e-7, &worst));
  EXPECT_EQ(worst, "shape [2,3] (6 elements) vs expected [3,2] (6 elements)");
  Tensor broken({2});
  broken.data.push_back(0);
  EXPECT_FALSE(all_close(broken, Tensor({2}), 1e-3, 1e-7));
  EXPECT_TRUE(all_close(Tensor({0}), Tensor({0}), 0, 0, &worst));
  EXPECT_EQ(worst, "no elements");
}

}  // namespace
}  // namespace tc
