#include "collage/support/chunked_vector.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace collage::detail {
namespace {

TEST(ChunkedVector, ElementsKeepTheirAddressesAsItGrows) {
  ChunkedVector<std::string, 2> v;  // chunks of 4
  EXPECT_TRUE(v.empty());
  v.push_back("0");
  const std::string* first = &v[0];
  std::vector<const std::string*> addresses;
  for (int k = 1; k < 19; ++k) {
    v.push_back(std::to_string(k));
    addresses.push_back(&v.back());
  }
  EXPECT_EQ(v.size(), 19u);
  EXPECT_EQ(&v[0], first);
  for (std::size_t k = 1; k < v.size(); ++k) {
    EXPECT_EQ(v[k], std::to_string(k));
    EXPECT_EQ(&v[k], addresses[k - 1]);
  }
  const auto& read_only = v;
  EXPECT_EQ(read_only[18], "18");
}

}  // namespace
}  // namespace collage::detail
