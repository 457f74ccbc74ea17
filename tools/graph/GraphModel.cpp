#include "tools/graph/GraphModel.h"

#include "compiler/Calibration/CalibrationTable.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"
#include "tools/explore/SimStats.h"
#include "tools/graph/BmodelGraph.h"


#include <algorithm>
#include <cmath>

namespace tpu::graph {

std::optional<double> GraphNode::minCosine() const {
  std::optional<double> m;
  for (const StageSimilarity &s : similarities)
    if (!m || s.cosine < *m || std::isnan(s.cosine)) m = s.cosine;
  return m;
}

int GraphModel::find(const std::string &name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return int(i);
  return -1;
}

int GraphModel::addNode(GraphNode node) {
  nodes.push_back(std::move(node));
  return int(nodes.size()) - 1;
}

Status annotateFlow(GraphModel &graph, const flow::FlowManifest &manifest) {
  for (const flow::TensorComparisons &c : manifest.comparisons)
    for (const kernels::CompareRow &row : c.rows) {
      int n = graph.find(row.name);
      if (n < 0) continue;
      graph.nodes[size_t(n)].similarities.push_back(
          {c.reference + " vs " + c.candidate, row.stats.cosine, row.stats.euclidean, row.pass});
    }
  const std::string cali = manifest.path("cali");
  if (cali.empty()) return Status::ok();
  auto table = calib::CalibrationTable::load(cali);
  if (!table) return table.status();
  for (GraphNode &node : graph.nodes) {
    auto it = table->tensors.find(node.name);
    if (it != table->tensors.end()) node.threshold = it->second.threshold;
  }
  return Status::ok();
}

Status annotateStats(GraphModel &graph, const std::string &statsJson, const std::string &origin) {
  auto stats = explore::parseSimStats(statsJson, origin);
  if (!stats) return stats.status();
  graph.clockMhz = stats->clockMhz;
  graph.totalCycles = stats->totalCycles;
  const bool assignGroups = graph.groupCount == 0;
  if (assignGroups) graph.groupCount = stats->groups.size();
  for (GraphNode &node : graph.nodes)
    if (node.opType == kGroupNodeType && node.group >= 0 && size_t(node.group) < stats->groups.size()) {
      const explore::StatsSpan &g = stats->groups[size_t(node.group)];
      node.time = {g.start, g.end, g.busy[0], g.busy[1]};
    }
  for (const explore::StatsSpan &layer : stats->layers) {
    int n = graph.find(layer.name);
    if (n < 0) continue;
    GraphNode &node = graph.nodes[size_t(n)];
    node.time = {layer.start, layer.end, layer.busy[0], layer.busy[1]};
    node.tiuCommands = uint64_t(layer.commands[0]);
    node.gdmaCommands = uint64_t(layer.commands[1]);
    if (!assignGroups) continue;
    for (size_t g = 0; g < stats->groups.size(); ++g) {
      const explore::StatsSpan &group = stats->groups[g];
      if (layer.start >= group.start && layer.start < std::max(group.end, group.start + 1)) {
        node.group = int(g);
        break;
      }
    }
  }
  return Status::ok();
}

void setChip(GraphModel &graph, const bmodel::Model &model) {
  graph.chip = model.chip;
  if (const isa::ChipInfo *info = isa::chipByBmodelName(model.chip)) graph.chipClockMhz = info->hwConfig().clockMhz;
}

Status annotateBmodel(GraphModel &graph, const std::string &bmodelPath) {
  auto model = bmodel::readFile(bmodelPath, nullptr, bmodel::ChipScope::AnyKnown);
  if (!model) return model.status();
  if (model->nets.empty()) return makeError(bmodelPath, ": the bmodel holds no net");
  setChip(graph, *model);
  graph.groupCount = model->nets[0].groups.size();
  auto layers = bmodelLayers(model->nets[0]);
  if (!layers) return makeError(bmodelPath, ": ", layers.message());
  for (const BmodelLayer &layer : *layers) {
    int n = graph.find(layer.name);
    if (n < 0) continue;
    GraphNode &node = graph.nodes[size_t(n)];
    node.group = layer.group;
    node.tiuCommands = layer.tiuCommands;
    node.gdmaCommands = layer.gdmaCommands;
  }
  return Status::ok();
}

} // namespace tpu::graph
