#include "tensor/traits.hpp"

#include <collage/support/numbers.hpp>

namespace tc {

std::string signature(const Graph& graph, int n) {
  const Node& node = graph.node(n);
  std::string out(op_name(node.op));
  out += '{' + node.attrs.to_string() + "}(";
  for (std::size_t k = 0; k < node.inputs.size(); ++k) {
    out += (k ? "," : "") + to_string(graph.node(node.inputs[k]).shape);
  }
  out += ")->" + to_string(node.shape);
  if (node.op == Op::constant && node.value && node.value->data.size() == 1) {
    out += '=' + collage::format_double(node.value->data[0]);
  }
  return out;
}

}  // namespace tc
