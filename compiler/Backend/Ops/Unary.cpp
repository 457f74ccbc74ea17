// Unary: fp32 functions without a command of their own (exp, log, tanh,
// erf, sin, ...), each a program of ar commands from the kernel library
// (FloatKernels.h); int8 runs them as Lut tables.
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

namespace {

using namespace emit;

Status validateUnary(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  if (c.int8) return makeError("int8 ", unaryName(c.op.unary), " is a Lut op");
  if (!unaryKernel(c.op.unary, c.op.alpha, c.op.beta))
    return makeError("no fp32 recipe for ", unaryName(c.op.unary));
  return Status::ok();
}

void evaluateUnary(const RefArgs &r, Bytes &out) {
  const KernelProgram p = *unaryKernel(r.op.unary, r.op.alpha, r.op.beta);
  mapFloats(r, out, [&](float x) { return runKernel(p, &x); });
}

class UnaryOp : public ElementwiseOp {
public:
  UnaryOp(Emitter &e, const Op &op) : ElementwiseOp(e, op), prog_(*unaryKernel(op.unary, op.alpha, op.beta)) {}
  unsigned temps() const override { return prog_.temps; }
  std::vector<uint64_t> fixedBytes(int64_t) const override {
    if (prog_.polys.empty()) return {};
    return {kernelFixedBytes(prog_)};
  }
  uint16_t loadFixed(const Tile &, uint16_t wait) override {
    return loadKernelCoefficients(e_, prog_, fixed_[0], wait);
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &tmp, int64_t,
                     int64_t, uint16_t wait) override {
    return emitKernel(e_, prog_, ins, y, tmp, prog_.polys.empty() ? 0 : fixed_[0], wait);
  }

private:
  KernelProgram prog_;
};

} // namespace

namespace ops {
const OpImpl Unary{OpKind::Unary, validateUnary, evaluateUnary, slicedAs<UnaryOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
