#include "backends/kit/device_operands.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "runtime/cpu_device.hpp"
#include "tensor/shape_inference.hpp"

namespace tc {
namespace {

TEST(DeviceOperands, InputsByPositionConstantsUploadedOnce) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  const int w = g.add_constant("w", Tensor({3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  const int y = g.add_input("y", {2, 2});
  const int mm = *g.add_op(Op::matmul, {x, w});
  g.add_output(*g.add_op(Op::add, {mm, y}));
  ASSERT_TRUE(infer_shapes(g).ok());
  const Function f = whole_model_function(g);
  CpuDevice cpu;
  collage::Result<DeviceOperands> operands = DeviceOperands::bind(f, {w, y, -1, x, w}, cpu, "test");
  ASSERT_TRUE(operands.ok()) << operands.error().message;
  const float xs[6] = {}, ys[4] = {};
  const std::vector<const float*> inputs{xs, ys};
  EXPECT_EQ(operands->address(x, inputs), xs);
  EXPECT_EQ(operands->address(y, inputs), ys);
  EXPECT_EQ(operands->address(-1, inputs), nullptr);
  const float* wd = operands->address(w, inputs);
  ASSERT_NE(wd, nullptr);
  EXPECT_EQ(std::vector<float>(wd, wd + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // The upload is the device's copy, not the graph's tensor.
  EXPECT_NE(wd, g.node(w).value->data.data());
  float out[4];
  EXPECT_TRUE(operands->check_buffers(inputs, {out}, "test").ok());
  collage::Status wrong = operands->check_buffers({xs}, {out}, "test");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(), "test: expected 2 inputs and 1 outputs, got 1 and 1");
}

TEST(DeviceOperands, AnOperatorIsNotAnOperand) {
  Graph g;
  const int x = g.add_input("x", {2});
  const int r = *g.add_op(Op::relu, {x});
  g.add_output(r);
  ASSERT_TRUE(infer_shapes(g).ok());
  CpuDevice cpu;
  collage::Result<DeviceOperands> operands = DeviceOperands::bind(whole_model_function(g), {r}, cpu, "test");
  ASSERT_FALSE(operands.ok());
  EXPECT_EQ(operands.error().code, collage::ErrorCode::internal);
}

}  // namespace
}  // namespace tc
