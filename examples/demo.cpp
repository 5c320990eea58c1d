// The foundation demo: adapts a tiny IR to collage, indexes the MNIST-like graph from the Collage
// RFC, and prints what the graph and partition layers compute (post-DFS order, post-dominators,
// and the validity of a few candidate sub-graphs).

#include <collage/collage.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace demo {

/// A node of the demo IR: an operator applied to earlier nodes, named for printing.
struct Node {
  std::string name;
  std::string op;
  std::vector<int> args;
  collage::OpKind kind;
};

struct Model {
  std::vector<Node> nodes;
  std::vector<int> results;

  int add(std::string name, std::string op, std::vector<int> args, collage::OpKind kind) {
    nodes.push_back(Node{std::move(name), std::move(op), std::move(args), kind});
    return static_cast<int>(nodes.size()) - 1;
  }
};

}  // namespace demo

template <>
struct collage::dataflow_traits<demo::Model> {
  using node_handle = int;
  static const std::vector<int>& roots(const demo::Model& m) { return m.results; }
  static const std::vector<int>& inputs(const demo::Model& m, int n) { return m.nodes[static_cast<std::size_t>(n)].args; }
  static collage::OpKind kind(const demo::Model& m, int n) { return m.nodes[static_cast<std::size_t>(n)].kind; }
  static const std::string& op_name(const demo::Model& m, int n) { return m.nodes[static_cast<std::size_t>(n)].op; }
  static const std::string& label(const demo::Model& m, int n) { return m.nodes[static_cast<std::size_t>(n)].name; }
  static bool is_constant(const demo::Model& m, int n) { return m.nodes[static_cast<std::size_t>(n)].op == "const"; }
  static bool needs_kernel(const demo::Model& m, int n) {
    const std::string& op = m.nodes[static_cast<std::size_t>(n)].op;
    return op != "const" && op != "input";
  }
};

int main() {
  using collage::OpKind;
  demo::Model m;
  int x = m.add("x", "input", {}, OpKind::opaque);
  int h = x;
  for (int layer = 0; layer < 2; ++layer) {
    std::string s = std::to_string(layer);
    int pad = m.add("pad" + s, "pad", {h}, OpKind::injective);
    int w = m.add("w" + s, "const", {}, OpKind::elemwise);
    int conv = m.add("conv" + s, "conv2d", {pad, w}, OpKind::anchor);
    int b = m.add("b" + s, "const", {}, OpKind::elemwise);
    int add = m.add("add" + s, "add", {conv, b}, OpKind::broadcast);
    int relu = m.add("relu" + s, "relu", {add}, OpKind::elemwise);
    h = m.add("pool" + s, "max_pool2d", {relu}, OpKind::anchor);
  }
  int reshape = m.add("reshape", "reshape", {h}, OpKind::injective);
  int wd = m.add("wd", "const", {}, OpKind::elemwise);
  int dense = m.add("dense", "dense", {reshape, wd}, OpKind::anchor);
  int bd = m.add("bd", "const", {}, OpKind::elemwise);
  int out = m.add("out", "add", {dense, bd}, OpKind::broadcast);
  m.results = {out};

  auto built = collage::DataflowGraph<demo::Model>::build(m);
  if (!built) {
    std::fprintf(stderr, "error: %s\n", built.error().message.c_str());
    return 1;
  }
  const auto& graph = *built;
  std::printf("MNIST-like graph: %zu nodes in post-DFS order\n\n", graph.size());
  std::printf("%4s  %-8s %-11s %-10s %-14s %s\n", "idx", "node", "op", "kind", "inputs", "post-dominator");
  for (std::size_t i = 0; i < graph.size(); ++i) {
    std::string inputs;
    for (std::size_t j : graph.inputs(i)) inputs += (inputs.empty() ? "" : ",") + std::to_string(j);
    std::size_t dom = graph.ipdom(i);
    std::string dom_text = dom == collage::npos ? "(sink)" : graph.label(dom);
    std::printf("%4zu  %-8s %-11s %-10s %-14s %s (depth %zu)\n", i, graph.label(i).c_str(), graph.op_name(i).c_str(),
                std::string(collage::to_string(graph.kind(i))).c_str(), inputs.c_str(), dom_text.c_str(),
                graph.pdom_depth(i));
  }

  auto names = [&](std::initializer_list<const char*> labels) {
    collage::IndexSet s = graph.empty_set();
    for (const char* l : labels) {
      for (std::size_t i = 0; i < graph.size(); ++i) {
        if (graph.label(i) == l) s.add(i);
      }
    }
    return s;
  };
  const collage::SubGraphConfig one_kernel{1, false, 3};
  std::printf("\nCandidate sub-graphs under {max_exits 1, no taps, max_depth 3}:\n");
  struct Example {
    const char* what;
    collage::IndexSet inside;
  };
  std::vector<Example> examples = {
      {"conv0 + add0 + relu0", names({"conv0", "add0", "relu0"})},
      {"pad0 .. pool0 (depth 5)", names({"pad0", "conv0", "add0", "relu0", "pool0"})},
      {"conv0 + relu0 (skips add0)", names({"conv0", "relu0"})},
      {"dense + out + weights", names({"dense", "out", "wd", "bd"})},
  };
  for (const Example& e : examples) {
    collage::SubGraph sub(graph, e.inside);
    collage::ExtractedFunction fn = collage::extract(graph, sub);
    std::printf("  %-28s %-26s depth %zu, kind %-9s params %zu -> %s\n", e.what, sub.inside().to_string().c_str(),
                sub.depth(), std::string(collage::to_string(sub.kind())).c_str(), fn.params.size(),
                std::string(collage::to_string(sub.check(graph, one_kernel))).c_str());
  }
  return 0;
}
