#include "onnx/node_order.hpp"

#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/proto_node.hpp"

namespace tc::detail {

namespace {

std::string label(const ::onnx::NodeProto& node) {
  return "node '" + node_name(node) + "' (" + node.op_type() + ")";
}

}  // namespace

collage::Status sort_nodes(::onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> producer;  // value -> the node producing it
  for (int k = 0; k < graph.node_size(); ++k) {
    for (const std::string& out : graph.node(k).output()) {
      if (!out.empty()) producer.emplace(out, k);
    }
  }
  // The nodes each node waits for (each once), and whether the given order already serves.
  const int n = graph.node_size();
  std::vector<int> waiting_on(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> readers(static_cast<std::size_t>(n));
  bool in_order = true;
  for (int k = 0; k < n; ++k) {
    std::unordered_set<int> producers;
    for (const std::string& in : graph.node(k).input()) {
      const auto p = producer.find(in);
      if (p == producer.end() || !producers.insert(p->second).second) continue;
      in_order = in_order && p->second < k;
      ++waiting_on[static_cast<std::size_t>(k)];
      readers[static_cast<std::size_t>(p->second)].push_back(k);
    }
  }
  if (in_order) return collage::Status::success();
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // the earliest given first
  for (int k = 0; k < n; ++k) {
    if (waiting_on[static_cast<std::size_t>(k)] == 0) ready.push(k);
  }
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> sorted;
  while (!ready.empty()) {
    const int k = ready.top();
    ready.pop();
    *sorted.Add() = std::move(*graph.mutable_node(k));
    for (int r : readers[static_cast<std::size_t>(k)]) {
      if (--waiting_on[static_cast<std::size_t>(r)] == 0) ready.push(r);
    }
  }
  if (sorted.size() < n) {
    // Every node left waits on another left: walking from one to a producer left, a node comes
    // round again, and that node is on a cycle.
    auto blocked = [&](int k) { return waiting_on[static_cast<std::size_t>(k)] != 0; };
    int k = 0;
    while (!blocked(k)) ++k;
    std::vector<bool> seen(static_cast<std::size_t>(n), false);
    while (!seen[static_cast<std::size_t>(k)]) {
      seen[static_cast<std::size_t>(k)] = true;
      for (const std::string& in : graph.node(k).input()) {
        const auto p = producer.find(in);
        if (p != producer.end() && blocked(p->second)) {
          k = p->second;
          break;
        }
      }
    }
    return collage::Error{collage::ErrorCode::invalid_argument,
                          label(graph.node(k)) + " is on a cycle: what it reads depends on what it produces"};
  }
  *graph.mutable_node() = std::move(sorted);
  return collage::Status::success();
}

}  // namespace tc::detail
