// Host ops: the ops a CPU sub-net runs on the host (BMRuntime's CPU layers),
// for what the chip has no command for (top-k, arg-max, casts to integers,
// gathers with run-time indices). One definition per op on plain fp32
// buffers: the Top interpreter evaluates these Top ops with it, and the
// runtime runs it between TPU sub-nets, so F32 results are the same bits on
// both. Integer tensors hold exact integers (up to 2^24), as in the Top
// interpreter; in device memory they are int32 (docs/bmodel.md, "Sub-nets").
//
// An op is named by its Top op ("top.arg_max") and has a fixed code (the
// bmodel's CpuParam.op_type; codes are never reused). A HostCall is one use
// of an op: its attributes, the shapes of all its results and the one result
// it writes (a sub-net has one output), serialized as the CpuParam's
// binary_param.
#pragma once

#include "kernels/Kernels.h"
#include "support/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpu::kernels {

// Named attributes: lists of integers, lists of reals, or a string.
class HostAttrs {
public:
  void setInts(const std::string &name, std::vector<int64_t> v) { ints_[name] = std::move(v); }
  void setReals(const std::string &name, std::vector<double> v) { reals_[name] = std::move(v); }
  void setText(const std::string &name, std::string v) { texts_[name] = std::move(v); }
  // The single integer `name` (a one-element list; a bool is 0 or 1), or
  // `fallback` when absent.
  int64_t integer(const std::string &name, int64_t fallback) const;
  double real(const std::string &name, double fallback) const;
  std::string text(const std::string &name, const std::string &fallback) const;
  const std::vector<int64_t> *ints(const std::string &name) const;
  const std::vector<double> *reals(const std::string &name) const;
  // "axis=1 keepdims=1 to=i64", sorted by name (tpuc dis, error messages).
  std::string describe() const;
  bool operator==(const HostAttrs &o) const { return ints_ == o.ints_ && reals_ == o.reals_ && texts_ == o.texts_; }

private:
  friend struct HostCall;
  std::map<std::string, std::vector<int64_t>> ints_;
  std::map<std::string, std::vector<double>> reals_;
  std::map<std::string, std::string> texts_;
};

struct ConstView {
  Shape shape;
  const float *data = nullptr;
};
struct MutableView {
  Shape shape;
  float *data = nullptr;
};

struct HostOp {
  uint32_t code;         // the bmodel's CpuParam.op_type
  std::string_view name; // the Top op, "top.arg_max"
  // results 0: as many as the attributes say (split).
  unsigned minInputs, maxInputs, results;
  // The shapes of all results from the inputs' (the check that keeps a
  // bmodel's recorded shapes honest before anything is written). For an op
  // whose result shapes come from the data, the largest they can be.
  Result<std::vector<Shape>> (*inferShapes)(const HostAttrs &attrs, const std::vector<Shape> &inputs);
  // Computes every result (outputs arrive shaped and zero-filled). Errors
  // are what only the data shows (an index out of range). An op whose
  // result shapes come from the data (NonMaxSuppression, NonZero) shrinks
  // outputs[i].shape to the real one and writes its values first, in C order.
  Status (*run)(const HostAttrs &attrs, const std::vector<ConstView> &inputs, std::vector<MutableView> &outputs);
  // Whether run() sets the result shapes from the data: never, always
  // (NonMaxSuppression, NonZero), or when the op has its optional last input
  // (TopK's k computed at run time).
  enum class DataShape { Never, Always, WithLastInput } dataShape = DataShape::Never;
  bool shapeFromData(size_t inputs) const {
    return dataShape == DataShape::Always || (dataShape == DataShape::WithLastInput && inputs == maxInputs);
  }
};

// Whether a use of `op` (attributes, input shapes as compiled) has result
// shapes that come from the data: its own (HostOp::shapeFromData), or its
// inputs' marked `fromData` unless its shape rule ignores those dims (the
// same shapes with every dim of those inputs at 1: a reduction over every
// dim, Shape of a tensor). The Top check and the back end share it.
bool resultShapeFromData(const HostOp &op, const HostAttrs &attrs, std::vector<Shape> inputs,
                         const std::vector<bool> &fromData);

// A result of a host op: its real shape and its values.
struct HostTensor {
  Shape shape;
  std::vector<float> values;
};

// Every host op, by code.
const std::vector<HostOp> &hostOps();
const HostOp *findHostOp(std::string_view name);
const HostOp *findHostOp(uint32_t code);

// One use of a host op.
struct HostCall {
  uint32_t code = 0;
  HostAttrs attrs;
  std::vector<Shape> resultShapes; // all results of the op
  uint32_t result = 0;             // the one the call writes

  std::vector<uint8_t> serialize() const;
  // Checks the bytes fully (sizes, a known code, result index, shapes) and
  // names what is wrong.
  static Result<HostCall> parse(const uint8_t *data, size_t size);
  // Checks the call against the shapes of the inputs it will get: a known
  // op, its input count, and every result shape equal to what the op's shape
  // rule gives (the compiler's graph check and the runtime's load share it).
  Status check(const std::vector<Shape> &inputs) const;
  // "top.topk result 1 of 2 (axis=1 k=5 ...)".
  std::string describe() const;
  // Runs the op on `inputs` and returns result `result`. The inputs may be
  // smaller than the shapes check() saw when an earlier op's shape came from
  // the data; the result must still fit resultShapes[result] (its buffer).
  Result<HostTensor> run(const std::vector<ConstView> &inputs) const;
};

// A unary op's kernel parameters a, b (kernels::unary) from its attributes:
// LeakyRelu and Elu alpha, Clip min and max, HardSigmoid alpha and beta; an
// absent one is the Top op's default (KernelsHostOpsTest checks they agree).
std::pair<float, float> unaryParams(UnaryKind kind, const HostAttrs &attrs);

// Runs op `name` on `inputs` (the input count checked): every result of the
// shape inferShapes gives for the inputs' shapes, or the smaller one the
// data gives (HostOp::dataShape).
Result<std::vector<HostTensor>> runHostOp(std::string_view name, const HostAttrs &attrs,
                                          const std::vector<ConstView> &inputs);

} // namespace tpu::kernels
