// md_sum: sums over h, w or both (res0_h / res0_w = 1), in h-major order.
#include "simulator/semantics/tiu/TiuClasses.h"
#include "simulator/semantics/tiu/TiuSupport.h"

namespace tpu::sim::tiu {

using namespace isa;

Status execMdSum(const HwConfig &cfg, LocalMemory &mem, const MdSum &s) {
  TRY_RESOLVE(in, resolveLocal(cfg, s.input, "opd0"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  if (out.shape.n != in.shape.n || out.shape.c != in.shape.c)
    return makeError("res0 shape ", shapeText(out.shape), " must keep opd0's n and c ", shapeText(in.shape));
  if (out.shape.h != 1 && out.shape.h != in.shape.h)
    return makeError("res0_h = ", out.shape.h, " must be 1 or opd0_h = ", in.shape.h);
  if (out.shape.w != 1 && out.shape.w != in.shape.w)
    return makeError("res0_w = ", out.shape.w, " must be 1 or opd0_w = ", in.shape.w);
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), in.shape.count() / out.shape.count(), "res0"));
  bool isFloat = false;
  TPU_RETURN_IF_ERROR(sameDomain({{&in, "opt_opd0_prec"}, {&out, "opt_res0_prec"}}, isFloat));
  const bool sumH = out.shape.h == 1, sumW = out.shape.w == 1;
  for (uint32_t n = 0; n < out.shape.n; ++n)
    for (uint32_t c = 0; c < out.shape.c; ++c)
      for (uint32_t oh = 0; oh < out.shape.h; ++oh)
        for (uint32_t ow = 0; ow < out.shape.w; ++ow) {
          uint32_t h0 = sumH ? 0 : oh, h1 = sumH ? in.shape.h : oh + 1;
          uint32_t w0 = sumW ? 0 : ow, w1 = sumW ? in.shape.w : ow + 1;
          if (isFloat) {
            float acc = 0.0f; // h-major, ascending
            for (uint32_t h = h0; h < h1; ++h)
              for (uint32_t w = w0; w < w1; ++w) acc += in.loadFloat(mem, n, c, h, w);
            writeFloat(mem, out, n, c, oh, ow, acc, s.relu);
          } else {
            int64_t acc = 0;
            for (uint32_t h = h0; h < h1; ++h)
              for (uint32_t w = w0; w < w1; ++w) acc = satAdd(acc, in.loadInt(mem, n, c, h, w));
            writeInt(mem, out, n, c, oh, ow, acc, s.rshift, s.relu);
          }
        }
  return Status::ok();
}

} // namespace tpu::sim::tiu
