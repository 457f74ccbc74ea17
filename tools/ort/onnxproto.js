'use strict';
// Just enough protobuf wire-format handling to turn every node output of an ONNX
// model's main graph into a graph output, so onnxruntime returns all intermediate
// tensors (--all-outputs). ModelProto.graph = field 7; GraphProto.node = 1,
// GraphProto.output = 12; NodeProto.output = 2; ValueInfoProto.name = 1.

function readVarint(buf, pos, where) {
  let value = 0, shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error(`${where}: truncated protobuf varint`);
    const b = buf[pos++];
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return [value, pos];
    shift += 7;
    if (shift > 63) throw new Error(`${where}: malformed protobuf varint`);
  }
}

function encodeVarint(v) {
  const out = [];
  while (v >= 0x80) { out.push((v % 0x80) | 0x80); v = Math.floor(v / 0x80); }
  out.push(v);
  return Buffer.from(out);
}

// Yields {field, wire, start, end, payloadStart} for each field of a message.
function* fields(buf, where) {
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    let key;
    [key, pos] = readVarint(buf, pos, where);
    const field = Math.floor(key / 8), wire = key % 8;
    let payloadStart = pos;
    if (wire === 0) [, pos] = readVarint(buf, pos, where);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos, where);
      payloadStart = pos;
      pos += len;
    } else throw new Error(`${where}: unsupported protobuf wire type ${wire}`);
    if (pos > buf.length) throw new Error(`${where}: truncated protobuf message`);
    yield { field, wire, start, end: pos, payloadStart };
  }
}

function lengthDelimited(field, payload) {
  return Buffer.concat([encodeVarint(field * 8 + 2), encodeVarint(payload.length), payload]);
}

// Returns the model bytes with every named node output of the main graph listed as
// a graph output (type left for onnxruntime to infer), in node order.
function exposeAllOutputs(model, where) {
  let graphField = null;
  for (const f of fields(model, where)) if (f.field === 7 && f.wire === 2) graphField = f;
  if (!graphField) throw new Error(`${where}: ONNX model has no graph`);
  const graph = model.subarray(graphField.payloadStart, graphField.end);
  const existing = new Set();
  const nodeOutputs = [];
  for (const f of fields(graph, where)) {
    if (f.wire !== 2) continue;
    const payload = graph.subarray(f.payloadStart, f.end);
    if (f.field === 12) {
      for (const v of fields(payload, where))
        if (v.field === 1 && v.wire === 2) existing.add(payload.toString('utf8', v.payloadStart, v.end));
    } else if (f.field === 1) {
      for (const n of fields(payload, where))
        if (n.field === 2 && n.wire === 2) nodeOutputs.push(payload.toString('utf8', n.payloadStart, n.end));
    }
  }
  const added = [];
  for (const name of nodeOutputs) {
    if (name === '' || existing.has(name)) continue;
    existing.add(name);
    added.push(lengthDelimited(12, lengthDelimited(1, Buffer.from(name, 'utf8'))));
  }
  const newGraph = Buffer.concat([graph, ...added]);
  // Re-emit the model with the graph field replaced; every other field stays as it was.
  const parts = [];
  for (const f of fields(model, where)) {
    if (f.start === graphField.start) parts.push(lengthDelimited(7, newGraph));
    else parts.push(model.subarray(f.start, f.end));
  }
  return Buffer.concat(parts);
}

module.exports = { exposeAllOutputs };
