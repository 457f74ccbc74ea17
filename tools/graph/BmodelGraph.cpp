#include "tools/graph/BmodelGraph.h"

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "isa/ProgramOrder.h"
#include "memory/GdmaAccess.h"

#include <algorithm>
#include <map>
#include <set>

namespace tpu::graph {

Result<std::vector<BmodelLayer>> bmodelLayers(const bmodel::Net &net) {
  std::vector<BmodelLayer> layers;
  std::map<std::string, size_t> index;
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const bmodel::CmdGroup &group = net.groups[g];
    auto order = isa::programOrder(group.tiu, group.gdma);
    if (!order) return makeError("group ", g, ": ", order.message());
    // A layer's place is its first TIU command (its compute; weight loads of
    // later layers come early), else its first GDMA command.
    std::map<std::string, std::pair<bool, size_t>> first; // name -> (has no TIU, position)
    for (size_t p = 0; p < order->size(); ++p) {
      const isa::OrderedCommand &c = (*order)[p];
      const bool tiu = c.engine == isa::Engine::Tiu;
      const std::string &name = tiu ? group.tiuLayer[c.index] : group.gdmaLayer[c.index];
      if (name.empty()) continue;
      auto [it, added] = first.emplace(name, std::pair{!tiu, p});
      if (!added && tiu && it->second.first) it->second = {false, p};
      auto [slot, isNew] = index.emplace(name, layers.size());
      if (isNew) layers.push_back({name, int(g), 0, 0});
      ++(tiu ? layers[slot->second].tiuCommands : layers[slot->second].gdmaCommands);
    }
    // Sort this group's new layers by their place.
    auto begin = std::find_if(layers.begin(), layers.end(), [&](const BmodelLayer &l) { return l.group == int(g); });
    std::stable_sort(begin, layers.end(), [&](const BmodelLayer &a, const BmodelLayer &b) {
      return first[a.name].second < first[b.name].second;
    });
    for (auto it = begin; it != layers.end(); ++it) index[it->name] = size_t(it - layers.begin());
  }
  return layers;
}

namespace {

const char *dtypeName(bmodel::DataType t) {
  static const char *names[bmodel::kDataTypeCount] = {"f32", "f16", "i8", "ui8", "i16", "ui16", "i32", "ui32"};
  return unsigned(t) < bmodel::kDataTypeCount ? names[unsigned(t)] : "?";
}

std::string shapeText(const std::vector<uint64_t> &shape) {
  std::string s;
  for (uint64_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// [lo, hi) bytes of a global-memory side of a GDMA command.
struct ByteRange {
  uint64_t lo = 0, hi = 0;
  bool overlaps(const ByteRange &o) const { return lo < o.hi && o.lo < hi; }
};

ByteRange globalRange(const sim::GdmaView &v) {
  uint64_t last = 0;
  for (size_t d = 0; d < 4; ++d)
    if (v.shape[d] > 0) last += uint64_t(v.shape[d] - 1) * v.stride[d];
  return {v.addr, v.addr + (last + 1) * v.bytes};
}

struct Write {
  ByteRange range;
  int node;
};

// A net input's or output's node: its name, shape and type.
GraphNode tensorNode(const bmodel::Tensor &t, const char *opType) {
  GraphNode node;
  node.name = t.name;
  node.opType = opType;
  node.shape = shapeText(t.shape);
  node.dtype = dtypeName(t.dtype);
  return node;
}

// A net whose commands name no layers: its inputs, one node per command group, its outputs, chained in
// program order (what the container records of the dataflow between groups needs the chip's GDMA decoding).
GraphModel groupGraph(const bmodel::Net &net) {
  GraphModel graph;
  graph.source = "bmodel";
  graph.groupCount = net.groups.size();
  std::vector<int> previous;
  for (const bmodel::Tensor &t : net.inputs) previous.push_back(graph.addNode(tensorNode(t, "input")));
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const bmodel::CmdGroup &group = net.groups[g];
    GraphNode node;
    node.name = "group " + std::to_string(g);
    node.opType = kGroupNodeType;
    node.group = int(g);
    node.tiuCommands = group.tiu.empty() ? group.tiuStreamCount : group.tiu.size();
    node.gdmaCommands = group.gdma.empty() ? group.gdmaStreamCount : group.gdma.size();
    int n = graph.addNode(std::move(node));
    for (int p : previous) graph.edges.push_back({p, n, graph.nodes[size_t(p)].name, true});
    previous = {n};
  }
  for (const bmodel::Tensor &t : net.outputs) {
    int n = graph.addNode(tensorNode(t, "output"));
    for (int p : previous) graph.edges.push_back({p, n, graph.nodes[size_t(p)].name, true});
  }
  return graph;
}

} // namespace

Result<GraphModel> bmodelGraph(const bmodel::Net &net, const std::string &origin) {
  bool namesLayers = false;
  for (const bmodel::CmdGroup &g : net.groups)
    for (const auto *names : {&g.tiuLayer, &g.gdmaLayer})
      for (const std::string &n : *names) namesLayers |= !n.empty();
  if (!namesLayers && !net.groups.empty()) return groupGraph(net);
  GraphModel graph;
  graph.source = "bmodel";
  graph.groupCount = net.groups.size();
  std::vector<Write> writes; // in program order
  for (const bmodel::Tensor &t : net.inputs) {
    int n = graph.addNode(tensorNode(t, "input"));
    writes.push_back({{t.deviceAddr, t.deviceAddr + t.size}, n});
  }
  auto layers = bmodelLayers(net);
  if (!layers) return makeError(origin, ": ", layers.message());
  for (const BmodelLayer &layer : *layers) {
    GraphNode node;
    node.name = layer.name;
    node.opType = "layer";
    node.group = layer.group;
    node.tiuCommands = layer.tiuCommands;
    node.gdmaCommands = layer.gdmaCommands;
    graph.addNode(std::move(node));
  }
  for (const bmodel::Tensor &t : net.outputs) {
    int n = graph.find(t.name);
    if (n < 0) continue;
    graph.nodes[size_t(n)].shape = shapeText(t.shape);
    graph.nodes[size_t(n)].dtype = dtypeName(t.dtype);
  }

  const isa::HwConfig hw;
  std::set<std::pair<int, int>> linked;
  auto link = [&](int from, int to, bool inferred) {
    if (from == to || !linked.insert({from, to}).second) return;
    graph.edges.push_back({from, to, graph.nodes[size_t(from)].name, inferred});
  };
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const bmodel::CmdGroup &group = net.groups[g];
    for (size_t i = 0; i < group.gdma.size(); ++i) {
      int node = graph.find(group.gdmaLayer[i]);
      if (node < 0) continue;
      auto cmd = isa::decodeGdma(isa::GdmaRaw::decode(group.gdma[i].data()));
      if (!cmd) return makeError(origin, ": group ", g, ": GDMA command ", i, ": ", cmd.message());
      auto plan = sim::planGdma(hw, *cmd);
      if (!plan) return makeError(origin, ": group ", g, ": GDMA command ", i, ": ", plan.message());
      if (plan->readsSrc && !plan->src.local) {
        ByteRange read = globalRange(plan->src);
        for (size_t w = writes.size(); w-- > 0;)
          if (writes[w].range.overlaps(read)) {
            link(writes[w].node, node, false);
            break;
          }
      }
      if (!plan->dst.local) writes.push_back({globalRange(plan->dst), node});
    }
  }
  // Layers of one group: chained in program order (their tensors are local).
  for (size_t a = 0; a + 1 < graph.nodes.size(); ++a) {
    const GraphNode &x = graph.nodes[a], &y = graph.nodes[a + 1];
    if (x.opType == "layer" && y.opType == "layer" && x.group == y.group) link(int(a), int(a + 1), true);
  }
  return graph;
}

} // namespace tpu::graph
