#include "collage_run/run_report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include <collage/report.hpp>
#include <collage/support/numbers.hpp>

namespace tc {

namespace {

std::string ms(double v) { return collage::format_double(v, v < 1 ? 3 : 4); }

/// How far `estimate` is off `measured`, relative to it (0 when nothing was measured).
double relative_off(double estimate, double measured) { return measured > 0 ? (estimate - measured) / measured : 0.0; }

/// relative_off as a signed percentage ("-4.2%").
std::string percent_off(double estimate, double measured) {
  const double off = relative_off(estimate, measured);
  return (off >= 0 ? "+" : "") + collage::format_double(100 * off, 3) + "%";
}

std::string partitions_text(const ConfigurationResult& r) {
  std::vector<std::string> parts;
  for (const auto& [backend, n] : r.partitions) parts.push_back(backend + " " + std::to_string(n));
  return join(parts, ", ");
}

std::string cost_text(const collage::Cost& c) {
  if (c.is_known()) return ms(c.raw()) + " ms";
  return c.to_string();
}

/// "refinement (collage+evo): ..." : what the evolutionary refinement tried and gained.
std::string refinement_text(const collage::EvolutionStats& st) {
  std::string out = "refinement (collage+evo): " + std::to_string(st.evaluations) + " whole-model evaluations in " +
                    collage::format_double(st.seconds, 3) + " s";
  if (st.errors + st.invalid_answers > 0) {
    out += " (" + std::to_string(st.errors + st.invalid_answers) + " failed or mismatched)";
  }
  if (!st.start_fitness.is_known()) return out + "; collage's partitioning could not be evaluated: " + st.last_error + "\n";
  out += "; collage's partitioning measured " + ms(st.start_fitness.raw()) + " ms in it, ";
  if (!st.improved) return out + "and nothing faster was found\n";
  const double gain = 1 - st.best_fitness.raw() / st.start_fitness.raw();
  return out + "the best found " + ms(st.best_fitness.raw()) + " ms (" + collage::format_double(100 * gain, 3) + "% faster)\n";
}

const ConfigurationResult* collage_result(const RunReport& report) {
  for (const ConfigurationResult& r : report.results) {
    if (r.name == "collage" && r.partition) return &r;
  }
  return nullptr;
}

/// Candidates the configurations left Unknown because the tuning budget was spent.
std::size_t unmeasured_candidates(const RunReport& report) {
  std::size_t n = 0;
  for (const ConfigurationResult& r : report.results) {
    if (r.partition && !r.refinement) n += r.partition->oracle.budget_refusals;
  }
  return n;
}

}  // namespace

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? separator : "") + items[k];
  return out;
}

BackendSet select_backends(BackendSet backends, const std::vector<std::string>& names) {
  if (names.empty()) return backends;
  BackendSet chosen;
  std::vector<std::string> wanted = names;
  auto want = [&](const std::string& name) {
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end()) wanted.push_back(name);
  };
  for (const std::string& name : names) want(fallback_for(name, backends));
  want(kCpuFallback);
  for (const std::string& name : wanted) {
    if (std::unique_ptr<Backend> b = backends.take(name)) chosen.add(std::move(b));
  }
  return chosen;
}

std::string format_report(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report, bool with_explanation) {
  std::string out;
  char line[512];
  out += "model: " + report.model + " (" + std::to_string(report.nodes) + " nodes); outputs checked against " +
         report.data_source + "\n";
  out += "device: " + report.device + "\ncost model: " + report.cost_model + "\n";
  if (!report.transfers.empty()) out += "transfers: " + report.transfers + "\n";
  const ConfigurationResult* best = best_single(report.results);
  // The first column as wide as the longest configuration name ("onednn_winograd").
  int name_width = 14;
  for (const ConfigurationResult& r : report.results) name_width = std::max(name_width, static_cast<int>(r.name.size()));
  std::snprintf(line, sizeof line, "\n%-*s %-9s %11s %7s %8s %9s %-8s %-11s  %s\n", name_width, "configuration", "fallback",
                "latency ms", "spread", "speedup", "est. ms", "outputs", "max |err|", "partitions");
  out += line;
  for (const ConfigurationResult& r : report.results) {
    if (!r.error.empty()) {
      out += r.name + ": did not run: " + r.error + "\n";
      continue;
    }
    const std::string speedup = best ? collage::format_double(best->latency_ms / r.latency_ms, 3) + "x" : "-";
    std::snprintf(line, sizeof line, "%-*s %-9s %11s %6.1f%% %8s %9s %-8s %-11s  %s\n", name_width, r.name.c_str(),
                  r.fallback.empty() ? "-" : r.fallback.c_str(), ms(r.latency_ms).c_str(), 100.0 * r.spread, speedup.c_str(), ms(r.estimated_ms).c_str(), r.matches ? "match" : "MISMATCH",
                  collage::format_double(r.max_abs_error, 2).c_str(), partitions_text(r).c_str());
    out += line;
  }
  for (const ConfigurationResult& r : report.results) {
    if (r.error.empty() && !r.matches) out += r.name + ": outputs differ: " + r.mismatch + "\n";
    for (const std::string& note : r.notes) out += r.name + ": " + note + "\n";
  }
  out += "\n";
  if (best != nullptr) out += "best single configuration: " + best->name + " (" + ms(best->latency_ms) + " ms)\n";
  if (const ConfigurationResult* c = collage_result(report); c != nullptr && c->error.empty()) {
    if (best != nullptr && best != c) {
      out += "collage: " + ms(c->latency_ms) + " ms, " + collage::format_double(best->latency_ms / c->latency_ms, 3) +
             "x the best single configuration\n";
    }
    out += "additive error: the parts' costs" + std::string(c->parts_remeasured ? ", timed again together after the search," : "") +
           " and the moves charged between them sum to " + ms(c->estimated_ms) + " ms against " + ms(c->latency_ms) +
           " ms measured end to end (" + percent_off(c->estimated_ms, c->latency_ms) + ")";
    if (c->parts_remeasured) {
      out += "; the costs the search chose them by" +
             (c->searches > 1 ? " (in the last of " + std::to_string(c->searches) + " searches, pooled)" : std::string()) +
             " sum to " + ms(c->search_estimated_ms) + " ms (" + percent_off(c->search_estimated_ms, c->latency_ms) + ")";
    }
    out += "\n";
  }
  if (std::optional<GuardDecision> guard = decide_guard(report.results)) out += "runs: " + guard->summary + "\n";
  for (const ConfigurationResult& r : report.results) {
    if (r.refinement) out += refinement_text(*r.refinement);
  }
  out += "tuning: " + std::to_string(report.measurements) + " candidates measured, " + std::to_string(report.db_hits) +
         " from the database, " + collage::format_double(report.tuning_seconds, 3) + " s in all\n";
  if (const std::size_t unmeasured = unmeasured_candidates(report); unmeasured > 0) {
    out += "tuning budget spent: " + std::to_string(unmeasured) +
           " candidates not measured (Unknown); the search used them only where nothing measured covered a node\n";
  }
  if (with_explanation) {
    if (const ConfigurationResult* c = collage_result(report)) {
      collage::ReportOptions options;
      options.cost_text = cost_text;
      collage::Result<std::string> why = collage::explain_text(dataflow, *c->partition, options);
      out += "\n" + (why.ok() ? *why : why.error().message + "\n");
    }
  }
  return out;
}

std::string format_profile(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report) {
  std::string out;
  char line[512];
  for (const ConfigurationResult& r : report.results) {
    if (r.step_ms.empty() || !r.partition) continue;
    out += "\nprofile of " + r.name + ": each step in the model against its partition measured alone\n";
    std::snprintf(line, sizeof line, "  %-4s %-8s %10s %10s %7s  %s\n", "step", "target", "in model", "alone", "ratio", "nodes");
    out += line;
    std::vector<std::size_t> order(r.step_ms.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::vector<double> alone(r.step_ms.size(), 0.0);
    std::size_t part = 0;
    for (std::size_t k = 0; k < r.steps.size() && k < alone.size(); ++k) {
      if (r.steps[k].moves_a_value() || part >= r.part_ms.size()) continue;
      alone[k] = r.part_ms[part++];
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return r.step_ms[a] - alone[a] > r.step_ms[b] - alone[b];
    });
    double in_model = 0, measured_alone = 0;
    for (std::size_t k : order) {
      in_model += r.step_ms[k];
      measured_alone += alone[k];
      std::vector<std::string> names;
      for (int n : r.steps[k].nodes) names.push_back(dataflow.ir().node(n).name);
      if (names.size() > 4) names.resize(4), names.push_back("...");
      if (r.steps[k].in_place && !names.empty()) names.back() += " (in place: its inputs were written into it)";
      const std::string ratio = alone[k] > 0 ? collage::format_double(r.step_ms[k] / alone[k], 3) : "-";
      std::snprintf(line, sizeof line, "  %-4zu %-8s %10s %10s %7s  %s\n", k + 1, r.steps[k].target.c_str(),
                    ms(r.step_ms[k]).c_str(), ms(alone[k]).c_str(), ratio.c_str(), join(names, ", ").c_str());
      out += line;
    }
    out += "  total " + ms(in_model) + " ms in the model (device time between timers inside the replayed run where its device records, "
           "else each step synchronised after it), " + ms(measured_alone) +
           " ms alone\n";
  }
  return out;
}

std::string report_json(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report) {
  nlohmann::ordered_json j;
  j["model"] = report.model;
  j["nodes"] = report.nodes;
  j["device"] = report.device;
  j["cost_model"] = report.cost_model;
  if (!report.transfers.empty()) j["transfers"] = report.transfers;
  j["checked_against"] = report.data_source;
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const ConfigurationResult& r : report.results) {
    nlohmann::ordered_json c;
    c["name"] = r.name;
    c["fallback"] = r.fallback.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.fallback);
    c["single"] = r.single;
    if (!r.error.empty()) {
      c["error"] = r.error;
      configs.push_back(c);
      continue;
    }
    c["latency_ms"] = r.latency_ms;
    c["spread"] = r.spread;
    c["samples"] = r.samples;
    c["matches"] = r.matches;
    c["max_abs_error"] = r.max_abs_error;
    std::size_t total = 0;
    nlohmann::ordered_json by_backend = nlohmann::ordered_json::object();
    for (const auto& [backend, n] : r.partitions) {
      by_backend[backend] = n;
      total += n;
    }
    c["partitions"] = total;
    c["partitions_by_backend"] = by_backend;
    c["estimated_ms"] = r.estimated_ms;
    c["search_estimated_ms"] = r.search_estimated_ms;
    c["parts_remeasured"] = r.parts_remeasured;
    c["searches"] = r.searches;
    if (r.refinement) {
      const collage::EvolutionStats& st = *r.refinement;
      nlohmann::ordered_json refinement;
      refinement["seconds"] = st.seconds;
      refinement["evaluations"] = st.evaluations;
      refinement["generations"] = st.generations;
      refinement["improved"] = st.improved;
      refinement["failed_evaluations"] = st.errors + st.invalid_answers;
      if (st.start_fitness.is_known()) refinement["start_ms"] = st.start_fitness.raw();
      if (st.best_fitness.is_known()) refinement["best_ms"] = st.best_fitness.raw();
      c["refinement"] = refinement;
    }
    if (!r.matches) c["mismatch"] = r.mismatch;
    if (r.partition) {
      nlohmann::ordered_json parts = nlohmann::ordered_json::array();
      for (std::size_t k = 0; k < r.partition->partitioning.parts.size(); ++k) {
        const collage::Candidate& part = r.partition->partitioning.parts[k];
        nlohmann::ordered_json pj;
        pj["target"] = std::string(part.target);
        pj["cost_ms"] = part.cost.is_known() ? nlohmann::ordered_json(part.cost.raw()) : nlohmann::ordered_json(nullptr);
        if (r.parts_remeasured && k < r.part_ms.size()) pj["remeasured_ms"] = r.part_ms[k];
        nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
        for (std::size_t i : part.sub_graph.inside()) {
          if (dataflow.needs_kernel(i)) nodes.push_back(dataflow.label(i));
        }
        pj["nodes"] = nodes;
        parts.push_back(pj);
      }
      c["parts"] = parts;
    }
    std::size_t arena = 0, bound = 0;
    for (const ArenaStats& a : r.memory) {
      arena += a.arena_bytes;
      bound += a.lower_bound;
    }
    std::size_t recorded = 0;
    for (const SegmentInfo& segment : r.segments) recorded += segment.recorded;
    c["segments"] = r.segments.size();
    c["recorded_segments"] = recorded;
    if (!r.notes.empty()) c["notes"] = r.notes;
    c["arena_bytes"] = arena;
    c["arena_lower_bound_bytes"] = bound;
    configs.push_back(c);
  }
  j["configurations"] = configs;
  j["measurements"] = report.measurements;
  j["database_hits"] = report.db_hits;
  j["tuning_seconds"] = report.tuning_seconds;
  j["unmeasured_candidates"] = unmeasured_candidates(report);
  if (const ConfigurationResult* best = best_single(report.results)) {
    j["best_single"] = best->name;
    if (const ConfigurationResult* c = collage_result(report); c && c->error.empty()) {
      j["collage_speedup_over_best_single"] = best->latency_ms / c->latency_ms;
      j["additive_error"] = relative_off(c->estimated_ms, c->latency_ms);
      j["search_additive_error"] = relative_off(c->search_estimated_ms, c->latency_ms);
    }
  }
  if (std::optional<GuardDecision> guard = decide_guard(report.results)) {
    nlohmann::ordered_json g;
    g["runs"] = guard->runs;
    g["fired"] = guard->fired;
    g["best_single"] = guard->best_single;
    g["collage_ms"] = guard->collage_ms;
    g["best_single_ms"] = guard->best_single_ms;
    g["summary"] = guard->summary;
    j["guard"] = g;
  }
  return j.dump(2) + "\n";
}

collage::Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return collage::Error{collage::ErrorCode::io, path + ": cannot write"};
  return collage::Status::success();
}

collage::Status write_dot(const collage::DataflowGraph<Graph>& dataflow, const RunReport& report, const std::string& path) {
  const ConfigurationResult* chosen = collage_result(report);
  for (const ConfigurationResult& r : report.results) {
    if (chosen == nullptr && r.partition) chosen = &r;
  }
  if (chosen == nullptr) return collage::Error{collage::ErrorCode::invalid_argument, "no configuration partitioned the model"};
  collage::Result<std::string> dot = collage::to_dot(dataflow, *chosen->partition);
  if (!dot.ok()) return dot.error();
  if (collage::Status s = write_text_file(path, *dot); !s.ok()) return s;
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    const std::string command = "dot -Tpng '" + path + "' -o '" + path + ".png'";
    if (std::system(command.c_str()) != 0) {
      return collage::Error{collage::ErrorCode::io, path + ".png: Graphviz could not draw it"};
    }
  }
  return collage::Status::success();
}

}  // namespace tc
