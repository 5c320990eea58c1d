// collage-run: runs an ONNX model partitioned among the example compiler's backends by collage,
// checks its outputs, and compares collage's partitioning with every backend alone.
//
// Usage: collage-run MODEL.onnx [options]; collage-run --help describes them.

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
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
#include "tensor/op_attrs.hpp"
#include "tensor/reference.hpp"
#include "distributed/cluster.hpp"
#include "distributed/mpi_transport.hpp"
#include "distributed/serve.hpp"
#include "distributed/spread_oracle.hpp"
#include "distributed/wire.hpp"

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
    "inputs). Collage's choice runs unless the single-backend configuration the search estimates\n"
    "cheapest is measured faster end to end (the guard; the report's \"runs:\" line says which). Exit\n"
    "status: 0 when the outputs match, 1 on a mismatch or bad input (one line names it), 2 on a bad\n"
    "command line.\n"
    "\n"
    "options:\n"
    "  --backend NAME        run NAME alone, with its device's fallback taking the ops it lacks (native on\n"
    "                        the CPU, cuda on a GPU; default: collage over all)\n"
    "  --compare             run every configuration (each backend alone, the GPU libraries, greedy,\n"
    "                        collage) and compare them\n"
    "  --test-data DIR       inputs and expected outputs in the ONNX layout (DIR/input_N.pb, DIR/output_N.pb);\n"
    "                        their shapes size the model's dynamic dimensions\n"
    "  --dim NAME=SIZE       the size of the model's dynamic dimension NAME (dim_param); repeatable\n"
    "  --input-shape NAME=D1,D2,...   the shape of graph input NAME, replacing the model's; repeatable\n"
    "  --rtol R, --atol A    tolerances of the output check (default 1e-3, 1e-4)\n"
    "  --seed N              seed of the random inputs (default 1; an integer input a Gather indexes\n"
    "                        holds random indices in range, any other integer input ones)\n"
    "  --cost measured|analytic   the cost model (default measured: each candidate compiled and timed)\n"
    "  --db FILE|URL         keep measurements in this SQLite database, or on the PostgreSQL server at\n"
    "                        URL (postgresql://user@host:5432/dbname); reused by later runs and machines\n"
    "  --tuning-budget SECONDS    per search (each configuration's): stop measuring after this long; the\n"
    "                        rest are Unknown unless measured before (default: none)\n"
    "  --threads N           the CPU backends' kernels (oneDNN, native, Eigen) on N threads, one pool\n"
    "                        shared by all (default 1)\n"
    "  --no-record           on a GPU, launch every step from the host instead of recording the run's\n"
    "                        GPU work as CUDA graphs and replaying them (and time candidates the same way)\n"
    "  --no-blocked-layouts  leave out the onednn backends that keep values in the CPU's blocked layout\n"
    "                        (onednn_blocked, onednn_winograd_blocked; by default made, the search\n"
    "                        charging the reorders between layouts as it charges copies between devices)\n"
    "  --no-concat-in-place  copy every Concat (default: a lone Concat whose inputs are contiguous slices\n"
    "                        of its result, each computed by another part and read by nothing else, has\n"
    "                        them written straight into it and runs nothing)\n"
    "  --ieee-denormals      keep IEEE denormal floats on the CPU (default: flushed to zero, as inference\n"
    "                        runtimes do; random-weight models fill with denormals, 10-100x slower)\n"
    "  --cold-caches         evict the device's caches (CPU caches, GPU L2) before each timed run of a\n"
    "                        candidate (its cost inside a model too large for the caches, rather than\n"
    "                        alone and warm); on a GPU each launch is then timed alone\n"
    "  --warm-caches         on the CPU, time each candidate warm, run over and over (default: a batch's\n"
    "                        candidates in turns, the rest of the model's bytes written through the\n"
    "                        caches before each round and each candidate's inputs read back before it)\n"
    "  --cold-weights        on a GPU whose L2 cache holds less than twice the model's weights, time each\n"
    "                        recorded launch of a candidate with weights after a read that evicts the L2\n"
    "                        and a read of its inputs, taking their own time off (default: back to back)\n"
    "  --search-costs        estimate each configuration from the costs the search chose its parts by\n"
    "                        (default: its parts timed again, together, once the search is done: the\n"
    "                        lowest of many noisy measurements win the search, so those costs lean low)\n"
    "  --pooled-searches N   search a configuration of several backends up to N more times (default 0),\n"
    "                        each time with the costs of the parts the last search chose pooled with\n"
    "                        their times taken again, until it chooses the same parts twice\n"
    "  --refine SECONDS      with --compare: refine collage's partitioning for this long by evolutionary\n"
    "                        search with the whole model's measured latency as fitness (\"collage+evo\")\n"
    "  --explain             for each partition, the alternatives the search had and why each lost\n"
    "  --profile             time each partition inside the running model against its cost measured alone\n"
    "                        (where the additive cost model's error comes from)\n"
    "  --json FILE           write the results as JSON\n"
    "  --dot FILE            draw the model coloured by backend (also FILE.png when Graphviz is installed)\n"
    "  --backends A,B,...    use only these backends (each one's fallback and native are added)\n"
    "  --rank-timeout SECONDS   under mpirun: give up a rank that spends longer on one candidate\n"
    "                        (default 300)\n"
    "\n"
    "Under mpirun (mpirun -np N collage-run MODEL ...), rank 0 runs as above while ranks 1 to N-1\n"
    "measure candidates for it, each on its own devices; give mpirun --enable-recovery so that a rank\n"
    "that dies costs its candidate (Invalid, with the reason), not the job.\n"
    "\n"
    "examples:\n"
    "  collage-run build/models/resnet-mini.onnx --compare --db build/measurements.db\n"
    "  collage-run model.onnx --test-data test_data_set_0 --backend onednn\n"
    "  mpirun --enable-recovery -np 4 collage-run model.onnx --db postgresql://tuner@dbhost/collage\n";

struct Options {
  std::string model;
  std::string backend;
  std::vector<std::string> backends;
  bool compare = false;
  std::string test_data;
  std::map<std::string, std::int64_t> dims;   // --dim
  std::map<std::string, Shape> input_shapes;  // --input-shape
  double rtol = 1e-3;
  double atol = 1e-4;
  std::uint64_t seed = 1;
  bool measured = true;
  std::string db;
  double tuning_budget = 0;
  double refine = 0;
  bool cold_caches = false;
  bool warm_caches = false;
  bool search_costs = false;
  bool cold_weights = false;
  int threads = 1;
  std::size_t pooled_searches = 0;
  bool blocked_layouts = true;
  bool record = true;
  bool concat_in_place = true;
  bool ieee_denormals = false;
  bool explain = false;
  bool profile = false;
  std::string json;
  std::string dot;
  double rank_timeout = 300;
};

int usage(const std::string& message) {
  std::fprintf(stderr, "collage-run: %s\n(collage-run --help describes the options)\n", message.c_str());
  return kUsage;
}

/// Parses the arguments (argv without the program) into `out`; returns an exit status when the
/// run should stop (help or an error).
std::optional<int> parse(const std::vector<std::string>& args, Options& out) {
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
    } else if (a == "--ieee-denormals") {
      out.ieee_denormals = true;
    } else if (a == "--no-record") {
      out.record = false;
    } else if (a == "--no-concat-in-place") {
      out.concat_in_place = false;
    } else if (a == "--cold-caches") {
      out.cold_caches = true;
    } else if (a == "--blocked-layouts") {
      out.blocked_layouts = true;
    } else if (a == "--no-blocked-layouts") {
      out.blocked_layouts = false;
    } else if (a == "--warm-caches") {
      out.warm_caches = true;
    } else if (a == "--search-costs") {
      out.search_costs = true;
    } else if (a == "--cold-weights") {
      out.cold_weights = true;
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
    } else if (a == "--rtol" || a == "--atol" || a == "--tuning-budget" || a == "--refine" || a == "--rank-timeout") {
      const std::string* v = value();
      double d = 0;
      if (v == nullptr || !number(*v, d)) return usage("option '" + a + "' needs a non-negative number");
      if (a == "--rtol") out.rtol = d;
      if (a == "--atol") out.atol = d;
      if (a == "--tuning-budget") out.tuning_budget = d;
      if (a == "--refine") out.refine = d;
      if (a == "--rank-timeout") {
        if (d == 0) return usage("option '--rank-timeout' needs a positive number");
        out.rank_timeout = d;
      }
    } else if (a == "--dim" || a == "--input-shape") {
      const std::string* v = value();
      const std::size_t eq = v ? v->rfind('=') : std::string::npos;
      if (eq == std::string::npos || eq == 0) return usage("option '" + a + "' needs NAME=" + (a == "--dim" ? "SIZE" : "D1,D2,..."));
      const std::string name = v->substr(0, eq);
      std::vector<std::int64_t> sizes;
      for (std::size_t start = eq + 1; start < v->size();) {
        const std::size_t comma = std::min(v->find(',', start), v->size());
        const auto n = collage::parse_index(std::string_view(*v).substr(start, comma - start));
        if (!n || *n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
          return usage("option '" + a + "': '" + *v + "' holds a size that is not a non-negative integer");
        }
        sizes.push_back(static_cast<std::int64_t>(*n));
        start = comma + 1;
      }
      if (a == "--dim") {
        if (sizes.size() != 1) return usage("option '--dim' needs NAME=SIZE");
        out.dims[name] = sizes[0];
      } else {
        out.input_shapes[name] = Shape(sizes.begin(), sizes.end());
      }
    } else if (a == "--threads") {
      const std::string* v = value();
      auto n = v ? collage::parse_index(*v) : std::nullopt;
      if (!n || *n < 1 || *n > 1024) return usage("option '--threads' needs an integer from 1 to 1024");
      out.threads = static_cast<int>(*n);
    } else if (a == "--pooled-searches") {
      const std::string* v = value();
      auto n = v ? collage::parse_index(*v) : std::nullopt;
      if (!n || *n > 100) return usage("option '--pooled-searches' needs an integer from 0 to 100");
      out.pooled_searches = *n;
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

/// How the options ask the model to be read: --dim, --input-shape, and the shapes of the test
/// data's inputs.
collage::Result<ReadOptions> read_options(const Options& options) {
  ReadOptions r;
  r.dim_params = options.dims;
  r.input_shapes = options.input_shapes;
  for (std::size_t k = 0; !options.test_data.empty(); ++k) {
    const std::string path = options.test_data + "/input_" + std::to_string(k) + ".pb";
    if (!std::filesystem::exists(path)) break;
    auto t = read_tensor_file(path);
    if (!t.ok()) return t.error();
    r.input_shapes_in_order.push_back(t->shape);
  }
  return r;
}

collage::Result<Data> load_test_data(const Graph& model, const std::string& dir) {
  Data d;
  d.source = "test data " + dir;
  for (std::size_t k = 0; k < model.inputs().size(); ++k) {
    auto t = read_tensor_file(dir + "/input_" + std::to_string(k) + ".pb");
    if (!t.ok()) return t.error();
    const std::string what = "input " + std::to_string(k);
    auto f = input_domain(model.node(model.inputs()[k])).integer() ? integers_as_float32(*t, what) : to_float32(*t, what);
    if (!f.ok()) return f.error();
    d.inputs.push_back(std::move(f).value());
  }
  if (collage::Status s = check_input_values(model, d.inputs); !s.ok()) return s.error();
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
    const InputDomain domain = input_domain(model.node(in));
    if (domain.index_bound > 0) {
      std::uniform_int_distribution<std::int64_t> index(0, domain.index_bound - 1);
      for (float& v : t.data) v = static_cast<float>(index(rng));
    } else if (domain.integer()) {
      std::fill(t.data.begin(), t.data.end(), 1.0f);  // a mask that keeps every position
    } else {
      for (float& v : t.data) v = dist(rng);
    }
    d.inputs.push_back(std::move(t));
  }
  auto expected = evaluate(model, d.inputs);
  if (!expected.ok()) return expected.error();
  d.expected = std::move(expected).value();
  return d;
}

/// The devices and backends a run uses, as its options ask, and a line for each left out.
struct Machine {
  DefaultDevices devices;
  BackendSet backends;
  std::vector<std::string> notes;
};

collage::Result<std::unique_ptr<Machine>> set_up_machine(const Options& options) {
  auto m = std::make_unique<Machine>();
  m->devices = make_default_devices();
  m->notes = m->devices.unavailable;
  BackendSet all =
      make_default_backends(m->devices.set, &m->notes, BackendOptions{options.threads, options.blocked_layouts});
  for (const std::string& name : options.backends) {
    if (all.find(name) == nullptr) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            "no backend named '" + name + "' (available: " + join(all.names(), ", ") + ")"};
    }
  }
  m->backends = select_backends(std::move(all), options.backends);
  if (!options.backend.empty() && m->backends.find(options.backend) == nullptr) {
    return collage::Error{collage::ErrorCode::invalid_argument, "no backend named '" + options.backend +
                                                                    "' (available: " + join(m->backends.names(), ", ") + ")"};
  }
  return m;
}

/// How candidates are timed.
KernelTimingOptions candidate_timing(const Options& options, const Graph& model) {
  KernelTimingOptions timing;
  timing.timing.warmups = 1;
  timing.timing.min_repeats = 5;
  timing.timing.max_repeats = 50;
  timing.timing.max_seconds = 0.5;
  timing.cold_caches = options.cold_caches;
  if (!options.warm_caches && !options.cold_caches) timing.model_bytes = model_cache_bytes(model);
  if (options.cold_weights && !options.cold_caches) timing.model_weight_bytes = weight_bytes(model);
  if (!options.record) timing.recorded_launches = 0;
  timing.flush_denormals = !options.ieee_denormals;
  timing.cpu_threads = options.threads;
  return timing;
}

/// The cost model the options ask for, unwrapped (the measuring oracle or the analytic one).
std::unique_ptr<collage::CostOracle<Graph>> plain_cost_model(const Options& options, const Machine& m, const Graph& model) {
  if (options.measured) return make_measuring_oracle(m.backends, m.devices.set, candidate_timing(options, model));
  return make_analytic_oracle(m.backends, m.devices.set, default_analytic_rates());
}

/// What the cost model's answers depend on; ranks whose identity differs from rank 0's do not
/// measure for it.
std::string cost_identity(const Options& options, const Machine& m, const Graph& model) {
  return (options.measured ? "measured|" : "analytic|") +
         measuring_oracle_version(m.backends, m.devices.set, candidate_timing(options, model));
}

/// A serving rank's model, machine and cost model, made from rank 0's setup: its arguments, then
/// the model's bytes.
class RunMeasurer final : public Measurer {
 public:
  static collage::Result<std::unique_ptr<Measurer>> make(std::string_view setup) {
    auto fields = unpack(setup);
    if (!fields.ok() || fields->empty()) return collage::Error{collage::ErrorCode::parse, "a malformed setup"};
    std::unique_ptr<RunMeasurer> r(new RunMeasurer());
    std::vector<std::string> args(fields->begin(), fields->end() - 1);
    if (parse(args, r->options_)) return collage::Error{collage::ErrorCode::invalid_argument, "rank 0's options"};
    r->options_.test_data.clear();  // rank 0 sends its inputs' shapes (--input-shape)
    auto read = read_options(r->options_);
    if (!read.ok()) return read.error();
    read->external_data_dir = std::filesystem::path(r->options_.model).parent_path().string();
    if (read->external_data_dir.empty()) read->external_data_dir = ".";
    auto model = read_onnx_bytes(fields->back(), *read);
    if (!model.ok()) return model.error();
    r->model_ = std::make_unique<Graph>(std::move(model).value());
    auto dataflow = collage::DataflowGraph<Graph>::build(*r->model_);
    if (!dataflow.ok()) return dataflow.error();
    r->dataflow_.emplace(std::move(dataflow).value());
    auto machine = set_up_machine(r->options_);
    if (!machine.ok()) return machine.error();
    r->machine_ = std::move(machine).value();
    r->oracle_ = plain_cost_model(r->options_, *r->machine_, *r->model_);
    return std::unique_ptr<Measurer>(std::move(r));
  }

  std::string identity() const override { return cost_identity(options_, *machine_, *model_); }
  collage::Result<collage::Measurement> measure(std::string_view record) override {
    return measure_record(*oracle_, *dataflow_, record);
  }
  std::vector<collage::Result<collage::Measurement>> measure_batch(const std::vector<std::string>& records) override {
    return measure_records(*oracle_, *dataflow_, records);
  }

 private:
  RunMeasurer() = default;
  Options options_;
  std::unique_ptr<Graph> model_;
  std::optional<collage::DataflowGraph<Graph>> dataflow_;
  std::unique_ptr<Machine> machine_;
  std::unique_ptr<collage::CostOracle<Graph>> oracle_;
};

/// Rank 0's side of an mpirun job: the transport, and the ranks measuring for it. Ends the job
/// when it goes (the other ranks are told to stop; MPI_Abort when one was given up).
class DistributedRun {
 public:
  DistributedRun(std::unique_ptr<MpiTransport> mpi, ClusterOptions options)
      : mpi_(std::move(mpi)), cluster_(*mpi_, std::move(options)) {}
  DistributedRun(const DistributedRun&) = delete;
  DistributedRun& operator=(const DistributedRun&) = delete;
  ~DistributedRun() { end(kFailed); }

  Cluster& cluster() { return cluster_; }

  /// Ends the job with `status` (returned when the job ends cleanly).
  int end(int status) {
    if (ended_) return status;
    ended_ = true;
    const bool clean = cluster_.finish();
    if (!clean) std::fprintf(stderr, "collage-run: a rank was given up or did not stop; ending the job (MPI_Abort)\n");
    return mpi_->end(status, clean);
  }

 private:
  std::unique_ptr<MpiTransport> mpi_;
  Cluster cluster_;
  bool ended_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (std::optional<int> stop = parse(args, options)) return *stop;

  // Under mpirun, the ranks other than 0 serve measurements; rank 0 runs the tool.
  std::unique_ptr<DistributedRun> distributed;
  ClusterOptions cluster_options;
  cluster_options.candidate_timeout_seconds = options.rank_timeout;
  cluster_options.notify = [](const std::string& line) { std::fprintf(stderr, "collage-run: %s\n", line.c_str()); };
  if (std::optional<MpiLaunch> launch = mpi_launch(); launch && launch->size > 1) {
    if (!have_mpi()) {
      if (launch->rank != 0) return kOk;
      std::fprintf(stderr, "collage-run: this build has no MPI: rank 0 measures alone, the other ranks exit\n");
    } else {
      auto mpi = MpiTransport::start(&argc, &argv);
      if (!mpi.ok()) return fail(mpi.error().message);
      if ((*mpi)->rank() != 0) {
        std::string why;
        if (serve(**mpi, RunMeasurer::make, cluster_options.silence_timeout_seconds, &why) == ServeEnd::stopped) {
          return (*mpi)->end(kOk, true);
        }
        std::fprintf(stderr, "collage-run: rank %d: %s\n", (*mpi)->rank(), why.c_str());
        return (*mpi)->end(kFailed, false);
      }
      if (!launch->recovery) {
        std::fprintf(stderr, "collage-run: mpirun without --enable-recovery: a rank that dies ends the whole job\n");
      }
      distributed = std::make_unique<DistributedRun>(std::move(mpi).value(), cluster_options);
    }
  }

  collage::Result<ReadOptions> read = read_options(options);
  if (!read.ok()) return fail(read.error().message);
  collage::Result<Graph> model = read_onnx(options.model, *read);
  if (!model.ok()) return fail(model.error().message);  // read_onnx names the file
  auto dataflow = collage::DataflowGraph<Graph>::build(*model);
  if (!dataflow.ok()) return fail(options.model + ": " + dataflow.error().message);

  collage::Result<Data> data = options.test_data.empty() ? random_run_data(*model, options.seed)
                                                         : load_test_data(*model, options.test_data);
  if (!data.ok()) return fail(data.error().message);

  auto machine = set_up_machine(options);
  if (!machine.ok()) return fail(machine.error().message);
  for (const std::string& line : (*machine)->notes) std::fprintf(stderr, "collage-run: %s\n", line.c_str());
  DefaultDevices& devices = (*machine)->devices;
  BackendSet& backends = (*machine)->backends;
  Cluster* cluster = nullptr;
  if (distributed) {
    auto model_bytes = read_file_bytes(options.model);
    if (!model_bytes.ok()) return fail(model_bytes.error().message);
    std::vector<std::string> setup = args;
    for (int in : model->inputs()) {  // the shapes this rank read, whatever sized them
      std::string shape;
      for (std::int64_t d : model->node(in).shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
      setup.push_back("--input-shape");
      setup.push_back(model->node(in).name + "=" + shape);
    }
    setup.push_back(std::move(model_bytes).value());
    cluster = &distributed->cluster();
    cluster->join(pack(setup), cost_identity(options, **machine, *model));
  }
  // Spread over the ranks, the oracle is given whole batches, reports progress and keeps the
  // tuning budget itself.
  const bool spread = cluster != nullptr && cluster->serving().size() > 1;
  auto spread_over_ranks = [&](std::unique_ptr<collage::CostOracle<Graph>> local,
                               std::size_t* timed) -> std::unique_ptr<collage::CostOracle<Graph>> {
    return std::make_unique<SpreadOracle<Graph>>(std::move(local), *cluster, timed);
  };

  RunReport report;
  report.model = std::filesystem::path(options.model).filename().string();
  report.nodes = model->size();
  report.data_source = data->source;
  report.device = devices.set.find(DeviceKind::cpu)->name();

  std::unique_ptr<MeasurementSession> measurements;
  std::unique_ptr<collage::CostOracle<Graph>> oracle;
  if (options.measured) {
    auto opened = MeasurementSession::open(backends, devices.set, candidate_timing(options, *model), options.db,
                                           spread ? OracleWrap(spread_over_ranks) : OracleWrap());
    if (!opened.ok()) return fail(opened.error().message);
    measurements = std::move(opened).value();
    if (!measurements->warning().empty()) std::fprintf(stderr, "collage-run: %s\n", measurements->warning().c_str());
    report.cost_model = measurements->describe();
  } else {
    oracle = plain_cost_model(options, **machine, *model);
    if (spread) oracle = spread_over_ranks(std::move(oracle), nullptr);
    report.cost_model = "analytic (flops and bytes; nothing measured)";
  }
  collage::CostOracle<Graph>& cost = options.measured ? measurements->oracle() : *oracle;

  ComparisonOptions compare;
  compare.executable.record = options.record;
  compare.executable.concat_in_place = options.concat_in_place;
  compare.executable.flush_denormals = !options.ieee_denormals;
  compare.executable.cpu_threads = options.threads;
  compare.rtol = options.rtol;
  compare.atol = options.atol;
  compare.timing.warmups = 2;
  compare.timing.min_repeats = 7;
  compare.timing.max_repeats = 200;
  compare.timing.max_seconds = 2.0;
  collage::ProgressReporter progress(measuring_progress(::isatty(2) != 0));
  if (spread) {
    cluster->options().progress = progress.callback();
    cluster->options().max_seconds_per_batch = options.tuning_budget;
  } else {
    compare.partitioner.progress = progress.callback();
  }
  if (options.profile) compare.profile_runs = 20;
  if (options.measured && !options.search_costs) {
    compare.remeasure_parts = candidate_timing(options, *model);
    compare.pooled_searches = options.pooled_searches;
  }
  if (options.tuning_budget > 0) compare.partitioner.budget.max_seconds = options.tuning_budget;
  compare.refine_seconds = options.refine;
  compare.refine_timing.warmups = 1;
  compare.refine_timing.min_repeats = 5;
  compare.refine_timing.max_repeats = 30;
  compare.refine_timing.max_seconds = 0.3;
  compare.refine_seed = options.seed;

  if (uses_a_gpu(backends) || keeps_blocked_values(backends)) {
    collage::TimingOptions move_timing;
    move_timing.max_seconds = 0.5;
    LinkSpeed link;
    std::vector<std::string> charged;
    char text[200];
    if (uses_a_gpu(backends)) {
      Device& gpu = *devices.set.find(DeviceKind::cuda);
      collage::Result<LinkSpeed> measured = measure_link(gpu, move_timing);
      if (!measured.ok()) return fail(gpu.name() + ": timing host<->device copies failed: " + measured.error().message);
      link = *measured;
      if (compare.executable.record && gpu.can_record()) {
        collage::Result<double> launch = measure_segment_launch(gpu, move_timing);
        if (launch.ok()) link.segment_seconds = *launch;
      }
      std::snprintf(text, sizeof text, "host<->%s measured at %.1f GB/s + %.1f us per copy, %.1f us per segment launched",
                    gpu.name().c_str(), link.bytes_per_second / 1e9, link.seconds_per_copy * 1e6,
                    link.segment_seconds * 1e6);
      charged.emplace_back(text);
    }
    ReorderTable reorders;
    if (keeps_blocked_values(backends)) {
      // As the candidates are timed: in turns behind the model's bytes unless they are timed warm.
      const KernelTimingOptions reorder_timing = candidate_timing(options, *model);
      reorders = measure_reorders(*dataflow, backends, reorder_timing.timing, reorder_timing.model_bytes,
                                  reorder_timing.cpu_threads);
      for (const auto& [layout, seconds] : reorders) {
        double total = 0;
        for (std::size_t i = 0; i < seconds.into.size(); ++i) total += seconds.into[i] + seconds.out_of[i];
        std::snprintf(text, sizeof text, "reorders between plain and %s measured (%.3f ms for every value both ways)",
                      to_string(layout).c_str(), cost_from_seconds(total));
        charged.emplace_back(text);
      }
    }
    collage::Result<collage::TransferModel> transfers = transfer_model(*dataflow, backends, link, reorders);
    if (!transfers.ok()) return fail(transfers.error().message);
    compare.partitioner.transfers = std::move(transfers).value();
    report.transfers = join(charged, "; ") + ", charged by the search";
  }

  std::vector<Configuration> configurations;
  if (options.compare) {
    configurations = standard_configurations(backends);
  } else if (!options.backend.empty()) {
    configurations.push_back(single_backend_configuration(options.backend, backends));
  } else {
    // Collage's choice and, for the guard, the single configuration the search estimates cheapest.
    for (const std::string& name : backends.names()) configurations.push_back(single_backend_configuration(name, backends));
    configurations.push_back(collage_configuration(backends));
    compare.time_cheapest_single_only = true;
  }
  report.results = compare_configurations(*dataflow, data->inputs, data->expected, configurations, backends, devices.set,
                                          cost, compare);
  progress.stop();
  if (cluster != nullptr) report.cost_model += "; " + cluster->describe();
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
  int status = kOk;
  for (const ConfigurationResult& r : report.results) {
    if (!r.error.empty() || !r.matches) status = kFailed;
  }
  return distributed ? distributed->end(status) : status;
}
