// docs/guide.md, "Adapting your IR": dataflow_traits over a pointer-handle SSA IR with a
// multi-result operation, detected_traits, and the errors DataflowGraph::build reports.
#include "check.hpp"

#include <collage/collage.hpp>

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

// [ir]
// An SSA IR as compilers have them: each value is made by one operation and names its operands by
// pointer. An operation with several results ("split") is followed by one "result" value per
// result that is used, which says which result it is.
struct Value {
  std::string name;  // "%3"
  std::string op;    // "input", "const", "conv2d", "split", "result", ...
  std::vector<const Value*> operands;
  std::size_t index = 0;  // for op == "result": which result of operands[0]
};

struct Function {
  std::deque<Value> values;  // a deque, so that pointers stay valid as values are added
  std::vector<const Value*> results;

  const Value* add(std::string name, std::string op, std::vector<const Value*> operands, std::size_t index = 0) {
    values.push_back(Value{std::move(name), std::move(op), std::move(operands), index});
    return &values.back();
  }
};
// [ir]

// [traits]
template <>
struct collage::dataflow_traits<Function> {
  // Pointers are cheap to copy, compare with == and have a std::hash: a good handle.
  using node_handle = const Value*;

  static const std::vector<const Value*>& roots(const Function& f) { return f.results; }
  static const std::vector<const Value*>& inputs(const Function&, const Value* v) { return v->operands; }

  static const std::string& op_name(const Function&, const Value* v) { return v->op; }
  static const std::string& label(const Function&, const Value* v) { return v->name; }
  static collage::OpKind kind(const Function&, const Value* v) {
    if (v->op == "conv2d" || v->op == "dense") return collage::OpKind::anchor;
    if (v->op == "add") return collage::OpKind::broadcast;
    if (v->op == "relu") return collage::OpKind::elemwise;
    if (v->op == "split" || v->op == "result") return collage::OpKind::injective;
    return collage::OpKind::opaque;
  }
  static bool is_constant(const Function&, const Value* v) { return v->op == "const"; }
  // One result of a multi-result operation: a projection of it.
  static bool is_projection(const Function&, const Value* v) { return v->op == "result"; }
  static std::size_t projection_index(const Function&, const Value* v) { return v->index; }
  // Inputs, constants and projections need no kernel of their own. (The default says the same
  // of constants and projections, but not of inputs: "input" is an operator to collage.)
  static bool needs_kernel(const Function&, const Value* v) {
    return v->op != "input" && v->op != "const" && v->op != "result";
  }
};

// A misspelt optional member (needs_kernal) would be an unrelated member to the compiler and be
// ignored; this line turns that mistake into a compile error.
static_assert(collage::detected_traits<Function>().needs_kernel, "dataflow_traits<Function>::needs_kernel not found");
// [traits]

int main() {
  // [build]
  Function f;
  const Value* x = f.add("%x", "input", {});
  const Value* w = f.add("%w", "const", {});
  const Value* b = f.add("%b", "const", {});
  const Value* conv = f.add("%0", "conv2d", {x, w});
  const Value* split = f.add("%1", "split", {conv});
  const Value* lo = f.add("%1#0", "result", {split}, 0);
  const Value* hi = f.add("%1#1", "result", {split}, 1);
  const Value* sum = f.add("%2", "add", {lo, b});
  const Value* y = f.add("%3", "relu", {sum});
  const Value* z = f.add("%4", "relu", {hi});
  f.results = {y, z};

  auto graph = collage::DataflowGraph<Function>::build(f);
  if (!graph) {
    std::fprintf(stderr, "%s\n", graph.error().message.c_str());
    return 1;
  }
  for (std::size_t i = 0; i < graph->size(); ++i) {
    std::printf("%zu %-5s %-7s %-9s%s\n", i, graph->label(i).c_str(), graph->op_name(i).c_str(),
                std::string(collage::to_string(graph->kind(i))).c_str(), graph->needs_kernel(i) ? " kernel" : "");
  }
  std::printf("detected: %s\n", collage::detected_traits<Function>().to_string().c_str());
  // [build]

  check(graph->size() == 10, "every value reachable from the results is a node");
  const std::size_t hi_index = graph->index_of(hi);
  check(hi_index != collage::npos && graph->is_projection(hi_index) && graph->projection_index(hi_index) == 1,
        "%1#1 is projection 1 of the split");
  check(graph->inputs(hi_index).size() == 1 && graph->handle(graph->inputs(hi_index)[0]) == split,
        "a projection's input is the multi-result operation");
  check(graph->outputs(graph->index_of(split)).size() == 2, "the split feeds its two projections");
  check(!graph->needs_kernel(graph->index_of(x)) && !graph->needs_kernel(graph->index_of(w)),
        "inputs and constants need no kernel");
  check(graph->is_external(graph->index_of(y)) && graph->is_external(graph->index_of(z)), "results are external");
  check(collage::detected_traits<Function>().to_string() ==
            "kind, op_name, label, is_projection, projection_index, is_constant, needs_kernel",
        "detected_traits lists the members defined above");

  // Partitioned by native fusion: the projections, like the inputs and constants, stay on the host.
  {
    std::vector<collage::PartitionSpec<Function>> specs = {collage::native_fusion_spec<Function>("native", 3)};
    auto oracle = collage::make_oracle<Function>(
        "per-kernel", [](const collage::DataflowGraph<Function>&, const collage::Candidate&,
                         const collage::ExtractedFunction& fn) { return 1.0 + 0.1 * static_cast<double>(fn.body.size()); });
    auto result = collage::partition(*graph, specs, *oracle);
    check(result.ok(), "partition");
    if (result) {
      std::string parts;
      for (const collage::Candidate& part : result->partitioning.parts) parts += part.sub_graph.to_string(*graph) + " ";
      std::string host;
      for (std::size_t i : result->partitioning.host) host += graph->label(i) + " ";
      std::printf("parts: %s\nhost: %s\n", parts.c_str(), host.c_str());
      check(host == "%x %w %1#0 %b %1#1 ", "nodes that need no kernel are left to the host");
      check(result->partitioning.parts.size() == 4, "four kernels: conv2d, split, add+relu, relu");
    }
  }

  // [cycle]
  // A cycle is an error value naming a node on it, never a hang.
  Function loop;
  const Value* p = loop.add("%p", "relu", {});
  const Value* q = loop.add("%q", "relu", {p});
  loop.values[0].operands.push_back(q);  // %p = relu(%q), %q = relu(%p)
  loop.results = {q};
  auto cyclic = collage::DataflowGraph<Function>::build(loop);
  if (!cyclic) {
    std::printf("%s: %s\n", std::string(collage::to_string(cyclic.error().code)).c_str(),
                cyclic.error().message.c_str());
  }
  // [cycle]
  check(!cyclic.ok() && cyclic.error().code == collage::ErrorCode::cycle, "a cycle is ErrorCode::cycle");

  if (failures != 0) return 1;
  std::puts("guide ir_adapter: all checks passed");
  return 0;
}
