// --convert-top-to-tpu: the lowering of Lowering.h run on the pass's module,
// whose body it replaces; the lowered weights are written beside it.
#include "compiler/Lowering/Lowering.h"
#include "compiler/Lowering/Passes.h"

#include "compiler/Dialect/Top/TopOps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

namespace tpu::lowering {

#define GEN_PASS_DEF_CONVERTTOPTOTPU
#include "compiler/Lowering/Passes.h.inc"

namespace {

struct ConvertTopToTpuPass : impl::ConvertTopToTpuBase<ConvertTopToTpuPass> {
  using ConvertTopToTpuBase::ConvertTopToTpuBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (auto st = run(module); !st) {
      module.emitError() << st.message();
      signalPassFailure();
    }
  }

  Status run(mlir::ModuleOp module) {
    auto quantize = parseQuantize(mode);
    if (!quantize) return quantize.status();
    LoweringOptions options;
    options.mode = *quantize;
    options.levers.perChannelWeights = perChannelWeights;
    options.levers.int16Pointwise = int16Pointwise;
    options.levers.int16Hardswish = int16Hardswish;
    options.cpuOps = cpuSubnets;
    calib::CalibrationTable table;
    TPU_RETURN_IF_ERROR(loadLoweringTables(calibrationTable, quantizeTable, table, options));
    auto weights = top::WeightStore::loadFor(module);
    if (!weights) return weights.status();
    std::string attr = weightFile;
    if (attr.empty()) {
      llvm::SmallString<256> name(module->getAttrOfType<mlir::StringAttr>(top::kWeightFileAttr).strref());
      llvm::sys::path::replace_extension(name, "");
      attr = std::string(name.str()) + "_tpu.npz";
    }
    auto lowered = lowerToTpu(module, *weights, options);
    if (!lowered) return lowered.status();
    for (const std::string &f : lowered->fallbacks) module.emitWarning() << "kept in F32: " << f;
    module.getBodyRegion().takeBody(lowered->module->getBodyRegion());
    // Resolved like any weight file name: relative to the .mlir's directory.
    module->setAttr(top::kWeightFileAttr, mlir::StringAttr::get(&getContext(), attr));
    auto path = top::WeightStore::pathFor(module);
    if (!path) return path.status();
    return lowered->weights.saveFor(module, *path, attr);
  }
};

} // namespace

} // namespace tpu::lowering
