#include "compiler/Lowering/Lowering.h"
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Lowering/Lowerer.h"
#include "compiler/Lowering/WeightRounding.h"
#include "support/ReadFile.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

using namespace mlir;

namespace tpu::lowering {

Result<Quantize> parseQuantize(const std::string &name) {
  if (name == "F32") return Quantize::F32;
  if (name == "INT8") return Quantize::INT8;
  if (name == "F16") return Quantize::F16;
  if (name == "BF16") return Quantize::BF16;
  return makeError("--quantize '", name, "' is not one of F32, INT8, F16, BF16");
}

const char *quantizeName(Quantize mode) {
  switch (mode) {
  case Quantize::F32:
    return "F32";
  case Quantize::INT8:
    return "INT8";
  case Quantize::F16:
    return "F16";
  case Quantize::BF16:
    return "BF16";
  }
  return "?";
}

Result<QuantizeTable> loadQuantizeTable(const std::string &path) {
  auto text = readFile(path, "quantize table");
  if (!text) return text.status();
  std::istringstream in(*text);
  QuantizeTable table;
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f.size() > 2 || (f.size() == 2 && f[1] != "F32" && f[1] != "F16" && f[1] != "BF16"))
      return makeError(path, ":", lineNo, ": expected 'tensor_name [F32|F16|BF16]'");
    table.keepFloat.insert(f[0]);
    if (f.size() < 2 || f[1] == "F32") continue;
    const Quantize half = f[1] == "F16" ? Quantize::F16 : Quantize::BF16;
    if (table.halfType != Quantize::F32 && table.halfType != half)
      return makeError(path, ":", lineNo, ": ", f[1], " after ", quantizeName(table.halfType),
                       " (one 16-bit float type per table)");
    table.halfType = half;
    table.half.insert(f[0]);
  }
  return table;
}

Status loadLoweringTables(const std::string &calibrationPath, const std::string &quantizeTablePath,
                          calib::CalibrationTable &table, LoweringOptions &options) {
  if (!calibrationPath.empty()) {
    auto t = calib::CalibrationTable::load(calibrationPath);
    if (!t) return t.status();
    table = std::move(*t);
    options.calibration = &table;
  }
  if (!quantizeTablePath.empty()) {
    auto q = loadQuantizeTable(quantizeTablePath);
    if (!q) return q.status();
    options.keepF32 = std::move(q->keepFloat);
    options.keepHalf = std::move(q->half);
    options.halfType = q->halfType;
  }
  return Status::ok();
}

Status Lowerer::nameValues(func::FuncOp f) {
  std::map<std::string, int> counters;
  std::set<std::string> taken;
  auto inputNames = f->getAttrOfType<ArrayAttr>(top::kInputNamesAttr);
  for (Operation &op : f.getBody().front()) {
    if (op.getNumResults() > 1) {
      nameResults(op, taken);
      continue;
    }
    if (op.getNumResults() != 1) continue;
    std::string name;
    if (auto nl = dyn_cast<NameLoc>(op.getLoc())) name = nl.getName().str();
    if (auto in = dyn_cast<top::InputOp>(op); in && inputNames) {
      auto arg = cast<BlockArgument>(in.getInput());
      if (arg.getArgNumber() < inputNames.size())
        if (auto s = dyn_cast<StringAttr>(inputNames[arg.getArgNumber()])) name = s.str();
    }
    if (name.empty()) {
      std::string base = op.getName().stripDialect().str();
      name = base + "_" + std::to_string(counters[base]++);
    }
    for (int i = 1; taken.count(name); ++i) name += "_" + std::to_string(i);
    taken.insert(name);
    names_[op.getResult(0)] = name;
  }
  // Returned values take the model's output names (as the Top interpreter
  // names them, and so the calibration table).
  auto outputNames = f->getAttrOfType<ArrayAttr>(top::kOutputNamesAttr);
  Operation *ret = f.getBody().front().getTerminator();
  if (outputNames && ret && outputNames.size() == ret->getNumOperands())
    for (unsigned i = 0; i < ret->getNumOperands(); ++i)
      if (auto s = dyn_cast<StringAttr>(outputNames[i]); s && ret->getOperand(i).getDefiningOp())
        names_[ret->getOperand(i)] = s.str();
  return Status::ok();
}

void Lowerer::nameResults(Operation &op, std::set<std::string> &taken) {
  std::vector<std::string> locNames;
  if (auto nl = dyn_cast<NameLoc>(op.getLoc()))
    locNames.push_back(nl.getName().str());
  else if (auto fl = dyn_cast<FusedLoc>(op.getLoc()))
    for (Location l : fl.getLocations())
      if (auto n = dyn_cast<NameLoc>(l)) locNames.push_back(n.getName().str());
  const std::string base = locNames.empty() ? op.getName().stripDialect().str() : locNames[0];
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    std::string name = locNames.size() == op.getNumResults() ? locNames[i] : base + "_" + std::to_string(i);
    for (int k = 1; taken.count(name); ++k) name += "_" + std::to_string(k);
    taken.insert(name);
    names_[op.getResult(i)] = name;
  }
}

Status Lowerer::checkKeepF32() const {
  std::set<std::string> known;
  for (const auto &entry : names_) known.insert(entry.second);
  for (const std::string &name : opt_.keepF32)
    if (!known.count(name))
      return makeError("'", name, "' is kept in F32 (quantize table or INT8 recipe) but is no tensor of the model");
  return Status::ok();
}

Status Lowerer::checkCalibration(func::FuncOp f) {
  if (opt_.mode != Quantize::INT8) return Status::ok();
  if (!opt_.calibration) return makeError("INT8 needs a calibration table (--calibration-table)");
  std::vector<std::string> missing;
  // Never int8: index and boolean tensors (no calibrated range); tensors
  // whose NCHW passes the command fields (RetinaNet's flattened scores),
  // which fp32 ops run on a view (FlatViews.cpp) and an int8 one cannot (4N);
  // and 1- to 3-D tensors whose dim 0 is larger than the model's batch (a
  // detector's [3234, 4] boxes): int8 takes dim 0 as the 4N batch, so their
  // moves would go row by row, one GDMA command per few bytes.
  int64_t batch = 1;
  for (Type t : f.getFunctionType().getInputs())
    if (auto rt = dyn_cast<RankedTensorType>(t); rt && rt.getRank() > 0) batch = std::max(batch, rt.getDimSize(0));
  auto whyFp32 = [&](RankedTensorType t) -> std::string {
    if (!backend::fitsCommandFields(t.getShape().vec())) return "its shape passes the command fields (an fp32 view)";
    if (t.getRank() >= 1 && t.getRank() <= 3 && t.getDimSize(0) > batch)
      return "its dim 0 (" + std::to_string(t.getDimSize(0)) + ") is not the batch (" + std::to_string(batch) +
             "): int8 would move it row by row";
    return "";
  };
  for (Operation &op : f.getBody().front())
    for (Value r : op.getResults()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t) continue;
      if (isa<IntegerType>(t.getElementType())) {
        fp32Only_.insert(names_[r]);
      } else if (std::string why = whyFp32(t); !why.empty()) {
        fp32Only_.insert(names_[r]);
        if (!op.hasTrait<top::OpTrait::Constant>()) out_.fallbacks.push_back(names_[r] + ": " + why);
      }
    }
  for (Operation &op : f.getBody().front()) {
    if (op.getNumResults() != 1 || op.hasTrait<top::OpTrait::Constant>()) continue;
    // Index (i64) and boolean (i1) tensors are never quantized: the
    // calibration has no range for them.
    if (isa<IntegerType>(cast<RankedTensorType>(op.getResult(0).getType()).getElementType())) continue;
    const std::string &name = names_[op.getResult(0)];
    if (!opt_.calibration->tensors.count(name)) missing.push_back(name);
  }
  if (missing.empty()) {
    ranges_ = opt_.calibration->tensors;
    shareConcatScales(f);
    return Status::ok();
  }
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 8; ++i) list += (i ? ", " : "") + missing[i];
  if (missing.size() > 8) list += ", ...";
  return makeError("the calibration table lacks ", missing.size(), " tensor(s) of the model: ", list);
}

// Union-find over tensor names: each op that joins its operands (concat)
// with the inputs that feed only such ops. Each class takes the largest threshold and the widest range of
// its members, so no member clips more than its own calibration says.
void Lowerer::shareConcatScales(func::FuncOp f) {
  std::map<std::string, std::string> parent;
  std::function<std::string(const std::string &)> root = [&](const std::string &n) {
    auto it = parent.find(n);
    if (it == parent.end() || it->second == n) return n;
    return it->second = root(it->second);
  };
  auto joins = [](Operation *op) { return op->hasTrait<top::OpTrait::JoinsOperands>(); };
  f.walk([&](Operation *join) {
    if (!joins(join)) return;
    const std::string &out = names_[join->getResult(0)];
    if (!wantInt8(out)) return;
    for (Value v : join->getOperands()) {
      Operation *def = v.getDefiningOp();
      if ((def && def->hasTrait<top::OpTrait::Constant>()) || !wantInt8(names_[v])) continue;
      if (!llvm::all_of(v.getUsers(), joins)) continue;
      parent.emplace(out, out);
      parent[root(names_[v])] = root(out);
    }
  });
  std::map<std::string, calib::TensorRange> shared;
  for (const auto &[name, _] : parent) {
    const calib::TensorRange &r = ranges_.at(name);
    auto [it, first] = shared.emplace(root(name), r);
    calib::TensorRange &c = it->second;
    if (!first) c.threshold = std::max(c.threshold, r.threshold), c.min = std::min(c.min, r.min), c.max = std::max(c.max, r.max);
  }
  for (const auto &[name, _] : parent) ranges_[name] = shared.at(root(name));
}

Value Lowerer::f32(Value v) {
  if (Value f = vals_[v].f32) return f;
  // A constant read in fp32 beside a computed operand (a host op's, a conv's
  // whose filter is computed): its values as an fp32 weight, made once.
  if (auto w = v.getDefiningOp<top::WeightOp>())
    if (auto values = weightValues(v, "a constant operand", nullptr))
      return vals_[v].f32 = addWeight(names_[v].empty() ? w.getName().str() : names_[v],
                                      NpyArray::from(shapeOf(v), *values), b_.getF32Type());
  // A host op's integer result read by the chip: converted on the host.
  if (Value i = vals_[v].i32) {
    auto params = DictionaryAttr::get(ctx_, {b_.getNamedAttr("to", TypeAttr::get(b_.getF32Type()))});
    return vals_[v].f32 = b_.create<tpuir::CpuOp>(locFor(names_[v] + "_f32"), f32Type(shapeOf(v)), ValueRange{i},
                                                  "top.cast", params, int64_t(0))
                              .getOutput();
  }
  Value q = i8(v);
  return vals_[v].f32 = make<tpuir::CastOp>(names_[v] + "_f32", f32Type(shapeOf(v)), q);
}

Value Lowerer::i8(Value v) {
  Versions &ver = vals_[v];
  // A value handed over as an int16 accumulator, read by another op too.
  if (auto h = handoffs_.find(v); !ver.i8 && !ver.f32 && h != handoffs_.end())
    ver.i8 = int8Affine(names_[v], qType(shapeOf(v), names_[v]), h->second.acc, h->second.toInt8, true, f64(1.0),
                        f64(0.0), false);
  if (!ver.i8) {
    const std::string &name = names_[v];
    Value f = ver.f32 || !ver.i32 ? ver.f32 : f32(v); // an integer input or host result: its fp32 copy
    ver.i8 = make<tpuir::CastOp>(name + "_i8", qType(shapeOf(v), name), f);
  }
  return ver.i8;
}

Result<std::vector<float>> Lowerer::weightValues(Value v, const std::string &role, Operation *user) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w) return makeError(role, " is not a weight");
  auto arr = in_.get(w);
  if (!arr) return makeError(arr.message());
  return (*arr)->toFloat();
}

std::vector<int8_t> Lowerer::int8Filter(Value input, ArrayRef<int64_t> outShape, ArrayRef<int64_t> filterShape,
                                        const Window &window, const std::vector<float> &w, std::vector<float> &bias,
                                        const std::vector<double> &unit) {
  if (!opt_.levers.needSamples() || !opt_.samples || !opt_.samples->find(names_[input])) return nearestInt8(w, unit);
  const size_t perOc = w.size() / size_t(filterShape[0]);
  auto unitOf = [&](size_t o) { return unit.size() == 1 ? unit[0] : unit[o]; };
  auto in = shapeOf(input);
  ConvGeometry g;
  g.n = in[0], g.c = in[1], g.h = in[2], g.w = in.size() > 3 ? in[3] : 1; // a 1-D conv: W = 1
  g.oc = filterShape[0], g.groups = window.group, g.kh = window.kernel[0], g.kw = window.kernel[1];
  g.strideH = window.strides[0], g.strideW = window.strides[1];
  g.dilationH = window.dilations[0], g.dilationW = window.dilations[1];
  g.padTop = window.pads[0], g.padLeft = window.pads[1];
  g.oh = outShape[2], g.ow = outShape.size() > 3 ? outShape[3] : 1;
  // Enough positions for a well-conditioned patch moment (2 per weight of
  // one output channel), bounded for the wide layers.
  const int64_t positions = std::clamp<int64_t>(2 * g.patchSize(), 1024, 4096);
  auto moments = opt_.samples->patchMoments(names_[input], g, positions);
  std::vector<double> t(w.size());
  for (size_t i = 0; i < w.size(); ++i) t[i] = double(w[i]) * unitOf(i / perOc);
  std::vector<int8_t> wq;
  std::vector<double> shift = roundWeights(t, g, *moments, opt_.levers.roundWeights, opt_.levers.biasCorrection, wq);
  if (!shift.empty()) {
    bias.resize(size_t(g.oc), 0.0f);
    for (size_t o = 0; o < shift.size(); ++o) bias[o] = float(double(bias[o]) - shift[o] / unitOf(o));
  }
  return wq;
}

Value Lowerer::addWeight(const std::string &base, NpyArray array, Type elem) {
  std::vector<int64_t> shape = array.shape;
  std::string name = out_.weights.add(base, std::move(array));
  return b_.create<top::WeightOp>(locFor(name), RankedTensorType::get(shape, elem), b_.getStringAttr(name))
      .getOutput();
}

Status Lowerer::noLowering(Operation *op, const std::string &why) {
  std::string loc;
  llvm::raw_string_ostream os(loc);
  op->getLoc().print(os);
  std::string name = op->getNumResults() ? names_[op->getResult(0)] : "";
  refusal_ = why;
  return makeError("no lowering for ", op->getName().getStringRef().str(), " '", name, "' at ", os.str(),
                   ": ", why);
}

namespace {
const LoweringTable &loweringTable() {
  static const LoweringTable table = [] {
    LoweringTable t;
    addConvLowerings(t);
    addGemmLowerings(t);
    addPoolLowerings(t);
    addElementwiseLowerings(t);
    addNormalizeLowerings(t);
    addActivationLowerings(t);
    addShapeLowerings(t);
    addDataMovementLowerings(t);
    addReduceLowerings(t);
    return t;
  }();
  return table;
}
} // namespace

// A pointwise op whose operands have its result's shape or one element:
// it runs on a 4-D view of them (FlatViews.cpp), whatever its rank.
bool Lowerer::highRankPointwise(Operation *op) const {
  if (!op->hasTrait<top::OpTrait::Pointwise>() || op->getNumResults() != 1) return false;
  auto out = shapeOf(op->getResult(0));
  return llvm::all_of(op->getOperands(), [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && (t.getShape() == ArrayRef<int64_t>(out) || t.getNumElements() == 1);
  });
}

Status Lowerer::lower(Operation *op) {
  if (fused_.count(op)) return Status::ok();
  if (op->hasTrait<top::OpTrait::Constant>()) return Status::ok();
  // The commands of a TPU sub-net have static shapes: what reads a tensor
  // whose shape comes from the data runs on the host too.
  for (Value v : op->getOperands())
    if (top::shapeFromData(v))
      return lowerOnHostOr(op, noLowering(op, "it reads '" + names_[v] + "', whose shape comes from the data"));
  // Data movement works on C-order tensors of any rank; the other ops see NCHW.
  const bool anyRank = op->hasTrait<top::OpTrait::RankAgnosticMove>();
  // No command reads or writes an empty tensor: the host computes it (and
  // what it feeds), which takes no time for no data.
  auto empty = [&](Value v) { return isa<RankedTensorType>(v.getType()) && llvm::is_contained(shapeOf(v), 0); };
  if (llvm::any_of(op->getOperands(), empty) || llvm::any_of(op->getResults(), empty))
    return lowerOnHostOr(op, noLowering(op, "an empty tensor"));
  for (Value r : op->getResults()) {
    if (shapeOf(r).size() > backend::kMaxRank)
      return noLowering(op, "a result of more than " + std::to_string(backend::kMaxRank) + " dims");
    if (shapeOf(r).size() > 4 && !anyRank && !highRankPointwise(op))
      return noLowering(op, "a result of more than 4 dims (the back end holds 1 to 4)");
  }
  refusal_.clear();
  if (const LoweringTable::Fn *fn = loweringTable().find(op)) {
    Status st = (*fn)(*this, op);
    return st || refusal_.empty() ? st : lowerOnHostOr(op, st);
  }
  return lowerOnHostOr(op, noLowering(op, "no chip lowering exists for this op"));
}

Status Lowerer::lowerOnHostOr(Operation *op, Status refusal) {
  if (!opt_.cpuOps || !top::hasHostOp(op)) return refusal;
  const std::string why = refusal_;
  std::vector<Value> inputs;
  for (Value v : op->getOperands()) {
    if (isa<NoneType>(v.getType())) return refusal;
    inputs.push_back(hostOperand(v));
  }
  auto params = DictionaryAttr::get(ctx_, op->getAttrs());
  std::string names;
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    Value result = op->getResult(r);
    if (result.use_empty()) continue;
    const bool isFloat = isa<FloatType>(cast<RankedTensorType>(result.getType()).getElementType());
    auto type = isFloat ? f32Type(shapeOf(result)) : i32Type(shapeOf(result));
    Value y =
        b_.create<tpuir::CpuOp>(locFor(names_[result]), type, inputs, op->getName().getStringRef(), params, int64_t(r))
            .getOutput();
    (isFloat ? vals_[result].f32 : vals_[result].i32) = y;
    names += (names.empty() ? "'" : ", '") + names_[result] + "'";
  }
  out_.hostOps.push_back(op->getName().getStringRef().str() + " " + names + ": " + why);
  return Status::ok();
}

Value Lowerer::hostOperand(Value v) {
  if (Value i = vals_[v].i32) return i;
  return f32(v);
}

Result<LoweredModule> Lowerer::run() {
  func::FuncOp src;
  src_.walk([&](func::FuncOp f) {
    if (!src || f.getName() == "main") src = f;
  });
  if (!src || src.getBody().empty()) return makeError("the module has no function to lower");
  TPU_RETURN_IF_ERROR(nameValues(src));
  TPU_RETURN_IF_ERROR(checkKeepF32());
  TPU_RETURN_IF_ERROR(checkCalibration(src));

  out_.module = ModuleOp::create(src_.getLoc());
  for (NamedAttribute a : src_->getAttrs())
    if (a.getName() != SymbolTable::getSymbolAttrName()) (*out_.module)->setAttr(a.getName(), a.getValue());
  b_.setInsertionPointToEnd(out_.module->getBody());
  // Integer graph inputs (indices) are int32 tensors of the bmodel, read by
  // host ops as they are and by chip ops through a host cast.
  llvm::SmallVector<Type> argTypes;
  for (Type t : src.getFunctionType().getInputs()) {
    auto rt = dyn_cast<RankedTensorType>(t);
    argTypes.push_back(rt && isa<IntegerType>(rt.getElementType()) ? Type(i32Type(rt.getShape())) : t);
  }
  auto fn = b_.create<func::FuncOp>(src.getLoc(), "main",
                                    FunctionType::get(ctx_, argTypes, src.getFunctionType().getResults()));
  for (const char *attr : {top::kInputNamesAttr, top::kOutputNamesAttr})
    if (auto a = src->getAttr(attr)) fn->setAttr(attr, a);
  Block *entry = fn.addEntryBlock();
  b_.setInsertionPointToEnd(entry);
  // A graph input no op reads (the importer made no top.input for it)
  // stays an input of the bmodel, so the model keeps its interface.
  std::set<unsigned> read;
  src.walk([&](top::InputOp in) { read.insert(cast<BlockArgument>(in.getInput()).getArgNumber()); });
  auto inputNames = src->getAttrOfType<ArrayAttr>(top::kInputNamesAttr);
  for (BlockArgument arg : entry->getArguments()) {
    if (read.count(arg.getArgNumber())) continue;
    auto name = inputNames && arg.getArgNumber() < inputNames.size()
                    ? dyn_cast<StringAttr>(inputNames[arg.getArgNumber()])
                    : nullptr;
    b_.create<top::InputOp>(locFor(name ? name.str() : "input_" + std::to_string(arg.getArgNumber())), arg.getType(),
                            arg);
  }
  auto outputNames = src->getAttrOfType<ArrayAttr>(top::kOutputNamesAttr);
  for (Operation &op : src.getBody().front()) {
    if (auto in = dyn_cast<top::InputOp>(op)) {
      BlockArgument arg = entry->getArgument(cast<BlockArgument>(in.getInput()).getArgNumber());
      Value input = b_.create<top::InputOp>(in.getLoc(), arg.getType(), arg).getOutput();
      (isa<IntegerType>(cast<RankedTensorType>(arg.getType()).getElementType()) ? vals_[in.getOutput()].i32
                                                                                : vals_[in.getOutput()].f32) = input;
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<Value> results;
      // Outputs are fp32 and keep the model's output names.
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        // A copy, under the output's name (the input keeps its own).
        if (v.getDefiningOp<top::InputOp>()) {
          auto outputName = outputNames && i < outputNames.size() ? dyn_cast<StringAttr>(outputNames[i]) : nullptr;
          results.push_back(copyOfInput(v, outputName ? outputName.str() : names_[v] + "_copy"));
          continue;
        }
        // A constant output (a Shape or Size folded at import): a copy of
        // its values in fp32, as the runtime returns every output.
        if (v.getDefiningOp<top::WeightOp>()) {
          auto copy = copyOfConstant(v, names_[v]);
          if (!copy) return copy.status();
          results.push_back(*copy);
          continue;
        }
        Versions &ver = vals_[v];
        // An integer output of a host op, under its name (a chip op reading it
        // has an fp32 copy, named <output>_f32).
        if (ver.i32) {
          results.push_back(ver.i32);
          continue;
        }
        if (!ver.f32) {
          ver.i8.getDefiningOp()->setLoc(locFor(names_[v] + "_i8"));
          ver.f32 = make<tpuir::CastOp>(names_[v], f32Type(shapeOf(v)), ver.i8);
        }
        results.push_back(ver.f32);
      }
      b_.create<func::ReturnOp>(ret.getLoc(), results);
      // A host op's integer output is int32 in the lowered module.
      llvm::SmallVector<Type> types;
      for (Value r : results) types.push_back(r.getType());
      fn.setType(FunctionType::get(ctx_, fn.getArgumentTypes(), types));
      continue;
    }
    TPU_RETURN_IF_ERROR(lower(&op));
  }
  flattenOversizedPointwise(fn);
  fuseMoveChains(fn);
  return std::move(out_);
}

Result<LoweredModule> lowerToTpu(ModuleOp topModule, const top::WeightStore &weights, const LoweringOptions &options) {
  topModule.getContext()->getOrLoadDialect<tpuir::TpuDialect>();
  const bool half = options.mode == Quantize::F16 || options.mode == Quantize::BF16;
  LoweringOptions f32 = options;
  if (half) f32.mode = Quantize::F32;
  Lowerer lowerer(topModule, weights, f32);
  auto lowered = lowerer.run();
  if (!lowered) return lowered;
  if (half) TPU_RETURN_IF_ERROR(convertToHalf(*lowered, options.mode));
  if (options.mode == Quantize::INT8 && !options.keepHalf.empty())
    TPU_RETURN_IF_ERROR(convertToHalf(*lowered, options.halfType, &options.keepHalf));
  return lowered;
}

} // namespace tpu::lowering
