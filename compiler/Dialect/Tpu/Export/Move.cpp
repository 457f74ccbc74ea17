// Export of tpu.move (compiler/Backend/Ops/Move.h): kMovePieceValues
// values per box (movePiecesOf, movePieceValues), and the optional fill.
#include "compiler/Backend/Ops/Move.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

std::vector<tpu::backend::MovePiece> movePiecesOf(llvm::ArrayRef<int64_t> p) {
  std::vector<tpu::backend::MovePiece> pieces;
  for (size_t i = 0; i + kMovePieceValues <= p.size(); i += kMovePieceValues) {
    tpu::backend::MovePiece m;
    m.input = int(p[i]);
    for (int k = 0; k < 4; ++k) m.size[k] = p[i + 1 + k], m.srcStride[k] = p[i + 6 + k], m.dstStride[k] = p[i + 11 + k];
    m.src = p[i + 5], m.dst = p[i + 10];
    pieces.push_back(m);
  }
  return pieces;
}

std::vector<int64_t> movePieceValues(llvm::ArrayRef<tpu::backend::MovePiece> pieces) {
  std::vector<int64_t> v;
  for (const tpu::backend::MovePiece &m : pieces) {
    v.push_back(m.input);
    v.insert(v.end(), m.size.begin(), m.size.end());
    v.push_back(m.src);
    v.insert(v.end(), m.srcStride.begin(), m.srcStride.end());
    v.push_back(m.dst);
    v.insert(v.end(), m.dstStride.begin(), m.dstStride.end());
  }
  return v;
}

tpu::Status MoveOp::exportParams(tpu::backend::Op &o) {
  auto p = getPieces();
  if (p.size() % kMovePieceValues) return tpu::makeError("pieces needs 15 values per box");
  auto &mp = o.params<tpu::backend::MoveParams>();
  mp.pieces = movePiecesOf(p);
  if (auto fill = getFill()) mp.fills = true, mp.fillValue = float(fill->convertToDouble());
  return tpu::Status::ok();
}

} // namespace tpuir
