// lut: res0 = opd1[c][opd0 & 0xff], a 256-entry table per channel.
#include "simulator/semantics/tiu/TiuClasses.h"
#include "simulator/semantics/tiu/TiuSupport.h"

namespace tpu::sim::tiu {

using namespace isa;

Status execLut(const HwConfig &cfg, LocalMemory &mem, const Lut &s) {
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), 1, "res0"));
  TRY_RESOLVE(idx, resolveLocal(cfg, s.index, out.shape, "opd0"));
  if (idx.prec != Prec::Int8 || idx.isFloat())
    return makeError("opt_opd0_prec = ", precName(idx.prec), ": lut indices are 8-bit");
  if (s.table.isConst) return makeError("opt_opd1_const = 1: the lut table must be in local memory");
  TRY_RESOLVE(table, resolveLocal(cfg, s.table, Shape4{1, out.shape.c, 1, 256}, "opd1"));
  const Shape4 &S = out.shape;
  for (uint32_t n = 0; n < S.n; ++n)
    for (uint32_t c = 0; c < S.c; ++c)
      for (uint32_t h = 0; h < S.h; ++h)
        for (uint32_t w = 0; w < S.w; ++w) {
          uint32_t i = uint32_t(idx.loadInt(mem, n, c, h, w)) & 0xff;
          if (table.isFloat())
            writeFloat(mem, out, n, c, h, w, table.loadFloat(mem, 0, c, 0, i), false);
          else
            writeInt(mem, out, n, c, h, w, table.loadInt(mem, 0, c, 0, i), 0, false);
        }
  return Status::ok();
}

} // namespace tpu::sim::tiu
