// Export of tpu.move (compiler/Backend/Ops/Move.h): kMovePieceValues
// values per box, and the optional fill.
#include "compiler/Backend/Ops/Move.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status MoveOp::exportParams(tpu::backend::Op &o) {
  auto p = getPieces();
  if (p.size() % kMovePieceValues) return tpu::makeError("pieces needs 15 values per box");
  auto &mp = o.params<tpu::backend::MoveParams>();
  for (size_t i = 0; i < p.size(); i += kMovePieceValues) {
    tpu::backend::MovePiece m;
    m.input = int(p[i]);
    for (int k = 0; k < 4; ++k) m.size[k] = p[i + 1 + k], m.srcStride[k] = p[i + 6 + k], m.dstStride[k] = p[i + 11 + k];
    m.src = p[i + 5], m.dst = p[i + 10];
    mp.pieces.push_back(m);
  }
  if (auto fill = getFill()) mp.fills = true, mp.fillValue = float(fill->convertToDouble());
  return tpu::Status::ok();
}

} // namespace tpuir
