// ONNX control flow: If. A condition known at import takes its branch; one
// known only at run time imports both branches and picks each output with
// top.if on the host (ONNX ops have no side effects, so computing the branch
// not taken changes nothing but time).
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

Result<const Graph *> branch(const Node &n, const std::string &key) {
  const Attribute *a = n.attr(key);
  if (!a || !a->graph) return makeError(n.describe(), ": the ", key, " attribute is missing or not a graph");
  if (a->graph->outputs.size() != n.outputs.size())
    return makeError(n.describe(), ": the ", key, " gives ", a->graph->outputs.size(), " outputs, the node has ",
                     n.outputs.size());
  return a->graph.get();
}

Status importBranch(OnnxImporter &im, const Node &n, const std::string &key, const Graph &g) {
  Status st = im.importSubgraph(g);
  return st ? st : st.prefix(n.describe() + " " + key);
}

Status importIf(OnnxImporter &im, const Node &n) {
  auto thenG = branch(n, "then_branch"), elseG = branch(n, "else_branch");
  if (!thenG) return thenG.status();
  if (!elseG) return elseG.status();
  if (im.constInput(n, 0)) {
    auto cond = im.constFloat(n, 0, "the condition");
    if (!cond) return cond.status();
    const bool taken = *cond != 0;
    const Graph &g = taken ? **thenG : **elseG;
    TPU_RETURN_IF_ERROR(importBranch(im, n, taken ? "then_branch" : "else_branch", g));
    for (size_t i = 0; i < n.outputs.size(); ++i) im.alias(n.outputs[i], g.outputs[i]);
    return Status::ok();
  }
  auto cond = im.operand(n, 0);
  if (!cond) return cond.status();
  TPU_RETURN_IF_ERROR(importBranch(im, n, "then_branch", **thenG));
  TPU_RETURN_IF_ERROR(importBranch(im, n, "else_branch", **elseG));
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i].empty()) continue;
    // A branch value that is an empty constant goes by its shape.
    std::vector<Value> values;
    std::vector<NamedAttribute> attrs;
    const std::string *empty = nullptr;
    for (const auto &[key, g] : {std::pair{"then_empty", *thenG}, std::pair{"else_empty", *elseG}}) {
      const std::string &name = g->outputs[i];
      if (const NpyArray *c = im.constOf(name); c && c->numel() == 0) {
        attrs.push_back(im.ints(key, c->shape));
        empty = &name;
        continue;
      }
      auto v = im.value(name);
      if (!v) return v.status();
      values.push_back(*v);
    }
    if (values.empty()) { // both empty: the output is that constant
      if (im.constOf((*thenG)->outputs[i])->shape != im.constOf((*elseG)->outputs[i])->shape)
        return makeError(n.describe(), ": output ", i, " is an empty constant of another shape in each branch");
      im.alias(n.outputs[i], *empty);
      continue;
    }
    values.insert(values.begin(), *cond);
    auto op = im.build<top::IfOp>(n, values, attrs, 1, n.outputs[i]);
    if (!op) return op.status();
    im.bind(n.outputs[i], op->getOutput());
  }
  return Status::ok();
}

} // namespace

void registerControlFlowOps(OpTable &t) { t.add("If", importIf); }

} // namespace tpu::onnx
