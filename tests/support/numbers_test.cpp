#include "collage/support/numbers.hpp"

#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace collage {
namespace {

TEST(Numbers, ShortestFormReadsBackExactly) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(0.0, 10.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int k = 0; k < 2000; ++k) {
    const double v = std::ldexp(mantissa(rng), exponent(rng));
    auto back = parse_double(format_double(v));
    ASSERT_TRUE(back.has_value()) << format_double(v);
    EXPECT_EQ(*back, v);
  }
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(2.5), "2.5");
}

TEST(Numbers, SignificantDigitsRoundLikePrintfG) {
  EXPECT_EQ(format_double(0.1 + 0.2, 12), "0.3");
  EXPECT_EQ(format_double(29.5, 12), "29.5");
  EXPECT_EQ(format_double(1e20, 12), "1e+20");
  EXPECT_EQ(format_double(1234567.0, 3), "1.23e+06");
}

TEST(Numbers, ParseRejectsWhatIsNotExactlyANumber) {
  for (const char* bad : {"", " 1", "1 ", "+1", "1.5x", "x", "1,5", "--1", "0x10"}) {
    EXPECT_FALSE(parse_double(bad).has_value()) << "'" << bad << "'";
  }
  EXPECT_EQ(parse_double("-2.25"), -2.25);
  EXPECT_EQ(parse_double("1e3"), 1000.0);
  EXPECT_FALSE(parse_double("1e999").has_value());
  EXPECT_TRUE(std::isnan(*parse_double("nan")));
}

TEST(Numbers, IndexesAreDigitsOnly) {
  EXPECT_EQ(parse_index("42"), std::size_t{42});
  for (const char* bad : {"", "-1", "+1", "1.0", "1e3", "nan", "18446744073709551616", " 3"}) {
    EXPECT_FALSE(parse_index(bad).has_value()) << "'" << bad << "'";
  }
  EXPECT_FALSE(parse_index("11", 10).has_value());
  EXPECT_EQ(parse_index("10", 10), std::size_t{10});
}

TEST(Numbers, TheProcessLocaleChangesNothing) {
  // A locale whose decimal point is ',' when the machine has one; the C locale otherwise.
  const char* previous = std::setlocale(LC_ALL, nullptr);
  const std::string saved = previous ? previous : "C";
  const bool comma = std::setlocale(LC_ALL, "de_DE.UTF-8") != nullptr || std::setlocale(LC_ALL, "fr_FR.UTF-8") != nullptr;
  EXPECT_EQ(format_double(1.5), "1.5");
  EXPECT_EQ(format_double(1.5, 12), "1.5");
  EXPECT_EQ(parse_double("1.5"), 1.5);
  EXPECT_FALSE(parse_double("1,5").has_value());
  std::setlocale(LC_ALL, saved.c_str());
  if (!comma) GTEST_SKIP() << "no comma-decimal locale installed (de_DE/fr_FR); checked under the C locale only";
}

}  // namespace
}  // namespace collage
