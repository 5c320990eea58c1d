#include "conformance/conformance.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include "onnx/model.hpp"
#include "onnx/reader.hpp"
#include "onnx/tensor_proto.hpp"
#include "tensor/compare.hpp"
#include "tensor/reference.hpp"

namespace tc {

namespace {

namespace fs = std::filesystem;

/// The reason given with a pass when the read graph has no operator (folded, or identities).
constexpr const char* kFolded = "no operator runs: the reader reduced the model to inputs and constants";

/// Not applicable for an error the reader calls unsupported (not a defect of the reader), failed
/// for any other.
TestStatus status_of(const collage::Error& e) {
  return e.message.find("not supported") != std::string::npos ? TestStatus::not_applicable : TestStatus::failed;
}

/// The message of `e` without the "PATH: " it starts with.
std::string without_path(const collage::Error& e, const fs::path& path) {
  const std::string prefix = path.string() + ": ";
  return e.message.rfind(prefix, 0) == 0 ? path.filename().string() + ": " + e.message.substr(prefix.size()) : e.message;
}

/// Subdirectories of `dir` whose names start with `prefix`, sorted.
std::vector<fs::path> subdirectories(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename().string().rfind(prefix, 0) == 0) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The outcome of one data set under one configuration: empty when it passed.
struct Outcome {
  TestStatus status = TestStatus::passed;
  std::string reason;
};

/// Runs one data set of a test: reads the model with the inputs it needs at load time bound to the
/// data set's values, then runs every configuration. One Outcome per configuration.
std::vector<Outcome> run_data_set(const std::string& model_bytes, const OnnxModel& model, const fs::path& data_dir,
                                  const std::vector<ConformanceConfiguration>& configurations, const Tolerance& tolerance) {
  const auto all = [&](TestStatus status, const std::string& reason) {
    return std::vector<Outcome>(configurations.size(), Outcome{status, reason});
  };
  std::set<std::string> initializers;
  for (const auto& [name, value] : model.initializers) initializers.insert(name);
  std::set<std::string> load_time;  // values some node needs at load time
  std::set<std::string> not_indices;  // values some node reads other than as a Gather's indices
  for (const OnnxNode& node : model.nodes) {
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      if (is_load_time_operand(node.op_type, k)) load_time.insert(node.inputs[k]);
      if (node.op_type != "Gather" || k != 1) not_indices.insert(node.inputs[k]);
    }
  }
  ReadOptions options;
  std::map<std::string, Tensor> runtime_inputs;
  std::size_t file = 0;
  for (const OnnxValueInfo& input : model.inputs) {
    if (initializers.count(input.name) != 0) continue;
    const fs::path path = data_dir / ("input_" + std::to_string(file++) + ".pb");
    collage::Result<OnnxTensor> value = read_tensor_file(path.string());
    if (!value.ok()) return all(status_of(value.error()), "input '" + input.name + "': " + without_path(value.error(), path));
    if (value->type != input.type) {
      return all(TestStatus::not_applicable, "input '" + input.name + "': " + elem_type_name(value->type) + " data for a " +
                                                 elem_type_name(input.type) + " input is not supported");
    }
    // Integer inputs are bound at load time, but for the indices of Gathers, which run on them.
    const bool runtime_integers = is_integer_type(value->type) && not_indices.count(input.name) == 0;
    if ((value->type != ElemType::float32 && !runtime_integers) || load_time.count(input.name) != 0) {
      options.input_values[input.name] = std::move(value).value();
      continue;
    }
    const bool dynamic = !input.has_shape || std::any_of(input.dims.begin(), input.dims.end(), [](const OnnxDim& d) {
      return std::holds_alternative<std::string>(d);
    });
    if (dynamic) options.input_shapes[input.name] = value->shape;
    collage::Result<Tensor> runtime = runtime_integers ? integers_as_float32(*value, "input '" + input.name + "'")
                                                       : collage::Result<Tensor>(Tensor(value->shape, value->reals));
    if (!runtime.ok()) return all(TestStatus::not_applicable, runtime.error().message);
    runtime_inputs[input.name] = std::move(runtime).value();
  }
  collage::Result<Graph> graph = read_onnx_bytes(model_bytes, options);
  if (!graph.ok()) return all(status_of(graph.error()), graph.error().message);
  std::vector<Tensor> inputs;
  for (int n : graph->inputs()) inputs.push_back(runtime_inputs[graph->node(n).name]);
  std::vector<Tensor> expected;
  for (std::size_t k = 0; k < model.outputs.size(); ++k) {
    const fs::path path = data_dir / ("output_" + std::to_string(k) + ".pb");
    collage::Result<OnnxTensor> value = read_tensor_file(path.string());
    if (!value.ok()) return all(status_of(value.error()), "output " + std::to_string(k) + ": " + without_path(value.error(), path));
    expected.emplace_back(value->shape, value->reals);
  }
  // A model the reader folds completely runs no operator: it checks the folding only.
  const bool folded = std::none_of(graph->nodes().begin(), graph->nodes().end(),
                                   [](const Node& n) { return n.op != Op::input && n.op != Op::constant; });
  std::vector<Outcome> outcomes;
  for (const ConformanceConfiguration& config : configurations) {
    collage::Result<std::vector<Tensor>> actual = config.run(*graph, inputs);
    Outcome outcome;
    if (!actual.ok()) {
      outcome = Outcome{TestStatus::failed, actual.error().message};
    } else if (actual->size() != expected.size()) {
      outcome = Outcome{TestStatus::failed, std::to_string(actual->size()) + " outputs for " + std::to_string(expected.size())};
    } else {
      for (std::size_t k = 0; k < expected.size() && outcome.status == TestStatus::passed; ++k) {
        std::string worst;
        if (!all_close((*actual)[k], expected[k], tolerance.rtol, std::max(tolerance.atol, config.min_atol), &worst)) {
          outcome = Outcome{TestStatus::failed, "output '" + model.outputs[k].name + "': " + worst};
        }
      }
    }
    if (folded && outcome.status == TestStatus::passed) outcome.reason = kFolded;
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

/// Why the model cannot apply whatever the data: inputs or outputs that are not float32 tensors
/// (inputs of other element types are bound at load time instead).
std::string model_not_applicable(const OnnxModel& model) {
  for (const OnnxValueInfo& v : model.inputs) {
    if (!v.is_tensor) return "input '" + v.name + "': a sequence, map or optional value is not supported";
  }
  for (const OnnxValueInfo& v : model.outputs) {
    if (!v.is_tensor) return "output '" + v.name + "': a sequence, map or optional value is not supported";
    if (v.type != ElemType::float32) {
      return "output '" + v.name + "': element type " + elem_type_name(v.type) + " is not supported (the IR computes float32)";
    }
  }
  return "";
}

/// `reason` with quoted names replaced by '…', so reasons group across tests.
std::string reason_kind(const std::string& reason) {
  std::string out;
  bool quoted = false;
  for (char c : reason) {
    if (c == '\'') {
      if (!quoted) out += "'…'";
      quoted = !quoted;
    } else if (!quoted) {
      out += c;
    }
  }
  return out;
}

/// "| a | b |" with '|' in cells escaped.
std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& cell : cells) {
    std::string escaped;
    for (char c : cell) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    out += " " + escaped + " |";
  }
  return out + "\n";
}

}  // namespace

const char* to_string(TestStatus status) {
  switch (status) {
    case TestStatus::passed: return "passed";
    case TestStatus::failed: return "failed";
    case TestStatus::not_applicable: return "not-applicable";
  }
  return "failed";
}

ConformanceConfiguration reference_configuration() {
  return ConformanceConfiguration{"reference", [](const Graph& graph, const std::vector<Tensor>& inputs) { return evaluate(graph, inputs); }};
}

std::vector<TestResult> run_node_test(const std::string& dir, const std::vector<ConformanceConfiguration>& configurations,
                                      const Tolerance& tolerance) {
  const fs::path path(dir);
  std::vector<TestResult> rows;
  for (const ConformanceConfiguration& config : configurations) {
    rows.push_back(TestResult{path.filename().string(), {}, config.name, TestStatus::passed, ""});
  }
  const auto all = [&](TestStatus status, const std::string& reason) {
    for (TestResult& r : rows) {
      r.status = status;
      r.reason = reason;
    }
    return rows;
  };
  collage::Result<std::string> bytes = read_file_bytes((path / "model.onnx").string());
  if (!bytes.ok()) return all(TestStatus::failed, "model.onnx cannot be read");
  collage::Result<OnnxModel> model = parse_model(*bytes);
  if (!model.ok()) return all(status_of(model.error()), model.error().message);
  std::vector<std::string> ops;
  for (const OnnxNode& node : model->nodes) {
    if (std::find(ops.begin(), ops.end(), node.op_type) == ops.end()) ops.push_back(node.op_type);
  }
  for (TestResult& r : rows) r.ops = ops;
  if (std::string reason = model_not_applicable(*model); !reason.empty()) return all(TestStatus::not_applicable, reason);
  const std::vector<fs::path> data_sets = subdirectories(path, "test_data_set_");
  if (data_sets.empty()) return all(TestStatus::failed, "no test_data_set_* directory");
  for (const fs::path& data : data_sets) {
    const std::vector<Outcome> outcomes = run_data_set(*bytes, *model, data, configurations, tolerance);
    for (std::size_t c = 0; c < rows.size(); ++c) {
      if (rows[c].status != TestStatus::passed) continue;
      rows[c].status = outcomes[c].status;
      rows[c].reason = outcomes[c].reason;
      if (data_sets.size() > 1 && outcomes[c].status == TestStatus::failed) {
        rows[c].reason = data.filename().string() + ": " + rows[c].reason;
      }
    }
  }
  return rows;
}

collage::Result<std::vector<TestResult>> run_conformance(const std::string& root,
                                                         const std::vector<ConformanceConfiguration>& configurations,
                                                         const Tolerance& tolerance) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return collage::Error{collage::ErrorCode::io, root + ": not a directory"};
  std::vector<TestResult> all;
  for (const fs::path& dir : subdirectories(root, "")) {
    if (!fs::exists(dir / "model.onnx", ec)) continue;
    std::vector<TestResult> rows = run_node_test(dir.string(), configurations, tolerance);
    all.insert(all.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  return all;
}

std::string to_tsv(const std::vector<TestResult>& results) {
  std::string out = "test\tops\tconfiguration\tstatus\treason\n";
  for (const TestResult& r : results) {
    std::string ops;
    for (const std::string& op : r.ops) ops += (ops.empty() ? "" : ",") + op;
    std::string reason = r.reason;
    std::replace(reason.begin(), reason.end(), '\t', ' ');
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    out += r.test + "\t" + ops + "\t" + r.configuration + "\t" + to_string(r.status) + "\t" + reason + "\n";
  }
  return out;
}

std::string summary_markdown(const std::vector<TestResult>& results) {
  struct Counts {
    int tests = 0, passed = 0, folded = 0, failed = 0, not_applicable = 0;
    void add(const TestResult& r) {
      ++tests;
      (r.status == TestStatus::passed ? passed : r.status == TestStatus::failed ? failed : not_applicable) += 1;
      if (r.status == TestStatus::passed && r.reason == kFolded) ++folded;
    }
    std::vector<std::string> cells(const std::string& name) const {
      return {name, std::to_string(tests), std::to_string(passed + failed), std::to_string(passed), std::to_string(folded),
              std::to_string(failed), std::to_string(not_applicable)};
    }
  };
  std::vector<std::string> config_order;
  std::map<std::string, Counts> by_config;
  std::map<std::string, std::map<std::string, Counts>> by_op;  // configuration -> op -> counts
  std::map<std::string, std::map<std::string, int>> reasons;   // configuration -> reason kind -> tests
  for (const TestResult& r : results) {
    if (by_config.count(r.configuration) == 0) config_order.push_back(r.configuration);
    by_config[r.configuration].add(r);
    for (const std::string& op : r.ops) by_op[r.configuration][op].add(r);
    if (r.status == TestStatus::not_applicable) ++reasons[r.configuration][reason_kind(r.reason)];
  }
  const std::vector<std::string> header = {"", "tests", "run", "passed", "of which folded", "failed", "not applicable"};
  const std::string rule = "|---|---:|---:|---:|---:|---:|---:|\n";
  std::string out = row(header) + rule;
  for (const std::string& c : config_order) out += row(by_config[c].cells(c));
  for (const std::string& c : config_order) {
    out += "\nBy operator, configuration " + c + " (a test counts for every operator in its model):\n\n";
    std::vector<std::string> op_header = header;
    op_header[0] = "operator";
    out += row(op_header) + rule;
    for (const auto& [op, counts] : by_op[c]) out += row(counts.cells(op));
    out += "\nWhy tests do not apply, configuration " + c + ":\n\n" + row({"tests", "reason"}) + "|---:|---|\n";
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [reason, count] : reasons[c]) sorted.emplace_back(-count, reason);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [count, reason] : sorted) out += row({std::to_string(-count), reason});
  }
  return out;
}

}  // namespace tc
