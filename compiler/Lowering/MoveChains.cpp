// Chains of data movement, fused. A tpu.move whose output (directly or
// through tpu.reshape views) only other tpu.moves read is absorbed into each
// of them: they read its inputs instead, and it goes. The importer writes a
// 3-D conv as a depth pad, one strided slice per depth tap, their concat and,
// after the 2-D conv, the drop of each row block's straddling rows
// (docs/compiler.md, "Importer"): five passes through DDR per conv, about
// 40 % of C3D's F32 time. Fused, the concat writes the conv's stacked input
// once, straight from the previous conv's output.
//
// A reader's piece becomes the pieces of the absorbed move it reads through.
// It is cut along its outermost dim (largest source stride) until each part
// reads one absorbed piece affinely, or only the absorbed move's fill
// (dropped: the reader then fills with that value); cuts whose parts differ
// by constant offsets merge back into one piece along that dim.
#include "compiler/Lowering/Lowerer.h"

#include "compiler/Dialect/Tpu/TpuOps.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

using namespace mlir;

namespace tpu::lowering {

namespace {

using backend::everyElement;
using backend::MovePiece;

// Pieces that differ at most in their offsets.
bool sameShape(const MovePiece &a, const MovePiece &b) {
  return a.input == b.input && a.size == b.size && a.srcStride == b.srcStride && a.dstStride == b.dstStride;
}

int64_t numel(Value v) { return cast<RankedTensorType>(v.getType()).getNumElements(); }

// The move being absorbed: its pieces, which one writes each output element
// (-1: none, the fill), and its fill.
struct Absorbed {
  std::vector<MovePiece> pieces;
  std::vector<int16_t> writer;
  std::optional<double> fill;
};

constexpr int64_t kMaxAbsorbedElements = int64_t(1) << 27;
constexpr size_t kMaxParts = 256;    // pieces one reader's piece may become
constexpr size_t kMaxCuts = 1 << 18; // recursive cuts per reader piece

// Null when pieces overlap (the later one would win: not composed here) or
// the output is too large to index.
std::optional<Absorbed> absorbedOf(tpuir::MoveOp m) {
  const int64_t n = numel(m.getResult());
  Absorbed a;
  a.pieces = tpuir::movePiecesOf(m.getPieces());
  if (n > kMaxAbsorbedElements || a.pieces.size() > 0x7FFF) return std::nullopt;
  if (auto f = m.getFill()) a.fill = f->convertToDouble();
  a.writer.assign(size_t(n), -1);
  for (size_t p = 0; p < a.pieces.size(); ++p)
    if (!everyElement(a.pieces[p], [&](int64_t, int64_t d) {
          if (a.writer[size_t(d)] >= 0) return false;
          a.writer[size_t(d)] = int16_t(p);
          return true;
        }))
      return std::nullopt;
  return a;
}

// The index of piece w that writes output element e (dims of positive
// destination strides taken largest first), when that finds it.
std::optional<std::array<int64_t, 4>> indexOf(const MovePiece &w, int64_t e) {
  std::array<int, 4> order{0, 1, 2, 3};
  std::sort(order.begin(), order.end(), [&](int a, int b) { return w.dstStride[size_t(a)] > w.dstStride[size_t(b)]; });
  std::array<int64_t, 4> idx{0, 0, 0, 0};
  int64_t q = e - w.dst;
  for (int k : order) {
    if (w.size[size_t(k)] == 1) continue;
    const int64_t s = w.dstStride[size_t(k)];
    if (s <= 0) return std::nullopt;
    idx[size_t(k)] = std::clamp<int64_t>(q / s, 0, w.size[size_t(k)] - 1);
    q -= idx[size_t(k)] * s;
  }
  if (q != 0) return std::nullopt;
  return idx;
}

// Piece p (reading the absorbed output) as one box of piece w's input, when
// p's elements are w's at indices affine in p's.
std::optional<MovePiece> affinePart(const MovePiece &p, const MovePiece &w) {
  auto i0 = indexOf(w, p.src);
  if (!i0) return std::nullopt;
  std::array<std::array<int64_t, 4>, 4> delta{};
  for (int k = 0; k < 4; ++k) {
    if (p.size[size_t(k)] == 1) continue;
    auto ik = indexOf(w, p.src + p.srcStride[size_t(k)]);
    if (!ik) return std::nullopt;
    for (int i = 0; i < 4; ++i) delta[size_t(k)][size_t(i)] = (*ik)[size_t(i)] - (*i0)[size_t(i)];
  }
  // Every index i0 + sum_k j_k delta_k inside w's box (its extremes are at
  // the corners of p's).
  for (int i = 0; i < 4; ++i) {
    int64_t lo = (*i0)[size_t(i)], hi = lo;
    for (int k = 0; k < 4; ++k) {
      const int64_t span = (p.size[size_t(k)] - 1) * delta[size_t(k)][size_t(i)];
      (span < 0 ? lo : hi) += span;
    }
    if (lo < 0 || hi >= w.size[size_t(i)]) return std::nullopt;
  }
  MovePiece out = p;
  out.input = w.input, out.src = w.src;
  for (int i = 0; i < 4; ++i) out.src += (*i0)[size_t(i)] * w.srcStride[size_t(i)];
  for (int k = 0; k < 4; ++k) {
    out.srcStride[size_t(k)] = 0;
    for (int i = 0; i < 4; ++i) out.srcStride[size_t(k)] += delta[size_t(k)][size_t(i)] * w.srcStride[size_t(i)];
  }
  return out;
}

// Splits p's dims that run through several rows of the absorbed output's
// own dims (a slice's box merges what is contiguous in its source: all
// planes and rows of a channel) into those rows, in p's unused dims: cuts
// then fall on the absorbed output's row bounds, not on every element.
void splitAtRows(MovePiece &p, llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> rowStrides;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 1;) rowStrides.push_back(stride *= shape[i]);
  for (bool split = true; split;) {
    split = false;
    const auto slot = std::find(p.size.begin(), p.size.end(), 1);
    if (slot == p.size.end()) return;
    for (auto t = rowStrides.rbegin(); t != rowStrides.rend() && !split; ++t)
      for (int k = 0; k < 4 && !split; ++k) {
        const int64_t s = p.srcStride[size_t(k)], n = p.size[size_t(k)];
        if (n < 2 || s <= 0 || *t % s) continue;
        const int64_t f = *t / s;
        if (f < 2 || f >= n || n % f) continue;
        const size_t o = size_t(slot - p.size.begin());
        p.size[o] = n / f, p.srcStride[o] = *t, p.dstStride[o] = p.dstStride[size_t(k)] * f;
        p.size[size_t(k)] = f;
        split = true;
      }
  }
}

struct Composer {
  const Absorbed &a;
  bool readsFill = false;
  size_t cuts = 0;

  // Appends the parts of p to `out` (absorbed inputs numbered as in `a`).
  bool compose(const MovePiece &p, std::vector<MovePiece> &out) {
    if (++cuts > kMaxCuts) return false;
    int w = -2;
    everyElement(p, [&](int64_t s, int64_t) {
      const int wr = a.writer[size_t(s)];
      if (w == -2) w = wr;
      if (wr != w) w = -3;
      return w != -3;
    });
    if (w == -1) {
      readsFill = true;
      return true;
    }
    if (w >= 0)
      if (auto part = affinePart(p, a.pieces[size_t(w)])) {
        out.push_back(*part);
        return out.size() <= kMaxParts;
      }
    int k = -1;
    for (int d = 0; d < 4; ++d)
      if (p.size[size_t(d)] > 1 && (k < 0 || std::abs(p.srcStride[size_t(d)]) > std::abs(p.srcStride[size_t(k)])))
        k = d;
    if (k < 0) return false; // one element of one piece that indexOf cannot place
    std::vector<std::vector<MovePiece>> slabs(size_t(p.size[size_t(k)]));
    for (int64_t i = 0; i < p.size[size_t(k)]; ++i) {
      MovePiece s = p;
      s.size[size_t(k)] = 1, s.src += i * p.srcStride[size_t(k)], s.dst += i * p.dstStride[size_t(k)];
      if (!compose(s, slabs[size_t(i)])) return false;
    }
    // Runs of slabs whose parts differ by constant offsets: one part each
    // along dim k.
    for (size_t i = 0; i < slabs.size();) {
      const std::vector<MovePiece> &first = slabs[i];
      std::vector<std::pair<int64_t, int64_t>> step(first.size());
      size_t j = i + 1;
      for (; j < slabs.size(); ++j) {
        const std::vector<MovePiece> &prev = slabs[j - 1], &next = slabs[j];
        bool same = next.size() == first.size();
        for (size_t m = 0; same && m < first.size(); ++m) {
          const std::pair<int64_t, int64_t> d{next[m].src - prev[m].src, next[m].dst - prev[m].dst};
          same = sameShape(next[m], first[m]) && (j == i + 1 || d == step[m]);
          if (same && j == i + 1) step[m] = d;
        }
        if (!same) break;
      }
      for (size_t m = 0; m < first.size(); ++m) {
        MovePiece b = first[m];
        b.size[size_t(k)] = int64_t(j - i);
        b.srcStride[size_t(k)] = j > i + 1 ? step[m].first : 0;
        b.dstStride[size_t(k)] = j > i + 1 ? step[m].second : 0;
        out.push_back(b);
      }
      i = j;
    }
    return out.size() <= kMaxParts;
  }
};

// A move's operand that is `v` or a view of it.
bool readsThrough(Value operand, Value v) {
  for (Value x = operand; x;) {
    if (x == v) return true;
    auto r = x.getDefiningOp<tpuir::ReshapeOp>();
    x = r ? r.getInput() : Value();
  }
  return false;
}

// The moves that read `m` (through views), with the views; empty when
// anything else reads it.
bool movesReading(tpuir::MoveOp m, std::vector<tpuir::MoveOp> &readers, std::vector<Operation *> &views) {
  std::vector<Value> pending{m.getResult()};
  while (!pending.empty()) {
    Value v = pending.back();
    pending.pop_back();
    for (Operation *user : v.getUsers()) {
      if (auto r = dyn_cast<tpuir::ReshapeOp>(user)) {
        views.push_back(r);
        pending.push_back(r.getResult());
      } else if (auto reader = dyn_cast<tpuir::MoveOp>(user)) {
        if (std::find(readers.begin(), readers.end(), reader) == readers.end()) readers.push_back(reader);
      } else {
        return false;
      }
    }
  }
  return !readers.empty();
}

// The reader with `absorbed` folded in, or null when a piece does not
// compose (or its pieces overlap, or the fills differ).
Operation *rewriteReader(tpuir::MoveOp reader, tpuir::MoveOp absorbed, const Absorbed &a, OpBuilder &b) {
  const std::vector<MovePiece> pieces = tpuir::movePiecesOf(reader.getPieces());
  std::vector<char> written(size_t(numel(reader.getResult())), 0);
  for (const MovePiece &p : pieces)
    if (!everyElement(p, [&](int64_t, int64_t d) { return !written[size_t(d)]++; })) return nullptr;
  // Operands: the reader's others, then the absorbed move's, each once.
  std::vector<Value> operands;
  auto operandIndex = [&](Value v) {
    auto at = std::find(operands.begin(), operands.end(), v);
    if (at == operands.end()) at = operands.insert(at, v);
    return int64_t(at - operands.begin());
  };
  std::vector<int64_t> kept(reader.getInputs().size(), -1);
  for (auto [i, v] : llvm::enumerate(reader.getInputs()))
    if (!readsThrough(v, absorbed.getResult())) kept[i] = operandIndex(v);
  std::vector<int64_t> absorbedIndex;
  for (Value v : absorbed.getInputs()) absorbedIndex.push_back(operandIndex(v));
  Composer c{a};
  std::vector<MovePiece> out;
  for (const MovePiece &p : pieces) {
    if (kept[size_t(p.input)] >= 0) {
      MovePiece q = p;
      q.input = int(kept[size_t(p.input)]);
      out.push_back(q);
      continue;
    }
    std::vector<MovePiece> parts;
    MovePiece q = p;
    splitAtRows(q, cast<RankedTensorType>(absorbed.getResult().getType()).getShape());
    if (!c.compose(q, parts)) return nullptr;
    for (MovePiece &part : parts) part.input = int(absorbedIndex[size_t(part.input)]), out.push_back(part);
  }
  std::optional<double> fill;
  if (auto f = reader.getFill()) fill = f->convertToDouble();
  if (c.readsFill) {
    if (!a.fill || (fill && *fill != *a.fill)) return nullptr;
    fill = a.fill;
  }
  OperationState state(reader.getLoc(), reader->getName());
  state.addOperands(operands);
  state.addTypes(reader.getResult().getType());
  state.addAttributes(reader->getAttrs());
  state.addAttribute("pieces", b.getDenseI64ArrayAttr(tpuir::movePieceValues(out)));
  if (fill) state.addAttribute("fill", b.getF64FloatAttr(*fill));
  b.setInsertionPoint(reader);
  return b.create(state);
}

// Absorbs `m` into every move that reads it, when all compose: the new
// readers go to `added`, the replaced ops (their references dropped, erased
// at the end) to `dead`.
bool absorb(tpuir::MoveOp m, std::vector<Operation *> &added, std::set<Operation *> &dead) {
  std::vector<tpuir::MoveOp> readers;
  std::vector<Operation *> views;
  if (!movesReading(m, readers, views)) return false;
  auto a = absorbedOf(m);
  if (!a) return false;
  OpBuilder b(m.getContext());
  std::vector<Operation *> rewritten;
  for (tpuir::MoveOp r : readers) {
    Operation *n = rewriteReader(r, m, *a, b);
    if (!n) {
      for (Operation *done : rewritten) done->erase();
      return false;
    }
    rewritten.push_back(n);
  }
  auto retire = [&](Operation *op) {
    op->dropAllReferences();
    dead.insert(op);
  };
  for (size_t i = 0; i < readers.size(); ++i) {
    readers[i].getResult().replaceAllUsesWith(rewritten[i]->getResult(0));
    retire(readers[i]);
    added.push_back(rewritten[i]);
  }
  for (auto it = views.rbegin(); it != views.rend(); ++it)
    if ((*it)->use_empty() && !dead.count(*it)) retire(*it);
  // The moves m read may now be absorbed by its readers.
  for (Value v : m->getOperands()) {
    while (auto r = v.getDefiningOp<tpuir::ReshapeOp>()) v = r.getInput();
    if (auto producer = v.getDefiningOp<tpuir::MoveOp>()) added.push_back(producer);
  }
  if (m->use_empty()) retire(m);
  return true;
}

} // namespace

void fuseMoveChains(func::FuncOp fn) {
  std::vector<Operation *> work;
  fn.walk([&](tpuir::MoveOp m) { work.push_back(m); });
  std::set<Operation *> dead;
  for (size_t i = 0; i < work.size(); ++i)
    if (!dead.count(work[i])) absorb(cast<tpuir::MoveOp>(work[i]), work, dead);
  for (Operation *op : dead) op->erase();
}

} // namespace tpu::lowering
