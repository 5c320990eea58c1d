#pragma once

/// \file
/// Graph: the tensor IR. Nodes in a vector, each node's inputs earlier in it (the vector is a
/// topological order), float32 tensors with static shapes.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "tensor/attributes.hpp"
#include "tensor/ops.hpp"
#include "tensor/tensor.hpp"

namespace tc {

/// One operator application (or a graph input, or a constant). Produces one tensor.
struct Node {
  Op op = Op::identity;
  /// Unique within its graph; the ONNX value name for nodes read from ONNX.
  std::string name;
  /// Producers of the operands, in argument order; each is an earlier node.
  std::vector<int> inputs;
  Attributes attrs;
  /// The output shape; set for inputs and constants when they are made, by infer_shapes() for
  /// operators.
  Shape shape;
  /// The value of a constant.
  std::shared_ptr<const Tensor> value;
};

/// A dataflow graph of tensor operators.
class Graph {
 public:
  /// Adds a graph input of `shape`; returns its node index.
  int add_input(std::string name, Shape shape);
  /// Adds a constant; returns its node index.
  int add_constant(std::string name, Tensor value);
  int add_constant(std::string name, std::shared_ptr<const Tensor> value);
  /// Adds an operator over earlier nodes; its shape is left for infer_shapes(). An empty name is
  /// replaced by a fresh one ("relu_3"). Returns its node index, or an error when an input index
  /// is not an earlier node or the arity is wrong for `op`.
  collage::Result<int> add_op(Op op, std::vector<int> inputs, Attributes attrs = {}, std::string name = "");
  /// Marks node `n` as a graph output (results in the order marked; repeats allowed).
  void add_output(int n) { outputs_.push_back(n); }

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int n) const { return nodes_[static_cast<std::size_t>(n)]; }
  Node& mutable_node(int n) { return nodes_[static_cast<std::size_t>(n)]; }
  std::size_t size() const { return nodes_.size(); }
  /// Input nodes in the order they were added.
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  void set_outputs(std::vector<int> outputs) { outputs_ = std::move(outputs); }

  /// The node named `name`, or -1.
  int find(const std::string& name) const;

 private:
  std::string fresh_name(Op op);

  std::vector<Node> nodes_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
};

/// A short description of node `n` for messages: "node 'conv_3' (Conv)".
std::string describe(const Graph& graph, int n);

}  // namespace tc
