// lma (local memory arrangement): res0 <- opd0 in (n, c, h, w) order.
#include "simulator/semantics/tiu/TiuClasses.h"
#include "simulator/semantics/tiu/TiuSupport.h"

namespace tpu::sim::tiu {

using namespace isa;

// res0 <- opd0 element by element in (n, c, h, w) order; shapes may differ
// when the element counts agree. Values convert as ar copy does.
Status execLma(const HwConfig &cfg, LocalMemory &mem, const Lma &s) {
  TRY_RESOLVE(in, resolveLocal(cfg, s.input, "opd0"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), 1, "res0"));
  if (!in.isConst && in.shape.count() != out.shape.count())
    return makeError("res0 shape ", shapeText(out.shape), " and opd0 shape ", shapeText(in.shape),
                     " hold different element counts");
  const Shape4 &I = in.shape, &S = out.shape;
  uint32_t n = 0, c = 0, h = 0, w = 0; // read position
  for (uint32_t on = 0; on < S.n; ++on)
    for (uint32_t oc = 0; oc < S.c; ++oc)
      for (uint32_t oh = 0; oh < S.h; ++oh)
        for (uint32_t ow = 0; ow < S.w; ++ow) {
          if (in.isFloat())
            writeFloat(mem, out, on, oc, oh, ow, in.loadFloat(mem, n, c, h, w), false);
          else
            writeInt(mem, out, on, oc, oh, ow, in.loadInt(mem, n, c, h, w), 0, false);
          if (++w == I.w) {
            w = 0;
            if (++h == I.h) {
              h = 0;
              if (++c == I.c) c = 0, ++n;
            }
          }
        }
  return Status::ok();
}

} // namespace tpu::sim::tiu
