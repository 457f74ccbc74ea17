// Unary: fp32 functions without a command of their own (exp, log, tanh,
// erf, sin, ...), each a program of ar commands from the kernel library
// (FloatKernels.h); int8 runs them as Lut tables.
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

namespace {

using namespace emit;

// The program of a validated op.
KernelProgram kernelOf(const Op &op) {
  const UnaryParams &p = op.params<UnaryParams>();
  return *unaryKernel(p.function, p.alpha, p.beta);
}

Status validateUnary(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  const UnaryParams &p = c.op.params<UnaryParams>();
  if (c.int8) return makeError("int8 ", unaryName(p.function), " is a Lut op");
  if (!unaryKernel(p.function, p.alpha, p.beta)) return makeError("no fp32 recipe for ", unaryName(p.function));
  return Status::ok();
}

void evaluateUnary(const RefArgs &r, Bytes &out) {
  const KernelProgram p = kernelOf(r.op);
  mapFloats(r, out, [&](float x) { return runKernel(p, &x); });
}

class UnaryOp : public ElementwiseOp {
public:
  UnaryOp(Emitter &e, const Op &op) : ElementwiseOp(e, op), prog_(kernelOf(op)) {}
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
