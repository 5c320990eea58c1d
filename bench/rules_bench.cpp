// Candidate generation by the ready-made partition rules (rules/partition_spec.hpp): native fusion
// (TVM FuseOps style) at max depth 3 and 6 on a 12-layer BERT-like graph and on a 100,000-node chain
// of elementwise / broadcast ops, operator-predicate BYOC on the BERT-like graph, and combiner
// `all` at depth 3 on dense random DAGs (every node takes up to 2 inputs from the 32 before it),
// where touching candidates are many and reach each other through many nodes; and native fusion
// at depth 4 on random model-like DAGs whose operands come from any earlier value, where most
// joins no valid kernel contains (ValidSupersetTest) and combine under only_valid leaves them out;
// and native fusion at depth 8 (the example compiler's) on unrolled GRU and LSTM cells of 8 to 128
// steps, whose input projection fans out to every step.
//
// Timed: one all_candidates call over a prebuilt DataflowGraph (the IR and the graph are built
// outside the timing). Counters:
//   nodes       graph nodes
//   candidates  candidates the rule returns
//   combined    candidates the rule's combine step produces before only_valid filters them
//   rounds      combine rounds (the last one finds nothing new)
//   joins_tried joins the combiners proposed (a touching pair once, however many combiners accept it)
//   joins_built proposed joins that were new, convex and within the depth bound, so got a SubGraph
//   joins_ruled_out  proposed joins left out because no valid kernel contains them (only where the
//               measured combine runs under only_valid: BM_NativeFusionDenseOps)
// (the last five measured once, outside the timing, through CombineLimits::report).

#include <cstddef>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/rules/partition_spec.hpp"
#include "common/expr_ir.hpp"
#include "common/models.hpp"
#include "common/random_dag.hpp"
#include "common/random_ops_graph.hpp"

namespace {

using collage::CombineLimits;
using collage::DataflowGraph;
using collage::PartitionRule;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

enum Model : int { kBert12 = 0, kChain100k = 1 };

/// The IR and its graph (which points into the IR), built once per model and kept for the run.
struct Prepared {
  ExprGraph ir;
  std::optional<Graph> graph;
};

const Graph& prepared(Model model) {
  static std::unique_ptr<Prepared> cache[2];
  std::unique_ptr<Prepared>& slot = cache[model];
  if (!slot) {
    slot = std::make_unique<Prepared>();
    if (model == kBert12) {
      testing_ir::models::bert_like(slot->ir, 12, 768);  // 697 nodes
    } else {
      testing_ir::models::chain(slot->ir, 99997);  // 99,997 ops + x + 2 scalars = 100,000 nodes
    }
    slot->graph.emplace(Graph::build(slot->ir).value());
  }
  return *slot->graph;
}

/// What a TensorRT-like backend accepts in the BERT-like graph: everything but layer_norm.
collage::NodePredicate<ExprGraph> trt_like() {
  static const std::set<std::string> ops{"dense",   "bias_add",  "add",          "multiply", "power",
                                         "tanh",    "reshape",   "transpose",    "softmax",  "batch_matmul"};
  return [](const Graph& g, std::size_t i) { return ops.count(g.op_name(i)) != 0; };
}

/// Combine limits of depth `depth` that record the run's statistics in `stats`.
CombineLimits counting_limits(std::size_t depth, collage::CombineStats& stats) {
  CombineLimits limits;
  limits.max_depth = depth;
  limits.report = [&stats](const collage::CombineStats& s) { stats = s; };
  return limits;
}

template <class G>
void run(benchmark::State& state, const DataflowGraph<G>& graph, const PartitionRule<G>& rule,
         const PartitionRule<G>& combine_only, const collage::CombineStats& stats) {
  std::size_t produced = 0;
  for (auto _ : state) {
    auto candidates = rule.all_candidates(graph, "t");
    produced = candidates.size();
    benchmark::DoNotOptimize(candidates.data());
  }
  state.counters["nodes"] = static_cast<double>(graph.size());
  state.counters["candidates"] = static_cast<double>(produced);
  state.counters["combined"] = static_cast<double>(combine_only.all_candidates(graph, "t").size());
  state.counters["rounds"] = static_cast<double>(stats.rounds);
  state.counters["joins_tried"] = static_cast<double>(stats.joins_tried);
  state.counters["joins_built"] = static_cast<double>(stats.joins_built);
  state.counters["joins_ruled_out"] = static_cast<double>(stats.joins_ruled_out);
}

void BM_NativeFusion(benchmark::State& state, Model model) {
  const auto depth = static_cast<std::size_t>(state.range(0));
  const Graph& graph = prepared(model);
  collage::CombineStats stats;
  run(state, graph, collage::native_fusion_rule<ExprGraph>(depth),
      collage::combine(collage::op_kind<ExprGraph>(collage::OpKind::anchor),
                       collage::fuse_ops_combiners<ExprGraph>(), counting_limits(depth, stats)),
      stats);
}

void BM_OpPredicateByoc(benchmark::State& state, Model model) {
  const auto depth = static_cast<std::size_t>(state.range(0));
  const Graph& graph = prepared(model);
  collage::CombineStats stats;
  run(state, graph, collage::op_predicate_byoc_rule<ExprGraph>("trt", trt_like(), depth),
      collage::combine(collage::op_predicate<ExprGraph>("trt", trt_like()),
                       {collage::Combiner<ExprGraph>::all()}, counting_limits(depth, stats)),
      stats);
}

void BM_CombineAllDense(benchmark::State& state) {
  std::mt19937_64 rng(7);
  const testing_ir::AdjacencyGraph ir = testing_ir::random_dag(rng, static_cast<std::size_t>(state.range(0)), 2, 32);
  const auto graph = DataflowGraph<testing_ir::AdjacencyGraph>::build(ir).value();
  collage::CombineStats stats;
  const auto rule = collage::combine(collage::op_kind<testing_ir::AdjacencyGraph>(collage::OpKind::opaque),
                                     {collage::Combiner<testing_ir::AdjacencyGraph>::all()}, counting_limits(3, stats));
  run(state, graph, rule, rule, stats);  // the rule is its combine step: `combined` equals `candidates`
}

void BM_NativeFusionDenseOps(benchmark::State& state) {
  std::mt19937_64 rng(2026);
  const ExprGraph ir = testing_ir::random_ops_graph(rng, static_cast<std::size_t>(state.range(0)), 0);
  const auto graph = Graph::build(ir).value();
  collage::CombineStats stats;  // of the measured rule, whose combine runs under only_valid
  collage::CombineStats whole;
  run(state, graph, collage::native_fusion_rule<ExprGraph>(counting_limits(4, stats)),
      collage::combine(collage::op_kind<ExprGraph>(collage::OpKind::opaque), collage::fuse_ops_combiners<ExprGraph>(),
                       counting_limits(4, whole)),
      stats);
}

void BM_NativeFusionRecurrent(benchmark::State& state, void (*unroll)(ExprGraph&, std::size_t, std::size_t)) {
  ExprGraph ir;
  unroll(ir, static_cast<std::size_t>(state.range(0)), 24);
  const auto graph = Graph::build(ir).value();
  collage::CombineStats stats;
  const auto rule = collage::native_fusion_rule<ExprGraph>(counting_limits(8, stats));
  // The combine step alone (outside only_valid) would grow the fan-outs' joins exponentially and
  // stop at its budget: `combined` counts the rule's candidates instead.
  run(state, graph, rule, rule, stats);
}

BENCHMARK_CAPTURE(BM_NativeFusion, bert12, kBert12)->Arg(3)->Arg(6)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_NativeFusion, chain100k, kChain100k)->Arg(3)->Arg(6)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpPredicateByoc, bert12, kBert12)->Arg(3)->Arg(6)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CombineAllDense)->Arg(40)->Arg(60)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NativeFusionDenseOps)->Arg(100)->Arg(160)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_NativeFusionRecurrent, gru, &testing_ir::models::gru_like)
    ->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_NativeFusionRecurrent, lstm, &testing_ir::models::lstm_like)
    ->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

}  // namespace
