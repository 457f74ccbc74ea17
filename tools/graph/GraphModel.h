// The computation graph `tpuc graph` draws: one node per op (graph inputs
// included), edges for the tensors between them, layer groups, and what is
// known about each node — attributes, calibration threshold, similarity
// between compiler stages, simulated time and command counts. Plain data:
// GraphImport.h builds it from a model file, the annotate* functions add
// what a flow dir or a stats file knows, GraphLayout.h and HtmlGraphPage.h
// draw it.
#pragma once

#include "compiler/Flow/FlowManifest.h"
#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tpu::graph {

// The similarity of a node's tensor between two stages (e.g. "top vs tpu").
struct StageSimilarity {
  std::string stages;
  double cosine = 1, euclidean = 1;
  bool pass = true; // within the stage pair's own tolerance (the flow's)
};

// A node's share of the simulated run (stats JSON `layers[]`).
struct LayerTime {
  double startCycle = 0, endCycle = 0;
  double tiuBusyCycles = 0, gdmaBusyCycles = 0;
  double cycles() const { return endCycle - startCycle; }
};

struct GraphNode {
  std::string name;   // tensor / layer name: the op's location, unique
  std::string opType; // "top.conv", "tpu.add", "input", "layer" (bmodel)
  std::string shape;  // "1x8x16x16"
  std::string dtype;  // "f32", "i8", "ui8"...
  std::vector<std::pair<std::string, std::string>> attributes;
  int group = -1; // layer group (cluster), -1 = none
  std::optional<double> threshold;
  std::vector<StageSimilarity> similarities;
  std::optional<LayerTime> time;
  std::optional<uint64_t> tiuCommands, gdmaCommands;
  // The lowest cosine over the stage pairs, if any was measured.
  std::optional<double> minCosine() const;
};

// The node type of a command group: a bmodel whose commands name no layers is drawn as its groups.
inline constexpr const char *kGroupNodeType = "command group";

struct GraphEdge {
  int from = -1, to = -1;
  std::string tensor; // the producer's tensor (shape in its tooltip)
  // Not a recorded tensor but inferred order: inside a bmodel layer group
  // tensors stay in local memory, so consecutive layers are linked (dashed).
  bool inferred = false;
};

struct GraphModel {
  std::string title;  // the input file's name
  std::string source; // "onnx", "top", "tpu", "bmodel"
  std::vector<GraphNode> nodes; // topological (program) order
  std::vector<GraphEdge> edges;
  size_t groupCount = 0;
  double clockMhz = 0, totalCycles = 0; // from --stats
  std::string chip;                     // a bmodel's chip field ("BM1684X"), when a bmodel was read
  double chipClockMhz = 0;              // its preset's clock (isa::ChipInfo::hwConfig)
  std::string note;                     // what the page cannot show for this model, and why
  double tolerance = 0.99;              // the cosine line of the page

  int find(const std::string &name) const; // node index, -1 when absent
  int addNode(GraphNode node);
};

// From a flow dir: each node's similarities from flow.json and its
// calibration threshold from the flow's table. Names the flow does not know
// stay unannotated.
Status annotateFlow(GraphModel &graph, const flow::FlowManifest &manifest);
// From `tpuc sim --stats` JSON: per-layer time and command counts, and the
// layer groups (a layer belongs to the group its first command ran in) when
// the graph has none yet; a command-group node (a bmodel whose commands name
// no layers) takes its group's time. `origin` names the file in errors.
Status annotateStats(GraphModel &graph, const std::string &statsJson, const std::string &origin);
// From a bmodel (any chip of the registry): each layer's TIU/GDMA command counts and its command group,
// and the chip.
Status annotateBmodel(GraphModel &graph, const std::string &bmodelPath);
// The chip of a bmodel the graph shows, and its preset clock.
void setChip(GraphModel &graph, const bmodel::Model &model);

} // namespace tpu::graph
