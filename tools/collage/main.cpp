// The collage command-line tool: partitions JSON graphs among backends described by JSON specs,
// lists candidates, and checks partitionings. Formats: docs/formats.md.

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/cost/cost_oracle.hpp"
#include "collage/partitioner.hpp"
#include "graph_reader.hpp"
#include "json_graph.hpp"
#include "json_util.hpp"
#include "outputs.hpp"
#include "partition_check.hpp"
#include "progress.hpp"
#include "spec_reader.hpp"

#ifndef COLLAGE_VERSION
#define COLLAGE_VERSION "unknown"
#endif

namespace {

using namespace collage::cli;
using Clock = std::chrono::steady_clock;
using Spec = ToolSpec<JsonGraph>;

constexpr int kOk = 0;
constexpr int kUserError = 1;
constexpr int kUsageError = 2;

const char* const kMainHelp =
    "usage: collage <command> [options]\n"
    "\n"
    "Cost-guided partitioning of dataflow graphs among compiler backends.\n"
    "\n"
    "commands:\n"
    "  partition   find the cheapest partitioning of a graph among the targets of a spec\n"
    "  candidates  list every candidate each target's rule yields, with its cost\n"
    "  check       validate a partitioning and recompute its cost\n"
    "\n"
    "'collage <command> --help' describes a command. Formats: docs/formats.md.\n"
    "Exit status: 0 success, 1 bad input (one line on stderr names the file, the place and the problem),\n"
    "2 bad usage.\n"
    "\n"
    "example:\n"
    "  collage partition --graph examples/mnist/graph.json --spec examples/mnist/spec.json --format text\n";

const char* const kPartitionHelp =
    "usage: collage partition --graph GRAPH.json --spec SPEC.json [--format json|dot|text] [--out FILE]\n"
    "\n"
    "Finds the cheapest partitioning of the collage-graph/1 GRAPH among the targets of the\n"
    "collage-spec/1 SPEC, with the spec's cost model and search algorithm.\n"
    "\n"
    "options:\n"
    "  --graph FILE    the graph (collage-graph/1)\n"
    "  --spec FILE     the targets, their rules, the cost model and the search (collage-spec/1)\n"
    "  --format F      json (collage-partition/1, the default), dot (Graphviz) or text\n"
    "  --out FILE      write there instead of to stdout (only once the whole output is ready)\n"
    "\n"
    "A progress line appears on stderr when stderr is a terminal and the work takes over a second.\n"
    "\n"
    "examples:\n"
    "  collage partition --graph examples/mnist/graph.json --spec examples/mnist/spec.json --format text\n"
    "  collage partition --graph examples/mnist/graph.json --spec examples/mnist/spec.json --format dot \\\n"
    "      --out mnist.dot && dot -Tpng mnist.dot -o mnist.png\n";

const char* const kCandidatesHelp =
    "usage: collage candidates --graph GRAPH.json --spec SPEC.json [--out FILE]\n"
    "\n"
    "Lists every candidate each target's rule yields over GRAPH, with its cost under the spec's\n"
    "cost model (plus the target's penalty), as collage-candidates/1 JSON.\n"
    "\n"
    "options:\n"
    "  --graph FILE    the graph (collage-graph/1)\n"
    "  --spec FILE     the spec (collage-spec/1)\n"
    "  --out FILE      write there instead of to stdout\n"
    "\n"
    "example:\n"
    "  collage candidates --graph examples/mnist/graph.json --spec examples/mnist/spec.json\n";

const char* const kCheckHelp =
    "usage: collage check --graph GRAPH.json --partition PARTITION.json [--spec SPEC.json]\n"
    "\n"
    "Validates a collage-partition/1 file against its graph: every node that needs a kernel is in\n"
    "exactly one partition, each partition is a valid sub-graph (convex, nested groups inside it and\n"
    "disjoint), the host list (when present) holds exactly the other nodes, and the partitions form an\n"
    "acyclic graph. The total cost is recomputed: with --spec, each partition must be a candidate of\n"
    "its target and its cost is computed afresh with the spec's cost model; without it, from the\n"
    "costs the file records. Recorded costs must agree. Exit status 0 when valid.\n"
    "\n"
    "options:\n"
    "  --graph FILE      the graph (collage-graph/1)\n"
    "  --partition FILE  the partitioning (collage-partition/1), from 'collage partition' or the\n"
    "                    library's collage::to_json\n"
    "  --spec FILE       recompute costs (and check targets) with this spec (collage-spec/1)\n"
    "\n"
    "example:\n"
    "  collage partition --graph g.json --spec s.json --out p.json\n"
    "  collage check --graph g.json --partition p.json --spec s.json\n";

/// A bad command line: exit status 2.
struct UsageError {
  std::string message;
};

/// The parsed options of one command.
struct Options {
  std::map<std::string, std::string> values;
  bool help = false;

  const std::string* get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

std::optional<UsageError> parse_options(const std::vector<std::string>& args, const std::vector<std::string>& known,
                                        Options& out) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    if (a == "--help" || a == "-h") {
      out.help = true;
      continue;
    }
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) return UsageError{"unexpected argument '" + one_line(a) + "'"};
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (const std::size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    bool is_known = false;
    for (const std::string& n : known) is_known = is_known || n == name;
    if (!is_known) return UsageError{"unknown option '--" + one_line(name) + "'"};
    if (!value) {
      if (k + 1 >= args.size()) return UsageError{"option '--" + name + "' needs a value"};
      value = args[++k];
    }
    if (value->empty()) return UsageError{"option '--" + name + "' needs a non-empty value"};
    if (out.values.count(name) != 0) return UsageError{"option '--" + name + "' given twice"};
    out.values[name] = std::move(*value);
  }
  return std::nullopt;
}

/// Writes `text` to `path` through a temporary file in the same directory, so that `path` holds
/// either its old content or all of `text`, never part of it.
collage::Status write_output(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return collage::Error{collage::ErrorCode::io, path + ": cannot write: " + std::strerror(errno)};
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    return collage::Error{collage::ErrorCode::io, path + ": cannot write: " + std::strerror(wrote ? errno : saved)};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return collage::Error{collage::ErrorCode::io, path + ": cannot write: " + std::strerror(err)};
  }
  return collage::Status::success();
}

collage::Status emit(const Options& options, const std::string& text) {
  if (const std::string* out = options.get("out")) return write_output(*out, text);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return collage::Error{collage::ErrorCode::io, "<stdout>: cannot write: " + std::string(std::strerror(errno))};
  }
  return collage::Status::success();
}

/// A JSON document with one top-level key per line and arrays of objects one object per line.
std::string pretty(const OrderedJson& doc) {
  auto dump = [](const OrderedJson& j) { return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace); };
  std::string out = "{";
  bool first = true;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    out += dump(OrderedJson(it.key())) + ": ";
    const OrderedJson& v = it.value();
    bool objects = v.is_array() && !v.empty();
    for (const OrderedJson& e : v) objects = objects && v.is_array() && e.is_object();
    if (!objects) {
      out += dump(v);
      continue;
    }
    out += "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k == 0 ? "\n    " : ",\n    ") + dump(v[k]);
    out += "\n  ]";
  }
  return out + "\n}\n";
}

int fail(const std::string& message) {
  std::fprintf(stderr, "collage: %s\n", one_line(message).c_str());
  return kUserError;
}

/// The library's warnings (rules stopped by a budget, a searcher that gave way) as the tool
/// reports them: each prefixed with the spec file.
std::vector<std::string> spec_warnings(const Spec& spec, const std::vector<std::string>& warnings) {
  std::vector<std::string> lines;
  for (const std::string& w : warnings) lines.push_back(spec.file + ": " + w);
  return lines;
}

/// Prints warning lines on stderr.
void print_warnings(const std::vector<std::string>& lines) {
  for (const std::string& w : lines) std::fprintf(stderr, "collage: warning: %s\n", one_line(w).c_str());
}

/// `doc` with warning lines added under "warnings" (when there are any).
OrderedJson with_warnings(OrderedJson doc, const std::vector<std::string>& lines) {
  if (!lines.empty()) doc["warnings"] = lines;
  return doc;
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// The graph and spec files of a command, read and indexed.
struct Inputs {
  std::unique_ptr<JsonGraph> ir;  // stable address: the DataflowGraph refers to it
  std::optional<collage::DataflowGraph<JsonGraph>> graph;
  std::optional<Spec> spec;
  double build_seconds = 0;
};

std::optional<std::string> load_graph(const std::string& path, Inputs& in) {
  collage::Result<std::string> text = read_file(path);
  if (!text.ok()) return text.error().message;
  collage::Result<JsonGraph> ir = read_graph(std::string_view(*text), path);
  if (!ir.ok()) return ir.error().message;
  in.ir = std::make_unique<JsonGraph>(std::move(ir).value());
  const auto start = Clock::now();
  collage::Result<collage::DataflowGraph<JsonGraph>> graph = build_graph(*in.ir);
  in.build_seconds = since(start);
  if (!graph.ok()) return graph.error().message;
  in.graph.emplace(std::move(graph).value());
  return std::nullopt;
}

std::optional<std::string> load_spec(const std::string& path, Inputs& in) {
  collage::Result<std::string> text = read_file(path);
  if (!text.ok()) return text.error().message;
  collage::Result<Spec> spec = read_spec<JsonGraph>(std::string_view(*text), path);
  if (!spec.ok()) return spec.error().message;
  in.spec.emplace(std::move(spec).value());
  return std::nullopt;
}

std::optional<UsageError> require(const Options& options, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (options.get(n) == nullptr) return UsageError{"missing --" + n};
  }
  return std::nullopt;
}

int run_partition(const Options& options) {
  std::string format = "json";
  if (const std::string* f = options.get("format")) format = *f;
  if (format != "json" && format != "dot" && format != "text") {
    throw UsageError{"unknown format '" + one_line(format) + "' (expected json, dot or text)"};
  }
  Inputs in;
  ProgressBar bar(isatty(fileno(stderr)) != 0, stderr);
  if (auto e = load_graph(*options.get("graph"), in)) return fail(*e);
  if (auto e = load_spec(*options.get("spec"), in)) return fail(*e);
  collage::PartitionerOptions popts = in.spec->options();
  popts.progress = bar.callback();
  std::unique_ptr<collage::CostOracle<JsonGraph>> oracle = in.spec->make_oracle();
  collage::Result<collage::PartitionResult> result = collage::partition(*in.graph, in.spec->targets, *oracle, popts);
  bar.stop();
  if (!result.ok()) return fail(in.spec->file + ": " + result.error().message);
  const std::vector<std::string> warnings = spec_warnings(*in.spec, result->warnings);
  print_warnings(warnings);
  Timings t;
  t.build = in.build_seconds;
  t.candidates = result->seconds.candidates;
  t.estimate = result->seconds.estimate;
  t.search = result->seconds.search;
  t.total = in.build_seconds + result->seconds.total;
  std::string text;
  if (format == "json") {
    text = pretty(with_warnings(partition_json(*in.graph, *result, t), warnings));
  } else if (format == "dot") {
    text = partition_dot(*in.graph, *result);
  } else {
    text = partition_text(*in.graph, *result, t);
  }
  if (collage::Status s = emit(options, text); !s.ok()) return fail(s.message());
  return kOk;
}

int run_candidates(const Options& options) {
  Inputs in;
  ProgressBar bar(isatty(fileno(stderr)) != 0, stderr);
  if (auto e = load_graph(*options.get("graph"), in)) return fail(*e);
  if (auto e = load_spec(*options.get("spec"), in)) return fail(*e);
  collage::PartitionerOptions popts = in.spec->options();
  popts.progress = bar.callback();
  collage::Result<collage::CandidateSet> set = collage::collect_candidates(*in.graph, in.spec->targets, popts);
  if (!set.ok()) {
    bar.stop();
    return fail(in.spec->file + ": " + set.error().message);
  }
  std::unique_ptr<collage::CostOracle<JsonGraph>> oracle = in.spec->make_oracle();
  collage::estimate_costs(*in.graph, set->candidates, *oracle, popts);
  bar.stop();
  const std::vector<std::string> warnings = spec_warnings(*in.spec, set->warnings);
  print_warnings(warnings);
  const std::string text = pretty(with_warnings(candidates_json(*in.graph, set->candidates, set->penalties), warnings));
  if (collage::Status s = emit(options, text); !s.ok()) return fail(s.message());
  return kOk;
}

int run_check(const Options& options) {
  Inputs in;
  if (auto e = load_graph(*options.get("graph"), in)) return fail(*e);
  if (const std::string* spec = options.get("spec")) {
    if (auto e = load_spec(*spec, in)) return fail(*e);
  }
  const std::string& path = *options.get("partition");
  collage::Result<std::string> text = read_file(path);
  if (!text.ok()) return fail(text.error().message);
  collage::Result<Json> doc = parse_json(*text, path);
  if (!doc.ok()) return fail(doc.error().message);
  collage::Result<CheckSummary> summary = check_partition(*in.graph, *doc, path, in.spec ? &*in.spec : nullptr);
  if (!summary.ok()) return fail(summary.error().message);
  std::string line = path + ": valid: " + std::to_string(summary->partitions) + " partitions, " +
                     std::to_string(summary->host) + " host nodes, total cost " + summary->total.to_string();
  line += summary->recomputed ? " (recomputed with " + in.spec->file + ")" : " (as recorded)";
  std::printf("%s\n", one_line(line).c_str());
  return std::fflush(stdout) == 0 ? kOk : kUserError;
}

struct Command {
  const char* name;
  const char* help;
  std::vector<std::string> options;
  std::vector<std::string> required;
  int (*run)(const Options&);
};

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const Command commands[] = {
      {"partition", kPartitionHelp, {"graph", "spec", "format", "out"}, {"graph", "spec"}, run_partition},
      {"candidates", kCandidatesHelp, {"graph", "spec", "out"}, {"graph", "spec"}, run_candidates},
      {"check", kCheckHelp, {"graph", "partition", "spec"}, {"graph", "partition"}, run_check},
  };
  if (args.empty()) {
    std::fputs(kMainHelp, stderr);
    return kUsageError;
  }
  const std::string& name = args[0];
  if (name == "--help" || name == "-h" || name == "help") {
    if (name == "help" && args.size() > 1) {
      for (const Command& c : commands) {
        if (args[1] == c.name) return std::fputs(c.help, stdout) >= 0 ? kOk : kUserError;
      }
      std::fprintf(stderr, "collage: unknown command '%s' (see 'collage --help')\n", one_line(args[1]).c_str());
      return kUsageError;
    }
    std::fputs(kMainHelp, stdout);
    return kOk;
  }
  if (name == "--version") {
    std::printf("collage %s\n", COLLAGE_VERSION);
    return kOk;
  }
  for (const Command& c : commands) {
    if (name != c.name) continue;
    Options options;
    std::optional<UsageError> error = parse_options({args.begin() + 1, args.end()}, c.options, options);
    if (!error && options.help) {
      std::fputs(c.help, stdout);
      return kOk;
    }
    if (!error) error = require(options, c.required);
    if (!error) {
      try {
        return c.run(options);
      } catch (const UsageError& e) {
        error = e;
      }
    }
    std::fprintf(stderr, "collage %s: %s (see 'collage %s --help')\n", c.name, one_line(error->message).c_str(),
                 c.name);
    return kUsageError;
  }
  std::fprintf(stderr, "collage: unknown command '%s' (see 'collage --help')\n", one_line(name).c_str());
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}
