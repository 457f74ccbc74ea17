// tpuc deploy: Top module -> Tpu module (written beside the bmodel as
// <stem>.tpu.mlir + <stem>_tpu_weights.npz) -> code generator graph ->
// bmodel; optionally runs the bmodel on the runtime's func backend and
// compares it with the Tpu interpreter (bit for bit) and a reference.
#pragma once

#include "compiler/Flow/Int8Recipe.h"
#include "compiler/Lowering/Lowering.h"
#include "support/Status.h"

#include <ostream>
#include <string>

namespace tpu::flow {

struct DeployOptions {
  lowering::Quantize mode = lowering::Quantize::F32;
  std::string calibrationTable; // required for INT8
  std::string quantizeTable;    // tensors kept in fp32
  Int8Recipe levers;            // the lever flags given
  // auto: the flags joined with the calibration table's recipe; a file: with
  // the file's; none: the flags alone (Int8Recipe.h).
  RecipeChoice recipe;
  // Samples (a directory of .npz / images, as tpuc calibrate reads) whose
  // conv inputs bias correction and weight rounding read; the first
  // `weightSamples` usable ones.
  std::string weightData;
  int64_t weightSamples = 4;
  bool layerGroup = true;       // false: every op alone (load, compute, store)
  bool cpuSubnets = true;       // false: an op only the host can run is refused (chip-only model)
  std::string chip = "bm1684";
  std::string output;           // the .bmodel
  std::string testInput, testReference;
  double minCosine = 0;         // 0: 0.9999 for F32, 0.99 for INT8
};

struct DeployResult {
  Int8Recipe recipe;                // INT8: what the lowering used
  std::vector<std::string> keptF32; // INT8 ops kept in fp32: "name: why"
  bool tested = false;
  bool bitExact = true;    // bmodel outputs == Tpu interpreter outputs
  bool referencePass = true;
};

// Progress, the compile report and the comparisons go to `log`.
Result<DeployResult> deploy(const std::string &topPath, const DeployOptions &options, std::ostream &log);

} // namespace tpu::flow
