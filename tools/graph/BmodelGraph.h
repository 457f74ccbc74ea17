// The graph of a bmodel, from what the container records: the net's input
// and output tensors, the layer name of every command (net_profile) and the
// command groups. Layers are nodes in the order they first appear; a layer
// belongs to the group of its first command. Edges come from global-memory
// dataflow: a GDMA load of one layer reading bytes that an earlier GDMA
// store of another layer (or the net input) wrote. Inside a layer group the
// tensors stay in local memory, which the bmodel does not record, so
// consecutive layers of a group are linked as inferred (dashed) edges.
#pragma once

#include "isa/bmodel/Model.h"
#include "support/Status.h"
#include "tools/graph/GraphModel.h"

#include <string>
#include <vector>

namespace tpu::graph {

struct BmodelLayer {
  std::string name;
  int group = 0;
  uint64_t tiuCommands = 0, gdmaCommands = 0;
};

// Every named layer of `net`: groups in order, inside a group by the
// program order (isa::programOrder) of the layer's first TIU command.
// Errors: a group whose queues cannot be ordered.
Result<std::vector<BmodelLayer>> bmodelLayers(const bmodel::Net &net);

// `origin` names the file in errors (a GDMA command that does not decode).
Result<GraphModel> bmodelGraph(const bmodel::Net &net, const std::string &origin);

} // namespace tpu::graph
