// The Top -> Tpu conversion as a pass (registered in tpuc-opt; tpuc deploy
// runs the same lowering, Lowering.h lowerToTpu).
#ifndef TPU_LOWERING_PASSES_TD
#define TPU_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTopToTpu : Pass<"convert-top-to-tpu", "mlir::ModuleOp"> {
  let summary = "Lowers a Top module to BM1684 Tpu ops in F32, INT8 or mixed precision";
  let description = [{
    Every Top op of the entry function becomes Tpu ops (compiler/Lowering/Ops/,
    one file per op family); INT8 takes the scales from the calibration table,
    tensors named in the quantize table stay fp32, and a tpu.cast is made
    wherever a value crosses precisions. An int8 op whose shift or bias cannot
    be represented stays fp32 and is reported as a warning ("kept in F32").
    The module's weights (top.weight_file, found beside the .mlir) are read;
    the lowered weights are written to `weight-file` (relative to the .mlir's
    directory; default <old stem>_tpu.npz) and the module then names it.
    A Top op with no lowering runs on the host (a tpu.cpu op, a CPU sub-net)
    if it has a host op; otherwise, or with cpu-subnets=false, it is an error
    naming the op, its tensor and location ("no lowering for ...").
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"F32\"", "F32 or INT8">,
    Option<"calibrationTable", "calibration-table", "std::string", /*default=*/"\"\"",
           "calibration table (tpuc calibrate), required for INT8">,
    Option<"quantizeTable", "quantize-table", "std::string", /*default=*/"\"\"",
           "tensors kept in fp32, one name per line">,
    Option<"weightFile", "weight-file", "std::string", /*default=*/"\"\"",
           "weight file to write (relative to the .mlir's directory); default <old>_tpu.npz">,
    Option<"perChannelWeights", "per-channel-weights", "bool", /*default=*/"false",
           "INT8: conv weights quantized per output channel (an int16 accumulator requantized by a "
           "per-channel tpu.affine; tpuc deploy --per-channel-weights)">,
    Option<"int16Pointwise", "int16-pointwise", "bool", /*default=*/"false",
           "INT8: a conv read only by a 1x1 conv hands it its int16 accumulator (tpuc deploy --int16-pointwise)">,
    Option<"int16Hardswish", "int16-hardswish", "bool", /*default=*/"false",
           "INT8: a conv read only by a hard_swish hands it its int16 accumulator (recipe word int16-hardswish)">,
    Option<"cpuSubnets", "cpu-subnets", "bool", /*default=*/"true",
           "an op the chip refuses that has a host op runs in a CPU sub-net; false refuses it "
           "(tpuc deploy --no-cpu-subnets)">
  ];
  let dependentDialects = ["::tpuir::TpuDialect"];
}

#endif // TPU_LOWERING_PASSES_TD
