#include "tensor/function.hpp"

#include <collage/partition/extraction.hpp>

namespace tc {

std::string FunctionGroup::attr(const std::string& key) const {
  for (const auto& [k, v] : attrs) {
    if (k == key) return v;
  }
  return "";
}

std::vector<int> Function::body() const {
  std::vector<int> out;
  for (std::size_t n = 0; n < graph.size(); ++n) {
    const Op op = graph.node(static_cast<int>(n)).op;
    if (op != Op::input && op != Op::constant) out.push_back(static_cast<int>(n));
  }
  return out;
}

namespace {

/// Copies model nodes into a function graph, mapping model node ids to function node ids.
class FunctionBuilder {
 public:
  explicit FunctionBuilder(const Graph& model) : model_(model), map_(model.size(), -1) {}

  void param(int m) {
    const Node& node = model_.node(m);
    if (node.op == Op::constant) {
      map_[static_cast<std::size_t>(m)] = function_.graph.add_constant(node.name, node.value);
    } else {
      map_[static_cast<std::size_t>(m)] = function_.graph.add_input(node.name, node.shape);
      function_.params.push_back(m);
    }
  }

  void op(int m) {
    const Node& node = model_.node(m);
    std::vector<int> inputs;
    for (int in : node.inputs) inputs.push_back(map_[static_cast<std::size_t>(in)]);
    // The model node already passed these checks, so adding it cannot fail.
    int f = *function_.graph.add_op(node.op, std::move(inputs), node.attrs, node.name);
    function_.graph.mutable_node(f).shape = node.shape;
    map_[static_cast<std::size_t>(m)] = f;
  }

  void result(int m) {
    function_.graph.add_output(map_[static_cast<std::size_t>(m)]);
    function_.results.push_back(m);
  }

  int mapped(int m) const { return map_[static_cast<std::size_t>(m)]; }
  Function& function() { return function_; }

 private:
  const Graph& model_;
  std::vector<int> map_;
  Function function_;
};

FunctionGroup make_group(const collage::DataflowGraph<Graph>& dataflow, const collage::NestedSubGraph& nested,
                         const FunctionBuilder& builder) {
  FunctionGroup group;
  for (const auto& [k, v] : nested.attrs) group.attrs.emplace_back(k, v);
  for (std::size_t i : nested.sub_graph.inside()) {
    if (dataflow.needs_kernel(i)) group.nodes.push_back(builder.mapped(dataflow.handle(i)));
  }
  for (const collage::NestedSubGraph& inner : nested.sub_graph.nested()) {
    group.nested.push_back(make_group(dataflow, inner, builder));
  }
  return group;
}

}  // namespace

Function extract_function(const collage::DataflowGraph<Graph>& dataflow, const collage::SubGraph& sub_graph) {
  const Graph& model = dataflow.ir();
  const auto layout = collage::extract(dataflow, sub_graph);
  FunctionBuilder builder(model);
  for (std::size_t i : layout.params) builder.param(dataflow.handle(i));
  for (std::size_t i : layout.inlined) builder.param(dataflow.handle(i));
  for (std::size_t i : layout.body) {
    const int m = dataflow.handle(i);
    const Op op = model.node(m).op;
    // A constant inside a partition (joined by a constant combiner) is bound like a parameter.
    if (op == Op::constant || op == Op::input) {
      builder.param(m);
    } else {
      builder.op(m);
    }
  }
  for (std::size_t i : layout.results) builder.result(dataflow.handle(i));
  for (const collage::NestedSubGraph& nested : sub_graph.nested()) {
    builder.function().groups.push_back(make_group(dataflow, nested, builder));
  }
  return std::move(builder.function());
}

Function whole_model_function(const Graph& model) {
  FunctionBuilder builder(model);
  for (std::size_t n = 0; n < model.size(); ++n) {
    const Op op = model.node(static_cast<int>(n)).op;
    if (op == Op::input || op == Op::constant) {
      builder.param(static_cast<int>(n));
    } else {
      builder.op(static_cast<int>(n));
    }
  }
  for (int out : model.outputs()) builder.result(out);
  return std::move(builder.function());
}

}  // namespace tc
