'use strict';
// Minimal .npz (zip of .npy) reader and writer: enough for the arrays numpy's
// savez/savez_compressed write (stored or deflated entries, zip64 extras) and for
// writing stored, uncompressed archives that np.load reads.
const zlib = require('zlib');

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// npy descr -> [typed array constructor, element size, our dtype name]
const DTYPES = {
  '<f4': [Float32Array, 4, 'float32'], '<f8': [Float64Array, 8, 'float64'],
  '<i8': [BigInt64Array, 8, 'int64'], '<i4': [Int32Array, 4, 'int32'],
  '<i2': [Int16Array, 2, 'int16'], '|i1': [Int8Array, 1, 'int8'],
  '|u1': [Uint8Array, 1, 'uint8'], '<u2': [Uint16Array, 2, 'uint16'],
  '<u4': [Uint32Array, 4, 'uint32'], '<u8': [BigUint64Array, 8, 'uint64'],
  '|b1': [Uint8Array, 1, 'bool'], '<f2': [Uint16Array, 2, 'float16'],
};

function parseNpy(buf, where) {
  const fail = (msg) => { throw new Error(`${where}: ${msg}`); };
  if (buf.length < 10 || buf.readUInt32BE(0) !== 0x934e554d || buf[4] !== 0x50 || buf[5] !== 0x59)
    fail('not a .npy array (bad magic)');
  const major = buf[6];
  let hlen, hstart;
  if (major === 1) { hlen = buf.readUInt16LE(8); hstart = 10; }
  else if (major === 2 || major === 3) {
    if (buf.length < 12) fail('truncated .npy header');
    hlen = buf.readUInt32LE(8); hstart = 12;
  } else fail(`unsupported .npy version ${major}`);
  if (hstart + hlen > buf.length) fail('truncated .npy header');
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeM = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeM) fail(`malformed .npy header: ${header.trim()}`);
  if (fortran[1] === 'True') fail('Fortran-order arrays are not supported; save a C-contiguous array');
  const dt = DTYPES[descr[1]];
  if (!dt) fail(`unsupported dtype '${descr[1]}'`);
  const shape = shapeM[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) fail(`bad shape (${shapeM[1]})`);
  const count = shape.reduce((a, b) => a * b, 1);
  const start = hstart + hlen;
  if (buf.length - start !== count * dt[1])
    fail(`data is ${buf.length - start} bytes, shape (${shape.join(',')}) of ${dt[2]} needs ${count * dt[1]}`);
  // Copy into an aligned buffer: the slice may sit at any offset in the archive.
  const bytes = new Uint8Array(count * dt[1]);
  bytes.set(buf.subarray(start));
  return { dtype: dt[2], shape, data: new dt[0](bytes.buffer) };
}

function zip64Extra(extra, sizes) {
  // sizes: {usize, csize, offset} where 0xffffffff marks a value held in the zip64 extra.
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p), len = extra.readUInt16LE(p + 2);
    if (id === 0x0001) {
      let q = p + 4;
      const next = () => { const v = Number(extra.readBigUInt64LE(q)); q += 8; return v; };
      if (sizes.usize === 0xffffffff) sizes.usize = next();
      if (sizes.csize === 0xffffffff) sizes.csize = next();
      if (sizes.offset === 0xffffffff) sizes.offset = next();
    }
    p += 4 + len;
  }
}

// Returns a Map name -> {dtype, shape, data}, in archive order.
function readNpz(buf, path) {
  const fail = (msg) => { throw new Error(`${path}: ${msg}`); };
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) fail('not an .npz file (no zip end-of-central-directory record)');
  let entries = buf.readUInt16LE(eocd + 10);
  let cdOffset = buf.readUInt32LE(eocd + 16);
  if (cdOffset === 0xffffffff || entries === 0xffff) {
    const loc = eocd - 20;
    if (loc < 0 || buf.readUInt32LE(loc) !== 0x07064b50) fail('zip64 archive without zip64 locator');
    const rec = Number(buf.readBigUInt64LE(loc + 8));
    if (rec + 56 > buf.length || buf.readUInt32LE(rec) !== 0x06064b50) fail('bad zip64 end record');
    entries = Number(buf.readBigUInt64LE(rec + 32));
    cdOffset = Number(buf.readBigUInt64LE(rec + 48));
  }
  const arrays = new Map();
  let p = cdOffset;
  for (let e = 0; e < entries; e++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== 0x02014b50) fail('truncated or corrupt zip central directory');
    const method = buf.readUInt16LE(p + 10);
    const crc = buf.readUInt32LE(p + 16);
    const sizes = { csize: buf.readUInt32LE(p + 20), usize: buf.readUInt32LE(p + 24), offset: buf.readUInt32LE(p + 42) };
    const nlen = buf.readUInt16LE(p + 28), xlen = buf.readUInt16LE(p + 30), clen = buf.readUInt16LE(p + 32);
    if (p + 46 + nlen + xlen > buf.length) fail('truncated zip central directory');
    const name = buf.toString('utf8', p + 46, p + 46 + nlen);
    zip64Extra(buf.subarray(p + 46 + nlen, p + 46 + nlen + xlen), sizes);
    p += 46 + nlen + xlen + clen;
    const lh = sizes.offset;
    if (lh + 30 > buf.length || buf.readUInt32LE(lh) !== 0x04034b50) fail(`entry '${name}': bad local header`);
    const dataStart = lh + 30 + buf.readUInt16LE(lh + 26) + buf.readUInt16LE(lh + 28);
    if (dataStart + sizes.csize > buf.length) fail(`entry '${name}': data runs past the end of the file`);
    const raw = buf.subarray(dataStart, dataStart + sizes.csize);
    let data;
    if (method === 0) data = raw;
    else if (method === 8) {
      try { data = zlib.inflateRawSync(raw); } catch (err) { fail(`entry '${name}': corrupt deflate data`); }
    } else fail(`entry '${name}': unsupported zip compression method ${method}`);
    if (data.length !== sizes.usize || crc32(data) !== crc) fail(`entry '${name}': size or CRC mismatch (corrupt archive)`);
    if (!name.endsWith('.npy')) fail(`entry '${name}' is not a .npy array`);
    const key = name.slice(0, -4);
    arrays.set(key, parseNpy(data, `${path}:${key}`));
  }
  return arrays;
}

function npyFloat32(shape, f32) {
  const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  // numpy pads the header so the data starts at a multiple of 64 bytes.
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  const header = Buffer.alloc(total, 0x20);
  header.write('\x93NUMPY', 0, 'latin1');
  header[6] = 1; header[7] = 0;
  header.writeUInt16LE(total - 10, 8);
  header.write(dict, 10, 'latin1');
  header[total - 1] = 0x0a;
  return Buffer.concat([header, Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength)]);
}

// arrays: [[name, shape, Float32Array]]; returns the .npz bytes (stored entries).
function writeNpz(arrays) {
  const parts = [], central = [];
  let offset = 0;
  for (const [name, shape, f32] of arrays) {
    const fname = Buffer.from(`${name}.npy`, 'utf8');
    const data = npyFloat32(shape, f32);
    if (offset + data.length > 0xfffffffe) throw new Error('output .npz would exceed 4 GiB');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(0, 8); local.writeUInt32LE(0x00210000, 10); // DOS time/date 1980-01-01: reproducible bytes
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fname.length, 26); local.writeUInt16LE(0, 28);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0); cd.writeUInt16LE(20, 4); cd.writeUInt16LE(20, 6); cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(0, 10); cd.writeUInt32LE(0x00210000, 12); cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(data.length, 20); cd.writeUInt32LE(data.length, 24); cd.writeUInt16LE(fname.length, 28);
    cd.writeUInt32LE(offset, 42);
    parts.push(local, fname, data);
    central.push(cd, fname);
    offset += 30 + fname.length + data.length;
  }
  const cdBuf = Buffer.concat(central);
  if (arrays.length > 0xffff || offset > 0xfffffffe) throw new Error('output .npz too large for a plain zip');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(arrays.length, 8); end.writeUInt16LE(arrays.length, 10);
  end.writeUInt32LE(cdBuf.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cdBuf, end]);
}

module.exports = { readNpz, writeNpz, crc32 };
