#include "collage/support/name.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace collage {
namespace {

TEST(Name, EqualTextsShareOneCopy) {
  const std::string text = "primitive.op_kind_with_a_long_name";
  Name a(text);
  Name b(std::string_view(text).substr(0));
  Name c("primitive.op_kind_with_a_long_name");
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_EQ(&a.str(), &c.str());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, Name("primitive"));
  EXPECT_EQ(Name(), Name(""));
  EXPECT_TRUE(Name().empty());
  EXPECT_EQ(a.size(), text.size());
  EXPECT_STREQ(a.c_str(), text.c_str());
}

TEST(Name, ComparesWithTextEitherWay) {
  const Name n("tvm");
  const std::string s = "tvm";
  const std::string_view v = "tvm";
  EXPECT_TRUE(n == "tvm" && "tvm" == n && n == s && s == n && n == v && v == n);
  EXPECT_TRUE(n != "cudnn" && "cudnn" != n && n != std::string("tvm2") && std::string_view("tv") != n);
  EXPECT_EQ(n.compare(Name("tvm")), 0);
  EXPECT_LT(n.compare(Name("zz")), 0);
  EXPECT_GT(n.compare(Name("cudnn")), 0);
}

TEST(Name, OrdersByTextNotByAddress) {
  // Made in reverse order, so the table's addresses do not follow the text.
  std::vector<Name> names{Name("order.c"), Name("order.b"), Name("order.a")};
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<Name>{Name("order.a"), Name("order.b"), Name("order.c")}));
  std::map<Name, int> by_name{{Name("order.b"), 2}, {Name("order.a"), 1}};
  EXPECT_EQ(by_name.begin()->first, "order.a");
}

TEST(Name, ReadsAsAString) {
  const Name n("cutlass");
  const std::string& ref = n;
  std::string copy = n;
  std::string_view view = n;
  EXPECT_EQ(ref, "cutlass");
  EXPECT_EQ(copy, "cutlass");
  EXPECT_EQ(view, "cutlass");
  EXPECT_EQ(n + ":" + n, "cutlass:cutlass");
  EXPECT_EQ("target " + n, "target cutlass");
  EXPECT_EQ(std::string("[") + n + std::string("]"), "[cutlass]");
  std::ostringstream os;
  os << n;
  EXPECT_EQ(os.str(), "cutlass");
  std::unordered_map<Name, int> counts;
  ++counts[Name("cutlass")];
  ++counts[n];
  EXPECT_EQ(counts.at(n), 2);
  EXPECT_EQ(std::hash<Name>{}(n), std::hash<std::string>{}("cutlass"));
}

TEST(Name, InterningFromManyThreadsGivesOneCopy) {
  std::vector<const std::string*> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&seen, t] {
      for (int k = 0; k < 200; ++k) Name("thread.noise." + std::to_string(k * 8 + static_cast<int>(t)));
      seen[t] = &Name("thread.shared").str();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(*seen[0], "thread.shared");
}

}  // namespace
}  // namespace collage
