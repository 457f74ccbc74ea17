#include "tools/graph/GraphModel.h"

#include "compiler/Calibration/CalibrationTable.h"
#include "isa/bmodel/Bmodel.h"
#include "tools/graph/BmodelGraph.h"

#include <nlohmann/json.hpp>

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

namespace {

using Json = nlohmann::json;

Result<double> numberAt(const Json &obj, const char *key, const std::string &at, const std::string &origin) {
  auto it = obj.find(key);
  if (it == obj.end()) return makeError(origin, ": missing key '", at, key, "'");
  if (!it->is_number()) return makeError(origin, ": key '", at, key, "' is not a number");
  return it->get<double>();
}

} // namespace

Status annotateStats(GraphModel &graph, const std::string &statsJson, const std::string &origin) {
  Json j = Json::parse(statsJson, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return makeError(origin, ": not a JSON object (tpuc sim --stats)");
  auto clock = numberAt(j, "clock_mhz", "", origin);
  if (!clock) return clock.status();
  auto total = numberAt(j, "total_cycles", "", origin);
  if (!total) return total.status();
  for (const char *key : {"groups", "layers"})
    if (!j.contains(key) || !j[key].is_array()) return makeError(origin, ": missing array '", key, "'");
  graph.clockMhz = *clock;
  graph.totalCycles = *total;
  std::vector<std::pair<double, double>> groups;
  for (size_t i = 0; i < j["groups"].size(); ++i) {
    const std::string at = "groups[" + std::to_string(i) + "].";
    auto start = numberAt(j["groups"][i], "start_cycle", at, origin);
    if (!start) return start.status();
    auto end = numberAt(j["groups"][i], "end_cycle", at, origin);
    if (!end) return end.status();
    groups.emplace_back(*start, *end);
  }
  const bool assignGroups = graph.groupCount == 0;
  if (assignGroups) graph.groupCount = groups.size();
  for (size_t i = 0; i < j["layers"].size(); ++i) {
    const Json &l = j["layers"][i];
    const std::string at = "layers[" + std::to_string(i) + "].";
    if (!l.is_object() || !l.contains("name") || !l["name"].is_string())
      return makeError(origin, ": key '", at, "name' is missing or not a string");
    LayerTime t;
    double counts[2];
    const std::pair<const char *, double *> fields[] = {
        {"start_cycle", &t.startCycle},         {"end_cycle", &t.endCycle},
        {"tiu_busy_cycles", &t.tiuBusyCycles}, {"gdma_busy_cycles", &t.gdmaBusyCycles},
        {"tiu_commands", &counts[0]},           {"gdma_commands", &counts[1]}};
    for (const auto &[key, out] : fields) {
      auto v = numberAt(l, key, at, origin);
      if (!v) return v.status();
      *out = *v;
    }
    int n = graph.find(l["name"].get<std::string>());
    if (n < 0) continue;
    GraphNode &node = graph.nodes[size_t(n)];
    node.time = t;
    node.tiuCommands = uint64_t(counts[0]);
    node.gdmaCommands = uint64_t(counts[1]);
    if (!assignGroups) continue;
    for (size_t g = 0; g < groups.size(); ++g)
      if (t.startCycle >= groups[g].first && t.startCycle < std::max(groups[g].second, groups[g].first + 1)) {
        node.group = int(g);
        break;
      }
  }
  return Status::ok();
}

Status annotateBmodel(GraphModel &graph, const std::string &bmodelPath) {
  auto model = bmodel::readFile(bmodelPath);
  if (!model) return model.status();
  if (model->nets.empty()) return makeError(bmodelPath, ": the bmodel holds no net");
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
