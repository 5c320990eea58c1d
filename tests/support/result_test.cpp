#include "collage/support/result.hpp"

#include <gtest/gtest.h>

#include <string>

namespace collage {
namespace {

TEST(ErrorCode, EveryCodeHasItsOwnName) {
  std::string seen;
  for (int k = 0; k <= static_cast<int>(ErrorCode::internal); ++k) {
    const std::string name(to_string(static_cast<ErrorCode>(k)));
    EXPECT_EQ(seen.find("|" + name + "|"), std::string::npos) << name;
    seen += "|" + name + "|";
  }
  EXPECT_EQ(to_string(ErrorCode::search_gave_up), "search_gave_up");
}

TEST(Result, CarriesTheErrorsCodeAndMessage) {
  Result<int> r = Error{ErrorCode::parse, "line 3: expected a number"};
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::parse);
  EXPECT_EQ(r.error().message, "line 3: expected a number");
  Result<int> v = 4;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 4);
}

TEST(Status, KeepsTheWholeError) {
  Status s = Error{ErrorCode::io, "cannot write 'x'"};
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::io);
  EXPECT_EQ(s.message(), "cannot write 'x'");
  EXPECT_TRUE(Status::success().ok());
  EXPECT_TRUE(Status::success().message().empty());
}

}  // namespace
}  // namespace collage
