// docs/guide.md, "Explanation" and "Reports": why each part was chosen (alternatives), why
// candidates became Invalid (invalid_reasons), and the JSON (collage-partition/1) and DOT reports.
#include "net_ir.hpp"

#include <collage/collage.hpp>
#include <collage/report.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  // x -> dense(., w) -> add(., b) -> relu
  Net net{{{"input", {}}, {"const", {}}, {"dense", {0, 1}}, {"const", {}}, {"add", {2, 3}}, {"relu", {4}}}, {5}};
  auto graph = Graph::build(net);
  if (!graph) return std::fprintf(stderr, "%s\n", graph.error().message.c_str()), 1;

  // "blas" runs dense and add; its compiler fails on regions of more than one operator (the
  // oracle returns an Error, so those candidates become Invalid, with the reason kept).
  auto blas_ops = [](const Graph& g, std::size_t i) { return g.op_name(i) == "dense" || g.op_name(i) == "add"; };
  std::vector<collage::PartitionSpec<Net>> specs = {
      collage::native_fusion_spec<Net>("native", 3, /*penalty=*/0.25),
      {"blas", collage::op_predicate_byoc_rule<Net>("blas", blas_ops, 2)}};
  auto oracle = collage::make_oracle<Net>(
      "model", [](const Graph& g, const collage::Candidate& c,
                  const collage::ExtractedFunction& fn) -> collage::Result<double> {
        double ops = 0;
        for (std::size_t i : fn.body) ops += g.needs_kernel(i) ? 1 : 0;
        if (c.target == "blas" && ops > 1) return collage::Error{collage::ErrorCode::oracle, "blas: one operator only"};
        if (c.target == "blas") return g.op_name(fn.body[0]) == "dense" ? 0.2 : 0.4;
        return 0.5 + 0.3 * ops;
      });
  auto result = collage::partition(*graph, specs, *oracle);
  if (!result) return std::fprintf(stderr, "%s\n", result.error().message.c_str()), 1;

  // [explain]
  // For each part, the candidates that could have covered its first kernel node, cheapest first,
  // with the cost the search compared (the oracle's estimate plus the target's penalty).
  for (std::size_t k = 0; k < result->partitioning.parts.size(); ++k) {
    const collage::Candidate& part = result->partitioning.parts[k];
    std::printf("part %zu: %s\n", k, part.to_string(*graph).c_str());
    for (const collage::Alternative& alt : result->alternatives[k]) {
      std::printf("    %-5s %s\n", alt.cost.to_string().c_str(),
                  result->candidates[alt.candidate].to_string(*graph).c_str());
    }
  }
  // Candidates the oracle failed on: Invalid, and why.
  for (const auto& [index, why] : result->invalid_reasons) {
    std::printf("invalid: %s\n    %s\n", result->candidates[index].to_string(*graph).c_str(), why.c_str());
  }
  // [explain]
  const auto& parts = result->partitioning.parts;
  check(parts.size() == 2 && parts[0].target == "blas" && parts[1].target == "native", "blas dense, native add+relu: the cheapest whole, not the cheapest per node");
  check(result->alternatives.size() == parts.size(), "one list of alternatives per part");
  for (std::size_t k = 0; k < result->alternatives.size(); ++k) {
    const auto& alts = result->alternatives[k];
    bool has_part = false, sorted = true;
    for (std::size_t a = 0; a < alts.size(); ++a) {
      // The part's own entry carries the cost the partitioning gives it (penalty included).
      has_part = has_part || (result->candidates[alts[a].candidate] == parts[k] && alts[a].cost == parts[k].cost);
      if (a > 0 && alts[a].cost < alts[a - 1].cost) sorted = false;
    }
    check(has_part && sorted, "alternatives hold the part itself, cheapest first");
  }
  check(!result->invalid_reasons.empty() && result->invalid_reasons.size() == result->oracle_errors.size(),
        "each oracle failure is kept by candidate");
  for (const auto& [index, why] : result->invalid_reasons) {
    check(result->candidates[index].target == "blas" && result->candidates[index].cost.is_invalid() &&
              why.find("blas: one operator only") != std::string::npos,
          "an invalid reason names the oracle's error");
  }

  // [reports]
  collage::ReportOptions options;
  options.name = "mlp";
  collage::Result<std::string> json = collage::to_json(*graph, *result, options);  // an error for another graph
  collage::Result<std::string> dot = collage::to_dot(*graph, *result, options);
  collage::Result<std::string> text = collage::to_text(*graph, *result, options);  // with the explanation
  collage::Result<std::string> candidates = collage::candidates_to_json(*graph, result->candidates, result->penalties);
  for (const collage::Result<std::string>* written : {&json, &dot, &text, &candidates}) {
    if (!written->ok()) return std::fprintf(stderr, "%s\n", written->error().message.c_str()), 1;
  }
  std::printf("%s", json->c_str());
  // [reports]
  check(json->rfind("{\n  \"format\": \"collage-partition/1\",\n  \"graph\": {\"nodes\": ", 0) == 0, "the JSON header");
  check(json->find("\n  \"total_cost\": 1.55,") != std::string::npos, "the total cost");
  check(json->find("\"alternatives\": [") != std::string::npos, "alternatives are in the report");
  check(json->find("\"host\": [\"input\", \"const\", \"const\"]") != std::string::npos, "host nodes by label");
  check(dot->rfind("digraph", 0) == 0 && dot->find("mlp") != std::string::npos, "a named digraph");
  check(text->rfind("mlp: ", 0) == 0 && text->find("\nwhy collage chose each partition") != std::string::npos,
        "the text report and its explanation");
  check(candidates->find("\"format\": \"collage-candidates/1\"") != std::string::npos, "the candidates document");
  check(*json == *collage::to_json(*graph, *result, options), "reports are deterministic");

  // [progress]
  collage::ProgressOptions progress;
  progress.out = stderr;
  progress.terminal = false;  // on a terminal: true, and the line is redrawn in place
  progress.only_phase = "estimate";
  progress.eta = true;
  collage::ProgressReporter reporter(progress);
  collage::PartitionerOptions with_progress;
  with_progress.progress = reporter.callback();
  auto again = collage::partition(*graph, specs, *oracle, with_progress);
  reporter.stop();
  // [progress]
  check(again.ok() && again->partitioning.total == result->partitioning.total, "the same result with progress shown");

  if (failures != 0) return 1;
  std::puts("guide reports: all checks passed");
  return 0;
}
