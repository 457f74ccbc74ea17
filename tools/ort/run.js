#!/usr/bin/env node
'use strict';
// onnxruntime (CPU) reference runner.
//   node tools/ort/run.js model.onnx in.npz out.npz [--threads N] [--all-outputs] [--bench N]
// Feeds the arrays of in.npz to the model's inputs (by name; dtype and shape must
// match), runs it, and writes every output as float32 .npy into out.npz (stored zip).
// --all-outputs also writes every intermediate tensor of the main graph.
// --bench N times N more runs after a warm-up and prints the mean wall time.
// Errors: one line on stderr, exit code 2.
const fs = require('fs');
const { readNpz, writeNpz } = require('./npz');
const { exposeAllOutputs } = require('./onnxproto');

const USAGE = 'usage: run.js model.onnx in.npz out.npz [--threads N] [--all-outputs] [--bench N]';

class UserError extends Error {}

function parseArgs(argv) {
  const opts = { positional: [], threads: 1, allOutputs: false, bench: 0 };
  const intValue = (flag, v) => {
    if (v === undefined || !/^[0-9]+$/.test(v)) throw new UserError(`${flag} needs a non-negative integer, got '${v ?? ''}'`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--threads') opts.threads = intValue(a, argv[++i]);
    else if (a === '--bench') opts.bench = intValue(a, argv[++i]);
    else if (a === '--all-outputs') opts.allOutputs = true;
    else if (a === '-h' || a === '--help') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    else if (a.startsWith('--')) throw new UserError(`unknown option '${a}'; ${USAGE}`);
    else opts.positional.push(a);
  }
  if (opts.positional.length !== 3) throw new UserError(USAGE);
  if (opts.bench > 0 && opts.bench > 100000) throw new UserError('--bench N must be at most 100000');
  return opts;
}

function readFile(path, what) {
  try { return fs.readFileSync(path); } catch (err) {
    throw new UserError(`cannot read ${what} '${path}': ${err.code || err.message}`);
  }
}

// ORT tensor type -> the npy dtype name our reader reports.
const ORT_TO_NPY = {
  float32: 'float32', float64: 'float64', int64: 'int64', int32: 'int32', int16: 'int16',
  int8: 'int8', uint8: 'uint8', uint16: 'uint16', uint32: 'uint32', uint64: 'uint64',
  bool: 'bool', float16: 'float16',
};

function makeFeeds(ort, session, arrays, inPath) {
  const meta = new Map(session.inputMetadata.map((m) => [m.name, m]));
  for (const name of arrays.keys())
    if (!meta.has(name)) throw new UserError(`${inPath}: array '${name}' is not a model input (inputs: ${session.inputNames.join(', ')})`);
  const feeds = {};
  for (const name of session.inputNames) {
    const m = meta.get(name);
    const arr = arrays.get(name);
    if (!arr) throw new UserError(`${inPath}: no array for model input '${name}' (arrays: ${[...arrays.keys()].join(', ') || 'none'})`);
    if (m.isTensor && ORT_TO_NPY[m.type] !== arr.dtype)
      throw new UserError(`${inPath}: input '${name}' is ${arr.dtype}, the model expects ${m.type}`);
    if (m.isTensor && m.shape) {
      const want = m.shape;
      const ok = want.length === arr.shape.length && want.every((d, i) => typeof d !== 'number' || d < 0 || d === arr.shape[i]);
      if (!ok) throw new UserError(`${inPath}: input '${name}' has shape [${arr.shape.join(',')}], the model expects [${want.join(',')}]`);
    }
    feeds[name] = new ort.Tensor(m.type, arr.data, arr.shape);
  }
  return feeds;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

function toFloat32(name, tensor) {
  const d = tensor.data;
  if (d instanceof Float32Array) return d;
  if (tensor.type === 'float16') return Float32Array.from(d, (h) => halfToFloat(Number(h)));
  if (typeof d === 'string' || tensor.type === 'string') throw new UserError(`output '${name}' is a string tensor; only numeric outputs can be written`);
  return Float32Array.from(d, Number);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const [modelPath, inPath, outPath] = opts.positional;
  let ort;
  try { ort = require('onnxruntime-node'); } catch (err) {
    throw new UserError(`cannot load onnxruntime-node (run 'npm install --ignore-scripts' in tools/ort): ${err.message}`);
  }
  let model = readFile(modelPath, 'model');
  if (opts.allOutputs) {
    try { model = exposeAllOutputs(model, modelPath); } catch (err) { throw new UserError(err.message); }
  }
  const inputs = (() => {
    const buf = readFile(inPath, 'input');
    try { return readNpz(buf, inPath); } catch (err) { throw new UserError(err.message); }
  })();
  let session;
  try {
    session = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: opts.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 3,
    });
  } catch (err) {
    throw new UserError(`${modelPath}: onnxruntime cannot load the model: ${err.message}`);
  }
  const feeds = makeFeeds(ort, session, inputs, inPath);
  const run = async () => {
    try { return await session.run(feeds); } catch (err) {
      throw new UserError(`${modelPath}: onnxruntime run failed: ${err.message}`);
    }
  };
  const results = await run();
  if (opts.bench > 0) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < opts.bench; i++) await run();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / opts.bench;
    process.stdout.write(`bench: ${opts.bench} runs, mean ${ms.toFixed(3)} ms per inference, ${opts.threads} thread(s)\n`);
  }
  const outputs = session.outputNames.map((name) => [name, results[name].dims, toFloat32(name, results[name])]);
  try { fs.writeFileSync(outPath, writeNpz(outputs)); } catch (err) {
    throw new UserError(`cannot write output '${outPath}': ${err.code || err.message}`);
  }
}

main().catch((err) => {
  const msg = (err instanceof UserError ? err.message : `internal error: ${err.stack || err}`).replace(/\s+/g, ' ').trim();
  process.stderr.write(`ort-run: error: ${msg}\n`);
  process.exit(2);
});
