// Times one ONNX model in ONNX Runtime's CPU build (the npm package onnxruntime-node), as a user
// would run it: an InferenceSession with every graph optimisation, `threads` intra-op threads, one
// inter-op thread, seeded random float inputs of the model's shapes (int64 inputs: ones).
//
//   node ort_time.mjs MODEL.onnx [--threads N] [--runs R] [--warmups W] [--seed S]
//
// Prints one JSON line: {"model", "threads", "median_ms", "min_ms", "runs", "ort"}.
import { createRequire } from 'node:module';
import * as ort from 'onnxruntime-node';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const k = args.indexOf(name);
  return k >= 0 && k + 1 < args.length ? Number(args[k + 1]) : fallback;
};
const model = args.find((a, k) => !a.startsWith('--') && (k === 0 || !args[k - 1].startsWith('--')));
if (!model) {
  console.error('ort_time.mjs: no model given');
  process.exit(2);
}
const threads = option('--threads', 1);
const runs = option('--runs', 30);
const warmups = option('--warmups', 5);
let seed = option('--seed', 1) >>> 0;

// A small seeded generator (xorshift32), uniform in [-1, 1).
const random = () => {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return (seed / 4294967296) * 2 - 1;
};

let session;
try {
  session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
} catch (e) {
  console.error(`ort_time.mjs: ${model}: ${String(e.message ?? e).split('\n')[0]}`);
  process.exit(1);
}
const feeds = {};
for (const meta of session.inputMetadata) {
  const shape = meta.shape.map((d) => (typeof d === 'number' ? d : 1));
  const size = shape.reduce((a, b) => a * b, 1);
  if (meta.type === 'int64') {
    // Token ids, token types, a mask: ones index any table and keep every position.
    feeds[meta.name] = new ort.Tensor('int64', new BigInt64Array(size).fill(1n), shape);
    continue;
  }
  const data = new Float32Array(size);
  for (let i = 0; i < data.length; ++i) data[i] = random();
  feeds[meta.name] = new ort.Tensor('float32', data, shape);
}
for (let k = 0; k < warmups; ++k) await session.run(feeds);
const times = [];
for (let k = 0; k < runs; ++k) {
  const start = process.hrtime.bigint();
  await session.run(feeds);
  times.push(Number(process.hrtime.bigint() - start) / 1e6);
}
times.sort((a, b) => a - b);
const median = times.length % 2 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
const version = require('onnxruntime-node/package.json').version;
console.log(JSON.stringify({ model, threads, median_ms: median, min_ms: times[0], runs, ort: version }));
