#!/usr/bin/env python3
"""The GPU suite's models and their PyTorch reference times.

Exports torchvision ResNet-18/50, MobileNet-v2, EfficientNet-B0, SqueezeNet 1.1, GoogLeNet and a
BERT-style encoder (2 layers, sequence 128, hidden 256) with torch's exporter (TorchScript-based,
opset 17; random weights, fixed seed), writes each one's test data in the ONNX layout
(test_data_set_0/input_0.pb, output_0.pb: the outputs PyTorch computes in fp32 on the CPU), and times
each on the GPU as PyTorch runs it: eagerly and by replaying a CUDA graph (fp32, TF32 off, median of
--runs after --warmups, CUDA events). Writes OUT/reference.json.

    reference.py --out DIR [--models resnet18,...] [--runs 50] [--warmups 10]
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch
from torch import nn


class EncoderLayer(nn.Module):
    """A BERT layer as plain operators: self-attention, residual, layer norm, GELU feed-forward."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=-1)

        def heads(t):
            return t.reshape(b, s, self.heads, h // self.heads).transpose(1, 2)

        q, k, v = heads(q), heads(k), heads(v)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(h // self.heads), dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(b, s, h)
        x = self.norm1(x + self.proj(ctx))
        return self.norm2(x + self.down(nn.functional.gelu(self.up(x))))


class Encoder(nn.Module):
    def __init__(self, layers=2, hidden=256, heads=4, ffn=1024):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def make(name):
    import torchvision.models as tv

    image = (1, 3, 224, 224)
    table = {
        "resnet18": (lambda: tv.resnet18(weights=None), image),
        "resnet50": (lambda: tv.resnet50(weights=None), image),
        "mobilenet_v2": (lambda: tv.mobilenet_v2(weights=None), image),
        "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None), image),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(weights=None), image),
        "googlenet": (lambda: tv.googlenet(weights=None, aux_logits=False, init_weights=True), image),
        "bert_encoder": (lambda: Encoder(), (1, 128, 256)),
    }
    build, shape = table[name]
    return build().eval(), shape


def write_tensor(array, path):
    from onnx import numpy_helper

    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def export(model, x, out_dir, name):
    path = os.path.join(out_dir, name + ".onnx")
    kwargs = dict(opset_version=17, input_names=["input"], output_names=["output"])
    try:
        torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
    except TypeError:  # a torch without the dynamo switch
        torch.onnx.export(model, (x,), path, **kwargs)
    data = os.path.join(out_dir, name + "_data", "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with torch.inference_mode():
        y = model(x)
    write_tensor(x.numpy(), os.path.join(data, "input_0.pb"))
    write_tensor(y.numpy(), os.path.join(data, "output_0.pb"))
    return path, data


def time_gpu(model, x, runs, warmups):
    """Median milliseconds of an eager forward pass and of a CUDA graph replay."""
    model = model.cuda()
    x = x.cuda()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def median_ms(step):
        for _ in range(warmups):
            step()
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start.record()
            step()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times)

    with torch.inference_mode():
        eager = median_ms(lambda: model(x))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model(x)
        replay = median_ms(graph.replay)
    return eager, replay


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,efficientnet_b0,squeezenet1_1,googlenet,bert_encoder")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmups", type=int, default=10)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.is_available()
    report = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if gpu else None,
        "models": {},
    }
    for name in args.models.split(","):
        torch.manual_seed(0)
        model, shape = make(name)
        x = torch.rand(shape) * 2 - 1
        entry = {}
        try:
            entry["onnx"], entry["test_data"] = export(model, x, args.out, name)
            if gpu:
                entry["torch_eager_ms"], entry["torch_cuda_graph_ms"] = time_gpu(model, x, args.runs, args.warmups)
        except Exception as e:  # one line per model that failed, the others go on
            entry["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            print("reference.py: %s: %s" % (name, entry["error"]), file=sys.stderr)
        report["models"][name] = entry
        print("reference.py: %s %s" % (name, json.dumps({k: v for k, v in entry.items() if k.endswith("_ms")})))
    with open(os.path.join(args.out, "reference.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
