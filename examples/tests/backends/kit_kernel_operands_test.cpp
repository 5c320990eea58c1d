#include "backends/kit/kernel_operands.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/cpu_device.hpp"
#include "tests/support/graph_builder.hpp"

namespace tc {
namespace {

using testing::GraphBuilder;

/// Host memory that calls itself a CUDA device: what KernelOperands does for a device other than
/// the CPU, seen from the host.
class HostAsCuda final : public Device {
 public:
  DeviceKind kind() const override { return DeviceKind::cuda; }
  std::string name() const override { return "host as cuda"; }
  bool available() const override { return true; }
  collage::Result<Buffer> allocate(std::size_t bytes) override { return host_.allocate(bytes); }
  void release(Buffer buffer) override { host_.release(buffer); }
  collage::Status upload(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override {
    ++uploads;
    return host_.upload(dst, offset, src, bytes);
  }
  collage::Status download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) override {
    return host_.download(dst, src, offset, bytes);
  }
  collage::Status copy(const Buffer& dst, std::size_t dst_offset, const Buffer& src, std::size_t src_offset,
                       std::size_t bytes) override {
    return host_.copy(dst, dst_offset, src, src_offset, bytes);
  }
  collage::Status synchronize() override { return collage::Status::success(); }

  int uploads = 0;

 private:
  CpuDevice host_;
};

/// x [2, 3] times a constant w [3, 2], plus an input y [2, 2]: one call.
struct Product {
  Graph graph;
  int x, w, y, mm, sum;
};

Product product() {
  GraphBuilder b;
  Product p{};
  p.x = b.input({2, 3}, "x");
  p.w = b.constant(Tensor({3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  p.y = b.input({2, 2}, "y");
  p.mm = b.op(Op::matmul, {p.x, p.w});
  p.sum = b.op(Op::add, {p.mm, p.y});
  p.graph = b.done(p.sum);
  return p;
}

TEST(KernelOperands, InputsByPositionConstantsUploadedOnce) {
  const Product p = product();
  const Function f = whole_model_function(p.graph);
  HostAsCuda device;
  collage::Result<KernelOperands> operands =
      KernelOperands::bind(f, {LibraryCall{"", {p.mm, p.sum}}}, {p.w, p.y, -1, p.x, p.w}, device);
  ASSERT_TRUE(operands.ok()) << operands.error().message;
  EXPECT_EQ(device.uploads, 1);
  const float xs[6] = {}, ys[4] = {};
  float out[4];
  const std::vector<const float*> inputs{xs, ys};
  const std::vector<float*> outputs{out};
  EXPECT_EQ(operands->address(p.x, inputs, outputs), xs);
  EXPECT_EQ(operands->address(p.y, inputs, outputs), ys);
  EXPECT_EQ(operands->address(p.sum, inputs, outputs), out);
  EXPECT_EQ(operands->address(-1, inputs, outputs), nullptr);
  const float* wd = operands->address(p.w, inputs, outputs);
  ASSERT_NE(wd, nullptr);
  EXPECT_EQ(std::vector<float>(wd, wd + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // The upload is the device's copy, not the graph's tensor; the host value stays at hand.
  EXPECT_NE(wd, p.graph.node(p.w).value->data.data());
  EXPECT_TRUE(operands->is_constant(p.w));
  EXPECT_EQ(operands->constant(p.w).data, p.graph.node(p.w).value->data);
  EXPECT_TRUE(operands->check_buffers(inputs, outputs, "test").ok());
  collage::Status wrong = operands->check_buffers({xs}, outputs, "test");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(), "test: expected 2 inputs and 1 outputs, got 1 and 1");
}

TEST(KernelOperands, ConstantsAreReadInPlaceOnTheCpu) {
  const Product p = product();
  CpuDevice cpu;
  collage::Result<KernelOperands> operands =
      KernelOperands::bind(whole_model_function(p.graph), {LibraryCall{"", {p.mm, p.sum}}}, {p.w}, cpu);
  ASSERT_TRUE(operands.ok()) << operands.error().message;
  EXPECT_EQ(operands->address(p.w, {}, {}), p.graph.node(p.w).value->data.data());
}

TEST(KernelOperands, ValuesBetweenCallsGetScratchAndUnwrittenOutputsAreCopied) {
  GraphBuilder b;
  const int x = b.input({4}, "x");
  const int r = b.op(Op::relu, {x});
  const int s = b.op(Op::sigmoid, {r});
  const int c = b.constant(Tensor({2}, std::vector<float>{7, 8}));
  const Graph g = b.done({s, x, s, c});
  CpuDevice cpu;
  const std::vector<LibraryCall> calls = {LibraryCall{"", {r}}, LibraryCall{"", {s}}};
  collage::Result<KernelOperands> operands = KernelOperands::bind(whole_model_function(g), calls, {x, r}, cpu);
  ASSERT_TRUE(operands.ok()) << operands.error().message;
  const float in[4] = {1, 2, 3, 4};
  float first[4] = {}, input[4] = {}, again[4] = {}, constant[2] = {};
  const std::vector<const float*> inputs{in};
  const std::vector<float*> outputs{first, input, again, constant};
  float* scratch = operands->address(r, inputs, outputs);
  ASSERT_NE(scratch, nullptr);
  EXPECT_NE(scratch, first);
  EXPECT_EQ(operands->address(s, inputs, outputs), first);
  first[0] = 0.5f;
  operands->copy_outputs(inputs, outputs);
  EXPECT_EQ(std::vector<float>(input, input + 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(again[0], 0.5f);
  EXPECT_EQ(std::vector<float>(constant, constant + 2), (std::vector<float>{7, 8}));

  // On another device the host does not copy: an output no call writes is an error.
  HostAsCuda device;
  collage::Result<KernelOperands> elsewhere = KernelOperands::bind(whole_model_function(g), calls, {x, r}, device);
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.error().message.find("is written by no call"), std::string::npos) << elsewhere.error().message;
}

TEST(KernelOperands, AnInnerNodeOfACallIsNotAnOperand) {
  GraphBuilder b;
  const int x = b.input({2}, "x");
  const int r = b.op(Op::relu, {x});
  const int s = b.op(Op::sigmoid, {r});
  const Graph g = b.done(s);
  CpuDevice cpu;
  collage::Result<KernelOperands> operands =
      KernelOperands::bind(whole_model_function(g), {LibraryCall{"", {r, s}}}, {r}, cpu);
  ASSERT_FALSE(operands.ok());
  EXPECT_EQ(operands.error().code, collage::ErrorCode::internal);
}

}  // namespace
}  // namespace tc
