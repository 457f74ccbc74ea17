// F16 and BF16: the F32 lowering with every chip tensor in the 16-bit type. A 16-bit float op computes its
// fp32 form rounded once (compiler/Backend/Graph.h), so retyping the F32 module is the whole lowering:
// chip op results become 16-bit, weights are rounded to nearest even (but for the biases of conv,
// conv_transpose and fc, which stay fp32, as the conv adds them to its fp32 sums), graph inputs are cast
// to the 16-bit type where a chip op reads them, and results cast back to fp32 under the outputs' names
// (the 16-bit producer takes the name with a suffix). Host ops (tpu.cpu) keep fp32, with casts around them.
#include "compiler/Backend/Graph.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Lowering/Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace tpu::lowering {

namespace {

std::string nameOf(Value v) {
  Operation *def = v.getDefiningOp();
  return def ? tpuir::opName(def) : "input_" + std::to_string(cast<BlockArgument>(v).getArgNumber());
}

bool isF32Tensor(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.getElementType().isF32();
}

// Whether `v` is the bias operand of `op` (kept fp32).
bool isBias(Operation *op, Value v) {
  if (auto c = dyn_cast<tpuir::ConvOp>(op)) return v == c.getBias();
  if (auto c = dyn_cast<tpuir::ConvTransposeOp>(op)) return v == c.getBias();
  if (auto f = dyn_cast<tpuir::FcOp>(op)) return v == f.getBias();
  return false;
}

class HalfConverter {
public:
  HalfConverter(LoweredModule &m, Quantize mode, const std::set<std::string> *only)
      : m_(m), only_(only), b_(m.module->getContext()),
        dtype_(mode == Quantize::F16 ? backend::DType::F16 : backend::DType::BF16),
        half_(mode == Quantize::F16 ? Type(b_.getF16Type()) : Type(b_.getBF16Type())),
        suffix_(mode == Quantize::F16 ? "_f16" : "_bf16") {}

  Status run() {
    func::FuncOp fn;
    m_.module->walk([&](func::FuncOp f) {
      if (!fn || f.getName() == "main") fn = f;
    });
    if (!fn || fn.getBody().empty()) return makeError("the lowered module has no function");
    std::vector<Operation *> ops;
    for (Operation &op : fn.getBody().front()) ops.push_back(&op);
    std::set<Operation *> retypedOps;
    for (Operation *op : ops)
      if (retyped(op)) retypedOps.insert(op);
    for (Operation *op : retypedOps)
      for (Value r : op->getResults())
        if (isF32Tensor(r.getType())) r.setType(halfOf(r.getType()));
    for (Operation *op : ops) {
      const bool chip = retypedOps.count(op),
                 fp32Reader = isa<tpuir::CpuOp, func::ReturnOp>(op) || (isChip(op) && !chip);
      for (OpOperand &use : op->getOpOperands()) {
        Value v = use.get();
        if (chip && isF32Tensor(v.getType()) && !isBias(op, v)) {
          auto w = v.getDefiningOp<top::WeightOp>();
          auto converted = w ? halfWeight(w) : Result<Value>(castTo(v, halfOf(v.getType()), nameOf(v) + suffix_));
          if (!converted) return converted.status();
          use.set(*converted);
        } else if (fp32Reader && isHalfTensor(v.getType())) {
          use.set(fp32Of(v, isa<func::ReturnOp>(op)));
        }
      }
    }
    for (auto &[w, _] : halfWeights_)
      if (w->use_empty()) w->erase();
    if (failed(verify(*m_.module))) return makeError("the F16/BF16 module does not verify");
    return Status::ok();
  }

private:
  static bool isChip(Operation *op) {
    return op->getDialect() && isa<tpuir::TpuDialect>(op->getDialect()) && !isa<tpuir::CpuOp>(op);
  }
  // A chip op that computes in the 16-bit type: one that reads a computed tensor (a copy of constants only,
  // a constant output, stays fp32: it rounds nothing), and with `only_` one of its fp32 ops it names.
  bool retyped(Operation *op) const {
    if (only_ && (!only_->count(tpuir::opName(op)) ||
                  !llvm::all_of(op->getResults(), [](Value r) { return isF32Tensor(r.getType()); })))
      return false;
    return isChip(op) && llvm::any_of(op->getOperands(), [](Value v) {
             return isa<RankedTensorType>(v.getType()) && !v.getDefiningOp<top::WeightOp>();
           });
  }
  bool isHalfTensor(Type t) const {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.getElementType() == half_;
  }
  RankedTensorType halfOf(Type t) const { return RankedTensorType::get(cast<RankedTensorType>(t).getShape(), half_); }
  RankedTensorType f32Of(Type t) {
    return RankedTensorType::get(cast<RankedTensorType>(t).getShape(), b_.getF32Type());
  }

  // A tpu.cast of v to `type` named `name`, right after v's definition, made once per value and type.
  Value castTo(Value v, RankedTensorType type, const std::string &name) {
    Value &c = casts_[{v, type}];
    if (c) return c;
    b_.setInsertionPointAfterValue(v);
    return c = b_.create<tpuir::CastOp>(NameLoc::get(b_.getStringAttr(name)), type, v).getOutput();
  }

  // The fp32 value of a 16-bit result. The cast takes the result's name (what the model calls it); the
  // 16-bit producer's name gets the suffix. A host op's operand keeps the producer's name too.
  Value fp32Of(Value v, bool forOutput) {
    const std::string name = nameOf(v);
    if (!forOutput) return castTo(v, f32Of(v.getType()), name + "_f32");
    Value &out = outputs_[v];
    if (out) return out;
    v.getDefiningOp()->setLoc(NameLoc::get(b_.getStringAttr(name + suffix_)));
    b_.setInsertionPointAfterValue(v);
    return out = b_.create<tpuir::CastOp>(NameLoc::get(b_.getStringAttr(name)), f32Of(v.getType()), v).getOutput();
  }

  // A weight's values rounded to the 16-bit type, as a new weight (made once per weight).
  Result<Value> halfWeight(top::WeightOp w) {
    if (auto it = halfWeights_.find(w.getOperation()); it != halfWeights_.end()) return it->second;
    const NpyArray *a = m_.weights.find(w.getName().str());
    if (!a || a->dtype != "float32") return makeError("weight '", w.getName().str(), "' is not an fp32 array");
    const std::vector<uint8_t> bytes = backend::roundToHalf(a->data, dtype_);
    const std::string name =
        m_.weights.add(w.getName().str() + suffix_,
                       NpyArray::fromBytes(backend::dtypeName(dtype_), a->shape, bytes.data(), bytes.size()));
    b_.setInsertionPointAfter(w);
    Value v =
        b_.create<top::WeightOp>(NameLoc::get(b_.getStringAttr(name)), halfOf(w.getType()), b_.getStringAttr(name))
            .getOutput();
    return halfWeights_[w.getOperation()] = v;
  }

  LoweredModule &m_;
  const std::set<std::string> *only_; // null: every chip op
  OpBuilder b_;
  backend::DType dtype_;
  Type half_;
  std::string suffix_;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts_; // by value and type
  llvm::DenseMap<Value, Value> outputs_;                // the fp32 casts the function returns
  std::map<Operation *, Value> halfWeights_;
};

} // namespace

Status convertToHalf(LoweredModule &module, Quantize mode, const std::set<std::string> *only) {
  return HalfConverter(module, mode, only).run();
}

} // namespace tpu::lowering
