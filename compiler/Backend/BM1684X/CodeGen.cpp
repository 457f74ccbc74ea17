#include "compiler/Backend/BM1684X/CodeGen.h"

#include "compiler/Backend/BM1684X/Compiler.h"
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/QuantRef.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"

#include <algorithm>

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

Status Compiler::emit(const Op &op) {
  for (int t : op.inputs)
    if (const DType d = g_.tensors[size_t(t)].dtype; d != DType::F32 && !isHalf(d))
      return unsupported(op, std::string("a ") + dtypeName(d) + " input");
  switch (op.kind) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
  case OpKind::Fc:
  case OpKind::MatMul:
  case OpKind::Pool:
  case OpKind::GlobalAvgPool:
    return emitWindow(op);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Relu:
  case OpKind::Clip:
  case OpKind::LeakyRelu:
  case OpKind::PRelu:
  case OpKind::Affine:
  case OpKind::Div:
  case OpKind::Sigmoid:
  case OpKind::Pow:
  case OpKind::Greater:
  case OpKind::Less:
  case OpKind::Equal:
  case OpKind::Where:
    return emitElementwise(op);
  case OpKind::Unary:
    if (!programOf(op))
      return unsupported(op, std::string("no fp32 recipe for ") + unaryName(op.params<UnaryParams>().function));
    return emitElementwise(op);
  case OpKind::Cast:
    if (!isHalf(g_.tensors[size_t(op.output)].dtype) && !isHalf(g_.tensors[size_t(op.inputs[0])].dtype))
      return unsupported(op, "a cast other than fp32 <-> float16 or bfloat16");
    return emitElementwise(op);
  case OpKind::Move:
  case OpKind::Slice:
  case OpKind::Upsample:
    return emitCopies(op);
  case OpKind::Concat:
    return emitConcat(op);
  case OpKind::Reduce:
    return emitReduce(op);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return emitSoftmax(op);
  case OpKind::LayerNorm:
    return emitLayerNorm(op);
  case OpKind::Resize:
    return emitResize(op);
  case OpKind::Reshape:
    return Status::ok(); // shares its input's bytes (address_ says so)
  default:
    return unsupported(op, "this kind is not compiled for the BM1684X yet");
  }
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
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    const Tensor &t = g_.tensors[i];
    if (!t.isWeight()) continue;
    if (t.dtype != DType::F32 && !isHalf(t.dtype))
      return makeError("weight '", t.name, "' is ", dtypeName(t.dtype), " (the BM1684X compiler takes float weights)");
    net.coeff.resize(alignUp(net.coeff.size(), kDdrAlign));
    address_[i] = net.coeffAddr + net.coeff.size();
    const std::vector<uint8_t> bytes =
        transposedBy[i] ? rotatedConvWeights(t, transposedBy[i]->params<WindowParams>().groups) : t.data;
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
    if (tensor.dtype != DType::F32 && !isHalf(tensor.dtype))
      return makeError("tensor '", tensor.name, "' is ", dtypeName(tensor.dtype),
                       " (the BM1684X compiler takes float tensors)");
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
