#include "collage/search/transfers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "collage/partitioner.hpp"
#include "collage/cost/mock_oracle.hpp"
#include "collage/rules/combine.hpp"
#include "collage/search/beam_search.hpp"
#include "collage/search/exact_search.hpp"
#include "collage/trace.hpp"
#include "common/brute_force.hpp"
#include "common/build_graph.hpp"
#include "common/expr_ir.hpp"
#include "common/random_expr_graph.hpp"

namespace collage {
namespace {

using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;
using Spec = PartitionSpec<ExprGraph>;

/// The transfers of the parts `ids` of `problem`, worked out from the whole partitioning at once:
/// the distinct (value, device) pairs its parts read off the value's device, and the graph outputs
/// computed off the host (TransferModel's rule, independently of the searchers' incremental
/// bookkeeping).
double reference_transfers(const SearchProblem<ExprGraph>& problem, const std::vector<std::size_t>& ids) {
  const Graph& graph = problem.graph();
  const TransferTable& table = problem.transfers();
  std::map<std::size_t, std::size_t> device_of;  // nodes held by a part
  for (std::size_t id : ids) {
    for (std::size_t n : problem[id].inside) device_of[n] = problem.device(id);
  }
  auto home = [&](std::size_t n) { return device_of.count(n) ? device_of[n] : std::size_t{0}; };
  std::set<std::pair<std::size_t, std::size_t>> moves;  // (value, to device)
  double total = 0;
  for (std::size_t id : ids) {
    const std::size_t d = problem.device(id);
    std::vector<std::size_t> stack(problem[id].input.begin(), problem[id].input.end());
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      if (graph.is_inlinable(i) || graph.is_constant(i)) continue;
      if (device_of.count(i) == 0 && !graph.inputs(i).empty()) {
        for (std::size_t j : graph.inputs(i)) stack.push_back(j);
        continue;
      }
      if (device_of.count(i) == 0 && !table.inputs_start_on_host) continue;
      const bool output_brought_home = d == 0 && device_of.count(i) && graph.is_external(i) && table.outputs_end_on_host;
      if (home(i) != d && !output_brought_home) moves.insert({i, d});
    }
    for (std::size_t n : problem[id].inside) {
      if (d != 0 && table.outputs_end_on_host && graph.is_external(n) && !graph.is_inlinable(n) && !graph.is_constant(n)) total += table.at(n, d, 0);
    }
  }
  for (const auto& [value, to] : moves) total += table.at(value, home(value), to);
  return total;
}

/// A transfer table over `graph` with targets "t1" on device 1 and "t2" on device `t2_device`,
/// a pseudo-random cost per node and direction, and graph inputs and outputs on the host or not.
TransferTable random_table(const Graph& graph, std::mt19937_64& rng, std::size_t t2_device) {
  TransferModel model;
  model.device = {{"t1", 1}, {"t2", t2_device}};
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, double> costs;
  for (std::size_t n = 0; n < graph.size(); ++n) {
    for (std::size_t a = 0; a < 3; ++a) {
      for (std::size_t b = 0; b < 3; ++b) costs[{n, a, b}] = static_cast<double>(rng() % 30);
    }
  }
  model.cost = [&](std::size_t n, std::size_t from, std::size_t to) { return costs.at({n, from, to}); };
  model.inputs_start_on_host = rng() % 4 != 0;
  model.outputs_end_on_host = rng() % 4 != 0;
  auto table = tabulate_transfers(graph, model);
  EXPECT_TRUE(table.ok());
  return std::move(table).value();
}

TEST(Transfers, ExactSearchMatchesBruteForceWithTransfers) {
  // Random expression graphs (constants, scalars, tuples and projections, several outputs) whose
  // targets run on two or three devices: the exact search's optimum, transfers included, is the
  // brute-force optimum under the reference transfer rule; its reported total agrees with the
  // reference on the parts it chose; and a wide beam finds the same optimum.
  std::mt19937_64 rng(4242);
  int compared = 0;
  int moved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ExprGraph ir = testing_ir::random_expr_graph(rng, 4 + trial % 6);
    Graph graph = testing_ir::build(ir);
    std::vector<Candidate> all;
    for (const char* target : {"t0", "t1", "t2"}) {
      auto rule = combine(op_kind<ExprGraph>(OpKind::opaque),
                          {Combiner<ExprGraph>::all(), Combiner<ExprGraph>::constant(),
                           Combiner<ExprGraph>::tuple_arg(), Combiner<ExprGraph>::tuple_proj()},
                          {3});
      for (Candidate c : rule.all_candidates(graph, target)) {
        if (c.sub_graph.size() > 1 && rng() % 3 == 0) continue;
        c.cost = Cost::value(1.0 + static_cast<double>(rng() % 40) * std::pow(0.7, c.sub_graph.size() - 1.0));
        all.push_back(std::move(c));
      }
    }
    SearchCosts costs;
    costs.transfers = random_table(graph, rng, 1 + trial % 2);
    auto problem = SearchProblem<ExprGraph>::build(graph, all, costs);
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    const std::optional<double> expected =
        testing_ir::brute_force_best(*problem, [&](const std::vector<std::size_t>& ids) {
          return reference_transfers(*problem, ids);
        });
    auto got = exact_search(*problem);
    ASSERT_EQ(got.ok(), expected.has_value()) << "trial " << trial;
    if (!expected) continue;
    ++compared;
    ASSERT_NEAR(got->effective_total.raw(), *expected, 1e-9 * (1 + *expected)) << "trial " << trial;
    ASSERT_EQ(got->transfers.size(), got->parts.size());
    double moves = 0;
    for (double t : got->transfers) moves += t;
    if (moves > 0) ++moved;
    auto beam = beam_search(*problem, BeamSearchOptions{100000});
    ASSERT_TRUE(beam.ok());
    EXPECT_NEAR(beam->effective_total.raw(), *expected, 1e-9 * (1 + *expected)) << "trial " << trial;
  }
  EXPECT_GT(compared, 250);
  EXPECT_GT(moved, 20);  // the optimum often pays for some move: the transfers are exercised
}

/// x -> a -> b -> c (the output): cpu runs each operator at 1, 10, 1; gpu at 2 each; moving any
/// value between them costs `move`.
struct Chain {
  ExprGraph ir;
  Graph graph;
  MockOracle<ExprGraph> oracle{{{"cpu", 1.0}, {"gpu", 2.0}}};

  Chain() : graph(make()) { oracle.set_op_cost("cpu", "conv2d", 10.0); }
  Graph make() {
    const auto* a = ir.call("relu", {ir.var("x")});
    const auto* b = ir.call("conv2d", {a});
    ir.output(ir.call("relu", {b}));
    return testing_ir::build(ir);
  }
  static Spec per_op(const std::string& target) {
    return Spec{target, op_predicate<ExprGraph>(target, [](const Graph& g, std::size_t i) { return g.needs_kernel(i); })};
  }
  Result<PartitionResult> run(double move) {
    PartitionerOptions options;
    options.transfers.device = {{"gpu", 1}};
    options.transfers.cost = [move](std::size_t, std::size_t, std::size_t) { return move; };
    return partition(graph, {per_op("cpu"), per_op("gpu")}, oracle, options);
  }
};

std::vector<std::string> targets(const Partitioning& p) {
  std::vector<std::string> out;
  for (const Candidate& c : p.parts) out.push_back(c.target);
  return out;
}

TEST(Transfers, TheSearchMovesOnlyWhenItPays) {
  Chain chain;
  // Cheap moves: conv2d goes to the gpu (1 + 2 + 1, plus a to the gpu and b back: 6).
  auto cheap = chain.run(1.0);
  ASSERT_TRUE(cheap.ok()) << cheap.error().message;
  EXPECT_EQ(targets(cheap->partitioning), (std::vector<std::string>{"cpu", "gpu", "cpu"}));
  EXPECT_EQ(cheap->partitioning.total, Cost::value(6.0));
  EXPECT_EQ(cheap->partitioning.transfers, (std::vector<double>{0.0, 1.0, 1.0}));
  // Dear moves: the two moves (10) cost more than the gpu saves (8), so all stays on the cpu.
  auto dear = chain.run(5.0);
  ASSERT_TRUE(dear.ok());
  EXPECT_EQ(targets(dear->partitioning), (std::vector<std::string>{"cpu", "cpu", "cpu"}));
  EXPECT_EQ(dear->partitioning.total, Cost::value(12.0));
  // Without a transfer model the same search ignores moves and reports none.
  auto free = partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, chain.oracle);
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(targets(free->partitioning), (std::vector<std::string>{"cpu", "gpu", "cpu"}));
  EXPECT_EQ(free->partitioning.total, Cost::value(4.0));
  EXPECT_TRUE(free->partitioning.transfers.empty());
}

TEST(Transfers, AValueMovesOnceToEachDeviceThatReadsIt) {
  // x -> a; a feeds b and c, both on the gpu: a moves to the gpu once.
  ExprGraph ir;
  const auto* a = ir.call("relu", {ir.var("x")});
  ir.output(ir.call("add", {ir.call("conv2d", {a}), ir.call("abs", {a})}));
  Graph graph = testing_ir::build(ir);
  MockOracle<ExprGraph> oracle({{"cpu", 10.0}, {"gpu", 1.0}});
  oracle.set_op_cost("cpu", "relu", 1.0);
  oracle.set_op_cost("gpu", "relu", 10.0);
  oracle.set_op_cost("gpu", "add", 10.0);
  oracle.set_op_cost("cpu", "add", 1.0);
  PartitionerOptions options;
  options.transfers.device = {{"gpu", 1}};
  options.transfers.cost = [](std::size_t, std::size_t, std::size_t) { return 2.0; };
  auto r = partition(graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // relu on cpu (1), conv2d and abs on gpu (1 + 1), a moved once (2), both results back (2 + 2),
  // add on cpu (1): 10 (12 if a moved once per reader).
  EXPECT_EQ(r->partitioning.total, Cost::value(10.0));
  EXPECT_EQ(targets(r->partitioning), (std::vector<std::string>{"cpu", "gpu", "gpu", "cpu"}));
}

TEST(Transfers, InputsAndOutputsCanStayOnTheDevices) {
  // With inputs bound to the gpu before the run and outputs left there, the whole chain goes to
  // the gpu (2 + 2 + 2, no move) rather than conv2d alone (1 + 2 + 1, and two moves of 1.5).
  Chain chain;
  PartitionerOptions options;
  options.transfers.device = {{"gpu", 1}};
  options.transfers.cost = [](std::size_t, std::size_t, std::size_t) { return 1.5; };
  options.transfers.inputs_start_on_host = false;
  options.transfers.outputs_end_on_host = false;
  auto r = partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, chain.oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(targets(r->partitioning), (std::vector<std::string>{"gpu", "gpu", "gpu"}));
  EXPECT_EQ(r->partitioning.total, Cost::value(6.0));
  const std::string trace = save_trace(*r);
  EXPECT_NE(trace.find("\nhost-io\t0\t0\n"), std::string::npos);
  auto replayed = replay(chain.graph, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(targets(*replayed), targets(r->partitioning));
  EXPECT_EQ(replayed->total, r->partitioning.total);
}

TEST(Transfers, ModelsThatPlaceEveryTargetOnTheHostChangeNothing) {
  Chain chain;
  PartitionerOptions options;
  options.transfers.device = {{"cpu", 0}, {"gpu", 0}};
  auto r = partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, chain.oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;  // no cost function needed: nothing moves
  EXPECT_FALSE(r->transfers.enabled());
  EXPECT_EQ(r->partitioning.total, Cost::value(4.0));
}

TEST(Transfers, BadModelsAreErrorsNamingTheProblem) {
  Chain chain;
  auto expect_error = [&](const PartitionerOptions& options, const std::string& text) {
    auto r = partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, chain.oracle, options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(r.error().message.find(text), std::string::npos) << r.error().message;
  };
  PartitionerOptions options;
  options.transfers.device = {{"gpu", 1}};
  expect_error(options, "TransferModel::cost is empty");
  options.transfers.cost = [](std::size_t node, std::size_t, std::size_t) { return node == 1 ? -1.0 : 1.0; };
  expect_error(options, "transfer cost of node 'relu' from device 0 to device 1 is -1");
  options.transfers.cost = [](std::size_t, std::size_t, std::size_t) { return std::nan(""); };
  expect_error(options, "it must be a finite number >= 0");
  options.transfers.device = {{"gpu", kMaxDevices}};
  expect_error(options, "TransferModel::device of target 'gpu' is 8: devices are 0 to 7");
}

TEST(Transfers, AnOracleAndATransferModelThatSayDifferentUnitsAreRefused) {
  Chain chain;
  PartitionerOptions options;
  options.transfers.device = {{"gpu", 1}};
  options.transfers.cost = [](std::size_t, std::size_t, std::size_t) { return 1e-6; };
  options.transfers.unit = "s";
  auto in_ms = make_oracle<ExprGraph>("timer", "ms", [](const Graph&, const Candidate&, const ExtractedFunction&) {
    return 1.0;
  });
  auto r = partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, *in_ms, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(r.error().message.find("the transfer model charges 's' but cost oracle 'timer' answers in 'ms'"),
            std::string::npos)
      << r.error().message;

  // The same unit, or a unit only one side says (the mock oracle says none), is accepted.
  options.transfers.unit = "ms";
  EXPECT_TRUE(partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, *in_ms, options).ok());
  options.transfers.unit = "s";
  EXPECT_TRUE(partition(chain.graph, {Chain::per_op("cpu"), Chain::per_op("gpu")}, chain.oracle, options).ok());
  // Caching and budgets wrap the oracle without hiding its unit.
  CachingOracle<ExprGraph> cached(*in_ms);
  EXPECT_EQ(cached.unit(), "ms");
}

TEST(Transfers, TraceKeepsTheTransferTable) {
  Chain chain;
  auto r = chain.run(1.0);
  ASSERT_TRUE(r.ok());
  const std::string trace = save_trace(*r);
  EXPECT_NE(trace.find("\ndevice\tgpu\t1\n"), std::string::npos);
  EXPECT_NE(trace.find("\ntransfer\t1\t0\t1\t1\n"), std::string::npos);
  auto replayed = replay(chain.graph, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(targets(*replayed), targets(r->partitioning));
  EXPECT_EQ(replayed->total, r->partitioning.total);
  EXPECT_EQ(replayed->transfers, r->partitioning.transfers);
}

TEST(Transfers, BadTransferRecordsAreParseErrors) {
  Chain chain;
  auto r = chain.run(1.0);
  ASSERT_TRUE(r.ok());
  const std::string trace = save_trace(*r);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = trace;
    t.replace(t.find(from), from.size(), to);
    return replay(chain.graph, t);
  };
  auto expect_parse_error = [](const Result<Partitioning>& got, const std::string& text) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ErrorCode::parse);
    EXPECT_NE(got.error().message.find(text), std::string::npos) << got.error().message;
  };
  expect_parse_error(replace("device\tgpu\t1", "device\tgpu\t9"), "device of target 'gpu' is '9'");
  expect_parse_error(replace("transfer\t1\t0\t1\t1", "transfer\t1\t0\t1\t-1"), "transfer cost '-1'");
  expect_parse_error(replace("transfer\t1\t0\t1\t1", "transfer\t99\t0\t1\t1"), "transfer node '99'");
  expect_parse_error(replace("transfer\t1\t0\t1\t1", "transfer\t1\t1\t1\t1"), "two different devices");
  expect_parse_error(replace("transfer\t1\t0\t1\t1", "transfer\t1\t0\t3\t1"), "the device records name only 0 to 1");
  expect_parse_error(replace("device\tgpu\t1", "device\tgpu\t0"), "no device record places a target off the host");
  // A version 2 trace has no graph or transfer records.
  std::string v2 = trace;
  const std::size_t graph_line = v2.find("\ngraph\t");
  v2.erase(graph_line, v2.find('\n', graph_line + 1) - graph_line);
  v2.replace(0, 15, "collage-trace/2");
  expect_parse_error(replay(chain.graph, v2), "unrecognised record 'device'");
}

}  // namespace
}  // namespace collage
