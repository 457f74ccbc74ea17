// Cross-layer weight equalization (see Passes.td, Nagel et al. 2019, "Data-
// free quantization"): conv1 -> [relu | max_pool]* -> conv2 with every value
// between them used once. Output channel i of conv1 is divided by s_i > 0
// (filter and bias) and input channel i of conv2 multiplied by s_i, which
// leaves the fp32 function unchanged (relu and max pooling commute with a
// positive per-channel scale) and, with s_i = sqrt(r1_i / r2_i) (r = the
// largest |weight| of the channel in each filter), gives both the range
// sqrt(r1_i r2_i): per-tensor int8 weight scales lose less on the channels
// that were small in one of them (depthwise filters especially).
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PassWeights.h"

#include "mlir/Pass/PassManager.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;

namespace top {
#define GEN_PASS_DEF_TOPEQUALIZEWEIGHTS
#include "compiler/Transforms/Passes.h.inc"

namespace {

// The conv that consumes conv1's output through single-use ops a per-channel
// scale passes through (relu, max_pool: CommutesWithChannelScale), or null.
ConvOp equalizablePartner(ConvOp conv1) {
  if (conv1.getDoRelu() && conv1.getReluLimit().convertToDouble() >= 0) return nullptr; // ReLU6: a bound
  Value v = conv1.getOutput();
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (auto conv2 = dyn_cast<ConvOp>(user)) return conv2.getInput() == v ? conv2 : nullptr;
    if (!user->hasTrait<OpTrait::CommutesWithChannelScale>()) return nullptr;
    v = user->getResult(0);
  }
  return nullptr;
}

struct ConvWeights {
  std::vector<float> filter, bias;
  std::vector<int64_t> shape;
};

std::optional<ConvWeights> readConv(const WeightStore &store, ConvOp conv) {
  auto w = conv.getFilter().getDefiningOp<WeightOp>();
  if (!w) return std::nullopt;
  auto a = store.get(w);
  if (!a || !(*a)->is<float>() || (*a)->shape.size() != 4) return std::nullopt;
  ConvWeights cw{(*a)->values<float>(), {}, (*a)->shape};
  if (!isa<NoneType>(conv.getBias().getType())) {
    auto bw = conv.getBias().getDefiningOp<WeightOp>();
    if (!bw) return std::nullopt;
    auto b = store.get(bw);
    if (!b || !(*b)->is<float>() || int64_t((*b)->numel()) != cw.shape[0]) return std::nullopt;
    cw.bias = (*b)->values<float>();
  }
  return cw;
}

Value addWeight(OpBuilder &b, WeightStore &store, Operation *anchor, const std::string &base,
                const std::vector<int64_t> &shape, const std::vector<float> &values) {
  std::string name = store.add(base, tpu::NpyArray::from<float>(shape, values));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(anchor);
  return b.create<WeightOp>(NameLoc::get(b.getStringAttr(name)), RankedTensorType::get(shape, b.getF32Type()),
                            b.getStringAttr(name));
}

std::string weightName(Value v) { return v.getDefiningOp<WeightOp>().getName().str(); }

// Points `operand` at `value`; the weight it named goes when nothing else reads it.
void replaceWeight(OpOperand &operand, Value value) {
  auto old = operand.get().getDefiningOp<WeightOp>();
  operand.set(value);
  if (old && old->use_empty()) old->erase();
}

// One equalization step of a pair on the weights in memory: the largest
// |log s_i| applied, or a negative value when the shapes do not chain
// (nothing changed).
double equalizePair(ConvWeights &w1, ConvWeights &w2, int64_t groups2) {
  const int64_t c = w1.shape[0], per1 = int64_t(w1.filter.size()) / c;
  const int64_t oc2 = w2.shape[0], cg2 = w2.shape[1], taps2 = w2.shape[2] * w2.shape[3];
  if (cg2 * groups2 != c || oc2 % groups2) return -1;
  const int64_t ocPerGroup2 = oc2 / groups2;
  // Input channel i of conv2: group i / cg2, index i % cg2 in each of that group's filters.
  auto forEachOfInput = [&](int64_t i, auto fn) {
    const int64_t g = i / cg2, k = i % cg2;
    for (int64_t o = g * ocPerGroup2; o < (g + 1) * ocPerGroup2; ++o)
      for (int64_t t = 0; t < taps2; ++t) fn(w2.filter[size_t((o * cg2 + k) * taps2 + t)]);
  };
  double step = 0;
  for (int64_t i = 0; i < c; ++i) {
    double r1 = 0, r2 = 0;
    for (int64_t j = 0; j < per1; ++j) r1 = std::max(r1, double(std::fabs(w1.filter[size_t(i * per1 + j)])));
    forEachOfInput(i, [&](float &x) { r2 = std::max(r2, double(std::fabs(x))); });
    if (r1 <= 0 || r2 <= 0) continue;
    const double s = std::sqrt(r1 / r2);
    step = std::max(step, std::fabs(std::log(s)));
    for (int64_t j = 0; j < per1; ++j) w1.filter[size_t(i * per1 + j)] = float(w1.filter[size_t(i * per1 + j)] / s);
    if (!w1.bias.empty()) w1.bias[size_t(i)] = float(w1.bias[size_t(i)] / s);
    forEachOfInput(i, [&](float &x) { x = float(x * s); });
  }
  return step;
}

struct TopEqualizeWeights : impl::TopEqualizeWeightsBase<TopEqualizeWeights> {
  using TopEqualizeWeightsBase::TopEqualizeWeightsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto store = loadWeightsOrReport(module);
    if (!store) return signalPassFailure();
    // The pairs whose weights read as fp32 arrays, and those weights.
    std::vector<std::pair<ConvOp, ConvOp>> pairs;
    std::map<Operation *, ConvWeights> values;
    module.walk([&](ConvOp conv1) {
      ConvOp conv2 = equalizablePartner(conv1);
      if (!conv2) return;
      for (ConvOp conv : {conv1, conv2})
        if (!values.count(conv))
          if (auto w = readConv(*store, conv)) values[conv] = std::move(*w);
      if (values.count(conv1) && values.count(conv2)) pairs.push_back({conv1, conv2});
    });
    if (pairs.empty()) return;
    // A conv can be the second of one pair and the first of the next:
    // sweeps until the chain settles (every scale within 1e-5 of 1).
    std::set<Operation *> changed, scaledOutput; // the first of a pair also has its bias scaled
    for (int sweep = 0; sweep < int(sweeps); ++sweep) {
      double largest = 0;
      for (auto &[conv1, conv2] : pairs) {
        const double step = equalizePair(values[conv1], values[conv2], int64_t(conv2.getGroup()));
        if (step < 0) continue;
        largest = std::max(largest, step);
        changed.insert(conv1), changed.insert(conv2), scaledOutput.insert(conv1);
      }
      if (largest < 1e-5) break;
    }
    OpBuilder b(&getContext());
    module.walk([&](ConvOp conv) { // program order: deterministic weight names
      if (!changed.count(conv)) return;
      const ConvWeights &w = values[conv];
      replaceWeight(conv.getFilterMutable(),
                    addWeight(b, *store, conv, weightName(conv.getFilter()) + "_eq", w.shape, w.filter));
      if (!w.bias.empty() && scaledOutput.count(conv))
        replaceWeight(conv.getBiasMutable(), addWeight(b, *store, conv, weightName(conv.getBias()) + "_eq",
                                                       {int64_t(w.bias.size())}, w.bias));
    });
    if (auto st = saveDerivedWeights(module, *store, weightFile, "_equalized"); !st) {
      module.emitError() << st.message();
      return signalPassFailure();
    }
  }
};

} // namespace

mlir::LogicalResult equalizeWeights(mlir::ModuleOp module, const std::string &weightFile) {
  mlir::PassManager pm(module.getContext());
  TopEqualizeWeightsOptions options;
  options.weightFile = weightFile;
  pm.addPass(createTopEqualizeWeights(options));
  return pm.run(module);
}

} // namespace top
