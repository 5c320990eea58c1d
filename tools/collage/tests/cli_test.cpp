// End-to-end tests of the `collage` binary: the bundled example, every kind of bad input, graphs
// with tuples and constants, and `collage check` on the tool's own output for random graphs.

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../../tests/common/comma_locale.hpp"
#include "cli_test_support.hpp"
#include "collage/report.hpp"
#include "graph_gen.hpp"
#include "graph_reader.hpp"
#include "json_graph.hpp"
#include "outputs.hpp"
#include "spec_reader.hpp"

namespace collage_cli_test {
namespace {

using nlohmann::json;

TEST(CliExample, PartitionsTheMnistExampleAsText) {
  const fs::path dir = scratch_dir();
  CliRun r = run_cli(dir, {"partition", "--graph", example("graph.json"), "--spec", example("spec.json"), "--format",
                        "text"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* part : {"mnist: 20 nodes (13 need a kernel), 3 targets", "cudnn", "conv0", "cutlass",
                           "[cutlass.dense_bias: dense, out]", "tvm", "add0, relu0", "host: x, w0, b0, w1, b1, w2, b2",
                           "total cost 29.5 (exact search"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " not in\n" << r.out;
  }
}

TEST(CliExample, WritesPartitionJsonThatChecksAsValid) {
  const fs::path dir = scratch_dir();
  CliRun r = run_cli(dir, {"partition", "--graph", example("graph.json"), "--spec", example("spec.json"), "--out",
                        "p.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const json p = json::parse(read_text(dir / "p.json"));
  EXPECT_EQ(p["format"], "collage-partition/1");
  EXPECT_NEAR(p["total_cost"].get<double>(), 29.5, 1e-9);
  ASSERT_EQ(p["partitions"].size(), 10u);
  EXPECT_EQ(p["partitions"][0]["target"], "tvm");
  EXPECT_EQ(p["partitions"][0]["inside"], json({"pad0"}));
  EXPECT_EQ(p["partitions"][1]["target"], "cudnn");
  EXPECT_EQ(p["partitions"][1]["inside"], json({"conv0"}));
  EXPECT_EQ(p["partitions"][1]["cost"], 6.0);
  EXPECT_EQ(p["partitions"][9]["inside"], json({"dense", "out"}));
  EXPECT_EQ(p["partitions"][9]["nested"][0]["attrs"]["Compiler"], "cutlass");
  EXPECT_EQ(p["partitions"][9]["nested"][0]["nested"][0]["attrs"]["Composite"], "cutlass.dense_bias");
  EXPECT_EQ(p["host"], json({"x", "w0", "b0", "w1", "b1", "w2", "b2"}));
  const json& search = p["search"];
  EXPECT_EQ(search["algorithm"], "exact");
  EXPECT_GT(search["states_expanded"].get<int>(), 0);
  EXPECT_GT(search["oracle_calls"].get<int>(), 0);
  EXPECT_GE(search["seconds"].get<double>(), 0.0);
  for (const char* phase : {"build", "candidates", "estimate", "search"}) EXPECT_TRUE(search["phases"].contains(phase));
  EXPECT_FALSE(fs::exists(dir / ("p.json.tmp")));

  CliRun check = run_cli(dir, {"check", "--graph", example("graph.json"), "--partition", "p.json", "--spec",
                            example("spec.json")});
  EXPECT_EQ(check.status, 0) << check.err;
  EXPECT_NE(check.out.find("p.json: valid: 10 partitions, 7 host nodes, total cost 29.5 (recomputed with"),
            std::string::npos)
      << check.out;
  CliRun recorded = run_cli(dir, {"check", "--graph", example("graph.json"), "--partition", "p.json"});
  EXPECT_EQ(recorded.status, 0) << recorded.err;
  EXPECT_NE(recorded.out.find("total cost 29.5 (as recorded)"), std::string::npos) << recorded.out;
}

TEST(CliExample, TheBenchmarkSpecPartitionsAnyGraph) {
  // tools/collage/bench/bert_spec.json (the end-to-end benchmark's spec) stays readable and gives
  // a partitioning that `check` accepts, here on the MNIST example.
  const fs::path dir = scratch_dir();
  const std::string spec = std::string(COLLAGE_SOURCE_DIR) + "/tools/collage/bench/bert_spec.json";
  CliRun r = run_cli(dir, {"partition", "--graph", example("graph.json"), "--spec", spec, "--out", "p.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json p = json::parse(read_text(dir / "p.json"));
  EXPECT_EQ(p["search"]["algorithm"], "beam");
  bool uses_trt = false;
  for (const json& part : p["partitions"]) uses_trt = uses_trt || part["target"] == "trt";
  EXPECT_TRUE(uses_trt);
  CliRun check = run_cli(dir, {"check", "--graph", example("graph.json"), "--partition", "p.json", "--spec", spec});
  EXPECT_EQ(check.status, 0) << check.err;
}

TEST(CliExample, WritesDot) {
  const fs::path dir = scratch_dir();
  CliRun r = run_cli(dir, {"partition", "--graph", example("graph.json"), "--spec", example("spec.json"), "--format",
                        "dot"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("digraph \"mnist\" {", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("subgraph cluster_9"), std::string::npos);
  EXPECT_NE(r.out.find("cutlass (primitive.composite.dense_bias)"), std::string::npos);
  EXPECT_EQ(r.out.substr(r.out.size() - 2), "}\n");
}

TEST(CliExample, ListsCandidatesWithCosts) {
  const fs::path dir = scratch_dir();
  CliRun r = run_cli(dir, {"candidates", "--graph", example("graph.json"), "--spec", example("spec.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  const json c = json::parse(r.out);
  EXPECT_EQ(c["format"], "collage-candidates/1");
  bool cudnn_conv = false;
  bool tvm_fused = false;
  for (const json& cand : c["candidates"]) {
    if (cand["target"] == "cudnn" && cand["inside"] == json({"conv0"})) cudnn_conv = cand["cost"] == 6.0;
    if (cand["target"] == "tvm" && cand["inside"] == json({"conv0", "add0", "relu0"})) tvm_fused = cand["cost"] == 9.46;
  }
  EXPECT_TRUE(cudnn_conv) << r.out;
  EXPECT_TRUE(tvm_fused) << r.out;
}

/// A graph and spec read with the tool's readers and partitioned in this process.
struct InProcess {
  collage::cli::JsonGraph ir;
  std::optional<collage::DataflowGraph<collage::cli::JsonGraph>> graph;
  std::optional<collage::cli::ToolSpec<collage::cli::JsonGraph>> spec;
  std::optional<collage::PartitionResult> result;

  InProcess(const std::string& graph_file, const std::string& spec_file) {
    const std::string graph_text = read_text(graph_file);
    auto read = collage::cli::read_graph(graph_text, graph_file);
    EXPECT_TRUE(read.ok()) << read.error().message;
    ir = std::move(read).value();
    auto built = collage::cli::build_graph(ir);
    EXPECT_TRUE(built.ok()) << built.error().message;
    graph.emplace(std::move(built).value());
    const std::string spec_text = read_text(spec_file);
    auto s = collage::cli::read_spec<collage::cli::JsonGraph>(std::string_view(spec_text), spec_file);
    EXPECT_TRUE(s.ok()) << s.error().message;
    spec.emplace(std::move(s).value());
    auto oracle = spec->make_oracle();
    auto r = collage::partition(*graph, spec->targets, *oracle, spec->options());
    EXPECT_TRUE(r.ok()) << r.error().message;
    result.emplace(std::move(r).value());
  }
};

TEST(CliExample, CheckReadsTheLibrarysOwnReport) {
  // One schema: a report written by collage::to_json (nodes by label, alternatives included) is a
  // partitioning `collage check` accepts, as the tool's own output is.
  const fs::path dir = scratch_dir();
  InProcess p(example("graph.json"), example("spec.json"));
  write_text(dir / "library.json", *collage::to_json(*p.graph, *p.result));
  for (bool with_spec : {true, false}) {
    std::vector<std::string> args = {"check", "--graph", example("graph.json"), "--partition", "library.json"};
    if (with_spec) args.insert(args.end(), {"--spec", example("spec.json")});
    CliRun c = run_cli(dir, args);
    EXPECT_EQ(c.status, 0) << c.err;
    EXPECT_NE(c.out.find("library.json: valid: 10 partitions, 7 host nodes, total cost 29.5"), std::string::npos)
        << c.out;
  }
}

TEST(CliExample, CheckAddsTheTransferCostsOfALibraryReport) {
  // A library report of a search that charged moves between devices: its total is the parts' costs
  // plus their transfer costs, and `collage check` adds them up the same way.
  const fs::path dir = scratch_dir();
  InProcess p(example("graph.json"), example("spec.json"));
  collage::PartitionerOptions options = p.spec->options();
  options.transfers.device = {{p.spec->targets.back().target, 1}};
  options.transfers.cost = [](std::size_t, std::size_t, std::size_t) { return 0.25; };
  auto oracle = p.spec->make_oracle();
  auto r = collage::partition(*p.graph, p.spec->targets, *oracle, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  double moved = 0;
  for (double t : r->partitioning.transfers) moved += t;
  ASSERT_GT(moved, 0.0);
  json report = json::parse(*collage::to_json(*p.graph, *r));
  write_text(dir / "moved.json", report.dump());
  CliRun c = run_cli(dir, {"check", "--graph", example("graph.json"), "--partition", "moved.json", "--spec",
                           example("spec.json")});
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("total cost " + r->partitioning.total.to_string()), std::string::npos) << c.out;

  for (json& part : report["partitions"]) {
    if (part["transfer_cost"].get<double>() > 0) {
      part["transfer_cost"] = part["transfer_cost"].get<double>() + 1;
      break;
    }
  }
  write_text(dir / "tampered.json", report.dump());
  CliRun bad = run_cli(dir, {"check", "--graph", example("graph.json"), "--partition", "tampered.json"});
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("recorded total"), std::string::npos) << bad.err;
}

TEST(CliExample, OutputsAreTheSameBytesUnderACommaLocale) {
  InProcess p(example("graph.json"), example("spec.json"));
  collage::cli::Timings t;
  t.build = 0.0125;
  t.candidates = 0.25;
  t.estimate = 0.5;
  t.search = 1.75;
  t.total = 2.5;
  auto outputs = [&] {
    return collage::cli::partition_text(*p.graph, *p.result, t) +
           collage::cli::partition_json(*p.graph, *p.result, t).dump() +
           collage::cli::partition_dot(*p.graph, *p.result) +
           collage::cli::candidates_json(*p.graph, p.result->candidates, p.result->penalties).dump();
  };
  const std::string c_locale = outputs();
  EXPECT_NE(c_locale.find("2.500 s)"), std::string::npos) << c_locale;
  testing_ir::CommaLocale comma;
  if (!comma.active()) GTEST_SKIP() << testing_ir::CommaLocale::missing();
  EXPECT_EQ(outputs(), c_locale);
}

TEST(CliUsage, HelpForEachCommandHasAnExample) {
  const fs::path dir = scratch_dir();
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--help"}, {"partition", "--help"}, {"candidates", "--help"}, {"check", "--help"}, {"help", "check"}}) {
    CliRun r = run_cli(dir, args);
    EXPECT_EQ(r.status, 0) << args[0];
    EXPECT_NE(r.out.find("example"), std::string::npos) << args[0];
    EXPECT_NE(r.out.find("usage: collage"), std::string::npos) << args[0];
  }
}

TEST(CliUsage, BadCommandLinesExitTwo) {
  const fs::path dir = scratch_dir();
  const std::string g = example("graph.json");
  const std::string s = example("spec.json");
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {},
           {"frobnicate"},
           {"partition"},
           {"partition", "--graph", g},
           {"partition", "--graph", g, "--spec", s, "--format", "xml"},
           {"partition", "--graph", g, "--spec", s, "--colour", "red"},
           {"partition", "--graph", g, "--spec"},
           {"partition", "--graph", g, "--graph", g, "--spec", s},
           {"partition", "--graph", g, "--spec", s, "extra"},
           {"check", "--graph", g},
       }) {
    CliRun r = run_cli(dir, args);
    EXPECT_EQ(r.status, 2) << (args.empty() ? "(none)" : args.back());
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(r.err.empty());
  }
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit status 1, nothing on stdout, no output file, one line on stderr naming the
// file, the place and the problem.

constexpr const char* kSmallGraph = R"({"format": "collage-graph/1", "nodes": [
  {"id": "x", "op": "input"}, {"id": "w", "op": "const", "shape": [4, 4]},
  {"id": "c", "op": "conv2d", "inputs": ["x", "w"]}, {"id": "r", "op": "relu", "inputs": ["c"]}],
  "outputs": ["r"]})";

constexpr const char* kSmallSpec = R"({"format": "collage-spec/1", "targets": [
  {"name": "tvm", "rule": {"rule": "native", "max_depth": 2}},
  {"name": "lib", "rule": {"rule": "primitive", "sub": {"rule": "op_predicate", "ops": ["conv2d"]}}}],
  "cost": {"model": "synthetic", "targets": {"tvm": {"ops": {"*": 2}}, "lib": {"ops": {"conv2d": 1}}}}})";

struct BadInput {
  const char* name;
  std::string graph;  // text of graph.json, or "" for the small graph
  std::string spec;   // text of spec.json, or "" for the small spec
  const char* file;   // the file the message must name
  const char* place;
  const char* problem;
};

/// Names the case in gtest output.
void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

std::string with(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) return "(test error: '" + from + "' not found)";
  return text.replace(at, from.size(), to);
}

const BadInput kBadInputs[] = {
    {"MalformedGraph", "{\"format\": \"collage-graph/1\", \"nodes\": [", "", "graph.json", "line 1, column 41",
     "malformed JSON"},
    {"MalformedSpec", "", "{\"format\": \"collage-spec/1\",, }", "spec.json", "line 1, column 29", "malformed JSON"},
    {"GraphFormatTag", with(kSmallGraph, "collage-graph/1", "collage-graph/2"), "", "graph.json", "/format",
     "wrong format tag"},
    {"SpecFormatTag", "", with(kSmallSpec, "collage-spec/1", "collage-partition/1"), "spec.json", "/format",
     "wrong format tag"},
    {"MissingId", with(kSmallGraph, R"("id": "w", )", ""), "", "graph.json", "/nodes/1/id", "missing"},
    {"DuplicateId", with(kSmallGraph, R"("id": "w")", R"("id": "x")"), "", "graph.json", "/nodes/1/id",
     "duplicate id 'x'"},
    {"UnknownInput", with(kSmallGraph, R"(["x", "w"])", R"(["x", "v"])"), "", "graph.json", "/nodes/2/inputs/1",
     "no node has id 'v'"},
    {"Cycle", with(kSmallGraph, R"("inputs": ["x", "w"])", R"("inputs": ["r", "w"])"), "", "graph.json", "node '",
     "cycle"},
    {"BadKind", with(kSmallGraph, R"("op": "relu")", R"("op": "relu", "kind": "sparkly")"), "", "graph.json",
     "/nodes/3/kind", "bad kind 'sparkly'"},
    {"UnknownRule", "", with(kSmallSpec, R"("rule": "native")", R"("rule": "nativ")"), "spec.json",
     "/targets/0/rule/rule", "unknown rule 'nativ'"},
    {"UnknownCombiner", "",
     with(kSmallSpec, R"({"rule": "native", "max_depth": 2})",
          R"({"rule": "combine", "combiners": ["all", "diagonal"], "sub": {"rule": "op_kind", "max_kind": "opaque"}})"),
     "spec.json", "/targets/0/rule/combiners/1", "unknown combiner 'diagonal'"},
    {"BadPattern", "",
     with(kSmallSpec, R"({"rule": "op_predicate", "ops": ["conv2d"]})", R"({"rule": "pattern", "pattern": "conv2d(*,"})"),
     "spec.json", "/targets/1/rule/sub/pattern", "bad pattern"},
    {"NegativeCost", "", with(kSmallSpec, R"({"conv2d": 1})", R"({"conv2d": -1})"), "spec.json",
     "/cost/targets/lib/ops/conv2d", "negative cost"},
    {"UncoveredNode", "", with(kSmallSpec, R"({"*": 2})", R"({"conv2d": 2})"), "spec.json", "node 'r'",
     "no candidate covers"},
    {"MissingGraphFile", "(none)", "", "graph.json", "graph.json", "cannot open"},
    {"NewlineInAnId", with(kSmallGraph, R"(["x", "w"])", R"(["x", "w\nv"])"), "", "graph.json", "/nodes/2/inputs/1",
     "no node has id 'w\\nv'"},
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, ExitsOneWithOneLineNamingFilePlaceAndProblem) {
  const BadInput& c = GetParam();
  const fs::path dir = scratch_dir();
  if (c.graph != "(none)") write_text(dir / "graph.json", c.graph.empty() ? kSmallGraph : c.graph);
  write_text(dir / "spec.json", c.spec.empty() ? kSmallSpec : c.spec);
  for (const char* format : {"json", "text", "dot"}) {
    CliRun r = run_cli(dir, {"partition", "--graph", "graph.json", "--spec", "spec.json", "--format", format, "--out",
                          "out.txt"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(r.err.rfind(std::string("collage: ") + c.file + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.place), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.problem), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out.txt"));
  }
  CliRun candidates = run_cli(dir, {"candidates", "--graph", "graph.json", "--spec", "spec.json"});
  if (std::string(c.name) != "UncoveredNode") {
    EXPECT_EQ(candidates.status, 1) << candidates.err;
    EXPECT_EQ(candidates.out, "");
    EXPECT_TRUE(one_line(candidates.err)) << candidates.err;
  }
}

INSTANTIATE_TEST_SUITE_P(All, CliBadInput, ::testing::ValuesIn(kBadInputs),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// collage check on bad partitions.

/// The small graph's partitioning, as the tool writes it.
json small_partition(const fs::path& dir) {
  write_text(dir / "graph.json", kSmallGraph);
  write_text(dir / "spec.json", kSmallSpec);
  CliRun r = run_cli(dir, {"partition", "--graph", "graph.json", "--spec", "spec.json", "--out", "p.json"});
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(read_text(dir / "p.json"));
}

CliRun check(const fs::path& dir, const json& partition, bool with_spec = true) {
  write_text(dir / "bad.json", partition.dump());
  std::vector<std::string> args = {"check", "--graph", "graph.json", "--partition", "bad.json"};
  if (with_spec) args.insert(args.end(), {"--spec", "spec.json"});
  return run_cli(dir, args);
}

void expect_check_error(const CliRun& r, const std::string& place, const std::string& problem) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.rfind("collage: bad.json: " + place + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
}

TEST(CliCheck, ReportsEveryBrokenRule) {
  const fs::path dir = scratch_dir();
  const json p = small_partition(dir);
  ASSERT_EQ(p["partitions"].size(), 2u);  // lib: c, tvm: r
  EXPECT_EQ(check(dir, p).status, 0);

  json overlap = p;
  overlap["partitions"][1]["inside"].push_back("c");
  expect_check_error(check(dir, overlap), "/partitions/1/inside", "node 'c' is also in partition 0");

  json uncovered = p;
  uncovered["partitions"].erase(1);
  expect_check_error(check(dir, uncovered), "/partitions", "node 'r' needs a kernel but is in no partition");

  json unknown = p;
  unknown["partitions"][0]["inside"][0] = "zz";
  expect_check_error(check(dir, unknown), "/partitions/0/inside/0", "no node has id 'zz'");

  json cost = p;
  cost["partitions"][0]["cost"] = 7;
  expect_check_error(check(dir, cost), "/partitions/0/cost", "recorded cost 7 but spec.json gives 1");

  json total = p;
  total["total_cost"] = 1;
  expect_check_error(check(dir, total, false), "/total_cost", "recorded total 1 but the partitions add up to");

  json target = p;
  target["partitions"][0]["target"] = "gpu";
  expect_check_error(check(dir, target), "/partitions/0/target", "no target 'gpu' in spec.json");

  json not_candidate = p;
  not_candidate["partitions"][0]["nested"] = json::array();
  expect_check_error(check(dir, not_candidate), "/partitions/0", "not a candidate of target 'lib'");

  json host = p;
  host["host"].push_back("r");
  expect_check_error(check(dir, host), "/host/2", "node 'r' is in partition 1, not the host");

  json format = p;
  format["format"] = "collage-candidates/1";
  expect_check_error(check(dir, format), "/format", "wrong format tag");
}

TEST(CliCheck, RejectsConvexPartsThatFormACycle) {
  // a -> d, b -> c, a -> c, b -> d: {a, d} and {b, c} are each convex, but feed each other.
  const fs::path dir = scratch_dir();
  write_text(dir / "graph.json", R"({"format": "collage-graph/1", "nodes": [
    {"id": "x", "op": "input"}, {"id": "a", "op": "relu", "inputs": ["x"]}, {"id": "b", "op": "relu", "inputs": ["x"]},
    {"id": "c", "op": "add", "inputs": ["a", "b"]}, {"id": "d", "op": "add", "inputs": ["a", "b"]}],
    "outputs": ["c", "d"]})");
  json p = {{"format", "collage-partition/1"},
            {"partitions",
             {{{"target", "t"}, {"inside", {"a", "d"}}, {"cost", 1}}, {{"target", "t"}, {"inside", {"b", "c"}}, {"cost", 1}}}}};
  expect_check_error(check(dir, p, false), "/partitions", "the partitions form a cycle: partition");

  json acyclic = {{"format", "collage-partition/1"},
                    {"partitions",
                     {{{"target", "t"}, {"inside", {"a", "c"}}}, {{"target", "t"}, {"inside", {"b"}}},
                      {{"target", "t"}, {"inside", {"d"}}}}}};
  EXPECT_EQ(check(dir, acyclic, false).status, 0);

  write_text(dir / "graph.json", R"({"format": "collage-graph/1", "nodes": [
    {"id": "x", "op": "input"}, {"id": "a", "op": "relu", "inputs": ["x"]}, {"id": "b", "op": "relu", "inputs": ["a"]},
    {"id": "c", "op": "relu", "inputs": ["b"]}], "outputs": ["c"]})");
  json gap = {{"format", "collage-partition/1"},
              {"partitions", {{{"target", "t"}, {"inside", {"a", "c"}}}, {{"target", "t"}, {"inside", {"b"}}}}}};
  expect_check_error(check(dir, gap, false), "/partitions/0", "is not a valid sub-graph: not convex");
}

// ---------------------------------------------------------------------------------------------
// Tuples and constants.

TEST(CliTuples, PartitionsGraphsWithTuplesProjectionsAndConstants) {
  const fs::path dir = scratch_dir();
  write_text(dir / "graph.json", R"({"format": "collage-graph/1", "name": "tuples", "nodes": [
    {"id": 10, "op": "add", "inputs": [8, "s"]},
    {"id": 8, "op": "concatenate", "inputs": ["t"]},
    {"id": "t", "op": "tuple", "inputs": [5, 6]},
    {"id": 5, "op": "relu", "inputs": ["g0"]},
    {"id": 6, "op": "sigmoid", "inputs": ["g1"]},
    {"id": "g0", "op": "get_item", "inputs": ["split"], "attrs": {"index": 0}},
    {"id": "g1", "op": "get_item", "inputs": ["split"], "attrs": {"index": 1}},
    {"id": "split", "op": "split", "inputs": ["conv"]},
    {"id": "conv", "op": "conv2d", "inputs": ["x", "w"]},
    {"id": "w", "op": "const", "shape": [8, 3, 3, 3]},
    {"id": "s", "op": "const", "shape": []},
    {"id": "x", "op": "input", "shape": [1, 3, 32, 32]}],
    "outputs": [10]})");
  write_text(dir / "spec.json", R"({"format": "collage-spec/1", "targets": [
    {"name": "tvm", "rule": {"rule": "native", "max_depth": 4}},
    {"name": "lib", "rule": {"rule": "primitive", "sub": {"rule": "op_predicate", "ops": ["conv2d"], "constants": true}}}],
    "cost": {"model": "synthetic", "targets": {"tvm": {"launch": 1, "fusion": 0.5, "ops": {"*": 1, "conv2d": 10}},
                                               "lib": {"ops": {"conv2d": 2}}}}})");
  CliRun r = run_cli(dir, {"partition", "--graph", "graph.json", "--spec", "spec.json", "--out", "p.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json p = json::parse(read_text(dir / "p.json"));
  // Integer ids come back as integers; the scalar constant and the input stay with the host.
  bool saw_integer = false;
  json placed = json::array();
  for (const json& part : p["partitions"]) {
    for (const json& id : part["inside"]) {
      saw_integer = saw_integer || id.is_number_integer();
      placed.push_back(id);
    }
  }
  EXPECT_TRUE(saw_integer) << p.dump();
  for (const json& id : p["host"]) placed.push_back(id);
  EXPECT_EQ(placed.size(), 12u) << p.dump();
  EXPECT_NE(std::find(p["host"].begin(), p["host"].end(), json("s")), p["host"].end()) << p.dump();
  EXPECT_NE(std::find(p["host"].begin(), p["host"].end(), json("x")), p["host"].end()) << p.dump();
  // The library pulled the weight in with the convolution.
  EXPECT_EQ(p["partitions"][0]["target"], "lib") << p.dump();
  EXPECT_EQ(p["partitions"][0]["inside"], json({"w", "conv"})) << p.dump();

  CliRun c = run_cli(dir, {"check", "--graph", "graph.json", "--partition", "p.json", "--spec", "spec.json"});
  EXPECT_EQ(c.status, 0) << c.err;
  CliRun text = run_cli(dir, {"partition", "--graph", "graph.json", "--spec", "spec.json", "--format", "text"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("tuples: 12 nodes"), std::string::npos) << text.out;
}

// ---------------------------------------------------------------------------------------------
// A combine step cut at its candidate budget is reported, not silent.

TEST(CliWarnings, CandidateBudgetCutIsReported) {
  const fs::path dir = scratch_dir();
  json nodes = json::array({{{"id", "x"}, {"op", "input"}}});
  for (int i = 0; i < 20; ++i) {
    nodes.push_back({{"id", "r" + std::to_string(i)}, {"op", "relu"}, {"inputs", {i == 0 ? "x" : "r" + std::to_string(i - 1)}}});
  }
  write_text(dir / "graph.json", json({{"format", "collage-graph/1"}, {"nodes", nodes}, {"outputs", {"r19"}}}).dump());
  auto spec = [](int max_candidates) {
    return json::parse(R"({"format": "collage-spec/1", "targets": [
      {"name": "t", "rule": {"rule": "combine", "combiners": ["all"], "max_candidates": )" +
                       std::to_string(max_candidates) + R"(, "sub": {"rule": "op_kind", "max_kind": "opaque"}}}],
      "cost": {"model": "synthetic", "targets": {"t": {"launch": 1, "fusion": 0.9, "ops": {"*": 1}}}}})")
        .dump();
  };
  write_text(dir / "cut.json", spec(50));
  write_text(dir / "whole.json", spec(210));  // 20 * 21 / 2 runs: nothing is cut
  const std::string warning =
      "collage: warning: cut.json: target 't', rule 'combine' (combine): stopped at the rule's max_candidates (50)";
  for (const char* command : {"partition", "candidates"}) {
    CliRun r = run_cli(dir, {command, "--graph", "graph.json", "--spec", "cut.json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.rfind(warning, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    const json out = json::parse(r.out);
    ASSERT_TRUE(out.contains("warnings")) << r.out;
    ASSERT_EQ(out["warnings"].size(), 1u) << r.out;
    EXPECT_NE(out["warnings"][0].get<std::string>().find("rule 'combine' (combine): stopped at the rule's max_candidates"),
              std::string::npos);

    CliRun whole = run_cli(dir, {command, "--graph", "graph.json", "--spec", "whole.json"});
    ASSERT_EQ(whole.status, 0) << whole.err;
    EXPECT_EQ(whole.err, "");
    EXPECT_FALSE(json::parse(whole.out).contains("warnings")) << whole.out;
  }
  // With every run available the whole chain is one kernel; the cut one cannot find it.
  CliRun cut = run_cli(dir, {"partition", "--graph", "graph.json", "--spec", "cut.json"});
  CliRun whole = run_cli(dir, {"partition", "--graph", "graph.json", "--spec", "whole.json"});
  EXPECT_EQ(json::parse(whole.out)["partitions"].size(), 1u);
  EXPECT_GT(json::parse(cut.out)["total_cost"].get<double>(), json::parse(whole.out)["total_cost"].get<double>());
}

// ---------------------------------------------------------------------------------------------
// Issue 26's reproducer (62 nodes: splits read through projections, two tuples; a BYOC target of
// combine(all, depth 4)), which once gave no answer within 60 s with any searcher: every searcher
// answers, nothing is cut, and the answer checks.

TEST(CliWarnings, TheSlowCandidatesReproducerAnswersWithEverySearcherUncut) {
  const fs::path dir = scratch_dir();
  const std::string data = std::string(COLLAGE_SOURCE_DIR) + "/tools/collage/tests/data/";
  json spec = json::parse(read_text(data + "slow_candidates.spec.json"));
  for (const char* algorithm : {"exact", "beam", "greedy"}) {
    SCOPED_TRACE(algorithm);
    spec["search"]["algorithm"] = algorithm;
    write_text(dir / "spec.json", spec.dump());
    CliRun r = run_cli(dir, {"partition", "--graph", data + "slow_candidates.graph.json", "--spec", "spec.json",
                             "--out", "p.json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    CliRun c = run_cli(dir, {"check", "--graph", data + "slow_candidates.graph.json", "--partition", "p.json"});
    EXPECT_EQ(c.status, 0) << c.err;
  }
}

// ---------------------------------------------------------------------------------------------
// The tool's own output always checks as valid.

class CliRandom : public ::testing::TestWithParam<const char*> {};

TEST_P(CliRandom, CheckAcceptsTheToolsOwnPartitionings) {
  const fs::path dir = scratch_dir();
  write_text(dir / "spec.json", random_spec_json(GetParam()));
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 12; ++round) {
    // Each round keeps its files (graph-N.json, p-N.json), so a failure can be replayed.
    const std::string graph = "graph-" + std::to_string(round) + ".json";
    const std::string partition = "p-" + std::to_string(round) + ".json";
    const std::size_t n = std::uniform_int_distribution<std::size_t>(4, 36)(rng);
    write_text(dir / graph, random_graph_json(rng, n, round % 2 == 1));
    CliRun r = run_cli(dir, {"partition", "--graph", graph, "--spec", "spec.json", "--out", partition});
    ASSERT_EQ(r.status, 0) << graph << ": " << r.err;
    CliRun c = run_cli(dir, {"check", "--graph", graph, "--partition", partition, "--spec", "spec.json"});
    EXPECT_EQ(c.status, 0) << graph << ": " << c.err;
    CliRun recorded = run_cli(dir, {"check", "--graph", graph, "--partition", partition});
    EXPECT_EQ(recorded.status, 0) << graph << ": " << recorded.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Searches, CliRandom, ::testing::Values("exact", "beam", "greedy"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace collage_cli_test
