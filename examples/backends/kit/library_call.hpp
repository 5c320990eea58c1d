#pragma once

/// \file
/// LibraryCall: one call of a library backend (a composite group of a partition, or one
/// operator), and the calls a partition holds: every Composite group one call and every other
/// operator a call of its own (eigen, onednn), or the whole partition as one call (cublas, cudnn).

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <collage/graph/dataflow_graph.hpp>
#include <collage/partition/sub_graph.hpp>
#include <collage/support/result.hpp>

#include "tensor/function.hpp"
#include "tensor/graph.hpp"
#include "tensor/traits.hpp"

namespace tc {

/// One library call of a partition: a composite group, or a single operator.
struct LibraryCall {
  /// The group's Composite attribute ("onednn.conv_bias_relu"); "" for a single operator.
  std::string composite;
  /// Its operator nodes, topological (ascending ids); the last is the root.
  std::vector<int> nodes;
  /// The node whose value the call produces.
  int root() const { return nodes.back(); }
  /// Whether `n` is one of its nodes.
  bool contains(int n) const { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); }
};

namespace detail {

inline void collect_composites(const std::vector<FunctionGroup>& groups, std::vector<LibraryCall>& out) {
  for (const FunctionGroup& g : groups) {
    const std::string composite = g.attr("Composite");
    if (!composite.empty() && !g.nodes.empty()) {
      out.push_back(LibraryCall{composite, g.nodes});
    } else {
      collect_composites(g.nested, out);
    }
  }
}

}  // namespace detail

/// The calls of `function` in execution order (by root): every nested group with a Composite
/// attribute is one call, every operator outside such groups a call of its own. Fails when a
/// call's value other than its root is used outside it or when groups overlap.
inline collage::Result<std::vector<LibraryCall>> library_calls(const Function& function) {
  const Graph& g = function.graph;
  std::vector<LibraryCall> calls;
  detail::collect_composites(function.groups, calls);
  std::vector<int> owner(g.size(), -1);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    for (int n : calls[c].nodes) {
      if (owner[static_cast<std::size_t>(n)] != -1) {
        return collage::Error{collage::ErrorCode::invalid_argument, describe(g, n) + " is in two composites"};
      }
      owner[static_cast<std::size_t>(n)] = static_cast<int>(c);
    }
  }
  for (int n : function.body()) {
    if (owner[static_cast<std::size_t>(n)] == -1) calls.push_back(LibraryCall{"", {n}});
  }
  std::sort(calls.begin(), calls.end(), [](const LibraryCall& a, const LibraryCall& b) { return a.root() < b.root(); });
  // A call hands on its root only: an inner value read by another call or returned is an error.
  std::vector<bool> inner(g.size(), false);
  for (const LibraryCall& call : calls) {
    for (int n : call.nodes) inner[static_cast<std::size_t>(n)] = n != call.root();
  }
  auto escapes = [&](int n, const LibraryCall* reader) {
    return collage::Error{collage::ErrorCode::invalid_argument,
                          "the value of " + describe(g, n) + " inside composite " +
                              (reader == nullptr ? std::string("is a result of the partition")
                                                 : "is read by " + describe(g, reader->root()))};
  };
  for (const LibraryCall& call : calls) {
    for (int n : call.nodes) {
      for (int in : g.node(n).inputs) {
        if (inner[static_cast<std::size_t>(in)] && !call.contains(in)) return escapes(in, &call);
      }
    }
  }
  for (int out : g.outputs()) {
    if (inner[static_cast<std::size_t>(out)]) return escapes(out, nullptr);
  }
  return calls;
}

/// Every operator of `function` as one call (named by its Composite group when it has exactly
/// one), or an error when it has none or returns anything but the value of its last one.
inline collage::Result<std::vector<LibraryCall>> one_call(const Function& function) {
  std::vector<int> nodes = function.body();
  const std::vector<int>& outputs = function.graph.outputs();
  if (nodes.empty() || outputs.size() != 1 || outputs.front() != nodes.back()) {
    return collage::Error{collage::ErrorCode::invalid_argument,
                          "a partition must be one call returning the value of its last operator"};
  }
  std::vector<LibraryCall> composites;
  detail::collect_composites(function.groups, composites);
  std::string label = composites.size() == 1 ? composites.front().composite : "";
  return std::vector<LibraryCall>{LibraryCall{std::move(label), std::move(nodes)}};
}

/// The call sub-graph `sub_graph` of `graph` would be under `label`: its operator nodes (model
/// ids, ascending).
inline LibraryCall call_of(const collage::DataflowGraph<Graph>& graph, const collage::SubGraph& sub_graph,
                           std::string label) {
  LibraryCall call{std::move(label), {}};
  for (std::size_t i : sub_graph.inside()) {
    if (graph.needs_kernel(i)) call.nodes.push_back(graph.handle(i));
  }
  std::sort(call.nodes.begin(), call.nodes.end());
  return call;
}

}  // namespace tc
