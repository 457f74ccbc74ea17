#include "compiler/Backend/BM1684X/CodeGen.h"

#include "compiler/Backend/BM1684X/Compiler.h"
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/QuantRef.h"
#include "compiler/Backend/ReferenceEval.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"

#include <algorithm>
#include <cstring>

namespace tpu::backend::bm1684x {

Status unsupported(const Op &op, const std::string &why) {
  return makeError(opKindName(op.kind), " '", op.name, "': ", why, " (the BM1684X compiler does not compile it yet)");
}

namespace {

// The constants an op reads from DDR: its programs' polynomial tables (lowest term first, one table after
// another), a Resize's blend weights along w and then h, an uneven average's 1 / count per output position.
std::vector<float> constantsOf(const Graph &g, const Op &op) {
  std::vector<float> v;
  for (const KernelProgram &program : programsOf(op))
    for (const std::vector<float> &poly : program.polys) v.insert(v.end(), poly.begin(), poly.end());
  if (op.kind == OpKind::Resize) {
    const auto &p = op.params<ResizeParams>();
    for (const auto *t : {&p.w, &p.h}) {
      const std::vector<float> w = blendWeights(*t);
      v.insert(v.end(), w.begin(), w.end());
    }
  }
  if (op.kind != OpKind::Pool || op.params<WindowParams>().isMax) return v;
  const Tensor &x = g.tensors[size_t(op.inputs[0])], &y = g.tensors[size_t(op.output)];
  if (unevenAverage(op, x, y)) {
    const AverageTaps taps = averageTapsOf(op, x, y);
    for (int64_t oy = 0; oy < y.nchw()[2]; ++oy)
      for (int64_t ox = 0; ox < y.nchw()[3]; ++ox) v.push_back(1.0f / float(taps.at(oy, ox)));
  }
  return v;
}

} // namespace

bool int8Weighted(const Graph &g, const Op &op) {
  return (op.kind == OpKind::Conv || op.kind == OpKind::Fc || op.kind == OpKind::ConvTranspose) &&
         op.inputs.size() > 1 && g.tensors[size_t(op.inputs[1])].dtype == DType::I8;
}

std::vector<uint8_t> widenedInteger(const Tensor &t, DType to) {
  const std::vector<int32_t> v = toInts(t.data, t.dtype);
  std::vector<uint8_t> out(v.size() * bytesOf(to));
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(&out[i * bytesOf(to)], &v[i], bytesOf(to)); // little-endian
  return out;
}

// Each kind's emitter, and whether its int8 form (its integer semantics, Graph.h) is compiled: the other
// kinds with an integer input or result are refused by name.
const Compiler::KindEmitter *Compiler::emitterOf(OpKind kind) {
  static const KindEmitter kEmitters[] = {
      {OpKind::Conv, &Compiler::emitWindow, true},
      {OpKind::ConvTranspose, &Compiler::emitWindow, true},
      {OpKind::Fc, &Compiler::emitWindow, true},
      {OpKind::MatMul, &Compiler::emitWindow, false},
      {OpKind::Pool, &Compiler::emitWindow, true},
      {OpKind::GlobalAvgPool, &Compiler::emitWindow, true},
      {OpKind::Add, &Compiler::emitElementwise, true},
      {OpKind::Sub, &Compiler::emitElementwise, true},
      {OpKind::Mul, &Compiler::emitElementwise, true},
      {OpKind::Max, &Compiler::emitElementwise, true},
      {OpKind::Min, &Compiler::emitElementwise, true},
      {OpKind::Relu, &Compiler::emitElementwise, true},
      {OpKind::Clip, &Compiler::emitElementwise, true},
      {OpKind::LeakyRelu, &Compiler::emitElementwise, true},
      {OpKind::Affine, &Compiler::emitElementwise, true},
      {OpKind::Requant, &Compiler::emitElementwise, true},
      {OpKind::Cast, &Compiler::emitElementwise, true},
      {OpKind::Lut, &Compiler::emitElementwise, true},
      {OpKind::PRelu, &Compiler::emitElementwise, false},
      {OpKind::Div, &Compiler::emitElementwise, false},
      {OpKind::Sigmoid, &Compiler::emitElementwise, false},
      {OpKind::Pow, &Compiler::emitElementwise, false},
      {OpKind::Greater, &Compiler::emitElementwise, false},
      {OpKind::Less, &Compiler::emitElementwise, false},
      {OpKind::Equal, &Compiler::emitElementwise, false},
      {OpKind::Where, &Compiler::emitElementwise, false},
      {OpKind::Unary, &Compiler::emitElementwise, false},
      {OpKind::Move, &Compiler::emitCopies, true},
      {OpKind::Slice, &Compiler::emitCopies, true},
      {OpKind::Upsample, &Compiler::emitCopies, true},
      {OpKind::Concat, &Compiler::emitConcat, true},
      {OpKind::Reshape, &Compiler::emitReshape, true},
      {OpKind::Reduce, &Compiler::emitReduce, true}, // int8: sum, mean and max (Reduce.cpp)
      {OpKind::Softmax, &Compiler::emitSoftmax, false},
      {OpKind::LogSoftmax, &Compiler::emitSoftmax, false},
      {OpKind::LayerNorm, &Compiler::emitLayerNorm, false},
      {OpKind::Resize, &Compiler::emitResize, false},
  };
  for (const KindEmitter &k : kEmitters)
    if (k.kind == kind) return &k;
  return nullptr;
}

Status Compiler::emitReshape(const Op &) { return Status::ok(); } // shares its input's bytes (address_ says so)

Status Compiler::emit(const Op &op) {
  const KindEmitter *e = emitterOf(op.kind);
  if (!e) return unsupported(op, "no BM1684X emitter for this kind");
  const DType yt = g_.tensors[size_t(op.output)].dtype;
  const DType xt = op.inputs.empty() ? yt : g_.tensors[size_t(op.inputs[0])].dtype;
  const bool integer = isInteger(yt) || std::any_of(op.inputs.begin(), op.inputs.end(),
                                                    [&](int t) { return isInteger(g_.tensors[size_t(t)].dtype); });
  if (integer && !e->integer) return unsupported(op, "its int8 form");
  // Integers: int8/uint8 activations and the int8 kinds' int8/int16/int32 weights; an int16 accumulator
  // (per-channel weights) from a conv to the per-channel affine that requantises it or the conv that reads it.
  if (yt == DType::I16 && op.kind != OpKind::Conv) return unsupported(op, "an int16 result");
  for (int t : op.inputs)
    if (g_.tensors[size_t(t)].dtype == DType::I16 && !g_.tensors[size_t(t)].isWeight() && op.kind != OpKind::Affine &&
        op.kind != OpKind::Conv)
      return unsupported(op, "an int16 input (a conv's accumulator)");
  if (e->emit == &Compiler::emitCopies || e->emit == &Compiler::emitConcat || e->emit == &Compiler::emitReshape)
    for (int t : op.inputs) // copies move bytes: one type in and out
      if (g_.tensors[size_t(t)].dtype != yt && !g_.tensors[size_t(t)].isWeight())
        return unsupported(op, std::string("a ") + dtypeName(g_.tensors[size_t(t)].dtype) + " input to a " +
                                   dtypeName(yt) + " copy");
  if (op.kind == OpKind::Cast && integer && (isHalf(xt) || isHalf(yt)))
    return unsupported(op, "a cast between int8 and a 16-bit float");
  if (op.kind == OpKind::Unary && !programOf(op))
    return unsupported(op, std::string("no fp32 recipe for ") + unaryName(op.params<UnaryParams>().function));
  return (this->*(e->emit))(op);
}

Result<bmodel::Model> Compiler::run(CompileReport *report) {
  TPU_RETURN_IF_ERROR(g_.validate());
  // 16-bit float models cast at their edges (lowering::convertToHalf): the bmodel's inputs and outputs are fp32.
  for (const std::vector<int> *io : {&g_.inputs, &g_.outputs})
    for (int t : *io)
      if (g_.tensors[size_t(t)].dtype != DType::F32)
        return makeError("graph ", io == &g_.inputs ? "input" : "output", " '", g_.tensors[size_t(t)].name, "' is ",
                         dtypeName(g_.tensors[size_t(t)].dtype), ": BM1684X bmodels take fp32 inputs and outputs");
  // DDR: the coefficients first, then every activation in its own range (no reuse yet).
  bmodel::Net net;
  net.name = g_.name;
  net.coeffAddr = map::kGlobalStart;
  address_.assign(g_.tensors.size(), 0);
  // A transposed conv's weights are stored as the conv the chip runs takes them.
  std::vector<const Op *> transposedBy(g_.tensors.size(), nullptr);
  for (const Op &op : g_.ops)
    if (op.kind == OpKind::ConvTranspose) transposedBy[size_t(op.inputs[1])] = &op;
  for (const Op &op : g_.ops)
    for (size_t k = 0; k < op.inputs.size(); ++k)
      if (const Op *t = transposedBy[size_t(op.inputs[k])]; t && (t != &op || k != 1))
        return unsupported(*t, "weights another op reads too");
  // An int8 window op's int16 bias is stored as the int32 its sums add, and its int8 weights as int16 when
  // its input is int16 (a conv's accumulator: the conv command multiplies operands of one width; Window.cpp).
  stored_.clear();
  for (const Tensor &t : g_.tensors) stored_.push_back(t.dtype);
  std::vector<const Op *> widenedBy(g_.tensors.size(), nullptr);
  for (const Op &op : g_.ops) {
    if (!int8Weighted(g_, op)) continue;
    if (g_.tensors[size_t(op.inputs[0])].dtype == DType::I16) stored_[size_t(op.inputs[1])] = DType::I16;
    if (op.inputs.size() > 2) stored_[size_t(op.inputs[2])] = DType::I32;
    for (size_t k = 1; k < op.inputs.size(); ++k)
      if (stored_[size_t(op.inputs[k])] != g_.tensors[size_t(op.inputs[k])].dtype)
        widenedBy[size_t(op.inputs[k])] = &op;
  }
  for (const Op &op : g_.ops)
    for (int t : op.inputs)
      if (widenedBy[size_t(t)] && widenedBy[size_t(t)] != &op)
        return unsupported(op, "int8 weights or bias another op reads too");
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    const Tensor &t = g_.tensors[i];
    if (!t.isWeight()) continue;
    net.coeff.resize(alignUp(net.coeff.size(), kDdrAlign));
    address_[i] = net.coeffAddr + net.coeff.size();
    Tensor as = t;
    if (stored_[i] != t.dtype) as.data = widenedInteger(t, stored_[i]), as.dtype = stored_[i];
    const std::vector<uint8_t> bytes =
        transposedBy[i] ? rotatedConvWeights(as, transposedBy[i]->params<WindowParams>().groups) : as.data;
    net.coeff.insert(net.coeff.end(), bytes.begin(), bytes.end());
  }
  // The ops' constant tables (constantsOf) after the weights.
  for (const Op &op : g_.ops)
    if (const std::vector<float> values = constantsOf(g_, op); !values.empty()) {
      net.coeff.resize(alignUp(net.coeff.size(), kDdrAlign));
      tables_[&op] = net.coeffAddr + net.coeff.size();
      const uint8_t *b = reinterpret_cast<const uint8_t *>(values.data());
      net.coeff.insert(net.coeff.end(), b, b + values.size() * sizeof(float));
    }
  net.ctxAddr = alignUp(net.coeffAddr + net.coeff.size(), 4096);
  uint64_t neurons = 0;
  std::vector<bool> placed(g_.tensors.size(), false);
  for (size_t i = 0; i < g_.tensors.size(); ++i) placed[i] = g_.tensors[i].isWeight();
  auto placeTensor = [&](int t) -> Status {
    const Tensor &tensor = g_.tensors[size_t(t)];
    address_[size_t(t)] = net.ctxAddr + neurons;
    neurons = alignUp(neurons + tensor.bytes(), kDdrAlign);
    placed[size_t(t)] = true;
    return Status::ok();
  };
  for (int t : g_.inputs) TPU_RETURN_IF_ERROR(placeTensor(t));
  for (const Op &op : g_.ops) {
    if (op.kind == OpKind::Reshape) {
      address_[size_t(op.output)] = address_[size_t(op.inputs[0])];
      placed[size_t(op.output)] = true;
    } else if (!placed[size_t(op.output)]) {
      TPU_RETURN_IF_ERROR(placeTensor(op.output));
    }
    if (op.kind == OpKind::Resize) { // the intermediate (n, c, h, out w), whether used or not
      const Tensor &x = g_.tensors[size_t(op.inputs[0])], &y = g_.tensors[size_t(op.output)];
      auto take = [&](uint64_t bytes) {
        const uint64_t at = net.ctxAddr + neurons;
        neurons = alignUp(neurons + bytes, kDdrAlign);
        return at;
      };
      ResizeScratch &s = scratch_[&op];
      s.mid = take(uint64_t(x.numel() / x.nchw()[3]) * op.params<ResizeParams>().w.i0.size() * kF32);
      if (isHalf(x.dtype)) s.wideIn = take(uint64_t(x.numel()) * kF32), s.wideOut = take(uint64_t(y.numel()) * kF32);
    }
  }
  net.ctxSize = std::max<uint64_t>(neurons, kDdrAlign);
  for (const Op &op : g_.ops) TPU_RETURN_IF_ERROR(emit(op));
  TPU_ASSIGN_OR_RETURN(bmodel::CmdGroup group, program_.finish());
  auto io = [&](int t) {
    const Tensor &tensor = g_.tensors[size_t(t)];
    bmodel::Tensor b;
    b.name = tensor.name;
    b.dtype = bmodel::DataType::Float32;
    b.deviceAddr = address_[size_t(t)];
    for (int64_t d : tensor.shape) b.shape.push_back(uint64_t(d));
    b.size = tensor.bytes();
    return b;
  };
  for (int t : g_.inputs) net.inputs.push_back(io(t));
  for (int t : g_.outputs) net.outputs.push_back(io(t));
  if (report) {
    report->tiuCommands = group.tiuStreamCount;
    report->dmaCommands = group.gdmaStreamCount;
    report->coeffBytes = net.coeff.size();
    report->neuronBytes = neurons;
  }
  net.groups.push_back(std::move(group));
  bmodel::Model model;
  model.chip = std::string(isa::chipInfo(isa::Chip::BM1684X).bmodelName);
  model.type = bmodel::kToolkitModelType;
  model.neuronSize = net.ctxSize;
  model.nets.push_back(std::move(net));
  return model;
}

Result<bmodel::Model> compileToBmodel(const Graph &g, CompileReport *report) { return Compiler(g).run(report); }

Status writeBmodel(const Graph &g, const std::string &path, CompileReport *report) {
  TPU_ASSIGN_OR_RETURN(bmodel::Model model, compileToBmodel(g, report));
  return bmodel::writeFile(model, path);
}

} // namespace tpu::backend::bm1684x
