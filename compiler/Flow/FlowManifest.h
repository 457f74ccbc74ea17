// flow.json: what `tpuc flow` leaves in its work directory besides the
// files themselves — the files by role, the quantization mode, and the
// per-tensor similarity of every stage pair (Top vs Tpu over every tensor
// both interpreters compute; Tpu vs bmodel and Top vs bmodel over the
// outputs, the only tensors the bmodel run returns). Tools that read a work
// dir (tpuc graph --flow-dir) start here. Format: docs/graph.md.
#pragma once

#include "kernels/Compare.h"
#include "support/Status.h"

#include <map>
#include <string>
#include <vector>

namespace tpu::flow {

// One stage pair and the similarity of each tensor it covers.
struct TensorComparisons {
  std::string reference, candidate;     // stage names: "top", "tpu", "bmodel"
  double minCosine = 0, minEuclidean = 0; // the pair's tolerance
  std::vector<kernels::CompareRow> rows;
};

// A stage of a multi-stage flow (tpuc flow --input-shapes "[[..]];[[..]]"):
// its own flow dir (a flow.json of its own) below the work dir.
struct FlowStage {
  std::string name;        // "stage 0"
  std::string inputShapes; // "[[1,3,48,320]]"
  std::string dir;         // relative to the work dir: "stage0"
};

struct FlowManifest {
  std::string dir;                          // the work directory (set when read)
  std::string quantize;                     // "F32" or "INT8"
  // INT8: the recipe deploy lowered with (Int8Recipe::text()), how it was
  // chosen, and the Top tensors the lowering kept in fp32 ("name: why").
  std::string int8Recipe, int8RecipeChoice;
  std::vector<std::string> keptF32;
  std::map<std::string, std::string> files; // role ("top", "tpu", "bmodel", "cali", "stats", ...) -> name in dir
  std::vector<TensorComparisons> comparisons;
  // A multi-stage flow's work dir: its stages, in stage order (its files are
  // the multi-stage bmodel and the calibration table; no comparisons).
  std::vector<FlowStage> stages;
  // The path of a role's file, "" when the flow wrote none.
  std::string path(const std::string &role) const;
};

constexpr const char *kFlowManifestName = "flow.json";

// Every tensor present in both archives with the same shape, compared
// (a is the reference), in name order; tensors of one side only, or of
// another shape (e.g. a Tpu cast), are left out.
std::vector<kernels::CompareRow> compareCommonTensors(const NpzMap &a, const NpzMap &b,
                                                      const kernels::CompareOptions &tolerance);

std::string manifestJson(const FlowManifest &manifest);
// Reads DIR/flow.json. Errors: DIR is not a directory, is not a flow work
// dir (no flow.json), or the manifest is malformed (naming the key).
Result<FlowManifest> readFlowManifest(const std::string &dir);

} // namespace tpu::flow
