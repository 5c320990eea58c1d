#include "tensor/graph.hpp"

namespace tc {

int Graph::add_input(std::string name, Shape shape) {
  Node node;
  node.op = Op::input;
  node.name = name.empty() ? fresh_name(Op::input) : std::move(name);
  node.shape = std::move(shape);
  nodes_.push_back(std::move(node));
  inputs_.push_back(static_cast<int>(nodes_.size() - 1));
  return static_cast<int>(nodes_.size() - 1);
}

int Graph::add_constant(std::string name, Tensor value) {
  return add_constant(std::move(name), std::make_shared<const Tensor>(std::move(value)));
}

int Graph::add_constant(std::string name, std::shared_ptr<const Tensor> value) {
  Node node;
  node.op = Op::constant;
  node.name = name.empty() ? fresh_name(Op::constant) : std::move(name);
  node.shape = value->shape;
  node.value = std::move(value);
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size() - 1);
}

collage::Result<int> Graph::add_op(Op op, std::vector<int> inputs, Attributes attrs, std::string name) {
  const OpInfo& oi = info(op);
  const std::string label = name.empty() ? std::string(oi.name) : "'" + name + "' (" + std::string(oi.name) + ")";
  if (op == Op::input || op == Op::constant) {
    return collage::Error{collage::ErrorCode::invalid_argument, label + ": use add_input / add_constant"};
  }
  const auto n = static_cast<int>(inputs.size());
  if (n < oi.min_inputs || n > oi.max_inputs) {
    return collage::Error{collage::ErrorCode::invalid_argument,
                          label + ": " + std::to_string(n) + " inputs, expected " + std::to_string(oi.min_inputs) +
                              (oi.min_inputs == oi.max_inputs ? "" : " to " + std::to_string(oi.max_inputs))};
  }
  for (int in : inputs) {
    if (in < 0 || static_cast<std::size_t>(in) >= nodes_.size()) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            label + ": input " + std::to_string(in) + " is not an earlier node"};
    }
  }
  Node node;
  node.op = op;
  node.name = name.empty() ? fresh_name(op) : std::move(name);
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size() - 1);
}

int Graph::find(const std::string& name) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Graph::fresh_name(Op op) {
  std::string base(op_name(op));
  for (char& c : base) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return base + "_" + std::to_string(nodes_.size());
}

std::string describe(const Graph& graph, int n) {
  const Node& node = graph.node(n);
  return "node '" + node.name + "' (" + std::string(op_name(node.op)) + ")";
}

}  // namespace tc
