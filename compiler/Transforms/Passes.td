// Passes over the Top dialect (registered in tpuc-opt).
#ifndef TOP_PASSES_TD
#define TOP_PASSES_TD

include "mlir/Pass/PassBase.td"

def TopShapeInfer : Pass<"top-shape-infer", "mlir::ModuleOp"> {
  let summary = "Recomputes every result type from the function argument types";
  let description = [{
    Walks each function in order, calls the ops' ShapeInferInterface (the same
    rules the importer uses) and updates the function's result types. Run it
    after changing an input shape (e.g. the batch size).
  }];
}

def TopFoldWeights : Pass<"top-fold-weights", "mlir::ModuleOp"> {
  let summary = "Folds constant arithmetic into convolution weights";
  let description = [{
    batch_norm(conv) -> conv with scaled weights and bias; conv * c and conv + c
    (c per output channel) -> conv; batch_norm * c, batch_norm + c -> batch_norm;
    x / c -> x * (1/c). New weights are computed from the module's weight file
    and, if anything changed, written with the arrays still in use to a new file
    (option weight-file, default <old name>_folded.npz beside the old one); the
    module's top.weight_file then names it. The old file is not modified.
  }];
  let options = [
    Option<"weightFile", "weight-file", "std::string", /*default=*/"\"\"",
           "weight file to write (relative to the .mlir's directory); default <old>_folded.npz">
  ];
}

def TopFusePatterns : Pass<"top-fuse-patterns", "mlir::ModuleOp"> {
  let summary = "Recognises exported op chains as single Top ops (LayerNorm, GELU, HardSwish)";
  let description = [{
    reduce_mean / sub / pow 2 (or mul) / reduce_mean / add eps / sqrt / div
    [/ mul gamma] [/ add beta] over trailing axes -> top.layer_norm;
    x * (erf(x / sqrt(2)) + 1) * 0.5 (either multiplication order, or x * 1/sqrt(2))
    -> top.gelu; x * clip(x + 3, 0, 6) / 6 -> top.hard_swish.
    Reads constants from the weight file; writes nothing.
  }];
}

def TopEqualizeWeights : Pass<"top-equalize-weights", "mlir::ModuleOp"> {
  let summary = "Cross-layer weight equalization of conv -> [relu | max_pool] -> conv chains (INT8 accuracy)";
  let description = [{
    For every conv whose output reaches another conv through single-use relu
    or max_pool ops (no ReLU6: its bound does not commute with a scale),
    output channel i of the first conv (filter and bias) is divided by
    s_i = sqrt(r1_i / r2_i) and input channel i of the second multiplied by
    it, r = the channel's largest |weight| in each filter (Nagel et al.,
    data-free quantization). The fp32 function is unchanged; both filters
    then have the range sqrt(r1_i r2_i) on that channel, so per-tensor int8
    weight scales lose less. Calibrate after it. New weights are written as
    fold-weights writes them (default <old name>_equalized.npz).
  }];
  let options = [
    Option<"weightFile", "weight-file", "std::string", /*default=*/"\"\"",
           "weight file to write (relative to the .mlir's directory); default <old>_equalized.npz">,
    Option<"sweeps", "sweeps", "unsigned", /*default=*/"100",
           "most passes over the pairs (a chain of pairs is swept until every scale is within 1e-5 of 1)">
  ];
}

def TopDeadCodeElimination : Pass<"top-dce", "mlir::ModuleOp"> {
  let summary = "Removes Top ops whose results are unused (including unused weights)";
}

#endif // TOP_PASSES_TD
