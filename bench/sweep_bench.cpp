// The partitioner's sweep: candidate generation and search, under the default budgets, on random
// DAGs (operands from the 5 latest values, or from any earlier value) and on parallel chains
// joined by one wide tuple (chains with a dense in every five operators, or elementwise only), of
// 20 to 20,000 nodes, with the ready-made specs of four targets (and native fusion alone on the
// parallel chains), for each searcher. Each benchmark runs every graph of its size once and
// reports the worst case over them: time, peak memory, candidates, and how many answers a budget
// cut.
//
// Arguments: {family, nodes, specs, algorithm}. Counters: graphs, nodes (the largest), worst_s,
// median_s, worst_candidates_s, worst_search_s, max_candidates, peak_rss_mib (the process's peak
// resident memory over one graph, VmHWM reset before it where the kernel allows: an upper bound,
// as it includes the heap the process kept from the graphs before), budget_cut (graphs whose
// result carries a warning: a rule stopped by the candidate budget, or a searcher by its time or
// state budget), unsound (answers that are not a disjoint,
// covering, acyclic partitioning: must be 0).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "common/process_memory.hpp"
#include "common/random_ops_graph.hpp"
#include "common/sweep_problems.hpp"

namespace {

using testing_ir::ExprGraph;
using Graph = collage::DataflowGraph<ExprGraph>;

enum Family { kRandomLocal, kRandomAny, kParallel4, kParallel8, kParallel16, kElementwise16 };
const char* const kFamilyNames[] = {"random_local", "random_any", "parallel4", "parallel8", "parallel16", "elementwise16"};
enum Specs { kNativeOnly, kReadyMade };
const char* const kSpecsNames[] = {"native", "ready4"};

/// The graphs of one benchmark: a random family gets several seeded graphs per size (more of the
/// small ones), a parallel family the one graph of its size. (A deque: an ExprGraph's nodes point
/// at each other, and a vector would copy them as it grows.)
std::deque<ExprGraph> graphs_of(Family family, std::size_t nodes) {
  std::deque<ExprGraph> out;
  if (family >= kParallel4) {
    const std::size_t branches = family == kParallel4 ? 4 : family == kParallel8 ? 8 : 16;
    out.push_back(testing_ir::sweep::parallel_chains(branches, nodes, family == kElementwise16));
    return out;
  }
  const std::size_t count = nodes <= 200 ? 20 : nodes <= 2000 ? 4 : 2;
  std::mt19937_64 rng(nodes * 7919 + static_cast<std::size_t>(family));
  for (std::size_t k = 0; k < count; ++k) {
    // random_ops_graph's graphs hold about 1.15 nodes a step with operands from the 5 latest
    // values, 0.8 from any (more values are left unread, and so dead).
    const bool local = family == kRandomLocal;
    out.push_back(testing_ir::random_ops_graph(rng, local ? nodes * 7 / 8 : nodes * 5 / 4, local ? 5 : 0));
  }
  return out;
}

void BM_Sweep(benchmark::State& state) {
  const auto family = static_cast<Family>(state.range(0));
  const auto nodes = static_cast<std::size_t>(state.range(1));
  const auto which = static_cast<Specs>(state.range(2));
  collage::PartitionerOptions options;
  options.algorithm = static_cast<collage::SearchAlgorithm>(state.range(3));
  const auto specs = which == kNativeOnly ? testing_ir::sweep::native_only_specs() : testing_ir::sweep::ready_made_specs();
  std::deque<ExprGraph> irs = graphs_of(family, nodes);
  std::vector<double> seconds;
  double worst_candidates = 0, worst_search = 0, peak_mib = 0;
  std::size_t largest = 0, max_candidates = 0, cut = 0, unsound = 0;
  for (auto _ : state) {
    for (const ExprGraph& ir : irs) {
      auto graph = Graph::build(ir);
      if (!graph.ok()) {
        state.SkipWithError(graph.error().message.c_str());
        return;
      }
      auto oracle = testing_ir::sweep::sweep_oracle();
      testing_ir::reset_peak_rss();
      auto r = collage::partition(*graph, specs, oracle, options);
      if (!r.ok()) {
        state.SkipWithError(r.error().message.c_str());
        return;
      }
      largest = std::max(largest, graph->size());
      seconds.push_back(r->seconds.total);
      worst_candidates = std::max(worst_candidates, r->seconds.candidates);
      worst_search = std::max(worst_search, r->seconds.search);
      max_candidates = std::max(max_candidates, r->candidates.size());
      peak_mib = std::max(peak_mib, testing_ir::peak_rss_mib());
      if (!r->warnings.empty()) ++cut;
      if (!testing_ir::sweep::unsound(*graph, r->partitioning).empty()) ++unsound;
    }
  }
  std::sort(seconds.begin(), seconds.end());
  state.SetLabel(std::string(kFamilyNames[family]) + "/" + kSpecsNames[which] + "/" +
                 std::string(collage::to_string(options.algorithm)));
  state.counters["graphs"] = static_cast<double>(irs.size());
  state.counters["nodes"] = static_cast<double>(largest);
  state.counters["worst_s"] = seconds.back();
  state.counters["median_s"] = seconds[seconds.size() / 2];
  state.counters["worst_candidates_s"] = worst_candidates;
  state.counters["worst_search_s"] = worst_search;
  state.counters["max_candidates"] = static_cast<double>(max_candidates);
  state.counters["peak_rss_mib"] = peak_mib;
  state.counters["budget_cut"] = static_cast<double>(cut);
  state.counters["unsound"] = static_cast<double>(unsound);
}

constexpr int kExact = static_cast<int>(collage::SearchAlgorithm::exact);
constexpr int kBeam = static_cast<int>(collage::SearchAlgorithm::beam);
constexpr int kGreedy = static_cast<int>(collage::SearchAlgorithm::greedy);

BENCHMARK(BM_Sweep)
    ->ArgsProduct({{kRandomLocal, kRandomAny, kParallel4, kParallel8, kParallel16, kElementwise16},
                   {20, 200, 2000, 20000},
                   {kReadyMade},
                   {kExact, kBeam, kGreedy}})
    ->ArgsProduct({{kParallel4, kParallel8, kParallel16, kElementwise16},
                   {20, 200, 2000, 20000},
                   {kNativeOnly},
                   {kExact, kBeam, kGreedy}})
    // The wide join: 16 blocks of about 17 nodes and one 16-field tuple, native alone.
    ->ArgsProduct({{kParallel16, kElementwise16}, {290}, {kNativeOnly}, {kExact, kBeam, kGreedy}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(1);  // each benchmark already takes its worst case over graphs; run_benchmarks asks for 5

}  // namespace
