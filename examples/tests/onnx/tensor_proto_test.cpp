#include "onnx/tensor_proto.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace tc {
namespace {

/// A TensorProto written by hand in protobuf's wire format: dims, data_type, then `payload`.
std::string tensor_bytes(std::vector<int> dims, int type, const std::string& payload) {
  std::string out;
  for (int d : dims) out += std::string("\x08") + static_cast<char>(d);
  out += std::string("\x10") + static_cast<char>(type);
  return out + payload;
}

std::string raw(const std::string& bytes) { return "\x4a" + std::string(1, static_cast<char>(bytes.size())) + bytes; }

TEST(TensorProto, ReadsRawDataLittleEndian) {
  // float32 1.0 and -2.5: 0x3f800000, 0xc0200000.
  auto t = parse_tensor_proto(tensor_bytes({2}, 1, raw(std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0", 8))));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->type, ElemType::float32);
  EXPECT_EQ(t->shape, (Shape{2}));
  EXPECT_EQ(t->reals, (std::vector<float>{1.0f, -2.5f}));
  // int64 -2 and 258; int8 -1; bool; float16 1.0 and -2; bfloat16 1.0.
  auto i64 = parse_tensor_proto(tensor_bytes({2}, 7, raw(std::string("\xfe\xff\xff\xff\xff\xff\xff\xff\x02\x01\x00\x00\x00\x00\x00\x00", 16))));
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(i64->ints, (std::vector<std::int64_t>{-2, 258}));
  auto i8 = parse_tensor_proto(tensor_bytes({}, 3, raw("\xff")));
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(i8->shape, Shape{});
  EXPECT_EQ(i8->ints, (std::vector<std::int64_t>{-1}));
  auto b = parse_tensor_proto(tensor_bytes({2}, 9, raw(std::string("\x00\x07", 2))));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->ints, (std::vector<std::int64_t>{0, 1}));
  auto half = parse_tensor_proto(tensor_bytes({3}, 10, raw(std::string("\x00\x3c\x00\xc0\x01\x00", 6))));
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->reals[0], 1.0f);
  EXPECT_EQ(half->reals[1], -2.0f);
  EXPECT_EQ(half->reals[2], std::ldexp(1.0f, -24));  // the smallest subnormal
  auto bf = parse_tensor_proto(tensor_bytes({1}, 16, raw(std::string("\x80\x3f", 2))));
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(bf->reals[0], 1.0f);
}

TEST(TensorProto, ReadsTypedFields) {
  // float_data (field 4, packed), int64_data (field 7, packed), int32_data for int32 (field 5).
  auto f = parse_tensor_proto(tensor_bytes({1}, 1, std::string("\x22\x04\x00\x00\x40\x40", 6)));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->reals, (std::vector<float>{3.0f}));
  auto i = parse_tensor_proto(tensor_bytes({2}, 7, std::string("\x3a\x02\x05\x7f", 4)));
  ASSERT_TRUE(i.ok()) << i.error().message;
  EXPECT_EQ(i->ints, (std::vector<std::int64_t>{5, 127}));
  auto i32 = parse_tensor_proto(tensor_bytes({1}, 6, std::string("\x2a\x01\x09", 3)));
  ASSERT_TRUE(i32.ok()) << i32.error().message;
  EXPECT_EQ(i32->ints, (std::vector<std::int64_t>{9}));
}

TEST(TensorProto, RejectsMismatchesExternalDataAndStrings) {
  auto short_raw = parse_tensor_proto(tensor_bytes({2}, 1, raw(std::string(6, '\0'))));
  ASSERT_FALSE(short_raw.ok());
  EXPECT_EQ(short_raw.error().message, "raw_data holds 6 bytes for 2 float32 elements");
  auto few = parse_tensor_proto(tensor_bytes({3}, 7, std::string("\x3a\x01\x05", 3)));
  ASSERT_FALSE(few.ok());
  EXPECT_EQ(few.error().message, "1 stored values for 3 int64 elements of shape [3]");
  // data_location (field 14) = EXTERNAL.
  auto external = parse_tensor_proto(tensor_bytes({1}, 1, std::string("\x70\x01", 2)));
  ASSERT_FALSE(external.ok());
  EXPECT_EQ(external.error().message, "external data is read only for a model's initializers");
  auto strings = parse_tensor_proto(tensor_bytes({1}, 8, ""));
  ASSERT_FALSE(strings.ok());
  EXPECT_EQ(strings.error().message, "element type string is not supported");
  auto huge = parse_tensor_proto(std::string("\x08\xff\xff\xff\xff\x0f\x08\xff\xff\xff\xff\x0f\x10\x01", 14));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("too large"), std::string::npos);
  auto junk = parse_tensor_proto("\xff\xff\xff");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().code, collage::ErrorCode::parse);
}

TEST(TensorProto, FileRoundTrip) {
  const std::string path = ::testing::TempDir() + "/tc_tensor_proto_test.pb";
  OnnxTensor t = from_float32(Tensor({2, 2}, std::vector<float>{1, -0.0f, std::numeric_limits<float>::infinity(), 3.5f}));
  ASSERT_TRUE(write_tensor_file(t, "x", path).ok());
  auto back = read_tensor_file(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->shape, t.shape);
  EXPECT_EQ(back->reals, t.reals);
  EXPECT_TRUE(std::signbit(back->reals[1]));
  OnnxTensor ints;
  ints.type = ElemType::int32;
  ints.shape = {3};
  ints.ints = {-1, 0, 1 << 30};
  ASSERT_TRUE(write_tensor_file(ints, "i", path).ok());
  back = read_tensor_file(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->type, ElemType::int32);
  EXPECT_EQ(back->ints, ints.ints);
  auto as_float = to_float32(*back, "tensor 'i'");
  ASSERT_FALSE(as_float.ok());
  EXPECT_EQ(as_float.error().message, "tensor 'i' is int32, not float32");
  std::remove(path.c_str());
  auto missing = read_tensor_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, collage::ErrorCode::io);
}

}  // namespace
}  // namespace tc
