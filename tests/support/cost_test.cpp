#include "collage/support/cost.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <random>
#include <sstream>
#include <vector>

#include "common/comma_locale.hpp"

namespace collage {
namespace {

TEST(Cost, Kinds) {
  EXPECT_TRUE(Cost().is_zero());
  EXPECT_TRUE(Cost::zero().is_known());
  EXPECT_TRUE(Cost::value(2.5).is_known());
  EXPECT_DOUBLE_EQ(Cost::value(2.5).raw(), 2.5);
  EXPECT_TRUE(Cost::unknown().is_unknown());
  EXPECT_TRUE(Cost::invalid().is_invalid());
  EXPECT_FALSE(Cost::unknown().is_known());
  EXPECT_FALSE(Cost::invalid().is_known());
}

TEST(Cost, ValueRejectsNegativeAndNonFinite) {
  EXPECT_TRUE(Cost::value(-1.0).is_invalid());
  EXPECT_TRUE(Cost::value(-std::numeric_limits<double>::infinity()).is_invalid());
  EXPECT_TRUE(Cost::value(std::numeric_limits<double>::infinity()).is_invalid());
  EXPECT_TRUE(Cost::value(std::nan("")).is_unknown());
}

TEST(Cost, Addition) {
  EXPECT_EQ(Cost::value(1) + Cost::value(2), Cost::value(3));
  EXPECT_EQ(Cost::value(1) + Cost::unknown(), Cost::unknown());
  EXPECT_EQ(Cost::unknown() + Cost::unknown(), Cost::unknown());
  EXPECT_EQ(Cost::unknown() + Cost::invalid(), Cost::invalid());
  EXPECT_EQ(Cost::value(1) + Cost::invalid(), Cost::invalid());
  EXPECT_TRUE((Cost::value(1e308) + Cost::value(1e308)).is_invalid());  // overflow
  Cost c;
  c += Cost::value(4);
  c += Cost::value(0.5);
  EXPECT_EQ(c, Cost::value(4.5));
}

TEST(Cost, OrderKnownThenUnknownThenInvalid) {
  EXPECT_LT(Cost::value(1), Cost::value(2));
  EXPECT_LT(Cost::value(1e300), Cost::unknown());
  EXPECT_LT(Cost::unknown(), Cost::invalid());
  EXPECT_EQ(Cost::unknown(), Cost::unknown());
  EXPECT_FALSE(Cost::unknown() < Cost::unknown());
  EXPECT_LE(Cost::unknown(), Cost::unknown());
  EXPECT_GT(Cost::invalid(), Cost::value(5));
  EXPECT_NE(Cost::unknown(), Cost::value(0));
}

std::vector<Cost> sample_costs(std::mt19937_64& rng, int n) {
  std::vector<Cost> costs;
  for (int i = 0; i < n; ++i) {
    switch (rng() % 5) {
      case 0: costs.push_back(Cost::unknown()); break;
      case 1: costs.push_back(Cost::invalid()); break;
      default: costs.push_back(Cost::value(static_cast<double>(rng() % 10))); break;
    }
  }
  return costs;
}

TEST(Cost, StrictTotalOrderAxioms) {
  std::mt19937_64 rng(3);
  std::vector<Cost> costs = sample_costs(rng, 60);
  for (Cost a : costs) {
    EXPECT_FALSE(a < a);
    for (Cost b : costs) {
      // Exactly one of a<b, b<a, a==b.
      int relations = (a < b) + (b < a) + (a == b);
      EXPECT_EQ(relations, 1) << a << " vs " << b;
      for (Cost c : costs) {
        if (a < b && b < c) {
          EXPECT_LT(a, c);
        }
        if (a <= b) {  // addition is monotone
          EXPECT_LE(a + c, b + c) << a << " " << b << " " << c;
        }
      }
    }
  }
}

TEST(Cost, AdditionIsCommutativeAndAssociative) {
  std::mt19937_64 rng(5);
  std::vector<Cost> costs = sample_costs(rng, 25);
  for (Cost a : costs) {
    for (Cost b : costs) {
      EXPECT_EQ(a + b, b + a);
      for (Cost c : costs) EXPECT_EQ((a + b) + c, a + (b + c));
    }
  }
}

TEST(Cost, PriorityQueueStaysValidWithUnknowns) {
  std::mt19937_64 rng(9);
  std::vector<Cost> costs = sample_costs(rng, 500);
  std::priority_queue<Cost, std::vector<Cost>, std::greater<Cost>> queue(costs.begin(), costs.end());
  std::vector<Cost> popped;
  while (!queue.empty()) {
    popped.push_back(queue.top());
    queue.pop();
  }
  EXPECT_TRUE(std::is_sorted(popped.begin(), popped.end()));
  std::sort(costs.begin(), costs.end());
  EXPECT_EQ(popped, costs);
}

TEST(Cost, Printing) {
  EXPECT_EQ(Cost::value(12.5).to_string(), "12.5");
  EXPECT_EQ(Cost::unknown().to_string(), "unknown");
  EXPECT_EQ(Cost::invalid().to_string(), "invalid");
  // 12 significant digits, as "%.12g" in the C locale.
  EXPECT_EQ(Cost::value(2.1000000000000001).to_string(), "2.1");
  EXPECT_EQ(Cost::value(1.0 / 3.0).to_string(), "0.333333333333");
  EXPECT_EQ(Cost::value(1234567.0).to_string(), "1234567");
  EXPECT_EQ(Cost::value(1e20).to_string(), "1e+20");
  EXPECT_EQ(Cost::value(0.0).to_string(), "0");
}

TEST(Cost, PrintsTheSameUnderACommaLocale) {
  testing_ir::CommaLocale comma;
  if (!comma.active()) GTEST_SKIP() << testing_ir::CommaLocale::missing();
  EXPECT_EQ(Cost::value(12.5).to_string(), "12.5");
  EXPECT_EQ(Cost::value(1234567.0).to_string(), "1234567");
  std::ostringstream os;
  os << Cost::value(0.25);
  EXPECT_EQ(os.str(), "0.25");
}

}  // namespace
}  // namespace collage
