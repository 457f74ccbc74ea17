#include "tools/graph/GraphImport.h"

#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "isa/bmodel/Bmodel.h"
#include "tools/graph/BmodelGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace tpu::graph {
namespace {

template <typename T> std::string printed(T thing) {
  std::string s;
  llvm::raw_string_ostream os(s);
  thing.print(os);
  return os.str();
}

// Attribute values can be long (multiplier tables, LUTs): the panel shows
// the start.
std::string clipped(std::string text) {
  constexpr size_t kMax = 160;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

std::string locName(mlir::Location loc) {
  if (auto nl = llvm::dyn_cast<mlir::NameLoc>(loc)) return nl.getName().str();
  if (auto fl = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fl.getLocations())
      if (auto n = llvm::dyn_cast<mlir::NameLoc>(l)) return n.getName().str();
  return "";
}

// Shape, dtype and (Tpu int8) scale of a value's type.
void describeType(mlir::Type type, GraphNode &node) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!ranked) {
    node.dtype = printed(type);
    return;
  }
  node.shape = llvm::join(llvm::map_range(ranked.getShape(), [](int64_t d) { return std::to_string(d); }), "x");
  node.dtype = printed(ranked.getElementType());
  if (ranked.getEncoding()) node.attributes.emplace_back("scale", printed(ranked.getEncoding()));
}

bool isOperandOnly(mlir::Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  return name.ends_with(".weight") || name.ends_with(".none") || op->hasTrait<mlir::OpTrait::IsTerminator>();
}

} // namespace

GraphModel moduleGraph(mlir::ModuleOp module, const std::string &source) {
  GraphModel graph;
  graph.source = source;
  llvm::DenseMap<mlir::Value, int> producer;
  std::set<std::string> used;
  auto unique = [&](std::string base) {
    std::string name = base;
    for (int i = 1; used.count(name); ++i) name = base + "_" + std::to_string(i);
    used.insert(name);
    return name;
  };
  module.walk([&](mlir::func::FuncOp func) {
    auto inputNames = func->getAttrOfType<mlir::ArrayAttr>(top::kInputNamesAttr);
    for (mlir::BlockArgument arg : func.getArguments()) {
      GraphNode node;
      if (inputNames && inputNames.size() == func.getNumArguments())
        if (auto s = llvm::dyn_cast<mlir::StringAttr>(inputNames[arg.getArgNumber()])) node.name = s.str();
      if (node.name.empty()) node.name = "arg" + std::to_string(arg.getArgNumber());
      node.name = unique(node.name);
      node.opType = "input";
      describeType(arg.getType(), node);
      producer[arg] = graph.addNode(std::move(node));
    }
    func.walk([&](mlir::Operation *op) {
      if (op == func.getOperation() || isOperandOnly(op) || op->getNumResults() == 0) return;
      // top.input only forwards its argument: the argument is the node.
      if (op->getName().getStringRef() == "top.input" && op->getNumOperands() == 1 &&
          producer.count(op->getOperand(0))) {
        producer[op->getResult(0)] = producer[op->getOperand(0)];
        return;
      }
      GraphNode node;
      std::string base = locName(op->getLoc());
      node.name = unique(base.empty() ? op->getName().stripDialect().str() : base);
      node.opType = op->getName().getStringRef().str();
      describeType(op->getResult(0).getType(), node);
      for (const mlir::NamedAttribute &a : op->getAttrs())
        node.attributes.emplace_back(a.getName().str(), clipped(printed(a.getValue())));
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        mlir::Operation *def = op->getOperand(i).getDefiningOp();
        if (def && def->getName().getStringRef().ends_with(".weight"))
          node.attributes.emplace_back("operand " + std::to_string(i),
                                       "weight " + locName(def->getLoc()) + " " + printed(def->getResult(0).getType()));
      }
      int id = graph.addNode(std::move(node));
      for (mlir::Value v : op->getOperands()) {
        auto it = producer.find(v);
        if (it == producer.end()) continue;
        graph.edges.push_back({it->second, id, graph.nodes[size_t(it->second)].name, false});
      }
      for (mlir::Value r : op->getResults()) producer[r] = id;
    });
  });
  return graph;
}

Result<GraphModel> loadGraph(const std::string &path, const ImportOptions &options) {
  if (!llvm::sys::fs::exists(path)) return makeError(path, ": no such file");
  if (!llvm::sys::fs::is_regular_file(path)) return makeError(path, ": not a file");
  llvm::StringRef name = llvm::sys::path::filename(path);
  GraphModel graph;
  if (name.ends_with(".bmodel")) {
    auto model = bmodel::readFile(path, nullptr, bmodel::ChipScope::AnyKnown);
    if (!model) return model.status();
    if (model->nets.empty()) return makeError(path, ": the bmodel holds no net");
    auto g = bmodelGraph(model->nets[0], path);
    if (!g) return g.status();
    graph = g.take();
    setChip(graph, *model);
    if (!graph.nodes.empty() && std::any_of(graph.nodes.begin(), graph.nodes.end(),
                                            [](const GraphNode &n) { return n.opType == kGroupNodeType; }))
      graph.note = "this " + model->chip +
                   " bmodel's commands name no layers: its nodes are its command groups, in program order "
                   "(time per group from --stats)";
  } else if (name.ends_with(".onnx")) {
    auto model = onnx::loadModel(path);
    if (!model) return model.status();
    mlir::MLIRContext context;
    onnx::ImportOptions io;
    io.inputShapes = options.inputShapes;
    auto imported = onnx::importModel(context, *model, io);
    if (!imported) return makeError(path, ": ", imported.message());
    graph = moduleGraph(*imported->module, "onnx");
  } else if (name.ends_with(".mlir")) {
    mlir::MLIRContext context;
    context.getOrLoadDialect<tpuir::TpuDialect>();
    auto module = top::loadTopModule(context, path);
    if (!module) return module.status();
    graph = moduleGraph(**module, name.ends_with(".tpu.mlir") ? "tpu" : "top");
  } else {
    return makeError(path, ": unknown model type (expected .onnx, .top.mlir, .tpu.mlir or .bmodel)");
  }
  graph.title = name.str();
  return graph;
}

} // namespace tpu::graph
