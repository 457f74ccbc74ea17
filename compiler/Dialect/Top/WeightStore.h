// The weights of a Top module: the .npz named by the module attribute
// `top.weight_file` (a path relative to the .mlir file's directory, or
// absolute), loaded into memory. `top.weight` ops name its entries.
//
// Passes that compute new weights add them under fresh names and save the
// store to a new file, then point the module attribute at it (see
// docs/compiler.md); the original file is never modified.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace top {

class WeightOp;

class WeightStore {
public:
  WeightStore() = default;
  // A store over arrays already in memory (the importer's, before they are written).
  explicit WeightStore(tpu::NpzMap arrays) : arrays_(std::move(arrays)) {}

  // Path of the module's weight file: relative names are resolved against the
  // directory of the module's source file (its FileLineColLoc), else the CWD.
  static tpu::Result<std::string> pathFor(mlir::ModuleOp module);
  // Loads the module's weight file; an error names the file.
  static tpu::Result<WeightStore> loadFor(mlir::ModuleOp module);

  // The array of a top.weight op; an error if missing or if its shape/dtype
  // differ from the op's result type.
  tpu::Result<const tpu::NpyArray *> get(WeightOp op) const;
  const tpu::NpyArray *find(const std::string &name) const;
  // Adds an array under `base` or, if taken, `base_1`, `base_2`...; returns the name.
  std::string add(const std::string &base, tpu::NpyArray array);
  tpu::NpzMap &arrays() { return arrays_; }
  const tpu::NpzMap &arrays() const { return arrays_; }

  // Writes the arrays referenced by the module's top.weight ops to `path`
  // and sets the module attribute to `attrValue` (the name the .mlir uses).
  tpu::Status saveFor(mlir::ModuleOp module, const std::string &path, const std::string &attrValue);

private:
  tpu::NpzMap arrays_;
};

// The numpy dtype of a tensor element type (f32, i64, i1), empty if none.
std::string dtypeOfElement(mlir::Type type);

} // namespace top
