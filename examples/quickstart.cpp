// The README's usage example: adapt an IR, describe two backends, partition.

#include <collage/collage.hpp>
#include <cstdio>
#include <string>
#include <vector>

// 1. Your IR: here, nodes in a vector with named ops.
struct Node { std::string op; std::vector<int> args; };
struct MyGraph { std::vector<Node> nodes; std::vector<int> results; };

// 2. Adapt it by specialising collage::dataflow_traits.
template <>
struct collage::dataflow_traits<MyGraph> {
  using node_handle = int;
  static const std::vector<int>& roots(const MyGraph& g) { return g.results; }
  static const std::vector<int>& inputs(const MyGraph& g, int n) { return g.nodes[n].args; }
  static const std::string& op_name(const MyGraph& g, int n) { return g.nodes[n].op; }
  static collage::OpKind kind(const MyGraph& g, int n) {
    const std::string& op = g.nodes[n].op;
    return op == "dense" ? collage::OpKind::anchor : op == "add" ? collage::OpKind::broadcast : collage::OpKind::elemwise;
  }
  static bool needs_kernel(const MyGraph& g, int n) { return g.nodes[n].op != "input"; }
};

int main() {
  MyGraph g{{{"input", {}}, {"dense", {0}}, {"add", {1, 0}}, {"relu", {2}}}, {3}};
  auto graph = collage::DataflowGraph<MyGraph>::build(g);
  if (!graph) return std::fprintf(stderr, "%s\n", graph.error().message.c_str()), 1;

  // 3. Say what each backend can run, and what it costs.
  using Graph = collage::DataflowGraph<MyGraph>;
  std::vector<collage::PartitionSpec<MyGraph>> specs = {
      collage::native_fusion_spec<MyGraph>("tvm", /*max_depth=*/3),
      {"cublas", collage::op_predicate<MyGraph>("cublas", [](const Graph& gr, std::size_t i) {
         return gr.op_name(i) == "dense";
       })}};
  // A toy cost model: per op 1.0 on tvm, 0.5 on cublas; fusing saves 0.2 per extra op.
  auto oracle = collage::make_oracle<MyGraph>("toy", [](const Graph&, const collage::Candidate& c,
                                                         const collage::ExtractedFunction& fn) {
    const double ops = static_cast<double>(fn.body.size());
    return collage::Cost::value((c.target == "cublas" ? 0.5 : 1.0) * ops - 0.2 * (ops - 1));
  });

  // 4. Partition, then rewrite or report.
  auto result = collage::partition(*graph, specs, *oracle);
  if (!result) return std::fprintf(stderr, "%s\n", result.error().message.c_str()), 1;
  for (const collage::Candidate& part : result->partitioning.parts)
    std::printf("%-7s %-12s cost %s\n", part.target.c_str(), part.sub_graph.to_string(*graph).c_str(),
                part.cost.to_string().c_str());
  std::printf("total %s\n", result->partitioning.total.to_string().c_str());
}
