#include "compiler/Import/OnnxImporter.h"
#include "compiler/Import/OnnxNodeImporter.h"

#include <algorithm>
#include <functional>

using namespace mlir;

namespace tpu::onnx {

Status OnnxImporter::run(ModuleOp module, const ImportOptions &opts) {
  // Every unsupported op at once, before any work.
  std::map<std::string, std::vector<std::string>> unsupported;
  std::function<void(const std::vector<Node> &)> scan = [&](const std::vector<Node> &nodes) {
    for (const Node &n : nodes) {
      if ((!n.domain.empty() && n.domain != "ai.onnx") || !onnxOpTable().find(n.opType))
        unsupported[(n.domain.empty() ? "" : n.domain + ".") + n.opType].push_back(n.name);
      for (const auto &[name, a] : n.attrs)
        if (a.graph) scan(a.graph->nodes);
    }
  };
  scan(model_.nodes);
  if (!unsupported.empty()) {
    std::string msg = "unsupported ONNX ops (opset " + std::to_string(model_.opset) + "): ";
    bool first = true;
    for (const auto &[type, names] : unsupported) {
      msg += (first ? "" : "; ") + type + " (node" + (names.size() > 1 ? "s " : " ");
      for (size_t i = 0; i < names.size() && i < 5; ++i) msg += (i ? ", '" : "'") + names[i] + "'";
      if (names.size() > 5) msg += " and " + std::to_string(names.size() - 5) + " more";
      msg += ")";
      first = false;
    }
    return Status::error(msg);
  }

  if (model_.opset == 0) return makeError("the ONNX model declares no opset for the default domain");
  consts_ = model_.initializers;
  std::vector<const ValueInfo *> inputs;
  for (const auto &[name, array] : opts.constantInputs) {
    auto it = std::find_if(model_.inputs.begin(), model_.inputs.end(), [&](const ValueInfo &v) { return v.name == name; });
    if (it == model_.inputs.end()) return makeError("constant input '", name, "' is not an input of the model");
    consts_[name] = array;
  }
  for (const ValueInfo &in : model_.inputs)
    if (!opts.constantInputs.count(in.name)) inputs.push_back(&in);
  if (!opts.inputShapes.empty() && opts.inputShapes.size() != inputs.size())
    return makeError("--input-shapes gives ", opts.inputShapes.size(), " shapes but the model has ",
                     inputs.size(), " inputs");
  std::vector<std::pair<std::string, Type>> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo &in = *inputs[i];
    if (in.dtype.empty()) return makeError("input '", in.name, "' has an unsupported element type ", in.onnxType);
    std::vector<int64_t> dims = in.dims;
    if (!opts.inputShapes.empty()) {
      const auto &given = opts.inputShapes[i];
      if (in.hasShape && given.size() != dims.size())
        return makeError("--input-shapes gives rank ", given.size(), " for input '", in.name, "' of rank ", dims.size());
      for (size_t d = 0; d < given.size(); ++d)
        if (given[d] < 0) return makeError("--input-shapes: dim ", d, " of input '", in.name, "' must be >= 0");
      dims = given;
    } else {
      if (!in.hasShape) return makeError("input '", in.name, "' has no shape in the model; give --input-shapes");
      for (size_t d = 0; d < dims.size(); ++d)
        if (dims[d] < 0)
          return makeError("input '", in.name, "' has a dynamic dimension ", d,
                           in.dimParams[d].empty() ? "" : " ('" + in.dimParams[d] + "')", "; give --input-shapes");
    }
    args.emplace_back(in.name, RankedTensorType::get(dims, import::elementTypeOf(&ctx_, in.dtype)));
  }
  beginMain(module, args);

  TPU_RETURN_IF_ERROR(importNodes(model_.nodes));

  std::vector<std::string> outs = opts.outputNames;
  if (outs.empty())
    for (const auto &o : model_.outputs) outs.push_back(o.name);
  return endMain(outs);
}

Status OnnxImporter::importNodes(const std::vector<Node> &nodes) {
  for (const Node &n : nodes) {
    if (n.outputs.empty() || n.outputs[0].empty()) return makeError(n.describe(), ": has no output");
    const OpTable::Entry &op = *onnxOpTable().find(n.opType);
    size_t required = op.required.at(model_.opset);
    for (size_t i = 0; i < required; ++i)
      if (i >= n.inputs.size() || n.inputs[i].empty())
        return makeError(n.describe(), ": needs ", required, " inputs, input ", i, " is missing");
    for (const auto &in : n.inputs)
      if (!in.empty() && !isKnown(in))
        return makeError(n.describe(), ": input '", in, "' is not produced by any earlier node (graph not in topological order?)");
    TPU_RETURN_IF_ERROR(op.handler(*this, n));
  }
  return Status::ok();
}

Status OnnxImporter::importSubgraph(const Graph &g) {
  // Names are unique across a model and its subgraphs (ONNX's SSA rule); a
  // branch that rebinds one would change what the enclosing graph reads.
  for (const Node &n : g.nodes)
    for (const std::string &out : n.outputs)
      if (!out.empty() && isKnown(out))
        return makeError(n.describe(), ": output '", out, "' reuses the name of a value outside the subgraph");
  for (const auto &[name, array] : g.initializers) bindConst(name, array);
  return importNodes(g.nodes);
}

Result<ImportedModule> importModel(MLIRContext &context, const Model &model, const ImportOptions &options) {
  ImportedModule out;
  OnnxImporter im(context, model, out.weights);
  out.module = ModuleOp::create(UnknownLoc::get(&context));
  ModuleOp module = *out.module;
  module->setAttr(top::kWeightFileAttr, StringAttr::get(&context, options.weightFile));
  if (options.annotateModule) options.annotateModule(module);
  TPU_RETURN_IF_ERROR(im.run(module, options));
  TPU_RETURN_IF_ERROR(import::finishTopModule(im, module, out.weights, options.canonicalize));
  return out;
}

Result<std::vector<std::vector<int64_t>>> parseShapeList(const std::string &text) {
  std::vector<std::vector<int64_t>> shapes;
  size_t i = 0;
  auto fail = [&](const std::string &why) {
    return makeError("--input-shapes '", text, "': ", why, " at offset ", i, " (expected e.g. [[1,3,224,224]])");
  };
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip();
  if (i >= text.size() || text[i] != '[') return fail("expected '['");
  ++i;
  while (true) {
    skip();
    if (i >= text.size() || text[i] != '[') return fail("expected '['");
    ++i;
    std::vector<int64_t> shape;
    skip();
    while (i < text.size() && text[i] != ']') {
      skip();
      size_t start = i;
      if (i < text.size() && text[i] == '-') ++i;
      size_t digits = i;
      while (i < text.size() && isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (digits == i || i - digits > 12) return fail("expected a dimension");
      int64_t dim = std::stoll(text.substr(start, i - start));
      // A static shape has no empty or unknown dims (0 or -1 would be read as such).
      if (dim < 1)
        return makeError("--input-shapes '", text, "': dim ", shape.size(), " of shape ", shapes.size() + 1, " is ",
                         dim, "; every dimension must be at least 1");
      shape.push_back(dim);
      skip();
      if (i < text.size() && text[i] == ',') ++i;
      else if (i >= text.size() || text[i] != ']') return fail("expected ',' or ']'");
    }
    if (i >= text.size()) return fail("unterminated shape");
    ++i;
    shapes.push_back(shape);
    skip();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == ']') {
      ++i;
      break;
    }
    return fail("expected ',' or ']'");
  }
  skip();
  if (i != text.size()) return fail("trailing characters");
  return shapes;
}

Status importOnnxFile(const std::string &onnxPath, const std::string &mlirPath, ImportOptions options) {
  auto model = loadModel(onnxPath);
  if (!model) return model.status();
  options.weightFile = weightFileNameFor(mlirPath);
  MLIRContext context;
  auto imported = importModel(context, *model, options);
  if (!imported) return Status(imported.status()).prefix(onnxPath);
  return import::writeTopModule(*imported->module, imported->weights, mlirPath);
}

} // namespace tpu::onnx
