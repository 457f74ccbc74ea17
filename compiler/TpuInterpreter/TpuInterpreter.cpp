#include "compiler/TpuInterpreter/TpuInterpreter.h"

#include "compiler/Backend/QuantRef.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Export/TpuToGraph.h"

#include <cstring>

namespace tpu::tpuinterp {

using backend::DType;

bool isTpuModule(mlir::ModuleOp module) {
  bool found = false;
  module.walk([&](mlir::Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "tpu") found = true;
  });
  return found;
}

Result<std::unique_ptr<TpuInterpreter>> TpuInterpreter::create(mlir::ModuleOp module) {
  auto weights = top::WeightStore::loadFor(module);
  if (!weights) return makeError(weights.message());
  auto g = exporter::toGraph(module, weights->arrays());
  if (!g) return makeError(g.message());
  return create(std::move(*g));
}

Result<std::unique_ptr<TpuInterpreter>> TpuInterpreter::create(backend::Graph graph) {
  TPU_RETURN_IF_ERROR(graph.validate());
  return std::unique_ptr<TpuInterpreter>(new TpuInterpreter(std::move(graph)));
}

namespace {
// An int16 accumulator (per-channel weights) has no one scale, nor has an
// int32 tensor (a host op's indices): their integers, as the runtime
// returns them. `shape` is the value's real shape (a host op's result may
// be smaller than its tensor: its values come first).
NpyArray toFloatArray(const backend::Tensor &t, const backend::Bytes &v, const kernels::Shape &shape) {
  std::vector<float> f(size_t(kernels::numElements(shape)));
  if (t.dtype == DType::F32)
    std::memcpy(f.data(), v.data(), f.size() * 4);
  else if (backend::isHalf(t.dtype))
    std::memcpy(f.data(), backend::widenHalf(v, t.dtype).data(), f.size() * 4);
  else if (t.dtype == DType::I16)
    for (size_t i = 0; i < f.size(); ++i) {
      int16_t q;
      std::memcpy(&q, &v[2 * i], 2);
      f[i] = float(q);
    }
  else if (t.dtype == DType::I32)
    for (size_t i = 0; i < f.size(); ++i) {
      int32_t q;
      std::memcpy(&q, &v[4 * i], 4);
      f[i] = float(q);
    }
  else
    for (size_t i = 0; i < f.size(); ++i)
      f[i] = float(t.dtype == DType::U8 ? int(v[i]) : int(int8_t(v[i]))) * t.scale;
  return NpyArray::from(shape, f.data(), f.size());
}
} // namespace

Result<std::vector<backend::Bytes>> graphInputs(const backend::Graph &graph, const NpzMap &inputs) {
  std::vector<backend::Bytes> in;
  for (int id : graph.inputs) {
    const backend::Tensor &t = graph.tensors[size_t(id)];
    auto it = inputs.find(t.name);
    if (it == inputs.end()) return makeError("input '", t.name, "' is missing");
    if (it->second.shape != t.shape)
      return makeError("input '", t.name, "' has shape ", shapeToString(it->second.shape), ", the model takes ",
                       shapeToString(t.shape));
    std::vector<float> f = it->second.toFloat();
    backend::Bytes b(t.bytes());
    if (t.dtype == DType::F32) std::memcpy(b.data(), f.data(), b.size());
    else if (backend::isInt8Like(t.dtype))
      for (size_t i = 0; i < f.size(); ++i) b[i] = uint8_t(backend::quantizeValue(f[i], t.scale, t.dtype));
    else if (t.dtype == DType::I32) // integer inputs (indices), exact to 2^24 like every integer tensor
      for (size_t i = 0; i < f.size(); ++i) {
        const int32_t v = int32_t(f[i]);
        std::memcpy(&b[4 * i], &v, 4);
      }
    else
      return makeError("input '", t.name, "' has dtype ", backend::dtypeName(t.dtype),
                       " (float32, int8 or int32 only)");
    in.push_back(std::move(b));
  }
  if (inputs.size() != graph.inputs.size())
    for (const auto &[name, arr] : inputs) {
      bool known = false;
      for (int id : graph.inputs) known = known || graph.tensors[size_t(id)].name == name;
      if (!known) return makeError("'", name, "' is not an input of the model");
    }
  return in;
}

Result<NpzMap> TpuInterpreter::run(const NpzMap &inputs, bool dumpAll) const {
  auto in = graphInputs(graph_, inputs);
  if (!in) return in.status();
  std::vector<kernels::Shape> shapes;
  auto values = backend::evalGraph(graph_, *in, &shapes);
  if (!values) return makeError(values.message());
  NpzMap out;
  auto add = [&](size_t i) { out[graph_.tensors[i].name] = toFloatArray(graph_.tensors[i], (*values)[i], shapes[i]); };
  if (dumpAll) {
    for (size_t i = 0; i < graph_.tensors.size(); ++i)
      if (!graph_.tensors[i].isWeight()) add(i);
  } else {
    for (int id : graph_.outputs) add(size_t(id));
  }
  return out;
}

} // namespace tpu::tpuinterp
