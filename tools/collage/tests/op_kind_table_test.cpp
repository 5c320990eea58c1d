#include "op_kind_table.hpp"

#include <gtest/gtest.h>

namespace collage::cli {
namespace {

TEST(OpKindTable, KnowsCommonOpsOfEveryKind) {
  EXPECT_EQ(builtin_op_kind("relu"), OpKind::elemwise);
  EXPECT_EQ(builtin_op_kind("add"), OpKind::broadcast);
  EXPECT_EQ(builtin_op_kind("reshape"), OpKind::injective);
  EXPECT_EQ(builtin_op_kind("sum"), OpKind::reduce);
  EXPECT_EQ(builtin_op_kind("conv2d"), OpKind::anchor);
  EXPECT_EQ(builtin_op_kind("tuple"), OpKind::tuple);
  EXPECT_EQ(builtin_op_kind("softmax"), OpKind::opaque);
}

TEST(OpKindTable, LooksUpADottedNameByItsLastComponent) {
  EXPECT_EQ(builtin_op_kind("nn.conv2d"), OpKind::anchor);
  EXPECT_EQ(builtin_op_kind("my.ns.relu"), OpKind::elemwise);
  EXPECT_EQ(builtin_op_kind("nn.frob"), std::nullopt);
}

TEST(OpKindTable, UnknownOpsHaveNoKind) {
  EXPECT_EQ(builtin_op_kind("frob"), std::nullopt);
  EXPECT_EQ(builtin_op_kind(""), std::nullopt);
  EXPECT_EQ(builtin_op_kind("relu."), std::nullopt);
}

}  // namespace
}  // namespace collage::cli
