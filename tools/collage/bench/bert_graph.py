#!/usr/bin/env python3
"""Writes a BERT-like encoder as a collage-graph/1 file: the layer of tests/common/models.hpp's
bert_like (58 nodes with weights and scalars), repeated. Used for the end-to-end figures of the
collage tool in docs/benchmarks.md.

    tools/collage/bench/bert_graph.py LAYERS > graph.json
"""
import json
import sys


def bert_graph(layers, hidden=768):
    nodes = []

    def add(op, inputs=(), **extra):
        node = {"id": "n%d" % len(nodes), "op": op}
        if inputs:
            node["inputs"] = list(inputs)
        node.update(extra)
        nodes.append(node)
        return node["id"]

    def weight(shape):
        return add("const", shape=shape, dtype="float32")

    def scalar():
        return add("const", shape=[], dtype="float32")

    def dense_bias(x, units, width):
        w = weight([units, width])
        d = add("dense", [x, w], attrs={"units": units})
        return add("bias_add", [d, weight([units])])

    def head(x):
        return add("transpose", [add("reshape", [x])])

    x = add("input", shape=[1, 128, hidden], dtype="float32")
    for _ in range(layers):
        ln = add("layer_norm", [x, weight([hidden]), weight([hidden])])
        q = head(dense_bias(ln, hidden, hidden))
        k = head(dense_bias(ln, hidden, hidden))
        scores = add("softmax", [add("multiply", [add("batch_matmul", [q, k]), scalar()])])
        v = head(dense_bias(ln, hidden, hidden))
        context = add("reshape", [add("transpose", [add("batch_matmul", [scores, v])])])
        x = add("add", [x, dense_bias(context, hidden, hidden)])
        ln2 = add("layer_norm", [x, weight([hidden]), weight([hidden])])
        h = dense_bias(ln2, 4 * hidden, hidden)
        half = add("multiply", [h, scalar()])
        cube = add("multiply", [add("power", [h, scalar()]), scalar()])
        inner = add("multiply", [add("add", [h, cube]), scalar()])
        gelu = add("multiply", [half, add("add", [add("tanh", [inner]), scalar()])])
        x = add("add", [x, dense_bias(gelu, hidden, 4 * hidden)])
    return {"format": "collage-graph/1", "name": "bert-like, %d layers" % layers, "nodes": nodes,
            "outputs": [x]}


if __name__ == "__main__":
    json.dump(bert_graph(int(sys.argv[1])), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
