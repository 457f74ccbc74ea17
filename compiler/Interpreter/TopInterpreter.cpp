#include "compiler/Interpreter/TopInterpreter.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

using namespace mlir;
namespace k = tpu::kernels;

namespace top {
namespace {

using Shape = std::vector<int64_t>;

// A tensor value: shape plus fp32 data, shared so reshapes and weights cost
// no copy.
struct Tensor {
  Shape shape;
  std::shared_ptr<std::vector<float>> data;
  const float *ptr() const { return data->data(); }
};

Shape shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return Shape(t.getShape().begin(), t.getShape().end());
}

Tensor makeTensor(Shape shape) {
  Tensor t;
  t.data = std::make_shared<std::vector<float>>(k::numElements(shape));
  t.shape = std::move(shape);
  return t;
}

std::string opLabel(Operation *op, const std::string &name) {
  return op->getName().getStringRef().str() + " '" + name + "'";
}

// Collects the first error diagnostic as "file:line:col: message".
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler_(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error && message_.empty()) {
            std::string where;
            if (auto loc = dyn_cast<FileLineColLoc>(diag.getLocation()))
              where = loc.getFilename().str() + ":" + std::to_string(loc.getLine()) + ":" +
                      std::to_string(loc.getColumn()) + ": ";
            message_ = where + diag.str();
          }
          return success();
        }) {}
  const std::string &message() const { return message_; }

private:
  std::string message_;
  ScopedDiagnosticHandler handler_;
};

double f64(const llvm::APFloat &v) { return v.convertToDouble(); }

} // namespace

struct TopInterpreter::Impl {
  ModuleOp module;
  func::FuncOp func;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<Value> inputValues;                // function arguments, in order
  llvm::DenseMap<Value, std::string> names;      // every value's tensor name
  llvm::DenseMap<Value, Tensor> weights;         // top.weight results, converted once
  std::vector<Operation *> schedule;             // ops in order (without the return)
  llvm::DenseMap<Value, size_t> lastUse;         // index into schedule
  TopInterpreter::ResultHook hook;

  // Applies the hook to a produced value (a private copy when its data is
  // shared, e.g. by a reshape's input).
  void applyHook(Value v, llvm::DenseMap<Value, Tensor> &env);

  tpu::Status prepare(const tpu::NpzMap *weightMap);
  tpu::Status nameValues();
  tpu::Status checkOp(Operation *op);
  tpu::Status execute(Operation *op, llvm::DenseMap<Value, Tensor> &env);
};

tpu::Status TopInterpreter::Impl::nameValues() {
  std::set<std::string> taken;
  std::map<std::string, int> counters;
  auto unique = [&](std::string base) {
    std::string name = base;
    for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
    taken.insert(name);
    return name;
  };
  auto fallback = [&](Operation *op) {
    std::string base = op->getName().stripDialect().str();
    return base + "_" + std::to_string(counters[base]++);
  };
  // Inputs first: named by the function's top.input_names, else by the
  // top.input op reading the argument, else by the argument's location.
  auto inputNames = func->getAttrOfType<ArrayAttr>("top.input_names");
  for (BlockArgument arg : func.getArguments()) {
    std::string name;
    if (inputNames && inputNames.size() == func.getNumArguments())
      if (auto s = dyn_cast<StringAttr>(inputNames[arg.getArgNumber()])) name = s.str();
    for (Operation *user : arg.getUsers())
      if (auto in = dyn_cast<InputOp>(user); in && name.empty())
        if (auto nl = dyn_cast<NameLoc>(in.getLoc())) name = nl.getName().str();
    if (name.empty())
      if (auto nl = dyn_cast<NameLoc>(arg.getLoc())) name = nl.getName().str();
    if (name.empty()) name = "arg" + std::to_string(arg.getArgNumber());
    names[arg] = unique(name);
  }
  for (Operation *op : schedule) {
    if (auto in = dyn_cast<InputOp>(op)) {
      names[in.getOutput()] = names[in.getInput()];
      continue;
    }
    std::vector<std::string> locNames;
    Location loc = op->getLoc();
    if (auto nl = dyn_cast<NameLoc>(loc)) locNames.push_back(nl.getName().str());
    else if (auto fl = dyn_cast<FusedLoc>(loc))
      for (Location l : fl.getLocations())
        if (auto n = dyn_cast<NameLoc>(l)) locNames.push_back(n.getName().str());
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      std::string base;
      if (locNames.size() == op->getNumResults()) base = locNames[i];
      else if (!locNames.empty()) base = locNames[0] + (op->getNumResults() > 1 ? "_" + std::to_string(i) : "");
      else base = fallback(op);
      names[op->getResult(i)] = unique(base);
    }
  }
  return tpu::Status::ok();
}

// Re-derives the op's result types with its own shape rule (on a detached
// clone) and requires them to equal the module's: the kernels trust shapes.
tpu::Status TopInterpreter::Impl::checkOp(Operation *op) {
  std::string label = opLabel(op, op->getNumResults() ? names[op->getResult(0)] : "");
  if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "top")
    return tpu::makeError(label, ": not a Top dialect op");
  for (Value r : op->getResults()) {
    if (isa<NoneType>(r.getType())) continue;
    auto t = dyn_cast<RankedTensorType>(r.getType());
    if (!t || !t.hasStaticShape())
      return tpu::makeError(label, ": result has no static shape (run shape inference first)");
    if (dtypeOfElement(t.getElementType()).empty())
      return tpu::makeError(label, ": unsupported element type (f32, i64 or i1 only)");
  }
  if (isa<WeightOp, NoneOp>(op)) return tpu::Status::ok();
  auto shaped = dyn_cast<ShapeInferInterface>(op);
  if (!shaped) return tpu::makeError(label, ": op has no shape rule");
  Operation *clone = op->clone();
  DiagnosticCollector diags(op->getContext());
  bool ok = succeeded(cast<ShapeInferInterface>(clone).inferShapes());
  std::string mismatch;
  if (ok) {
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      if (clone->getResult(i).getType() != op->getResult(i).getType()) {
        std::string want, have;
        llvm::raw_string_ostream ws(want), hs(have);
        clone->getResult(i).getType().print(ws);
        op->getResult(i).getType().print(hs);
        mismatch = "result " + std::to_string(i) + " is " + hs.str() + " but the operands give " + ws.str();
        break;
      }
  }
  clone->destroy();
  if (!ok) return tpu::makeError(label, ": ", diags.message().empty() ? "shape rule failed" : diags.message());
  if (!mismatch.empty()) return tpu::makeError(label, ": ", mismatch);
  return tpu::Status::ok();
}

tpu::Status TopInterpreter::Impl::prepare(const tpu::NpzMap *weightMap) {
  func = module.lookupSymbol<func::FuncOp>("main");
  if (!func) {
    auto funcs = module.getOps<func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1)
      return tpu::makeError("module needs a function named 'main' or exactly one function");
    func = *funcs.begin();
  }
  if (func.isExternal()) return tpu::makeError("function '", func.getName().str(), "' has no body");
  if (!func.getBody().hasOneBlock()) return tpu::makeError("function must have a single block");
  Block &block = func.getBody().front();
  Operation *ret = block.getTerminator();
  for (Operation &op : block)
    if (&op != ret) schedule.push_back(&op);
  TPU_RETURN_IF_ERROR(nameValues());

  for (BlockArgument arg : func.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || !t.hasStaticShape() || dtypeOfElement(t.getElementType()).empty())
      return tpu::makeError("input '", names[arg], "' needs a static f32/i64/i1 tensor type");
    inputs.push_back({names[arg], shapeOf(arg), dtypeOfElement(t.getElementType())});
    inputValues.push_back(arg);
  }
  // Outputs: the function's top.output_names (the ONNX graph outputs, also
  // when one is an input or another output), else the value names.
  auto outputNames = func->getAttrOfType<ArrayAttr>("top.output_names");
  for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
    Value v = ret->getOperand(i);
    std::string name = names[v];
    if (outputNames && outputNames.size() == ret->getNumOperands())
      if (auto s = dyn_cast<StringAttr>(outputNames[i])) name = s.str();
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape()) return tpu::makeError("output '", name, "' has no static shape");
    outputs.push_back({name, shapeOf(v), dtypeOfElement(t.getElementType())});
  }
  for (Operation *op : schedule) TPU_RETURN_IF_ERROR(checkOp(op));

  WeightStore store;
  if (weightMap) {
    store.arrays() = *weightMap;
  } else {
    bool anyWeight = false;
    for (Operation *op : schedule) anyWeight |= isa<WeightOp>(op);
    if (anyWeight) {
      auto loaded = WeightStore::loadFor(module);
      if (!loaded) return loaded.status();
      store = loaded.take();
    }
  }
  for (Operation *op : schedule) {
    auto w = dyn_cast<WeightOp>(op);
    if (!w) continue;
    auto array = store.get(w);
    if (!array) return array.status();
    Tensor t;
    t.shape = (*array)->shape;
    t.data = std::make_shared<std::vector<float>>((*array)->toFloat());
    weights[w.getOutput()] = std::move(t);
  }
  for (size_t i = 0; i < schedule.size(); ++i)
    for (Value v : schedule[i]->getOperands()) lastUse[v] = i;
  for (Value v : ret->getOperands()) lastUse[v] = schedule.size();
  return tpu::Status::ok();
}

namespace {

k::UnaryKind unaryKindOf(Operation *op, float &a, float &b) {
  a = b = 0;
  return llvm::TypeSwitch<Operation *, k::UnaryKind>(op)
      .Case([](ReluOp) { return k::UnaryKind::Relu; })
      .Case([](SigmoidOp) { return k::UnaryKind::Sigmoid; })
      .Case([](SiLUOp) { return k::UnaryKind::SiLU; })
      .Case([](TanhOp) { return k::UnaryKind::Tanh; })
      .Case([](GeluOp) { return k::UnaryKind::Gelu; })
      .Case([](ExpOp) { return k::UnaryKind::Exp; })
      .Case([](LogOp) { return k::UnaryKind::Log; })
      .Case([](SqrtOp) { return k::UnaryKind::Sqrt; })
      .Case([](NegOp) { return k::UnaryKind::Neg; })
      .Case([](AbsOp) { return k::UnaryKind::Abs; })
      .Case([](ReciprocalOp) { return k::UnaryKind::Reciprocal; })
      .Case([](ErfOp) { return k::UnaryKind::Erf; })
      .Case([](FloorOp) { return k::UnaryKind::Floor; })
      .Case([](CeilOp) { return k::UnaryKind::Ceil; })
      .Case([](RoundOp) { return k::UnaryKind::Round; })
      .Case([](SignOp) { return k::UnaryKind::Sign; })
      .Case([](SoftplusOp) { return k::UnaryKind::Softplus; })
      .Case([](SoftsignOp) { return k::UnaryKind::Softsign; })
      .Case([](MishOp) { return k::UnaryKind::Mish; })
      .Case([](SinOp) { return k::UnaryKind::Sin; })
      .Case([](CosOp) { return k::UnaryKind::Cos; })
      .Case([](HardSwishOp) { return k::UnaryKind::HardSwish; })
      .Case([&](LeakyReluOp o) { a = f64(o.getAlpha()); return k::UnaryKind::LeakyRelu; })
      .Case([&](EluOp o) { a = f64(o.getAlpha()); return k::UnaryKind::Elu; })
      .Case([&](ClipOp o) {
        a = f64(o.getMin());
        b = f64(o.getMax());
        return k::UnaryKind::Clip;
      })
      .Case([&](HardSigmoidOp o) {
        a = f64(o.getAlpha());
        b = f64(o.getBeta());
        return k::UnaryKind::HardSigmoid;
      })
      .Default([](Operation *) { return k::UnaryKind::Identity; });
}

bool isUnary(Operation *op) {
  return isa<ReluOp, SigmoidOp, SiLUOp, TanhOp, GeluOp, ExpOp, LogOp, SqrtOp, NegOp, AbsOp,
             ReciprocalOp, ErfOp, FloorOp, CeilOp, RoundOp, SignOp, SoftplusOp, SoftsignOp, MishOp, SinOp,
             CosOp, HardSwishOp, LeakyReluOp, EluOp, ClipOp, HardSigmoidOp>(op);
}

std::optional<k::BinaryKind> binaryKindOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<k::BinaryKind>>(op)
      .Case([](AddOp) { return k::BinaryKind::Add; })
      .Case([](SubOp) { return k::BinaryKind::Sub; })
      .Case([](MulOp) { return k::BinaryKind::Mul; })
      .Case([](DivOp) { return k::BinaryKind::Div; })
      .Case([](MaxOp) { return k::BinaryKind::Max; })
      .Case([](MinOp) { return k::BinaryKind::Min; })
      .Case([](PowOp) { return k::BinaryKind::Pow; })
      .Case([](PReluOp) { return k::BinaryKind::PRelu; })
      .Case([](EqualOp) { return k::BinaryKind::Equal; })
      .Case([](LessOp) { return k::BinaryKind::Less; })
      .Case([](GreaterOp) { return k::BinaryKind::Greater; })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<k::ReduceKind> reduceKindOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<k::ReduceKind>>(op)
      .Case([](ReduceMeanOp) { return k::ReduceKind::Mean; })
      .Case([](ReduceSumOp) { return k::ReduceKind::Sum; })
      .Case([](ReduceMaxOp) { return k::ReduceKind::Max; })
      .Case([](ReduceMinOp) { return k::ReduceKind::Min; })
      .Case([](ReduceProdOp) { return k::ReduceKind::Prod; })
      .Case([](ReduceL2Op) { return k::ReduceKind::L2; })
      .Default([](Operation *) { return std::nullopt; });
}

// Window parameters of conv/pool ops, 1-D mapped onto the W axis.
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
};
Window windowOf(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                ArrayRef<int64_t> dilations) {
  Window w;
  size_t n = kernel.size();
  if (n == 1) {
    w.kw = kernel[0];
    w.sw = strides[0];
    w.dw = dilations[0];
    w.pl = pads[0];
    w.pr = pads[1];
  } else {
    w.kh = kernel[0];
    w.kw = kernel[1];
    w.sh = strides[0];
    w.sw = strides[1];
    w.dh = dilations[0];
    w.dw = dilations[1];
    w.pt = pads[0];
    w.pl = pads[1];
    w.pb = pads[2];
    w.pr = pads[3];
  }
  return w;
}

// N, C, H, W of an NCH or NCHW shape.
std::array<int64_t, 4> nchw(const Shape &s) {
  if (s.size() == 3) return {s[0], s[1], 1, s[2]};
  return {s[0], s[1], s[2], s[3]};
}

// Conv and pool kernels take the same window fields under the same names.
template <typename Params> void setWindow(Params &p, const Window &w) {
  p.kh = w.kh;
  p.kw = w.kw;
  p.strideH = w.sh;
  p.strideW = w.sw;
  p.dilationH = w.dh;
  p.dilationW = w.dw;
  p.padTop = w.pt;
  p.padLeft = w.pl;
  p.padBottom = w.pb;
  p.padRight = w.pr;
}

k::ConvParams convParams(const Shape &in, const Shape &out, int64_t group, const Window &w) {
  auto [n, c, h, wd] = nchw(in);
  auto [on, oc, oh, ow] = nchw(out);
  (void)on;
  k::ConvParams p;
  p.n = n;
  p.ic = c;
  p.ih = h;
  p.iw = wd;
  p.oc = oc;
  p.oh = oh;
  p.ow = ow;
  setWindow(p, w);
  p.groups = group;
  return p;
}

} // namespace

tpu::Status TopInterpreter::Impl::execute(Operation *op, llvm::DenseMap<Value, Tensor> &env) {
  // By value (a shape and a shared pointer): out() may grow env and move its entries.
  auto in = [&](unsigned i) -> Tensor { return env.find(op->getOperand(i))->second; };
  auto hasOperand = [&](unsigned i) { return !isa<NoneType>(op->getOperand(i).getType()); };
  auto out = [&](unsigned i = 0) -> Tensor & {
    Tensor &t = env[op->getResult(i)];
    t = makeTensor(shapeOf(op->getResult(i)));
    return t;
  };
  std::string label = opLabel(op, op->getNumResults() ? names[op->getResult(0)] : "");

  if (isa<InputOp>(op)) {
    env[op->getResult(0)] = in(0);
    return tpu::Status::ok();
  }
  if (isa<WeightOp>(op)) {
    env[op->getResult(0)] = weights.find(op->getResult(0))->second;
    return tpu::Status::ok();
  }
  if (isa<NoneOp>(op)) return tpu::Status::ok();
  if (isUnary(op)) {
    float a, b;
    k::UnaryKind kind = unaryKindOf(op, a, b);
    const Tensor &x = in(0);
    Tensor &y = out();
    k::unary(kind, x.ptr(), y.data->data(), k::numElements(x.shape), a, b);
    return tpu::Status::ok();
  }
  if (auto kind = binaryKindOf(op)) {
    const Tensor &a = in(0), &b = in(1);
    Tensor &y = out();
    k::binary(*kind, a.ptr(), a.shape, b.ptr(), b.shape, y.data->data(), y.shape);
    return tpu::Status::ok();
  }
  if (auto kind = reduceKindOf(op)) {
    const Tensor &x = in(0);
    ArrayRef<int64_t> axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
    for (int64_t a : axes)
      if (a < 0 || a >= int64_t(x.shape.size())) return tpu::makeError(label, ": axis ", a, " out of range");
    Tensor &y = out();
    k::reduce(*kind, x.ptr(), x.shape, std::vector<int64_t>(axes.begin(), axes.end()), y.data->data());
    return tpu::Status::ok();
  }

  return llvm::TypeSwitch<Operation *, tpu::Status>(op)
      .Case([&](ConvOp o) {
        const Tensor &x = in(0), &w = in(1);
        Tensor &y = out();
        auto p = convParams(x.shape, y.shape, static_cast<int64_t>(o.getGroup()),
                            windowOf(o.getKernelShape(), o.getStrides(), o.getPads(), o.getDilations()));
        k::conv2d(x.ptr(), w.ptr(), hasOperand(2) ? in(2).ptr() : nullptr, y.data->data(), p);
        if (o.getDoRelu()) {
          double limit = f64(o.getReluLimit());
          int64_t n = k::numElements(y.shape);
          if (limit >= 0)
            k::unary(k::UnaryKind::Clip, y.ptr(), y.data->data(), n, 0.0f, static_cast<float>(limit));
          else
            k::unary(k::UnaryKind::Relu, y.ptr(), y.data->data(), n);
        }
        return tpu::Status::ok();
      })
      .Case([&](ConvTransposeOp o) {
        const Tensor &x = in(0), &w = in(1);
        Tensor &y = out();
        auto p = convParams(x.shape, y.shape, static_cast<int64_t>(o.getGroup()),
                            windowOf(o.getKernelShape(), o.getStrides(), o.getPads(), o.getDilations()));
        k::convTranspose2d(x.ptr(), w.ptr(), hasOperand(2) ? in(2).ptr() : nullptr, y.data->data(), p);
        return tpu::Status::ok();
      })
      .Case([&](BatchNormOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        k::batchNorm(x.ptr(), y.data->data(), x.shape, in(1).ptr(), in(2).ptr(), in(3).ptr(), in(4).ptr(),
                     static_cast<float>(f64(o.getEpsilon())));
        return tpu::Status::ok();
      })
      .Case([&](LayerNormOp o) {
        const Tensor &x = in(0);
        int64_t axis = static_cast<int64_t>(o.getAxis());
        Shape normShape(x.shape.begin() + axis, x.shape.end());
        int64_t len = k::numElements(normShape);
        // Scale and bias may broadcast over the normalised dims.
        auto param = [&](unsigned i, std::vector<float> &buf) -> tpu::Result<const float *> {
          if (!hasOperand(i)) return static_cast<const float *>(nullptr);
          const Tensor &t = in(i);
          if (k::numElements(t.shape) == len && t.shape.size() <= normShape.size()) return t.ptr();
          if (!k::broadcastShape(t.shape, normShape) || *k::broadcastShape(t.shape, normShape) != normShape)
            return tpu::makeError(label, ": ", i == 1 ? "scale " : "bias ", tpu::shapeToString(t.shape),
                                  " does not broadcast to the normalised dims ", tpu::shapeToString(normShape));
          buf.resize(len);
          k::broadcastTo(t.ptr(), t.shape, buf.data(), normShape);
          return static_cast<const float *>(buf.data());
        };
        std::vector<float> sb, bb;
        auto scale = param(1, sb);
        if (!scale) return scale.status();
        auto bias = param(2, bb);
        if (!bias) return bias.status();
        Tensor &y = out();
        k::layerNorm(x.ptr(), y.data->data(), x.shape, axis, *scale, *bias, static_cast<float>(f64(o.getEpsilon())));
        return tpu::Status::ok();
      })
      .Case([&](MatMulOp) {
        const Tensor &a = in(0), &b = in(1);
        Tensor &y = out();
        k::matmul(a.ptr(), a.shape, b.ptr(), b.shape, y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](GemmOp o) {
        const Tensor &a = in(0), &b = in(1);
        Tensor &y = out();
        int64_t m = y.shape[0], n = y.shape[1];
        int64_t kk = a.shape[o.getTransA() ? 0 : 1];
        std::vector<float> at, bt;
        const float *pa = a.ptr(), *pb = b.ptr();
        if (o.getTransA()) {
          at.resize(m * kk);
          k::transpose(a.ptr(), a.shape, {1, 0}, at.data());
          pa = at.data();
        }
        if (o.getTransB()) {
          bt.resize(kk * n);
          k::transpose(b.ptr(), b.shape, {1, 0}, bt.data());
          pb = bt.data();
        }
        k::gemm(m, n, kk, pa, kk, pb, n, y.data->data(), n);
        float alpha = f64(o.getAlpha()), beta = f64(o.getBeta());
        float *py = y.data->data();
        if (alpha != 1.0f)
          for (int64_t i = 0; i < m * n; ++i) py[i] *= alpha;
        if (hasOperand(2) && beta != 0.0f) {
          const Tensor &c = in(2);
          std::vector<float> cb(m * n);
          k::broadcastTo(c.ptr(), c.shape, cb.data(), y.shape);
          for (int64_t i = 0; i < m * n; ++i) py[i] += beta * cb[i];
        }
        return tpu::Status::ok();
      })
      .Case([&](SoftmaxOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        int64_t axis = static_cast<int64_t>(o.getAxis());
        if (axis < 0) axis += int64_t(x.shape.size());
        if (axis < 0 || axis >= int64_t(x.shape.size())) return tpu::makeError(label, ": axis out of range");
        k::softmax(x.ptr(), y.data->data(), x.shape, axis, false);
        return tpu::Status::ok();
      })
      .Case([&](LogSoftmaxOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        int64_t axis = static_cast<int64_t>(o.getAxis());
        if (axis < 0) axis += int64_t(x.shape.size());
        if (axis < 0 || axis >= int64_t(x.shape.size())) return tpu::makeError(label, ": axis out of range");
        k::softmax(x.ptr(), y.data->data(), x.shape, axis, true);
        return tpu::Status::ok();
      })
      .Case([&](CastOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        Type to = o.getTo();
        const float *src = x.ptr();
        float *dst = y.data->data();
        int64_t n = k::numElements(x.shape);
        for (int64_t i = 0; i < n; ++i) {
          if (to.isInteger(1)) dst[i] = src[i] != 0.0f ? 1.0f : 0.0f;
          else if (to.isInteger(64)) dst[i] = std::trunc(src[i]);
          else dst[i] = src[i];
        }
        return tpu::Status::ok();
      })
      .Case([&](WhereOp) {
        Tensor &y = out();
        int64_t n = k::numElements(y.shape);
        std::vector<float> c(n), a(n), b(n);
        k::broadcastTo(in(0).ptr(), in(0).shape, c.data(), y.shape);
        k::broadcastTo(in(1).ptr(), in(1).shape, a.data(), y.shape);
        k::broadcastTo(in(2).ptr(), in(2).shape, b.data(), y.shape);
        float *dst = y.data->data();
        for (int64_t i = 0; i < n; ++i) dst[i] = c[i] != 0.0f ? a[i] : b[i];
        return tpu::Status::ok();
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        Window w = windowOf(o.getKernelShape(), o.getStrides(), o.getPads(), o.getDilations());
        auto [n, c, h, wd] = nchw(x.shape);
        auto [on, oc, oh, ow] = nchw(y.shape);
        (void)on;
        (void)oc;
        k::PoolParams p;
        p.n = n;
        p.c = c;
        p.ih = h;
        p.iw = wd;
        p.oh = oh;
        p.ow = ow;
        setWindow(p, w);
        p.countIncludePad = o.getCountIncludePad();
        k::pool2d(isa<MaxPoolOp>(op) ? k::PoolKind::Max : k::PoolKind::Avg, x.ptr(), y.data->data(), p);
        return tpu::Status::ok();
      })
      .Case<GlobalAvgPoolOp, GlobalMaxPoolOp>([&](auto) {
        const Tensor &x = in(0);
        Tensor &y = out();
        int64_t nc = x.shape[0] * x.shape[1];
        k::globalPool(isa<GlobalMaxPoolOp>(op) ? k::PoolKind::Max : k::PoolKind::Avg, x.ptr(), y.data->data(),
                      nc, nc ? k::numElements(x.shape) / nc : 0);
        return tpu::Status::ok();
      })
      .Case<ArgMaxOp, ArgMinOp>([&](auto o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        k::argReduce(isa<ArgMaxOp>(op), x.ptr(), x.shape, static_cast<int64_t>(o.getAxis()), o.getSelectLastIndex(), y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](ReshapeOp) {
        Tensor t = in(0);
        t.shape = shapeOf(op->getResult(0));
        env[op->getResult(0)] = std::move(t);
        return tpu::Status::ok();
      })
      .Case([&](PermuteOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        k::transpose(x.ptr(), x.shape, std::vector<int64_t>(o.getOrder().begin(), o.getOrder().end()),
                     y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](ConcatOp o) {
        std::vector<const float *> ptrs;
        std::vector<Shape> shapes;
        for (unsigned i = 0; i < op->getNumOperands(); ++i) {
          ptrs.push_back(in(i).ptr());
          shapes.push_back(in(i).shape);
        }
        Tensor &y = out();
        k::concat(ptrs, shapes, static_cast<int64_t>(o.getAxis()), y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](SplitOp o) {
        Tensor x = in(0);
        std::vector<float *> outs;
        for (unsigned i = 0; i < op->getNumResults(); ++i) outs.push_back(out(i).data->data());
        k::split(x.ptr(), x.shape, static_cast<int64_t>(o.getAxis()), std::vector<int64_t>(o.getSplit().begin(), o.getSplit().end()), outs);
        return tpu::Status::ok();
      })
      .Case([&](SliceOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        k::slice(x.ptr(), x.shape, std::vector<int64_t>(o.getStarts().begin(), o.getStarts().end()),
                 std::vector<int64_t>(o.getSteps().begin(), o.getSteps().end()), y.data->data(), y.shape);
        return tpu::Status::ok();
      })
      .Case([&](PadOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        size_t rank = x.shape.size();
        auto pads = o.getPads();
        k::PadMode mode = o.getMode() == "reflect" ? k::PadMode::Reflect
                          : o.getMode() == "edge"  ? k::PadMode::Edge
                                                   : k::PadMode::Constant;
        if (mode != k::PadMode::Constant)
          for (size_t d = 0; d < rank; ++d)
            if (x.shape[d] == 0 && y.shape[d] != 0)
              return tpu::makeError(label, ": cannot ", o.getMode().str(), "-pad an empty dimension");
        k::pad(x.ptr(), x.shape, std::vector<int64_t>(pads.begin(), pads.begin() + rank),
               std::vector<int64_t>(pads.begin() + rank, pads.end()), mode, static_cast<float>(f64(o.getValue())),
               y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](ResizeOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        std::vector<double> scales(o.getScales().begin(), o.getScales().end());
        if (scales.size() != x.shape.size())
          for (size_t d = 0; d < x.shape.size(); ++d) scales.push_back(double(y.shape[d]) / double(x.shape[d]));
        const k::ResizeParams p =
            k::resizeParams(o.getMode(), o.getCoordinateTransformationMode(), o.getNearestMode());
        k::resize(x.ptr(), x.shape, y.data->data(), y.shape, scales, p);
        return tpu::Status::ok();
      })
      .Case([&](GatherOp o) {
        const Tensor &x = in(0), &idx = in(1);
        int64_t axis = static_cast<int64_t>(o.getAxis()), dim = x.shape[axis];
        std::vector<int64_t> indices(k::numElements(idx.shape));
        for (size_t i = 0; i < indices.size(); ++i) {
          int64_t v = static_cast<int64_t>(idx.ptr()[i]);
          if (v < -dim || v >= dim)
            return tpu::makeError(label, ": index ", v, " out of range for dim ", axis, " of size ", dim);
          indices[i] = v < 0 ? v + dim : v;
        }
        Tensor &y = out();
        k::gather(x.ptr(), x.shape, axis, indices, y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](ExpandOp) {
        const Tensor &x = in(0);
        Tensor &y = out();
        k::broadcastTo(x.ptr(), x.shape, y.data->data(), y.shape);
        return tpu::Status::ok();
      })
      .Case([&](TileOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        if (k::numElements(y.shape) == 0) return tpu::Status::ok();
        k::tile(x.ptr(), x.shape, std::vector<int64_t>(o.getRepeats().begin(), o.getRepeats().end()),
                y.data->data());
        return tpu::Status::ok();
      })
      .Case([&](DepthToSpaceOp o) {
        const Tensor &x = in(0);
        Tensor &y = out();
        int64_t b = static_cast<int64_t>(o.getBlocksize()), n = x.shape[0], c = x.shape[1] / (b * b), h = x.shape[2], w = x.shape[3];
        // DCR: channels are (b1, b2, c); CRD: (c, b1, b2). Output [n, c, h, b1, w, b2].
        bool dcr = o.getMode() == "DCR";
        Shape split = dcr ? Shape{n, b, b, c, h, w} : Shape{n, c, b, b, h, w};
        std::vector<int64_t> perm = dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2}
                                        : std::vector<int64_t>{0, 1, 4, 2, 5, 3};
        k::transpose(x.ptr(), split, perm, y.data->data());
        return tpu::Status::ok();
      })
      .Default([&](Operation *) { return tpu::makeError(label, ": the interpreter does not implement this op"); });
}

TopInterpreter::TopInterpreter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TopInterpreter::~TopInterpreter() = default;

tpu::Result<std::unique_ptr<TopInterpreter>> TopInterpreter::create(ModuleOp module) {
  auto impl = std::make_unique<Impl>();
  impl->module = module;
  TPU_RETURN_IF_ERROR(impl->prepare(nullptr));
  return std::unique_ptr<TopInterpreter>(new TopInterpreter(std::move(impl)));
}

tpu::Result<std::unique_ptr<TopInterpreter>> TopInterpreter::create(ModuleOp module, const tpu::NpzMap &weights) {
  auto impl = std::make_unique<Impl>();
  impl->module = module;
  TPU_RETURN_IF_ERROR(impl->prepare(&weights));
  return std::unique_ptr<TopInterpreter>(new TopInterpreter(std::move(impl)));
}

const std::vector<TensorInfo> &TopInterpreter::inputs() const { return impl_->inputs; }
void TopInterpreter::setResultHook(ResultHook hook) { impl_->hook = std::move(hook); }
const std::string &TopInterpreter::nameOf(Value value) const {
  static const std::string unnamed;
  auto it = impl_->names.find(value);
  return it == impl_->names.end() ? unnamed : it->second;
}

void TopInterpreter::Impl::applyHook(Value v, llvm::DenseMap<Value, Tensor> &env) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  auto it = env.find(v);
  if (!hook || !t || !t.getElementType().isF32() || it == env.end() || !it->second.data) return;
  std::shared_ptr<std::vector<float>> &data = it->second.data;
  if (data.use_count() > 1) data = std::make_shared<std::vector<float>>(*data);
  hook(names[v], *data);
}
const std::vector<TensorInfo> &TopInterpreter::outputs() const { return impl_->outputs; }

static tpu::NpyArray toArray(const Tensor &t, const std::string &dtype) {
  int64_t n = k::numElements(t.shape);
  const float *p = t.ptr();
  if (dtype == "int64") {
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(p[i]);
    return tpu::NpyArray::from<int64_t>(t.shape, v);
  }
  if (dtype == "bool") {
    std::vector<uint8_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = p[i] != 0.0f;
    tpu::NpyArray a = tpu::NpyArray::from<uint8_t>(t.shape, v);
    a.dtype = "bool";
    return a;
  }
  return tpu::NpyArray::from(t.shape, p, n);
}

tpu::Result<tpu::NpzMap> TopInterpreter::run(const tpu::NpzMap &inputs, bool dumpAll) {
  Impl &m = *impl_;
  llvm::DenseMap<Value, Tensor> env;
  std::set<std::string> expected;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const TensorInfo &info = m.inputs[i];
    expected.insert(info.name);
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      std::string have;
      for (const auto &[name, a] : inputs) have += (have.empty() ? "" : ", ") + name;
      return tpu::makeError("input '", info.name, "' is missing (given: ", have.empty() ? "none" : have, ")");
    }
    const tpu::NpyArray &a = it->second;
    if (a.shape != info.shape)
      return tpu::makeError("input '", info.name, "' has shape ", tpu::shapeToString(a.shape), " but the model expects ",
                            tpu::shapeToString(info.shape));
    if (a.dtype != info.dtype)
      return tpu::makeError("input '", info.name, "' has dtype ", a.dtype, " but the model expects ", info.dtype);
    Tensor t;
    t.shape = a.shape;
    t.data = std::make_shared<std::vector<float>>(a.toFloat());
    env[m.inputValues[i]] = std::move(t);
  }
  for (const auto &[name, a] : inputs)
    if (!expected.count(name)) {
      std::string want;
      for (const auto &info : m.inputs) want += (want.empty() ? "" : ", ") + info.name;
      return tpu::makeError("'", name, "' is not a model input (inputs: ", want, ")");
    }

  tpu::NpzMap result;
  auto record = [&](Value v, const std::string &name) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t) return;
    auto it = env.find(v);
    if (it != env.end()) result[name] = toArray(it->second, dtypeOfElement(t.getElementType()));
  };
  for (Value v : m.inputValues) m.applyHook(v, env);
  if (dumpAll)
    for (Value v : m.inputValues) record(v, m.names[v]);
  for (size_t i = 0; i < m.schedule.size(); ++i) {
    Operation *op = m.schedule[i];
    TPU_RETURN_IF_ERROR(m.execute(op, env));
    if (!isa<WeightOp, NoneOp, InputOp>(op))
      for (Value r : op->getResults()) m.applyHook(r, env);
    if (dumpAll && !isa<WeightOp, NoneOp, InputOp>(op))
      for (Value r : op->getResults()) record(r, m.names[r]);
    // Free what no later op reads (results nobody reads included).
    for (Value v : op->getOperands()) {
      auto lu = m.lastUse.find(v);
      if (lu != m.lastUse.end() && lu->second == i) env.erase(v);
    }
    for (Value r : op->getResults())
      if (!m.lastUse.count(r)) env.erase(r);
  }
  Operation *ret = m.func.getBody().front().getTerminator();
  for (unsigned i = 0; i < ret->getNumOperands(); ++i) record(ret->getOperand(i), m.outputs[i].name);
  return result;
}

void registerTopDialects(MLIRContext &context) {
  context.getOrLoadDialect<TopDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
}

tpu::Result<OwningOpRef<ModuleOp>> loadTopModule(MLIRContext &context, const std::string &path) {
  registerTopDialects(context);
  DiagnosticCollector diags(&context);
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return tpu::makeError(path, ": cannot open file");
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) return tpu::makeError(diags.message().empty() ? path + ": cannot parse" : diags.message());
  // The weight file is found relative to the module's location; a module
  // written from another one (deploy's Tpu module) still carries the location
  // of the file it came from, so locate it at the file it was read from.
  (*module)->setLoc(FileLineColLoc::get(&context, path, 1, 1));
  return module;
}

} // namespace top
