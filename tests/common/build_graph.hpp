#pragma once

// build(ir): the DataflowGraph of a test IR, for tests whose IR is known to be well formed (a
// failure to build is a test failure).

#include <utility>

#include <gtest/gtest.h>

#include "collage/graph/dataflow_graph.hpp"

namespace testing_ir {

template <class G>
collage::DataflowGraph<G> build(const G& ir) {
  auto graph = collage::DataflowGraph<G>::build(ir);
  EXPECT_TRUE(graph.ok());
  return std::move(graph).value();
}

}  // namespace testing_ir
