#pragma once

// collage-graph/1 texts for the tool's tests: random graphs (operators, inputs, tensor and scalar
// constants, tuples and projections, with string or integer ids, in shuffled order), large layered
// graphs, and a small fixed graph with a node of every role.

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace collage_cli_test {

/// A graph with a node of every role (input, tensor and scalar constants, tuple, projection,
/// operators), string and integer ids, nodes listed before their inputs, and a node the outputs do
/// not reach ("dead").
inline constexpr const char* kTupleGraph = R"({
  "format": "collage-graph/1", "name": "t",
  "nodes": [
    {"id": "q", "op": "my_op", "inputs": ["g"], "kind": "injective"},
    {"id": "g", "op": "get_item", "inputs": ["t"], "attrs": {"index": 1}},
    {"id": "t", "op": "tuple", "inputs": ["c0", 7]},
    {"id": 7, "op": "nn.relu", "inputs": ["x"]},
    {"id": "c0", "op": "conv2d", "inputs": ["x", "w0"], "attrs": {"padding": [0, 0, 0, 0]}},
    {"id": "w0", "op": "const", "shape": [8, 1, 5, 5]},
    {"id": "s0", "op": "const", "shape": []},
    {"id": "m", "op": "multiply", "inputs": ["q", "s0"]},
    {"id": "x", "op": "input", "shape": [1, 1, 28, 28], "dtype": "float32"},
    {"id": "dead", "op": "relu", "inputs": ["x"]}
  ],
  "outputs": ["m"]
})";

/// A random DAG of about `n` nodes as a collage-graph/1 text. With `integer_ids`, about half the
/// ids are integers.
inline std::string random_graph_json(std::mt19937_64& rng, std::size_t n, bool integer_ids) {
  using nlohmann::json;
  struct Node {
    json j;
    bool tuple = false;
    std::size_t arity = 0;
  };
  std::vector<Node> nodes;
  std::vector<bool> used;
  auto pick = [&](std::size_t below, std::size_t window) {
    const std::size_t lo = below > window ? below - window : 0;
    return std::uniform_int_distribution<std::size_t>(lo, below - 1)(rng);
  };
  auto coin = [&](int percent) { return std::uniform_int_distribution<int>(0, 99)(rng) < percent; };
  auto id_of = [&](std::size_t i) { return nodes[i].j["id"]; };
  auto add = [&](json j) {
    const std::size_t i = nodes.size();
    j["id"] = integer_ids && coin(50) ? json(i) : json("n" + std::to_string(i));
    nodes.push_back(Node{std::move(j), false, 0});
    used.push_back(false);
    return i;
  };
  auto use = [&](std::size_t i) {
    used[i] = true;
    return id_of(i);
  };
  auto value = [&](std::size_t below) {
    // An earlier node that carries a tensor (not a tuple, not a constant).
    for (int tries = 0; tries < 20; ++tries) {
      const std::size_t i = pick(below, 8);
      const std::string& op = nodes[i].j["op"].get_ref<const std::string&>();
      if (!nodes[i].tuple && op != "const") return i;
    }
    return std::size_t{0};
  };

  add({{"op", "input"}, {"shape", {1, 16}}, {"dtype", "float32"}});
  if (n > 6) add({{"op", "input"}, {"shape", {1, 16}}, {"dtype", "float32"}});
  static const char* const kUnary[] = {"relu", "reshape", "max_pool2d", "softmax", "sum", "sigmoid"};
  static const char* const kBinary[] = {"add", "multiply", "subtract"};
  while (nodes.size() < n) {
    const std::size_t below = nodes.size();
    const int roll = std::uniform_int_distribution<int>(0, 99)(rng);
    if (roll < 15) {  // conv2d / dense with a tensor-constant weight
      const std::size_t w = add({{"op", "const"}, {"shape", {16, 16}}, {"dtype", "float32"}});
      const std::size_t x = value(below);
      add({{"op", coin(50) ? "conv2d" : "dense"}, {"inputs", {use(x), use(w)}}, {"attrs", {{"units", 16}}}});
    } else if (roll < 22) {  // an op with a scalar constant
      const std::size_t s = add({{"op", "const"}, {"shape", json::array()}, {"dtype", "float32"}});
      const std::size_t x = value(below);
      add({{"op", "multiply"}, {"inputs", {use(x), use(s)}}});
    } else if (roll < 30 && below >= 2) {  // a tuple and, often, projections of it
      const std::size_t arity = coin(50) ? 2 : 3;
      json inputs = json::array();
      for (std::size_t k = 0; k < arity; ++k) inputs.push_back(use(value(below)));
      const std::size_t t = add({{"op", "tuple"}, {"inputs", inputs}});
      nodes[t].tuple = true;
      nodes[t].arity = arity;
      const std::size_t gets = std::uniform_int_distribution<std::size_t>(0, arity)(rng);
      for (std::size_t k = 0; k < gets; ++k) {
        add({{"op", "get_item"}, {"inputs", {use(t)}}, {"attrs", {{"index", k}}}});
      }
      if (gets == 0 || coin(30)) add({{"op", "concatenate"}, {"inputs", {use(t)}}});
    } else if (roll < 35) {  // an op unknown to the built-in table, with an explicit kind
      add({{"op", "my_op"}, {"kind", coin(50) ? "injective" : "elemwise"}, {"inputs", {use(value(below))}}});
    } else if (roll < 65) {
      add({{"op", kBinary[std::uniform_int_distribution<int>(0, 2)(rng)]},
           {"inputs", {use(value(below)), use(value(below))}}});
    } else {
      add({{"op", kUnary[std::uniform_int_distribution<int>(0, 5)(rng)]}, {"inputs", {use(value(below))}}});
    }
  }
  json outputs = json::array();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!used[i] || coin(5)) outputs.push_back(id_of(i));
  }
  std::vector<json> list;
  for (Node& node : nodes) list.push_back(std::move(node.j));
  std::shuffle(list.begin(), list.end(), rng);
  json doc = {{"format", "collage-graph/1"}, {"name", "random"}, {"nodes", list}, {"outputs", outputs}};
  return doc.dump(1);
}

/// A spec with four targets over the ops random_graph_json uses: native fusion, a conv2d/dense
/// library, a library of fused elementwise chains, and a dense+bias pattern library.
inline std::string random_spec_json(const std::string& algorithm) {
  return R"js({
  "format": "collage-spec/1",
  "targets": [
    {"name": "tvm", "rule": {"rule": "native", "max_depth": 3}},
    {"name": "cudnn", "penalty": 0.25,
     "rule": {"rule": "primitive", "sub": {"rule": "op_predicate", "name": "cudnn", "ops": ["conv2d", "dense"],
                                           "constants": true}}},
    {"name": "ew", "penalty": 0.5,
     "rule": {"rule": "primitive",
              "sub": {"rule": "only_valid", "config": {"max_exits": 1, "max_depth": 3},
                      "sub": {"rule": "combine", "max_depth": 3, "combiners": ["all"],
                              "sub": {"rule": "op_predicate", "ops": ["add", "multiply", "relu", "sigmoid"]}}}}},
    {"name": "cutlass",
     "rule": {"rule": "primitive",
              "sub": {"rule": "only_valid", "config": {"max_exits": 1},
                      "sub": {"rule": "composite", "name": "cutlass.dense_bias",
                              "sub": {"rule": "pattern", "pattern": "add(dense(*, const), *)"}}}}}
  ],
  "cost": {"model": "synthetic", "targets": {
    "tvm": {"launch": 1.0, "fusion": 0.8, "ops": {"*": 2.0, "conv2d": 9.0, "dense": 7.0}},
    "cudnn": {"launch": 0.5, "ops": {"conv2d": 4.0, "dense": 5.0}},
    "ew": {"launch": 0.25, "fusion": 0.5, "ops": {"add": 1.0, "multiply": 1.0, "relu": 0.5, "sigmoid": 1.5}},
    "cutlass": {"launch": 0.5, "fusion": 0.6, "ops": {"dense": 3.0, "add": 1.0}}
  }},
  "search": {"algorithm": ")js" + algorithm + R"js(", "beam_width": 16}
})js";
}

/// A layered graph of `n` nodes like a large transformer's: every 7th node a weight.
inline std::string layered_graph_json(std::size_t n) {
  std::mt19937_64 rng(7);
  static const char* const kOps[] = {"dense", "add", "relu", "multiply", "reshape", "softmax", "layer_norm"};
  std::string text = R"({"format": "collage-graph/1", "name": "layered", "nodes": [)";
  text += R"({"id": "n0", "op": "input", "shape": [1, 768], "dtype": "float32"})";
  std::vector<bool> used(n, false);
  std::vector<bool> weight(n, false);
  for (std::size_t i = 1; i < n; ++i) {
    const std::string id = "\"n" + std::to_string(i) + "\"";
    if (i % 7 == 0) {
      weight[i] = true;
      text += R"(, {"id": )" + id + R"(, "op": "const", "shape": [768, 768], "dtype": "float32"})";
      continue;
    }
    const char* op = kOps[rng() % 7];
    std::string inputs;
    const std::size_t k = 1 + rng() % 2;
    for (std::size_t a = 0; a < k; ++a) {
      const std::size_t lo = i > 20 ? i - 20 : 0;
      const std::size_t j = lo + rng() % (i - lo);
      used[j] = true;
      inputs += (a ? ", \"n" : "\"n") + std::to_string(j) + "\"";
    }
    text += R"(, {"id": )" + id + R"(, "op": ")" + op + R"(", "inputs": [)" + inputs +
            R"(], "attrs": {"units": 768}, "shape": [1, 768], "dtype": "float32"})";
  }
  text += R"(], "outputs": [)";
  bool first = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (used[i]) continue;
    text += (first ? "\"n" : ", \"n") + std::to_string(i) + "\"";
    first = false;
  }
  return text + "]}";
}

}  // namespace collage_cli_test
