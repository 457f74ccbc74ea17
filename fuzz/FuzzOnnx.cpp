// libFuzzer target: the ONNX importer's plain part. Bytes -> protobuf ->
// validated graph (compiler/Import/OnnxModel), then the constant folding the
// importer applies (compiler/Import/ConstFold) on every node whose inputs are
// all initializers. The MLIR builder (OnnxImporter.cpp) is not included: it
// does not compile with Debian's clang 14 (structured bindings captured by
// lambdas are C++20 there), and libFuzzer needs clang.
#include "compiler/Import/ConstFold.h"
#include "compiler/Import/OnnxModel.h"

#include <cstdlib>

namespace {

using tpu::NpyArray;
using namespace tpu::onnx;

// Folds one node the way the importer would; the result is only checked to
// be a consistent array (errors are fine: they become import errors).
void fold(const Node &node, const std::vector<const NpyArray *> &in) {
  tpu::Result<NpyArray> r = tpu::Status::error("not folded");
  const std::string &op = node.opType;
  if (in.size() == 2 && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" ||
                         op == "Min" || op == "Pow" || op == "Equal" || op == "Less" || op == "Greater"))
    r = binaryArray(op, *in[0], *in[1]);
  else if (in.size() == 1 && (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Reciprocal" ||
                              op == "Floor" || op == "Ceil" || op == "Exp" || op == "Log" ||
                              op == "Relu" || op == "Sigmoid" || op == "Tanh"))
    r = unaryArray(op, *in[0]);
  else if (in.size() == 3 && op == "Where")
    r = whereArray(*in[0], *in[1], *in[2]);
  else if (in.size() == 2 && op == "Gather")
    r = gatherArray(*in[0], *in[1], node.getInt("axis", 0));
  else if (!in.empty() && op == "Concat")
    r = concatArrays(in, node.getInt("axis", 0));
  else if (in.size() == 2 && op == "Expand")
    r = expandArray(*in[0], toInt64(*in[1]));
  else if (in.size() == 2 && op == "Reshape") {
    auto shape = reshapeTarget(in[0]->shape, toInt64(*in[1]), node.getInt("allowzero", 0) != 0);
    if (shape.isOk()) r = reshapeArray(*in[0], *shape);
  } else if (in.size() >= 3 && op == "Slice") {
    std::vector<int64_t> axes, steps;
    if (in.size() > 3) axes = toInt64(*in[3]);
    if (in.size() > 4) steps = toInt64(*in[4]);
    auto p = normalizeSlice(in[0]->shape, toInt64(*in[1]), toInt64(*in[2]), axes, steps);
    if (p.isOk()) r = sliceArray(*in[0], *p);
  } else if (in.size() == 1 && (op == "Squeeze" || op == "Unsqueeze") && node.getInts("axes")) {
    auto shape = op == "Squeeze" ? squeezeShape(in[0]->shape, *node.getInts("axes"))
                                 : unsqueezeShape(in[0]->shape, *node.getInts("axes"));
    if (shape.isOk()) r = reshapeArray(*in[0], *shape);
  }
  if (r.isOk() && (r->elementSize() == 0 || r->data.size() != uint64_t(r->numel()) * r->elementSize()))
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // External data resolves against a directory that holds nothing.
  auto model = parseModel(data, size, "/nonexistent-fuzz-dir");
  if (!model.isOk()) return 0;
  for (const Node &node : model->nodes) {
    std::vector<const NpyArray *> in;
    for (const std::string &name : node.inputs) {
      auto it = model->initializers.find(name);
      if (it == model->initializers.end()) break;
      in.push_back(&it->second);
    }
    if (in.size() == node.inputs.size()) fold(node, in);
  }
  return 0;
}
