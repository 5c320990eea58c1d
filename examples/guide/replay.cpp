// docs/guide.md, "Traces and replay": save_trace writes a partition() run as text; replay repeats
// its search over the same graph without the oracle and gets the same partitioning, nested groups
// included.
#include "net_ir.hpp"

#include <collage/collage.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  const Net net = two_dense_layers();
  auto graph = Graph::build(net);
  if (!graph) return std::fprintf(stderr, "%s\n", graph.error().message.c_str()), 1;

  // Library calls inside native kernels: Primitive groups holding Composite groups.
  using P = collage::Pattern<Net>;
  collage::PatternTable<Net> table = {
      {"cublas.dense_bias", P::op("add", {P::op("dense", {P::wildcard(), P::constant()}), P::constant()})}};
  std::vector<collage::PartitionSpec<Net>> specs = {{"native", collage::library_in_native_rule<Net>(table, 3)}};
  auto oracle = collage::make_oracle<Net>(
      "model", [](const Graph& g, const collage::Candidate& c, const collage::ExtractedFunction& fn) {
        double ops = 0;
        for (std::size_t i : fn.body) ops += g.needs_kernel(i) ? 1 : 0;
        const bool library = c.sub_graph.to_string().find("Composite=") != std::string::npos;
        return (library ? 0.5 : 1.0) * ops - 0.1 * (ops - 1);
      });

  // [replay]
  auto result = collage::partition(*graph, specs, *oracle);
  if (!result) return std::fprintf(stderr, "%s\n", result.error().message.c_str()), 1;
  const std::string trace = collage::save_trace(*result);  // keep it in a file, a bug report, ...
  std::printf("%s", trace.c_str());

  // Later, over the same graph, without the oracle:
  collage::Result<collage::Partitioning> again = collage::replay(*graph, trace);
  if (!again) return std::fprintf(stderr, "%s\n", again.error().message.c_str()), 1;
  // [replay]
  const collage::Partitioning& first = result->partitioning;
  check(again->total == first.total, "same total");
  check(again->parts.size() == first.parts.size(), "same number of parts");
  bool same_parts = again->parts.size() == first.parts.size();
  for (std::size_t k = 0; same_parts && k < first.parts.size(); ++k) {
    same_parts = again->parts[k] == first.parts[k] && again->parts[k].rule_name == first.parts[k].rule_name &&
                 again->parts[k].cost == first.parts[k].cost;
  }
  check(same_parts, "same parts, targets, rules, costs and nested groups");
  check(again->host == first.host, "same host nodes");
  bool nested_composite = false;
  for (const collage::Candidate& part : again->parts) {
    for (const collage::NestedSubGraph& group : part.sub_graph.nested()) {
      for (const collage::NestedSubGraph& inner : group.sub_graph.nested()) {
        nested_composite = nested_composite || inner.attr("Composite") == "cublas.dense_bias";
      }
    }
  }
  check(nested_composite, "the Composite group inside the Primitive one survives the trace");
  for (const collage::Candidate& part : again->parts) std::printf("replayed %s\n", part.to_string(*graph).c_str());

  // [bad-trace]
  // A trace that does not fit the graph is an error value naming the line and the field.
  collage::Result<collage::Partitioning> bad = collage::replay(*graph, "collage-trace/3\ncandidate\tnative\tr\t1\t99\n");
  if (!bad) {
    std::printf("%s: %s\n", std::string(collage::to_string(bad.error().code)).c_str(), bad.error().message.c_str());
  }
  // [bad-trace]
  check(!bad.ok() && bad.error().code == collage::ErrorCode::parse, "node 99 is not in the graph");

  if (failures != 0) return 1;
  std::puts("guide replay: all checks passed");
  return 0;
}
