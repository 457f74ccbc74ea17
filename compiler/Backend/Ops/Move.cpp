// Move: pure data movement in DDR (from activations or coefficients). The
// output is optionally filled with a constant (GDMA fill), then each piece
// (Graph.h MovePiece) is one strided S2S copy (or cw transpose,
// emitCommand); permute, concat on any axis, pad, tile, expand, gather of
// constant indices, depth-to-space and reversed slices are all pieces.
// A piece becomes several commands where one cannot express it: a negative
// stride (GDMA strides are unsigned) is walked index by index, a size past
// 65535 is cut, and an int8 piece that crosses 4N items (four items share
// each word) has its dims cut at item and group bounds (groupAffine: one
// command when aligned), else is cut until each command stays inside one
// item on both sides. A piece that moves every valid item of the 4N groups
// it touches, at the same place in a group on both sides, moves 32-bit
// words instead (wordBox): each word holds the four items' bytes, so its
// rows stay contiguous runs, not single bytes 4 apart.
#include "compiler/Backend/Ops/Move.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

namespace tpu::backend {

namespace {

using namespace emit;

// The lowest and highest element a box reads or writes from `base`.
std::pair<int64_t, int64_t> extent(const std::array<int64_t, 4> &size, int64_t base,
                                   const std::array<int64_t, 4> &stride) {
  int64_t lo = base, hi = base;
  for (int k = 0; k < 4; ++k) {
    const int64_t span = (size[k] - 1) * stride[k];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

// Which output elements the pieces write.
std::vector<char> writtenElements(const Op &op, int64_t count) {
  std::vector<char> written(size_t(count), 0);
  for (const MovePiece &m : op.params<MoveParams>().pieces)
    everyElement(m, [&](int64_t, int64_t d) {
      written[size_t(d)] = 1;
      return true;
    });
  return written;
}

Status validateMove(const OpCheck &c) {
  const int64_t outCount = c.y.numel();
  for (size_t i = 0; i < c.op.inputs.size(); ++i) {
    const Tensor &x = c.in(i);
    if (x.dtype != c.y.dtype || (c.int8 && !x.isWeight() && x.scale != c.y.scale))
      return makeError("input '", x.name, "': a move keeps the dtype and scale");
  }
  const MoveParams &mp = c.op.params<MoveParams>();
  if (mp.fills && c.int8) {
    const float v = mp.fillValue;
    if (v != std::nearbyint(v) || v < (c.y.dtype == DType::U8 ? 0 : -128) || v > (c.y.dtype == DType::U8 ? 255 : 127))
      return makeError("int8 fill value ", v, " is not an integer of the output type");
  }
  for (size_t p = 0; p < mp.pieces.size(); ++p) {
    const MovePiece &m = mp.pieces[p];
    if (m.input < 0 || size_t(m.input) >= c.op.inputs.size())
      return makeError("piece ", p, " reads input ", m.input, " of ", c.op.inputs.size());
    for (int64_t s : m.size)
      if (s < 1) return makeError("piece ", p, " has a size ", s, " < 1");
    const auto [slo, shi] = extent(m.size, m.src, m.srcStride);
    const auto [dlo, dhi] = extent(m.size, m.dst, m.dstStride);
    if (slo < 0 || shi >= c.in(size_t(m.input)).numel())
      return makeError("piece ", p, " reads elements [", slo, ", ", shi, "] of ", c.in(size_t(m.input)).numel());
    if (dlo < 0 || dhi >= outCount)
      return makeError("piece ", p, " writes elements [", dlo, ", ", dhi, "] of ", outCount);
  }
  if (mp.fills) return Status::ok();
  const std::vector<char> written = writtenElements(c.op, outCount);
  for (int64_t i = 0; i < outCount; ++i)
    if (!written[size_t(i)]) return makeError("output element ", i, " is written by no piece and not filled");
  return Status::ok();
}

void evaluateMove(const RefArgs &r, Bytes &out) {
  const size_t e = dtypeBytes(r.y.dtype);
  out.assign(r.count * e, 0);
  const MoveParams &mp = r.op.params<MoveParams>();
  if (mp.fills) {
    if (r.isInt) {
      const int8_t v = int8_t(int(mp.fillValue)); // uint8 values 128..255 keep their bits
      std::memset(out.data(), uint8_t(v), out.size());
    } else {
      for (size_t i = 0; i < r.count; ++i) std::memcpy(&out[i * e], &mp.fillValue, e);
    }
  }
  for (const MovePiece &m : mp.pieces) {
    const Bytes &x = *r.in[size_t(m.input)];
    everyElement(m, [&](int64_t s, int64_t d) {
      std::memcpy(&out[size_t(d) * e], &x[size_t(s) * e], e);
      return true;
    });
  }
}

// One S2S copy: byte offsets from the tensors' addresses, strides in
// elements of the dtype.
struct MoveCommand {
  int input;
  bool words; // 32-bit words of 4N groups, strides in words
  uint64_t srcOffset, dstOffset;
  std::array<int64_t, 4> shape, srcStride, dstStride;
};

// Where element `f` of a tensor starts (bytes) and the element step in DDR.
struct DdrLayout {
  int64_t itemElems;  // C*H*W
  int64_t items;      // N
  bool n4;            // int8 4N: four items share each word
  int64_t bytes;      // element bytes
  int64_t item(int64_t f) const { return f / itemElems; }
  uint64_t offset(int64_t f) const {
    if (!n4) return uint64_t(f * bytes);
    const int64_t n = item(f);
    return uint64_t((n / 4) * 4 * itemElems + n % 4 + (f - n * itemElems) * 4);
  }
  int64_t step() const { return n4 ? 4 : 1; }
};

DdrLayout layoutOf(const Tensor &t) {
  const auto s = t.nchw();
  return {s[1] * s[2] * s[3], s[0], stored4N(t), int64_t(dtypeBytes(t.dtype))};
}

// The strides (bytes) of a box on a 4N side when its addresses are one
// affine function of its indices: no index carries out of an item (dims
// inside an item) or out of a group of four items (dims that walk items by
// fewer than four). Strides in elements otherwise (1N).
std::optional<std::array<int64_t, 4>> sideStrides(const MovePiece &m, bool src, const DdrLayout &l) {
  const auto &s = src ? m.srcStride : m.dstStride;
  const int64_t base = src ? m.src : m.dst;
  std::array<int64_t, 4> out{};
  if (!l.n4) {
    for (int k = 0; k < 4; ++k) out[size_t(k)] = s[size_t(k)];
    return out;
  }
  const int64_t e = l.itemElems;
  int64_t inItem = base % e, inGroup = l.item(base) % 4;
  for (int k = 0; k < 4; ++k) {
    if (m.size[size_t(k)] == 1) continue;
    const int64_t span = (m.size[size_t(k)] - 1) * s[size_t(k)];
    if (s[size_t(k)] % e) {
      inItem += span, out[size_t(k)] = 4 * s[size_t(k)];
    } else if (s[size_t(k)] / e % 4) {
      inGroup += span / e, out[size_t(k)] = s[size_t(k)] / e;
    } else {
      out[size_t(k)] = s[size_t(k)]; // whole groups: 4 * e bytes per four items
    }
  }
  if (inItem >= e || inGroup >= 4) return std::nullopt;
  return out;
}

// Whether a box stays inside one item on each 4N side.
bool insideItems(const MovePiece &p, const DdrLayout &x, const DdrLayout &y) {
  const auto [slo, shi] = extent(p.size, p.src, p.srcStride);
  const auto [dlo, dhi] = extent(p.size, p.dst, p.dstStride);
  return (!x.n4 || x.item(slo) == x.item(shi)) && (!y.n4 || y.item(dlo) == y.item(dhi));
}

// Indices [from, from + count) of dim k of box m.
MovePiece subBox(const MovePiece &m, int k, int64_t from, int64_t count) {
  MovePiece part = m;
  part.src += from * m.srcStride[size_t(k)], part.dst += from * m.dstStride[size_t(k)], part.size[size_t(k)] = count;
  return part;
}

// One command for a box that crosses 4N items, where cutting its dims at
// item and group bounds (into size-1 dims the box leaves free) makes every
// address affine: a dim that runs through whole items of a side becomes
// (items, elements of an item), and one that walks items by one or two
// becomes (groups, items of a group). An int8 transpose of [A, B] so takes
// one command, not one per element. A dim whose count is not a multiple of
// its cut (a last group of fewer items: SSDLite's 3234 boxes) is cut into
// the multiple and the rest, each moved on its own. False when that does
// not fit in four dims or the box does not start on the bounds.
void commandsOf(MovePiece m, const DdrLayout &x, const DdrLayout &y,
                const std::function<void(const MoveCommand &)> &fn);

bool groupAffine(MovePiece m, const DdrLayout &x, const DdrLayout &y,
                 const std::function<void(const MoveCommand &)> &fn) {
  auto split = [&](int k, int64_t inner) {
    int slot = -1;
    for (int d = 0; d < 4 && slot < 0; ++d)
      if (m.size[size_t(d)] == 1) slot = d;
    if (slot < 0 || m.size[size_t(k)] % inner) return false; // fewer than `inner`
    m.size[size_t(slot)] = inner, m.srcStride[size_t(slot)] = m.srcStride[size_t(k)];
    m.dstStride[size_t(slot)] = m.dstStride[size_t(k)];
    m.size[size_t(k)] /= inner, m.srcStride[size_t(k)] *= inner, m.dstStride[size_t(k)] *= inner;
    return true;
  };
  // Until both sides are affine: cut the first dim that carries on a side.
  for (int side = 0; side < 2;) {
    const DdrLayout &l = side ? y : x;
    if (!l.n4 || sideStrides(m, side == 0, l)) {
      ++side;
      continue;
    }
    const auto &s = side ? m.dstStride : m.srcStride;
    const int64_t base = side ? m.dst : m.src, e = l.itemElems;
    int k = 0;
    int64_t inner = 0;
    for (; k < 4 && !inner; ++k) {
      const int64_t span = (m.size[size_t(k)] - 1) * s[size_t(k)], step = s[size_t(k)] / e;
      if (s[size_t(k)] % e && base % e + span >= e) { // through items
        if (e % s[size_t(k)] || base % e) return false;
        inner = e / s[size_t(k)];
      } else if (s[size_t(k)] % e == 0 && (step == 1 || step == 2) &&
                 l.item(base) % 4 + span / e >= 4) { // through groups
        if (l.item(base) % 4) return false;
        inner = 4 / step;
      }
    }
    if (!inner) return false;
    if (const int64_t size = m.size[size_t(k - 1)], whole = size - size % inner; whole > 0 && whole < size) {
      commandsOf(subBox(m, k - 1, 0, whole), x, y, fn);
      commandsOf(subBox(m, k - 1, whole, size - whole), x, y, fn);
      return true;
    }
    if (!split(k - 1, inner)) return false;
    side = 0; // a cut changes both sides' boxes
  }
  auto srcStride = sideStrides(m, true, x), dstStride = sideStrides(m, false, y);
  if (!srcStride || !dstStride) return false;
  fn(MoveCommand{m.input, false, x.offset(m.src), y.offset(m.dst), m.size, *srcStride, *dstStride});
  return true;
}

// The piece in 32-bit words of 4N groups, when both sides are 4N and one
// dim steps one item at a time through whole groups on both sides (it
// starts a group, and covers a multiple of four items or runs to the last
// item of both tensors: padding items share the words), while the other
// dims stay inside an item. A dim that runs through the items and a block
// inside each (n and c merged into one dim of a piece) is cut into the two
// first. Element strides inside an item are word strides; the item dim
// becomes one step per group (itemElems words).
std::optional<MovePiece> wordBox(MovePiece m, const DdrLayout &x, const DdrLayout &y) {
  if (!x.n4 || !y.n4) return std::nullopt;
  int k = -1;
  for (int d = 0; d < 4; ++d)
    if (m.size[size_t(d)] > 1 && m.srcStride[size_t(d)] == x.itemElems && m.dstStride[size_t(d)] == y.itemElems) k = d;
  for (int d = 0; d < 4 && k < 0; ++d) {
    const int64_t sx = m.srcStride[size_t(d)], sy = m.dstStride[size_t(d)];
    if (m.size[size_t(d)] < 2 || sx <= 0 || sy <= 0 || x.itemElems % sx || y.itemElems % sy) continue;
    const int64_t inner = x.itemElems / sx;
    if (inner != y.itemElems / sy || m.size[size_t(d)] <= inner || m.size[size_t(d)] % inner) continue;
    const auto slot = std::find(m.size.begin(), m.size.end(), 1);
    if (slot == m.size.end()) return std::nullopt;
    k = int(slot - m.size.begin());
    m.size[size_t(k)] = m.size[size_t(d)] / inner, m.size[size_t(d)] = inner;
    m.srcStride[size_t(k)] = x.itemElems, m.dstStride[size_t(k)] = y.itemElems;
  }
  if (k < 0) return std::nullopt;
  const int64_t n = m.size[size_t(k)], xi = x.item(m.src), yi = y.item(m.dst);
  if (xi % 4 || yi % 4 || (n % 4 && (xi + n != x.items || yi + n != y.items))) return std::nullopt;
  MovePiece w = m;
  w.size[size_t(k)] = 1, w.srcStride[size_t(k)] = w.dstStride[size_t(k)] = 0;
  if (!insideItems(w, x, y)) return std::nullopt;
  w.size[size_t(k)] = (n + 3) / 4, w.srcStride[size_t(k)] = x.itemElems, w.dstStride[size_t(k)] = y.itemElems;
  w.src = xi / 4 * x.itemElems + m.src % x.itemElems, w.dst = yi / 4 * y.itemElems + m.dst % y.itemElems;
  return w;
}

void itemCuts(const MovePiece &m, const DdrLayout &x, const DdrLayout &y,
              const std::function<void(const MoveCommand &)> &fn);

// The commands of one piece (see the file comment for the cuts).
void commandsOf(MovePiece m, const DdrLayout &x, const DdrLayout &y, const std::function<void(const MoveCommand &)> &fn) {
  for (int k = 0; k < 4; ++k)
    if (m.size[k] == 1) m.srcStride[k] = m.dstStride[k] = 0;
  if (const auto w = wordBox(m, x, y)) {
    const DdrLayout words{1, 1, false, 4};
    commandsOf(*w, words, words, [&](MoveCommand c) {
      c.words = true;
      fn(c);
    });
    return;
  }
  auto cut = [&](int k, int64_t from, int64_t count) { commandsOf(subBox(m, k, from, count), x, y, fn); };
  for (int k = 0; k < 4; ++k)
    if (m.srcStride[k] < 0 || m.dstStride[k] < 0) {
      for (int64_t i = 0; i < m.size[k]; ++i) cut(k, i, 1);
      return;
    }
  for (int k = 0; k < 4; ++k)
    if (m.size[k] > 0xFFFF) {
      for (int64_t i = 0; i < m.size[k]; i += 0xFFFF) cut(k, i, std::min<int64_t>(0xFFFF, m.size[k] - i));
      return;
    }
  if (!insideItems(m, x, y)) {
    if (!groupAffine(m, x, y, fn)) itemCuts(m, x, y, fn);
    return;
  }
  MoveCommand c{m.input, false, x.offset(m.src), y.offset(m.dst), m.size, {}, {}};
  for (int k = 0; k < 4; ++k) c.srcStride[k] = m.srcStride[k] * x.step(), c.dstStride[k] = m.dstStride[k] * y.step();
  fn(c);
}

// The commands of a piece that crosses 4N items, each inside one item on
// both sides.
void itemCuts(const MovePiece &m, const DdrLayout &x, const DdrLayout &y,
              const std::function<void(const MoveCommand &)> &fn) {
  auto cut = [&](int k, int64_t from, int64_t count) { commandsOf(subBox(m, k, from, count), x, y, fn); };
  // Cut the dim that crosses items fastest (the largest stride on a 4N
  // side; of equals the outermost) into the longest runs that stay inside
  // items (a run of one that still crosses is cut further inside). An
  // attention permute (197, 12, 64) -> (12, 64, 197) so takes 197 x 12
  // commands; cutting its outer dim first took one per element.
  const auto crossing = [&](int d) { return std::max(x.n4 ? m.srcStride[d] : 0, y.n4 ? m.dstStride[d] : 0); };
  int k = -1;
  for (int d = 0; d < 4; ++d)
    if (m.size[d] > 1 && (k < 0 || crossing(d) > crossing(k))) k = d;
  for (int64_t i = 0; i < m.size[k];) {
    int64_t len = 1;
    while (i + len < m.size[k] && insideItems(subBox(m, k, i, len + 1), x, y)) ++len;
    cut(k, i, len);
    i += len;
  }
}

void forEachCommand(const Graph &g, const Op &op, const std::function<void(const MoveCommand &)> &fn) {
  const DdrLayout y = layoutOf(g.tensors[size_t(op.output)]);
  for (const MovePiece &m : op.params<MoveParams>().pieces)
    commandsOf(m, layoutOf(g.tensors[size_t(op.inputs[size_t(m.input)])]), y, fn);
}

std::array<uint32_t, 4> u32s(const std::array<int64_t, 4> &v) { return {u32(v[0]), u32(v[1]), u32(v[2]), u32(v[3])}; }

// The fill, as fills of the output elements no piece writes (fp32 as 32-bit
// words, 1N int8 as bytes). A 4N output, or one whose unwritten elements
// form more than 64 runs, is filled whole (4N: every byte of the words).
// Rows of up to 32768 elements.
void emitFill(Emitter &e, const Op &op) {
  const DTensor y = e.ddr(op.output);
  const Tensor &t = e.g.tensors[size_t(op.output)];
  const bool int8 = isInt8Like(y.dtype);
  const float fillValue = op.params<MoveParams>().fillValue;
  const uint8_t q = uint8_t(int8_t(int(fillValue)));
  uint32_t bits = q;
  if (!int8) std::memcpy(&bits, &fillValue, 4);
  const DType format = int8 ? y.dtype : DType::F32;
  auto fill = [&](int64_t start, int64_t count) {
    const int64_t row = std::min<int64_t>(count, 32768), rows = count / row, rest = count % row;
    auto command = [&](int64_t at, int64_t h, int64_t w) {
      isa::GdmaCommand c;
      c.direction = isa::GdmaDirection::S2S, c.specialFunc = isa::GdmaSpecialFunc::ConstantFill;
      c.constantValue = bits;
      c.dst.addr = c.src.addr = y.addr + uint64_t(at) * dtypeBytes(format);
      c.dst.format = c.src.format = formatOf(format);
      c.dst.shape = c.src.shape = {1, 1, u32(h), u32(w)};
      c.dst.stride = c.src.stride = {0, 0, u32(w), 1};
      e.b->gdma(c, 0);
    };
    command(start, rows, row);
    if (rest) command(start + rows * row, 1, rest);
  };
  if (y.n4()) return fill(0, (y.s[0] + 3) / 4 * 4 * y.s[1] * y.s[2] * y.s[3]);
  const std::vector<char> written = writtenElements(op, t.numel());
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t i = 0; i < t.numel();) {
    if (written[size_t(i)]) {
      ++i;
      continue;
    }
    int64_t end = i;
    while (end < t.numel() && !written[size_t(end)]) ++end;
    runs.emplace_back(i, end - i);
    i = end;
  }
  if (runs.size() > 64) return fill(0, t.numel());
  for (auto [start, count] : runs) fill(start, count);
}

// One command. A copy walks source and destination in the same order, so
// when the destination's contiguous dim is strided in the source (a
// permute that moves the last dim: NHWC -> NCHW) every source element is a
// burst of its own; if another dim is contiguous in the source, a cw
// transpose (dst(n, w, h, c) = src(n, c, h, w)) reads along that dim and
// writes along the destination's: runs on both sides (a 4N side has no
// contiguous dim: its elements are 4 bytes apart).
void emitCommand(Emitter &e, uint64_t src, uint64_t dst, const MoveCommand &c, DType t) {
  int dstRun = -1, srcRun = -1;
  for (int k = 0; k < 4; ++k) {
    if (c.shape[k] > 1 && c.dstStride[k] == 1) dstRun = k;
    if (c.shape[k] > 1 && c.srcStride[k] == 1) srcRun = k;
  }
  if (dstRun < 0 || srcRun < 0 || dstRun == srcRun) {
    e.s2s(src, u32s(c.srcStride), dst, u32s(c.dstStride), u32s(c.shape), t, 0);
    return;
  }
  std::array<int, 2> other{};
  for (int k = 0, o = 0; k < 4; ++k)
    if (k != dstRun && k != srcRun) other[size_t(o++)] = k;
  // Destination (n, c, h, w) = dims (other0, srcRun, other1, dstRun); the
  // source the same dims with c and w swapped.
  const std::array<int, 4> dims{other[0], srcRun, other[1], dstRun}, srcDims{other[0], dstRun, other[1], srcRun};
  isa::GdmaCommand g;
  g.direction = isa::GdmaDirection::S2S, g.specialFunc = isa::GdmaSpecialFunc::CwTranspose;
  g.src.addr = src, g.dst.addr = dst, g.src.format = g.dst.format = formatOf(t);
  for (int k = 0; k < 4; ++k) {
    g.dst.shape[size_t(k)] = u32(c.shape[size_t(dims[k])]), g.dst.stride[size_t(k)] = u32(c.dstStride[size_t(dims[k])]);
    g.src.shape[size_t(k)] = u32(c.shape[size_t(srcDims[k])]);
    g.src.stride[size_t(k)] = u32(c.srcStride[size_t(srcDims[k])]);
  }
  e.b->gdma(g, 0);
}

void emitMove(Emitter &e, const Op &op) {
  if (op.params<MoveParams>().fills) emitFill(e, op);
  const DTensor y = e.ddr(op.output);
  forEachCommand(e.g, op, [&](const MoveCommand &c) {
    const DTensor x = e.ddr(op.inputs[size_t(c.input)]);
    emitCommand(e, x.addr + c.srcOffset, y.addr + c.dstOffset, c, c.words ? DType::I32 : x.dtype);
  });
}

// A command's strides are 32 bits.
Status encodableMove(const Graph &g, const Op &op) {
  Status st = Status::ok();
  forEachCommand(g, op, [&](const MoveCommand &c) {
    for (int k = 0; k < 4; ++k)
      if (st.isOk() && (c.srcStride[k] > 0xFFFFFFFFll || c.dstStride[k] > 0xFFFFFFFFll))
        st = makeError("a piece's stride exceeds the 32 bits of a GDMA stride");
  });
  return st;
}

} // namespace

namespace ops {
const OpImpl Move{OpKind::Move, validateMove, evaluateMove, nullptr, emitMove, encodableMove};
} // namespace ops

} // namespace tpu::backend
