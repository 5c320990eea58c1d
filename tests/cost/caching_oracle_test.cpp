#include "collage/cost/caching_oracle.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collage/cost/mock_oracle.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// Twelve identical layers: layer_norm -> dense -> bias_add -> relu, plus a residual add.
struct Layers {
  ExprGraph ir;
  std::optional<Graph> graph;
  std::vector<Candidate> blocks;  // {dense, bias_add, relu} per layer
  std::vector<Candidate> relus;   // {relu} per layer

  explicit Layers(int n, const std::string& target = "cutlass") {
    const Expr* h = ir.var("x");
    std::vector<std::vector<const Expr*>> block_nodes;
    for (int l = 0; l < n; ++l) {
      const Expr* d = ir.call("dense", {ir.call("layer_norm", {h}), ir.constant("w")});
      const Expr* b = ir.call("bias_add", {d, ir.constant("b")});
      const Expr* r = ir.call("relu", {b});
      h = ir.call("add", {r, h});
      block_nodes.push_back({d, b, r});
    }
    ir.output(h);
    auto built = Graph::build(ir);
    EXPECT_TRUE(built.ok());
    graph.emplace(std::move(built).value());
    for (const auto& nodes : block_nodes) {
      blocks.push_back(candidate(nodes, target));
      relus.push_back(candidate({nodes[2]}, target));
    }
  }
  Candidate candidate(const std::vector<const Expr*>& nodes, const std::string& target) const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(graph->index_of(e));
    return Candidate{SubGraph(*graph, s), target, "rule"};
  }
};

std::vector<const Candidate*> pointers(const std::vector<Candidate>& cs) {
  std::vector<const Candidate*> out;
  for (const Candidate& c : cs) out.push_back(&c);
  return out;
}

/// Costs a candidate as its number of body nodes, and records what it was asked.
class CountingOracle final : public CostOracle<ExprGraph> {
 public:
  std::size_t calls = 0;
  std::vector<std::size_t> batch_sizes;

 private:
  std::vector<Result<Measurement>> do_measure_batch(const Graph& g, const std::vector<const Candidate*>& cs) override {
    batch_sizes.push_back(cs.size());
    return measure_each(g, cs, [&](const Graph&, const Candidate&, const ExtractedFunction& view) {
      ++calls;
      return static_cast<double>(view.body.size());
    });
  }
};

TEST(CachingOracle, IdenticalLayersAreEstimatedOnce) {
  Layers f(12);
  CountingOracle inner;
  CachingOracle<ExprGraph> cache(inner);
  for (const Candidate& c : f.blocks) {
    SafeEstimate e = safe_estimate(cache, *f.graph, c);
    EXPECT_EQ(e.cost, Cost::value(3));
  }
  EXPECT_EQ(inner.calls, 1u);
  OracleStats s = cache.stats();
  EXPECT_EQ(s.calls, 12u);
  EXPECT_EQ(s.cache_hits, 11u);
  EXPECT_EQ(s.cache_misses, 1u);
  EXPECT_EQ(s.backend_calls, 1u);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_NE(cache.find(structural_key(*f.graph, f.blocks[5])), nullptr);
  EXPECT_EQ(cache.find("no such key"), nullptr);
  EXPECT_EQ(cache.wrapped(), &inner);
  EXPECT_EQ(cache.name(), "caching(oracle)");
}

TEST(CachingOracle, BatchForwardsOnlyDistinctMissesInOneBatch) {
  Layers f(12);
  CountingOracle inner;
  CachingOracle<ExprGraph> cache(inner);
  std::vector<const Candidate*> batch;
  for (std::size_t l = 0; l < f.blocks.size(); ++l) {
    batch.push_back(&f.blocks[l]);
    batch.push_back(&f.relus[l]);
  }
  std::vector<Result<Cost>> costs = cache.estimate_batch(*f.graph, batch);
  ASSERT_EQ(costs.size(), 24u);
  for (std::size_t k = 0; k < costs.size(); ++k) {
    ASSERT_TRUE(costs[k].ok());
    EXPECT_EQ(*costs[k], Cost::value(k % 2 == 0 ? 3 : 1)) << k;
  }
  EXPECT_EQ(inner.batch_sizes, std::vector<std::size_t>{2});
  EXPECT_EQ(inner.calls, 2u);
  EXPECT_EQ(cache.stats().cache_hits, 22u);
  EXPECT_EQ(cache.stats().cache_misses, 2u);

  // All cached now: the inner oracle is not called at all, not even with an empty batch.
  std::vector<Result<Cost>> again = cache.estimate_batch(*f.graph, batch);
  EXPECT_EQ(*again[1], Cost::value(1));
  EXPECT_EQ(inner.batch_sizes, std::vector<std::size_t>{2});
  EXPECT_EQ(cache.stats().cache_hits, 46u);
}

TEST(CachingOracle, MixedBatchForwardsOnlyTheNewKeys) {
  Layers f(3);
  Layers g(3, "tvm");  // same structure, another target
  CountingOracle inner;
  CachingOracle<ExprGraph> cache(inner);
  EXPECT_EQ(safe_estimate(cache, *f.graph, f.blocks[0]).cost, Cost::value(3));
  EXPECT_EQ(inner.batch_sizes, std::vector<std::size_t>{1});
  std::vector<Result<Cost>> costs =
      cache.estimate_batch(*f.graph, {&f.blocks[1], &f.relus[0], &f.blocks[2], &f.relus[1]});
  ASSERT_EQ(costs.size(), 4u);
  EXPECT_EQ(*costs[0], Cost::value(3));
  EXPECT_EQ(*costs[1], Cost::value(1));
  EXPECT_EQ(inner.batch_sizes, (std::vector<std::size_t>{1, 1}));  // then just the relu
  // The key names the target, so the same blocks on another target are new.
  std::vector<Result<Cost>> other = cache.estimate_batch(*g.graph, {&g.blocks[0], &g.blocks[1]});
  EXPECT_EQ(*other[0], Cost::value(3));
  EXPECT_EQ(inner.batch_sizes, (std::vector<std::size_t>{1, 1, 1}));
  EXPECT_EQ(cache.size(), 3u);
}

TEST(CachingOracle, ErrorsAreCachedSoAFailingBackendIsAskedOnce) {
  Layers f(12);
  std::size_t calls = 0;
  CachingOracle<ExprGraph> cache(
      make_oracle<ExprGraph>("broken", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
        ++calls;
        return Result<Cost>(Error{ErrorCode::oracle, "cannot compile dense"});
      }));
  for (const Candidate& c : f.blocks) {
    SafeEstimate e = safe_estimate(cache, *f.graph, c);
    EXPECT_TRUE(e.cost.is_invalid());
    EXPECT_NE(e.error.find("cannot compile dense"), std::string::npos) << e.error;
  }
  std::vector<SafeEstimate> batch = safe_estimate_batch(cache, *f.graph, pointers(f.blocks));
  for (const SafeEstimate& e : batch) EXPECT_TRUE(e.failed());
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(cache.stats().errors, 1u);
  EXPECT_EQ(cache.name(), "caching(broken)");
}

#if defined(__cpp_exceptions)
TEST(CachingOracle, ExceptionsAreCachedAsErrors) {
  Layers f(12);
  std::size_t calls = 0;
  auto thrower = make_oracle<ExprGraph>("thrower", [&](const Graph&, const Candidate&, const ExtractedFunction&) -> Cost {
    ++calls;
    throw std::runtime_error("segfault avoided");
  });
  CachingOracle<ExprGraph> cache(*thrower);
  std::vector<Result<Cost>> costs = cache.estimate_batch(*f.graph, pointers(f.blocks));
  ASSERT_EQ(costs.size(), 12u);
  for (const Result<Cost>& c : costs) {
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("segfault avoided"), std::string::npos);
  }
  Result<Cost> single = cache.estimate(*f.graph, f.blocks[0]);
  EXPECT_FALSE(single.ok());
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(cache.stats().errors, 1u);
}
#endif

TEST(CachingOracle, UnknownIsNotCached) {
  Layers f(2);
  std::size_t calls = 0;
  CachingOracle<ExprGraph> cache(
      make_oracle<ExprGraph>("unsure", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
        ++calls;
        return Cost::unknown();
      }));
  EXPECT_TRUE(safe_estimate(cache, *f.graph, f.blocks[0]).cost.is_unknown());
  EXPECT_TRUE(safe_estimate(cache, *f.graph, f.blocks[1]).cost.is_unknown());
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(CachingOracle, InvalidIsCached) {
  Layers f(4);
  MockOracle<ExprGraph> mock({{"tvm", 1.0}});  // no cost for cutlass: Invalid
  CachingOracle<ExprGraph> cache(mock);
  for (const Candidate& c : f.blocks) EXPECT_TRUE(safe_estimate(cache, *f.graph, c).cost.is_invalid());
  EXPECT_EQ(mock.calls(), 1u);
  EXPECT_EQ(cache.stats().errors, 0u);
}

TEST(CachingOracle, MeasurementsPassThroughTheCache) {
  Layers f(3);
  std::size_t calls = 0;
  CachingOracle<ExprGraph> cache(
      make_oracle<ExprGraph>("meter", [&](const Graph&, const Candidate&, const ExtractedFunction&) {
        ++calls;
        return Measurement{Cost::value(2), 0.03, 11};
      }));
  for (const Candidate& c : f.blocks) {
    Result<Measurement> m = cache.measure(*f.graph, c);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->spread, 0.03);
    EXPECT_EQ(m->samples, 11u);
  }
  EXPECT_EQ(calls, 1u);
}

TEST(CachingOracle, ClearForgetsAnswers) {
  Layers f(2);
  CountingOracle inner;
  CachingOracle<ExprGraph> cache(inner);
  EXPECT_EQ(safe_estimate(cache, *f.graph, f.blocks[0]).cost, Cost::value(3));
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(safe_estimate(cache, *f.graph, f.blocks[1]).cost, Cost::value(3));
  EXPECT_EQ(inner.calls, 2u);
  EXPECT_EQ(cache.stats().cache_misses, 2u);
}

TEST(CachingOracle, StacksOverAnotherCache) {
  Layers f(12);
  CountingOracle inner;
  CachingOracle<ExprGraph> lower(inner);
  CachingOracle<ExprGraph> upper(lower);
  std::vector<Result<Cost>> costs = upper.estimate_batch(*f.graph, pointers(f.blocks));
  EXPECT_EQ(*costs[11], Cost::value(3));
  OracleStats s = upper.stats();
  EXPECT_EQ(s.calls, 12u);
  EXPECT_EQ(s.cache_hits, 11u);   // all in the upper cache
  EXPECT_EQ(s.cache_misses, 2u);  // one in each cache
  EXPECT_EQ(s.backend_calls, 1u);
  EXPECT_EQ(upper.name(), "caching(caching(oracle))");
}

}  // namespace
}  // namespace collage
