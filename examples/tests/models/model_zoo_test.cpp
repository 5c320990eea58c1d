// The model zoo: every small model is valid ONNX that the reader takes, and the same seed writes
// the same model.

#include "models/model_zoo.hpp"

#include <gtest/gtest.h>

#include "onnx/reader.hpp"

namespace tc {
namespace {

TEST(ModelZoo, SmallModelsReadBackWithTheirInputsAndOutputs) {
  for (const ZooModel& m : zoo_models()) {
    if (!m.small) continue;
    collage::Result<std::string> bytes = make_zoo_model(m.name);
    ASSERT_TRUE(bytes.ok()) << m.name << ": " << bytes.error().message;
    collage::Result<Graph> g = read_onnx_bytes(*bytes);
    ASSERT_TRUE(g.ok()) << m.name << ": " << g.error().message;
    ASSERT_EQ(g->inputs().size(), 1u) << m.name;
    ASSERT_EQ(g->outputs().size(), 1u) << m.name;
    EXPECT_EQ(g->node(g->inputs()[0]).shape.size(), m.name == "bert-mini" ? 3u : 4u) << m.name;
    EXPECT_EQ(g->node(g->outputs()[0]).shape.front(), 1) << m.name;
  }
}

TEST(ModelZoo, TheSeedDecidesTheWeights) {
  collage::Result<std::string> once = make_zoo_model("mnist", 3);
  collage::Result<std::string> again = make_zoo_model("mnist", 3);
  collage::Result<std::string> other = make_zoo_model("mnist", 4);
  ASSERT_TRUE(once.ok() && again.ok() && other.ok());
  EXPECT_EQ(*once, *again);
  EXPECT_NE(*once, *other);
  EXPECT_EQ(once->size(), other->size());
  EXPECT_FALSE(make_zoo_model("no-such-model").ok());
}

}  // namespace
}  // namespace tc
