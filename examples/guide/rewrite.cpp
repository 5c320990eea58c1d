// docs/guide.md, "Rewriting": rewrite_partitions hands each chosen part to the caller's rewrite as
// an ExtractedFunction, with its nested groups at every depth (a Composite inside a Primitive) and
// every result of a multi-output part.
#include "net_ir.hpp"

#include <collage/collage.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// [groups]
/// The nested groups of a part, one line each, indented by depth: "Compiler=dnnl Primitive=1 {..}".
void print_groups(const std::vector<collage::ExtractedFunction::Group>& groups, int depth, std::string& out) {
  for (const collage::ExtractedFunction::Group& group : groups) {
    out += std::string(static_cast<std::size_t>(2 * depth + 4), ' ');
    for (const auto& [key, value] : group.attrs) out += key + "=" + value + " ";
    out += "{";
    for (std::size_t k = 0; k < group.body.size(); ++k) out += (k ? "," : "") + std::to_string(group.body[k]);
    out += "}\n";
    print_groups(group.groups, depth + 1, out);
  }
}

/// The library kernel a part asks for: the Composite name at any depth, or "".
std::string composite_of(const std::vector<collage::ExtractedFunction::Group>& groups) {
  for (const collage::ExtractedFunction::Group& group : groups) {
    if (!group.attrs.find("Composite").empty()) return std::string(group.attrs.find("Composite"));
    std::string inner = composite_of(group.groups);
    if (!inner.empty()) return inner;
  }
  return "";
}
// [groups]

}  // namespace

int main() {
  // x -> dense(., w) -> add(., b) -> multiply(., s) -> relu and tanh, both results.
  Net net{{{"input", {}},
           {"const", {}},
           {"dense", {0, 1}},
           {"const", {}},
           {"add", {2, 3}},
           {"const", {}},
           {"multiply", {4, 5}},
           {"relu", {6}},
           {"tanh", {6}}},
          {7, 8}};
  auto graph = Graph::build(net);
  if (!graph) return std::fprintf(stderr, "%s\n", graph.error().message.c_str()), 1;

  // [specs]
  // dnnl has a dense+bias kernel, named by a pattern table: its parts are
  // Primitive(Compiler=dnnl) groups holding a Composite=dnnl.dense_bias group.
  using P = collage::Pattern<Net>;
  collage::PatternTable<Net> dnnl_table = {
      {"dnnl.dense_bias", P::op("add", {P::op("dense", {P::wildcard(), P::constant()}), P::constant()})}};
  // "graphc" compiles whole regions of elementwise operators and may return two results.
  auto elementwise = [](const Graph& g, std::size_t i) { return g.kind(i) <= collage::OpKind::broadcast; };
  std::vector<collage::PartitionSpec<Net>> specs = {
      collage::native_fusion_spec<Net>("native", 3),
      {"dnnl", collage::pattern_table_byoc_rule<Net>(dnnl_table, 3)},
      {"graphc", collage::op_predicate_byoc_rule<Net>("graphc", elementwise, collage::SubGraphConfig{2, false, 0})}};
  // [specs]
  auto oracle = collage::make_oracle<Net>(
      "model", [](const Graph& g, const collage::Candidate& c, const collage::ExtractedFunction& fn) {
        double ops = 0;
        for (std::size_t i : fn.body) ops += g.needs_kernel(i) ? 1 : 0;
        if (c.target == "dnnl") return 0.5 * ops;
        if (c.target == "graphc") return 0.5 + 0.2 * ops;
        return 1.0 * ops;
      });
  auto result = collage::partition(*graph, specs, *oracle);
  if (!result) return std::fprintf(stderr, "%s\n", result.error().message.c_str()), 1;

  // [rewrite]
  // Each part becomes a function of the user's IR (here: text), consumers first, so that the parts
  // still to be rewritten stay valid while this one is replaced by a call.
  std::vector<std::string> functions;
  collage::Status rewritten = collage::rewrite_partitions(  // an error for another graph's partitioning
      *graph, result->partitioning, [&](const collage::Candidate& part, const collage::ExtractedFunction& fn) {
        std::string text = "fn " + std::string(part.target) + "_" + std::to_string(functions.size()) + "(";
        for (std::size_t k = 0; k < fn.params.size(); ++k) text += (k ? ", %" : "%") + std::to_string(fn.params[k]);
        text += ")";
        const std::string library = composite_of(fn.groups);
        if (!library.empty()) text += " calls " + library;
        text += "\n";
        for (std::size_t i : fn.body) {
          text += "    %" + std::to_string(i) + " = " + graph->op_name(i) + "(";
          const auto args = graph->inputs(i);
          for (std::size_t k = 0; k < args.size(); ++k) text += (k ? ", %" : "%") + std::to_string(args[k]);
          text += ")\n";
        }
        text += "    return";
        for (std::size_t r : fn.results) text += " %" + std::to_string(r);
        text += "\n";
        print_groups(fn.groups, 0, text);
        functions.push_back(text);
      });
  if (!rewritten) return std::fprintf(stderr, "%s\n", rewritten.message().c_str()), 1;
  for (const std::string& f : functions) std::printf("%s", f.c_str());
  // [rewrite]

  // The checks: dense+add went to dnnl's library kernel, multiply, relu and tanh to one graphc part
  // with two results, and the parts came consumers first.
  const std::vector<collage::Candidate>& parts = result->partitioning.parts;
  check(parts.size() == 2, "two parts");
  check(functions.size() == 2, "the rewrite saw every part");
  if (parts.size() == 2 && functions.size() == 2) {
    check(parts[0].target == "dnnl" && parts[1].target == "graphc", "dense+add on dnnl, multiply+relu+tanh on graphc");
    check(functions[0].rfind("fn graphc_0(%4, %5)", 0) == 0, "consumers first: the graphc part comes first");
    check(functions[0].find("return %7 %8") != std::string::npos, "the graphc part returns both results");
    check(functions[1].find("calls dnnl.dense_bias") != std::string::npos, "the Composite name below Primitive");
    const auto fn = collage::extract(*graph, parts[0].sub_graph);
    check(fn.groups.size() == 1 && fn.groups[0].attrs.find("Primitive") == "1" &&
              fn.groups[0].attrs.find("Compiler") == "dnnl" && fn.groups[0].groups.size() == 1 &&
              fn.groups[0].groups[0].attrs.find("Composite") == "dnnl.dense_bias",
          "Primitive(Compiler=dnnl) holds Composite=dnnl.dense_bias");
    check(fn.params == std::vector<std::size_t>{0, 1, 3}, "parameters in first-use order, constants included");
  }

  if (failures != 0) return 1;
  std::puts("guide rewrite: all checks passed");
  return 0;
}
