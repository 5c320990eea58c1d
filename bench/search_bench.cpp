// Search scaling: candidates + search (costs cached) on chains, residual blocks, BERT-like
// encoders, wide branches and unrolled LSTM and GRU cells, with 1 to 6 targets, for each searcher; and BERT with targets on two
// devices and the moves between them charged.
//
// Arguments: {shape, size, targets, algorithm}. Counters: nodes, candidates, states expanded,
// states generated, oracle calls (to the backend oracle, after the warm-up fills the cache), the
// process's peak resident memory (VmHWM, reset before each benchmark where the kernel allows), and
// the minor page faults per timed call (first touches of memory the process had not used: 1-15 us
// each on the KVM guests of docs/benchmarks.md).

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "collage/cost/caching_oracle.hpp"
#include "collage/cost/mock_oracle.hpp"
#include "collage/partitioner.hpp"
#include "collage/rules/pattern_rule.hpp"
#include "common/models.hpp"
#include "common/process_memory.hpp"

namespace {

using testing_ir::ExprGraph;
using Graph = collage::DataflowGraph<ExprGraph>;
using Spec = collage::PartitionSpec<ExprGraph>;

enum Shape { kChain, kResidual, kBert, kWide, kLstm, kGru };
const char* const kShapeNames[] = {"chain", "residual", "bert", "wide", "lstm", "gru"};

/// Builds the model; `size` is nodes for chains, blocks, layers, branches (of 20 ops), or the steps
/// of an unrolled LSTM or GRU.
void build_model(ExprGraph& ir, Shape shape, std::size_t size) {
  switch (shape) {
    case kChain: testing_ir::models::chain(ir, size); break;
    case kResidual: testing_ir::models::residual_blocks(ir, size); break;
    case kBert: testing_ir::models::bert_like(ir, size, 768); break;
    case kWide: testing_ir::models::wide_branches(ir, size, 20); break;
    case kLstm: testing_ir::models::lstm_like(ir, size, 24); break;
    case kGru: testing_ir::models::gru_like(ir, size, 24); break;
  }
}

bool is_op(const Graph& g, std::size_t i, std::initializer_list<const char*> ops) {
  const std::string name = g.op_name(i);
  for (const char* op : ops) {
    if (name == op) return true;
  }
  return false;
}

/// The first `n` of six targets: native fusion; an operator-predicate backend for anchors
/// (cuDNN/cuBLAS-like); a library with dense / batch_matmul composites (CUTLASS-like); an
/// elementwise backend; a reduction backend; a TensorRT-like backend taking any op, depth 2.
std::vector<Spec> make_specs(std::size_t n) {
  std::vector<Spec> specs;
  specs.push_back(collage::native_fusion_spec<ExprGraph>("tvm", 3));
  if (n >= 2) {
    specs.push_back(Spec{"cudnn", collage::op_predicate_byoc_rule<ExprGraph>(
                                      "cudnn", [](const Graph& g, std::size_t i) { return g.kind(i) == collage::OpKind::anchor; }, 1)});
  }
  if (n >= 3) {
    collage::PatternTable<ExprGraph> table;
    table.emplace_back("cutlass.dense_bias", *collage::parse_pattern<ExprGraph>("bias_add(dense(*, const), const)"));
    table.emplace_back("cutlass.dense", *collage::parse_pattern<ExprGraph>("dense(*, const)"));
    table.emplace_back("cutlass.batch_matmul", *collage::parse_pattern<ExprGraph>("batch_matmul(*, *)"));
    specs.push_back(Spec{"cutlass", collage::exact_patterns_rule<ExprGraph>(table)});
  }
  if (n >= 4) {
    specs.push_back(Spec{"ew", collage::op_predicate_byoc_rule<ExprGraph>(
                                   "ew", [](const Graph& g, std::size_t i) { return g.kind(i) <= collage::OpKind::broadcast; }, 2)});
  }
  if (n >= 5) {
    specs.push_back(Spec{"reduce", collage::op_predicate_byoc_rule<ExprGraph>(
                                       "reduce", [](const Graph& g, std::size_t i) {
                                         return g.kind(i) == collage::OpKind::reduce || is_op(g, i, {"softmax", "layer_norm"});
                                       }, 1)});
  }
  if (n >= 6) {
    specs.push_back(Spec{"trt", collage::op_predicate_byoc_rule<ExprGraph>(
                                    "trt", [](const Graph& g, std::size_t i) { return g.needs_kernel(i); }, 2)});
  }
  return specs;
}

/// BM_Partition, and with `across_devices` the same with cudnn, cutlass, ew and trt on a second
/// device and 0.2 for each value that moves between the devices (the mock's operators cost 0.7 to 1).
void partition_benchmark(benchmark::State& state, bool across_devices) {
  const auto shape = static_cast<Shape>(state.range(0));
  const auto size = static_cast<std::size_t>(state.range(1));
  const auto targets = static_cast<std::size_t>(state.range(2));
  const auto algorithm = static_cast<collage::SearchAlgorithm>(state.range(3));
  testing_ir::reset_peak_rss();
  ExprGraph ir;
  build_model(ir, shape, size);
  auto graph = Graph::build(ir);
  if (!graph.ok()) {
    state.SkipWithError(graph.error().message.c_str());
    return;
  }
  std::vector<Spec> specs = make_specs(targets);
  collage::MockOracle<ExprGraph> mock(
      {{"tvm", 1.0}, {"cudnn", 0.8}, {"cutlass", 0.7}, {"ew", 0.9}, {"reduce", 0.85}, {"trt", 0.95}});
  collage::CachingOracle<ExprGraph> cache(mock);
  collage::PartitionerOptions options;
  options.algorithm = algorithm;
  options.cache = false;  // `cache` above persists across iterations: costs are cached
  options.beam.width = 16;
  if (across_devices) {
    options.transfers.device = {{"cudnn", 1}, {"cutlass", 1}, {"ew", 1}, {"trt", 1}};
    options.transfers.cost = [](std::size_t, std::size_t, std::size_t) { return 0.2; };
  }
  auto warm = collage::partition(*graph, specs, cache, options);  // fills the cache
  if (!warm.ok()) {
    state.SkipWithError(warm.error().message.c_str());
    return;
  }
  const std::size_t calls_before = mock.calls();
  collage::PartitionResult last;
  const long faults_before = testing_ir::minor_page_faults();
  for (auto _ : state) {
    auto r = collage::partition(*graph, specs, cache, options);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    last = std::move(r).value();
  }
  state.SetLabel(std::string(kShapeNames[shape]) + "/" + std::string(collage::to_string(algorithm)));
  state.counters["nodes"] = static_cast<double>(graph->size());
  state.counters["targets"] = static_cast<double>(targets);
  state.counters["candidates"] = static_cast<double>(last.candidates.size());
  state.counters["states_expanded"] = static_cast<double>(last.partitioning.stats.states_expanded);
  state.counters["states_generated"] = static_cast<double>(last.partitioning.stats.states_generated);
  state.counters["oracle_calls"] = static_cast<double>(mock.calls() - calls_before);
  state.counters["cost"] = last.partitioning.effective_total.raw();
  state.counters["search_s"] = last.seconds.search;
  state.counters["candidates_s"] = last.seconds.candidates;
  state.counters["estimate_s"] = last.seconds.estimate;
  state.counters["total_s"] = last.seconds.total;
  state.counters["exact_gave_up"] = last.partitioning.stats.algorithm.find("gave up") != std::string::npos ? 1 : 0;
  state.counters["peak_rss_mib"] = testing_ir::peak_rss_mib();
  state.counters["page_faults"] = benchmark::Counter(
      static_cast<double>(testing_ir::minor_page_faults() - faults_before), benchmark::Counter::kAvgIterations);
}

void BM_Partition(benchmark::State& state) { partition_benchmark(state, false); }
void BM_PartitionAcrossDevices(benchmark::State& state) { partition_benchmark(state, true); }

constexpr int kExact = static_cast<int>(collage::SearchAlgorithm::exact);
constexpr int kBeam = static_cast<int>(collage::SearchAlgorithm::beam);
constexpr int kGreedy = static_cast<int>(collage::SearchAlgorithm::greedy);

// The headline: a 12-layer BERT-style encoder with three targets.
BENCHMARK(BM_Partition)->Args({kBert, 12, 3, kExact})->Args({kBert, 12, 3, kBeam})->Args({kBert, 12, 3, kGreedy})
    ->Unit(benchmark::kMillisecond);

// With Google Benchmark's own iteration count (the heap warm from the iterations before): the
// torch.fx comparison (its CapabilityBasedPartitioner: 0.42 s at 1.7k nodes, 13 s at 6.7k; 32 and
// 115 layers are 1,857 and 6,671 nodes), and the ends of the scaling slope (48 and 768 layers).
// A second of untimed warm-up iterations first: glibc's heap settles only after a few calls (it
// raises its trim and mmap thresholds as large blocks are freed), and before it does each call
// faults in fresh pages, which cost about 11 us each on the KVM guest of docs/benchmarks.md. At
// 768 layers the default half second holds only three or four iterations, all in that phase.
BENCHMARK(BM_Partition)
    ->ArgsProduct({{kBert}, {32, 48, 115, 768}, {3}, {kExact}})
    ->MinWarmUpTime(1.0)
    ->MinTime(2.0)
    ->Unit(benchmark::kMillisecond);

// Scaling in layers (58 nodes a layer: 48 .. 768 layers is 2.8k .. 45k nodes; 32 and 115 layers,
// 1.9k and 6.7k nodes, compare with torch.fx at 1.7k and 6.7k nodes).
BENCHMARK(BM_Partition)
    ->ArgsProduct({{kBert}, {2, 6, 12, 32, 48, 96, 115, 192, 384, 768}, {3}, {kExact, kBeam, kGreedy}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Other shapes, 100 .. 100,000 nodes. Residual blocks are 11 nodes, wide branches 31 (20 ops and
// their constants), joined by a tree of adds. Wide branches are the exact search's weak spot: a
// depth-3 candidate that holds a join and the end of one branch waits for the other branch, and
// the joins left open multiply the states (about 8x per doubling of the branches: 3.8k states at
// 16 branches, 27k at 32, 203k at 64; at 128 it gives up after 1M states and the partitioner
// runs beam search, counter exact_gave_up). So exact stops at 64 branches, beam and greedy go
// on to 128.
BENCHMARK(BM_Partition)
    ->ArgsProduct({{kChain}, {100, 1000, 10000, 100000}, {1, 3}, {kExact, kBeam, kGreedy}})
    ->ArgsProduct({{kResidual}, {16, 160, 1600, 9100}, {1, 3}, {kExact, kBeam, kGreedy}})
    ->ArgsProduct({{kWide}, {4, 32, 64}, {1, 3}, {kExact}})
    ->ArgsProduct({{kWide}, {4, 32, 64, 128}, {1, 3}, {kBeam, kGreedy}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Unrolled recurrent cells, 8 to 128 steps (LSTM: 129 to 1,929 nodes; GRU: 161 to 2,441).
BENCHMARK(BM_Partition)
    ->ArgsProduct({{kLstm, kGru}, {8, 32, 128}, {1, 3}, {kExact, kBeam, kGreedy}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Targets 1 .. 6 on BERT-12.
BENCHMARK(BM_Partition)
    ->ArgsProduct({{kBert}, {12}, {1, 2, 3, 4, 5, 6}, {kExact, kBeam}})
    ->Unit(benchmark::kMillisecond);

// Targets on two devices, moves charged (collage::TransferModel): the exact search's states also
// record where each value still to be read is. BERT with 3 and 6 targets, beside the same rows
// without transfers above.
BENCHMARK(BM_PartitionAcrossDevices)
    ->ArgsProduct({{kBert}, {12, 48, 192}, {3, 6}, {kExact}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// 3,000 layers (about 138k nodes... with this generator's 58 nodes a layer, 174k): beam only.
BENCHMARK(BM_Partition)->Args({kBert, 3000, 3, kBeam})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
