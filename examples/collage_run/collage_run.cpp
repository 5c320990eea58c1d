// collage-run: runs an ONNX model partitioned among the example compiler's backends by collage,
// checks its outputs, and compares collage's partitioning with every backend alone.
//
// Usage: collage-run MODEL.onnx [options]; collage-run --help describes them.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <collage/cost/caching_oracle.hpp>
#include <collage/support/numbers.hpp>

#include "onnx/reader.hpp"
#include "onnx/tensor_proto.hpp"
#include "costing/analytic_cost.hpp"
#include "driver/comparison.hpp"
#include "driver/configurations.hpp"
#include "backends/registry.hpp"
#include "costing/measuring_oracle.hpp"
#include "costing/measurement_session.hpp"
#include "collage_run/run_report.hpp"
#include "costing/transfer_costs.hpp"
#include "tensor/reference.hpp"

namespace {

using namespace tc;

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

const char* const kHelp =
    "usage: collage-run MODEL.onnx [options]\n"
    "\n"
    "Loads an ONNX model, partitions it among the example compiler's backends with collage, runs it and\n"
    "checks its outputs (against --test-data, else against the reference interpreter on seeded random\n"
    "inputs). Exit status: 0 when the outputs match, 1 on a mismatch or bad input (one line names it),\n"
    "2 on a bad command line.\n"
    "\n"
    "options:\n"
    "  --backend NAME        run NAME alone, with native taking the ops it lacks (default: collage over all)\n"
    "  --compare             run every configuration (each backend alone, greedy, collage) and compare them\n"
    "  --test-data DIR       inputs and expected outputs in the ONNX layout (DIR/input_N.pb, DIR/output_N.pb)\n"
    "  --rtol R, --atol A    tolerances of the output check (default 1e-3, 1e-4)\n"
    "  --seed N              seed of the random inputs (default 1)\n"
    "  --cost measured|analytic   the cost model (default measured: each candidate compiled and timed)\n"
    "  --db FILE|URL         keep measurements in this SQLite database, or on the PostgreSQL server at\n"
    "                        URL (postgresql://user@host:5432/dbname); reused by later runs and machines\n"
    "  --tuning-budget SECONDS    stop measuring after this long; the rest are Unknown (default: none)\n"
    "  --threads N           oneDNN's kernels on N threads (default 1; the other CPU backends run on one)\n"
    "  --cold-caches         evict the CPU caches before each timed run of a candidate (its cost inside a\n"
    "                        model too large for the caches, rather than alone and warm)\n"
    "  --refine SECONDS      with --compare: refine collage's partitioning for this long by evolutionary\n"
    "                        search with the whole model's measured latency as fitness (\"collage+evo\")\n"
    "  --explain             for each partition, the alternatives the search had and why each lost\n"
    "  --profile             time each partition inside the running model against its cost measured alone\n"
    "                        (where the additive cost model's error comes from)\n"
    "  --json FILE           write the results as JSON\n"
    "  --dot FILE            draw the model coloured by backend (also FILE.png when Graphviz is installed)\n"
    "  --backends A,B,...    use only these backends (native is always added)\n"
    "\n"
    "examples:\n"
    "  collage-run build/models/resnet-mini.onnx --compare --db build/measurements.db\n"
    "  collage-run model.onnx --test-data test_data_set_0 --backend onednn\n";

struct Options {
  std::string model;
  std::string backend;
  std::vector<std::string> backends;
  bool compare = false;
  std::string test_data;
  double rtol = 1e-3;
  double atol = 1e-4;
  std::uint64_t seed = 1;
  bool measured = true;
  std::string db;
  double tuning_budget = 0;
  double refine = 0;
  bool cold_caches = false;
  int threads = 1;
  bool explain = false;
  bool profile = false;
  std::string json;
  std::string dot;
};

int usage(const std::string& message) {
  std::fprintf(stderr, "collage-run: %s\n(collage-run --help describes the options)\n", message.c_str());
  return kUsage;
}

/// Parses argv into `out`; returns an exit status when the run should stop (help or an error).
std::optional<int> parse(int argc, char** argv, Options& out) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto number = [](const std::string& text, double& v) {
    auto d = collage::parse_double(text);
    if (!d || !(*d >= 0) || *d == INFINITY) return false;
    v = *d;
    return true;
  };
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    auto value = [&]() -> const std::string* { return k + 1 < args.size() ? &args[++k] : nullptr; };
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kOk;
    }
    if (a == "--compare") {
      out.compare = true;
    } else if (a == "--cold-caches") {
      out.cold_caches = true;
    } else if (a == "--explain") {
      out.explain = true;
    } else if (a == "--profile") {
      out.profile = true;
    } else if (a == "--backend" || a == "--test-data" || a == "--db" || a == "--json" || a == "--dot" ||
               a == "--cost" || a == "--backends") {
      const std::string* v = value();
      if (v == nullptr || v->empty()) return usage("option '" + a + "' needs a value");
      if (a == "--backend") out.backend = *v;
      if (a == "--test-data") out.test_data = *v;
      if (a == "--db") out.db = *v;
      if (a == "--json") out.json = *v;
      if (a == "--dot") out.dot = *v;
      if (a == "--backends") {
        std::size_t start = 0;
        while (start <= v->size()) {
          const std::size_t comma = v->find(',', start);
          const std::string name = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
          if (!name.empty()) out.backends.push_back(name);
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      }
      if (a == "--cost") {
        if (*v != "measured" && *v != "analytic") return usage("--cost must be 'measured' or 'analytic'");
        out.measured = *v == "measured";
      }
    } else if (a == "--rtol" || a == "--atol" || a == "--tuning-budget" || a == "--refine") {
      const std::string* v = value();
      double d = 0;
      if (v == nullptr || !number(*v, d)) return usage("option '" + a + "' needs a non-negative number");
      if (a == "--rtol") out.rtol = d;
      if (a == "--atol") out.atol = d;
      if (a == "--tuning-budget") out.tuning_budget = d;
      if (a == "--refine") out.refine = d;
    } else if (a == "--threads") {
      const std::string* v = value();
      auto n = v ? collage::parse_index(*v) : std::nullopt;
      if (!n || *n < 1 || *n > 1024) return usage("option '--threads' needs an integer from 1 to 1024");
      out.threads = static_cast<int>(*n);
    } else if (a == "--seed") {
      const std::string* v = value();
      auto s = v ? collage::parse_index(*v) : std::nullopt;
      if (!s) return usage("option '--seed' needs a non-negative integer");
      out.seed = *s;
    } else if (a.rfind("--", 0) == 0) {
      return usage("unknown option '" + a + "'");
    } else if (out.model.empty()) {
      out.model = a;
    } else {
      return usage("unexpected argument '" + a + "'");
    }
  }
  if (out.model.empty()) return usage("no model given");
  if (out.compare && !out.backend.empty()) return usage("--compare and --backend exclude each other");
  if (out.refine > 0 && !out.compare) return usage("--refine needs --compare");
  return std::nullopt;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "collage-run: %s\n", message.c_str());
  return kFailed;
}

/// The inputs and expected outputs of the run.
struct Data {
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  std::string source;
};

collage::Result<Data> load_test_data(const Graph& model, const std::string& dir) {
  Data d;
  d.source = "test data " + dir;
  for (std::size_t k = 0; k < model.inputs().size(); ++k) {
    auto t = read_tensor_file(dir + "/input_" + std::to_string(k) + ".pb");
    if (!t.ok()) return t.error();
    auto f = to_float32(*t, "input " + std::to_string(k));
    if (!f.ok()) return f.error();
    d.inputs.push_back(std::move(f).value());
  }
  for (std::size_t k = 0; k < model.outputs().size(); ++k) {
    auto t = read_tensor_file(dir + "/output_" + std::to_string(k) + ".pb");
    if (!t.ok()) return t.error();
    auto f = to_float32(*t, "output " + std::to_string(k));
    if (!f.ok()) return f.error();
    d.expected.push_back(std::move(f).value());
  }
  return d;
}

collage::Result<Data> random_run_data(const Graph& model, std::uint64_t seed) {
  Data d;
  d.source = "the reference interpreter on random inputs (seed " + std::to_string(seed) + ")";
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int in : model.inputs()) {
    Tensor t(model.node(in).shape);
    for (float& v : t.data) v = dist(rng);
    d.inputs.push_back(std::move(t));
  }
  auto expected = evaluate(model, d.inputs);
  if (!expected.ok()) return expected.error();
  d.expected = std::move(expected).value();
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (std::optional<int> stop = parse(argc, argv, options)) return *stop;

  collage::Result<Graph> model = read_onnx(options.model);
  if (!model.ok()) return fail(options.model + ": " + model.error().message);
  auto dataflow = collage::DataflowGraph<Graph>::build(*model);
  if (!dataflow.ok()) return fail(options.model + ": " + dataflow.error().message);

  collage::Result<Data> data = options.test_data.empty() ? random_run_data(*model, options.seed)
                                                         : load_test_data(*model, options.test_data);
  if (!data.ok()) return fail(data.error().message);

  DefaultDevices devices = make_default_devices();
  for (const std::string& line : devices.unavailable) std::fprintf(stderr, "collage-run: %s\n", line.c_str());
  std::vector<std::string> skipped;
  BackendSet all_backends = make_default_backends(devices.set, &skipped, BackendOptions{options.threads});
  for (const std::string& line : skipped) std::fprintf(stderr, "collage-run: %s\n", line.c_str());
  for (const std::string& name : options.backends) {
    if (all_backends.find(name) == nullptr) {
      return fail("no backend named '" + name + "' (available: " + join(all_backends.names(), ", ") + ")");
    }
  }
  BackendSet backends = select_backends(std::move(all_backends), options.backends);
  if (!options.backend.empty() && backends.find(options.backend) == nullptr) {
    return fail("no backend named '" + options.backend + "' (available: " + join(backends.names(), ", ") + ")");
  }

  RunReport report;
  report.model = std::filesystem::path(options.model).filename().string();
  report.nodes = model->size();
  report.data_source = data->source;
  report.device = devices.set.find(DeviceKind::cpu)->name();

  std::unique_ptr<MeasurementSession> measurements;
  std::unique_ptr<collage::CostOracle<Graph>> oracle;
  if (options.measured) {
    KernelTimingOptions timing;
    timing.timing.warmups = 1;
    timing.timing.min_repeats = 5;
    timing.timing.max_repeats = 50;
    timing.timing.max_seconds = 0.5;
    timing.cold_caches = options.cold_caches;
    auto opened = MeasurementSession::open(backends, devices.set, timing, options.db);
    if (!opened.ok()) return fail(opened.error().message);
    measurements = std::move(opened).value();
    if (!measurements->warning().empty()) std::fprintf(stderr, "collage-run: %s\n", measurements->warning().c_str());
    report.cost_model = measurements->describe();
  } else {
    oracle = make_analytic_oracle(backends, devices.set, default_analytic_rates());
    report.cost_model = "analytic (flops and bytes; nothing measured)";
  }
  collage::CostOracle<Graph>& cost = options.measured ? measurements->oracle() : *oracle;

  ComparisonOptions compare;
  compare.rtol = options.rtol;
  compare.atol = options.atol;
  compare.timing.warmups = 2;
  compare.timing.min_repeats = 7;
  compare.timing.max_repeats = 200;
  compare.timing.max_seconds = 2.0;
  ProgressBar progress(::isatty(2) != 0);
  compare.partitioner.progress = progress.callback();
  if (options.profile) compare.profile_runs = 20;
  if (options.tuning_budget > 0) compare.partitioner.budget.max_seconds = options.tuning_budget;
  compare.refine_seconds = options.refine;
  compare.refine_timing.warmups = 1;
  compare.refine_timing.min_repeats = 5;
  compare.refine_timing.max_repeats = 30;
  compare.refine_timing.max_seconds = 0.3;
  compare.refine_seed = options.seed;

  if (uses_a_gpu(backends)) {
    Device& gpu = *devices.set.find(DeviceKind::cuda);
    collage::TimingOptions link_timing;
    link_timing.max_seconds = 0.5;
    collage::Result<LinkSpeed> link = measure_link(gpu, link_timing);
    if (!link.ok()) return fail(gpu.name() + ": timing host<->device copies failed: " + link.error().message);
    compare.partitioner.transfers = transfer_model(*dataflow, backends, *link);
    char text[160];
    std::snprintf(text, sizeof text, "host<->%s measured at %.1f GB/s + %.1f us per copy, charged by the search",
                  gpu.name().c_str(), link->bytes_per_second / 1e9, link->seconds_per_copy * 1e6);
    report.transfers = text;
  }

  std::vector<Configuration> configurations;
  if (options.compare) {
    configurations = standard_configurations(backends);
  } else if (!options.backend.empty()) {
    configurations.push_back(single_backend_configuration(options.backend));
  } else {
    configurations.push_back(Configuration{"collage", backends.names(), collage::SearchAlgorithm::exact});
  }
  report.results = compare_configurations(*dataflow, data->inputs, data->expected, configurations, backends, devices.set,
                                          cost, compare);
  progress.finish();
  for (const ConfigurationResult& r : report.results) {
    if (r.partition && !r.refinement) report.tuning_seconds += r.partition->seconds.total;
  }
  if (measurements) {
    report.measurements = measurements->measured();
    report.db_hits = measurements->stored_hits();
  }

  std::fputs(format_report(*dataflow, report, options.explain).c_str(), stdout);
  if (options.profile) std::fputs(format_profile(*dataflow, report).c_str(), stdout);
  if (!options.json.empty()) {
    if (collage::Status s = write_text_file(options.json, report_json(*dataflow, report)); !s.ok()) return fail(s.message());
  }
  if (!options.dot.empty()) {
    if (collage::Status s = write_dot(*dataflow, report, options.dot); !s.ok()) return fail(s.message());
  }
  if (measurements && measurements->store_failures() != 0) {
    std::fprintf(stderr, "collage-run: %zu lookups or writes of the measurement database failed (the last: %s)\n",
                 measurements->store_failures(), measurements->database()->last_error().c_str());
  }
  for (const ConfigurationResult& r : report.results) {
    if (!r.error.empty() || !r.matches) return kFailed;
  }
  return kOk;
}
