// The Top interpreter: executes a Top-dialect module op by op in fp32 with the
// reference kernels (kernels). It is the numerical truth every later
// stage (calibration, Tpu interpreter, simulator) is compared against.
//
// Tensor names: a value is named by its location (loc("name"), the ONNX tensor
// name); multi-result ops carry a fused location with one name per result.
// Unnamed values get "<op>_<n>". Inputs and outputs take the function's
// top.input_names / top.output_names (the ONNX graph names) when present.
// Values are kept as fp32 (i64/i1 tensors hold exact integers up to 2^24) and
// written with the dtype of their MLIR element type.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace top {

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; // numpy name
};

class TopInterpreter {
public:
  // Prepares `module` (which must outlive the interpreter) for running: finds
  // the entry function ("main", else the only function), names every value,
  // checks every shape is static, loads the weights from the module's weight
  // file (or takes `weights`, e.g. straight from the importer).
  static tpu::Result<std::unique_ptr<TopInterpreter>> create(mlir::ModuleOp module);
  static tpu::Result<std::unique_ptr<TopInterpreter>> create(mlir::ModuleOp module,
                                                             const tpu::NpzMap &weights);
  ~TopInterpreter();

  const std::vector<TensorInfo> &inputs() const;
  const std::vector<TensorInfo> &outputs() const;

  // Runs the model. `inputs` must hold exactly the model inputs by name with
  // their shape and dtype. Returns the outputs by name, or with `dumpAll`
  // every tensor the function computes (inputs and outputs included).
  tpu::Result<tpu::NpzMap> run(const tpu::NpzMap &inputs, bool dumpAll = false);

  // Called with the name and values of every fp32 input and op result right
  // after it is produced, before any op reads it; it may rewrite the values
  // in place (calibration's fake quantization). Empty: none.
  using ResultHook = std::function<void(const std::string &name, std::vector<float> &values)>;
  void setResultHook(ResultHook hook);

  // The tensor name of a value of the module (as dumps name it).
  const std::string &nameOf(mlir::Value value) const;

private:
  struct Impl;
  explicit TopInterpreter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Registers the dialects a Top module uses (top, func) in `context`.
void registerTopDialects(mlir::MLIRContext &context);

// Parses and verifies a .mlir file; a parse or verifier error is returned as
// one line "file:line:col: message".
tpu::Result<mlir::OwningOpRef<mlir::ModuleOp>> loadTopModule(mlir::MLIRContext &context,
                                                              const std::string &path);

} // namespace top
