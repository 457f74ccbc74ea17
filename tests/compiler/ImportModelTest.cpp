// The ONNX importer on in-memory models: op mapping, names as locations,
// weights, opset-dependent forms, and the one-line errors.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <gtest/gtest.h>

using namespace tpu;
using namespace tpu::onnx;

namespace {

ValueInfo input(const std::string &name, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.dtype = "float32";
  v.onnxType = 1;
  v.hasShape = true;
  v.dims = dims;
  v.dimParams.assign(dims.size(), "");
  return v;
}

Node node(const std::string &op, const std::string &name, std::vector<std::string> ins,
          std::vector<std::string> outs) {
  Node n;
  n.opType = op;
  n.name = name;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  return n;
}

Attribute intAttr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Int;
  a.i = v;
  return a;
}

std::string locName(mlir::Operation *op) {
  auto loc = mlir::dyn_cast<mlir::NameLoc>(op->getLoc());
  return loc ? loc.getName().str() : "";
}

TEST(ImportModel, GemmWithWeightsKeepsOnnxNames) {
  Model m;
  m.opset = 13;
  m.inputs = {input("x", {2, 3})};
  m.outputs = {input("y", {})};
  m.initializers["fc.w"] = NpyArray::from<float>({4, 3}, std::vector<float>(12, 0.5f));
  m.initializers["fc.b"] = NpyArray::from<float>({4}, {1, 2, 3, 4});
  Node gemm = node("Gemm", "fc", {"x", "fc.w", "fc.b"}, {"h"});
  gemm.attrs["transB"] = intAttr(1);
  m.nodes = {gemm, node("Relu", "act", {"h"}, {"y"})};
  mlir::MLIRContext ctx;
  ImportOptions opts;
  opts.weightFile = "w.npz";
  auto r = importModel(ctx, m, opts);
  ASSERT_TRUE(r) << r.message();
  std::vector<std::string> names;
  r->module->walk([&](mlir::Operation *op) {
    if (mlir::isa<top::TopDialect>(op->getDialect())) names.push_back(op->getName().getStringRef().str() + "@" + locName(op));
  });
  EXPECT_EQ(names, (std::vector<std::string>{"top.input@x", "top.weight@fc.w", "top.weight@fc.b", "top.gemm@h",
                                             "top.relu@y"}));
  ASSERT_EQ(r->weights.size(), 2u);
  EXPECT_EQ(r->weights.at("fc.b").values<float>(), (std::vector<float>{1, 2, 3, 4}));
  auto func = *r->module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(func.getFunctionType().getResult(0), mlir::RankedTensorType::get({2, 4}, mlir::Float32Type::get(&ctx)));
  EXPECT_EQ((*r->module)->getAttrOfType<mlir::StringAttr>("top.weight_file").str(), "w.npz");
}

TEST(ImportModel, ListsEveryUnsupportedOp) {
  Model m;
  m.opset = 17;
  m.inputs = {input("x", {2})};
  m.outputs = {input("c", {})};
  m.nodes = {node("Foo", "f1", {"x"}, {"a"}), node("Relu", "r", {"a"}, {"b"}), node("Bar", "b1", {"b"}, {"c"}),
             node("Foo", "f2", {"x"}, {"d"})};
  mlir::MLIRContext ctx;
  auto r = importModel(ctx, m, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "unsupported ONNX ops (opset 17): Bar (node 'b1'); Foo (nodes 'f1', 'f2')");
}

TEST(ImportModel, DynamicInputNeedsShapes) {
  Model m;
  m.opset = 13;
  ValueInfo x = input("images", {-1, 3});
  x.dimParams[0] = "batch";
  m.inputs = {x};
  m.outputs = {input("y", {})};
  m.nodes = {node("Relu", "r", {"images"}, {"y"})};
  mlir::MLIRContext ctx;
  auto r = importModel(ctx, m, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "input 'images' has a dynamic dimension 0 ('batch'); give --input-shapes");
  ImportOptions opts;
  opts.inputShapes = {{5, 3}};
  auto ok = importModel(ctx, m, opts);
  ASSERT_TRUE(ok) << ok.message();
}

TEST(ImportModel, OldSoftmaxFlattensAtAxis) {
  // Softmax-11 with axis=1 on a rank-3 input normalises over dims 1 and 2 together.
  Model m;
  m.opset = 11;
  m.inputs = {input("x", {2, 3, 4})};
  m.outputs = {input("y", {})};
  Node sm = node("Softmax", "sm", {"x"}, {"y"});
  sm.attrs["axis"] = intAttr(1);
  m.nodes = {sm};
  mlir::MLIRContext ctx;
  ImportOptions opts;
  opts.canonicalize = false;
  auto r = importModel(ctx, m, opts);
  ASSERT_TRUE(r) << r.message();
  std::vector<std::string> ops;
  r->module->walk([&](mlir::Operation *op) { ops.push_back(op->getName().getStringRef().str()); });
  EXPECT_EQ(ops, (std::vector<std::string>{"top.input", "top.reshape", "top.softmax", "top.reshape", "func.return",
                                           "func.func", "builtin.module"}));
}

TEST(ImportModel, ConstantInputsAreFrozen) {
  Model m;
  m.opset = 13;
  m.inputs = {input("x", {2, 6}), input("shape", {2})};
  m.inputs[1].dtype = "int64";
  m.outputs = {input("y", {})};
  m.nodes = {node("Reshape", "rs", {"x", "shape"}, {"y"})};
  mlir::MLIRContext ctx;
  auto notConst = importModel(ctx, m, {});
  ASSERT_FALSE(notConst);
  EXPECT_EQ(notConst.message(), "Reshape 'rs': input shape must be a constant (got 'shape' computed at run time)");
  ImportOptions opts;
  opts.constantInputs["shape"] = NpyArray::from<int64_t>({2}, {3, -1});
  auto r = importModel(ctx, m, opts);
  ASSERT_TRUE(r) << r.message();
  auto func = *r->module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(func.getNumArguments(), 1u);
  EXPECT_EQ(func.getFunctionType().getResult(0), mlir::RankedTensorType::get({3, 4}, mlir::Float32Type::get(&ctx)));
}

TEST(ImportModel, BadShapesNameTheNode) {
  Model m;
  m.opset = 13;
  m.inputs = {input("a", {2, 3}), input("b", {4, 5})};
  m.outputs = {input("y", {})};
  m.nodes = {node("MatMul", "mm", {"a", "b"}, {"y"})};
  mlir::MLIRContext ctx;
  auto r = importModel(ctx, m, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "MatMul 'mm': 'y': 'top.matmul' op inner dims differ: [2,3] x [4,5]");
}

TEST(ImportModel, LayerNormStatisticsAreSpelledOut) {
  // With the Mean / InvStdDev outputs used, LayerNormalization becomes primitive ops
  // whose results carry those names; without them it is one top.layer_norm.
  Model m;
  m.opset = 17;
  m.inputs = {input("x", {2, 3, 4})};
  m.outputs = {input("y", {}), input("mean", {}), input("inv", {})};
  m.initializers["s"] = NpyArray::from<float>({3, 4}, std::vector<float>(12, 2.0f));
  Node ln = node("LayerNormalization", "ln", {"x", "s"}, {"y", "mean", "inv"});
  ln.attrs["axis"] = intAttr(1);
  m.nodes = {ln};
  mlir::MLIRContext ctx;
  auto r = importModel(ctx, m, {});
  ASSERT_TRUE(r) << r.message();
  auto func = *r->module->getOps<mlir::func::FuncOp>().begin();
  auto ret = mlir::cast<mlir::func::ReturnOp>(func.getBody().back().getTerminator());
  EXPECT_EQ(locName(ret.getOperand(0).getDefiningOp()), "y");
  EXPECT_TRUE(mlir::isa<top::ReduceMeanOp>(ret.getOperand(1).getDefiningOp()));
  EXPECT_EQ(locName(ret.getOperand(1).getDefiningOp()), "mean");
  EXPECT_TRUE(mlir::isa<top::ReciprocalOp>(ret.getOperand(2).getDefiningOp()));
  EXPECT_EQ(func.getFunctionType().getResult(1), mlir::RankedTensorType::get({2, 1, 1}, mlir::Float32Type::get(&ctx)));

  m.outputs = {input("y", {})};
  m.nodes[0].outputs = {"y"};
  auto plain = importModel(ctx, m, {});
  ASSERT_TRUE(plain) << plain.message();
  auto f2 = *plain->module->getOps<mlir::func::FuncOp>().begin();
  auto ret2 = mlir::cast<mlir::func::ReturnOp>(f2.getBody().back().getTerminator());
  EXPECT_TRUE(mlir::isa<top::LayerNormOp>(ret2.getOperand(0).getDefiningOp()));
}

TEST(ImportModel, HugeFoldedConstantsAreRefused) {
  Model m;
  m.opset = 13;
  m.outputs = {input("y", {})};
  m.initializers["shape"] = NpyArray::from<int64_t>({3}, {100000, 100000, 100000});
  m.nodes = {node("ConstantOfShape", "cos", {"shape"}, {"y"})};
  mlir::MLIRContext ctx;
  auto r = importModel(ctx, m, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "ConstantOfShape 'cos': constant of shape 100000x100000x100000 is too large to fold");
}

TEST(ImportModel, CorruptBytesAreOneError) {
  const char bytes[] = "\x0a\xff\xff\xff\xff\x0f garbage";
  auto r = parseModel(bytes, sizeof bytes, "");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "not a valid ONNX protobuf (corrupt or truncated)");
}

TEST(ImportModel, ParseShapeList) {
  auto s = parseShapeList(" [[1, 3,224,224], [2]] ");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(*s, (std::vector<std::vector<int64_t>>{{1, 3, 224, 224}, {2}}));
  EXPECT_FALSE(parseShapeList("[1,3]"));
  EXPECT_FALSE(parseShapeList("[[1,-3]]"));
  EXPECT_FALSE(parseShapeList("[[1,3]] x"));
  EXPECT_FALSE(parseShapeList("[[99999999999999999999]]"));
}

TEST(ImportModel, WeightFileNameFollowsTheMlirName) {
  EXPECT_EQ(weightFileNameFor("out/model.top.mlir"), "model_top_weights.npz");
  EXPECT_EQ(weightFileNameFor("m"), "m_weights.npz");
}

} // namespace
