// Code generation: a validated Graph -> a bmodel the runtime runs. The ops
// are cut into segments by dynamic programming over cut points, each
// segment's cost being the estimated cycles of its commands (timing library
// + cmd-id schedule, estimateCycles). A segment of one op is compiled
// globally: its output is split into slices along N, C and H (halo rows for
// windows) so every slice fits local memory. A longer segment is a layer
// group: its intermediates stay in local memory and only its inputs and
// output cross DDR, slices along N and H. Loads, computes and stores run as
// a software pipeline (double-buffered when it fits, so GDMA overlaps TIU);
// one command group per segment. An op whose one-row slice cannot fit is an
// error naming the op and the bytes it needs. Addresses: AddressAssigner.h.
// The layout rules: docs/codegen.md.
#pragma once

#include "compiler/Backend/CommandBuilder.h"
#include "compiler/Backend/Graph.h"
#include "isa/HwConfig.h"
#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace tpu::backend {

struct Options {
  isa::HwConfig hw;
  bool doubleBuffer = true; // false: one buffer set per op, loads wait for the previous compute
  bool layerGroups = true;  // false (--no-layer-group): every op alone, load/compute/store
  unsigned maxGroupOps = 8; // longest layer group the search considers
  // Explicit segments instead of the search (tests, experiments): the index
  // of each segment's first op, starting with 0, increasing.
  std::vector<size_t> segmentStarts;
};

// What the compiler decided for one op, and its estimated time.
struct OpReport {
  std::string name;          // op name, or "first+...+last" for a layer group
  size_t ops = 1;            // ops in the segment
  OpKind kind = OpKind::Relu;
  uint64_t slices = 0;       // TIU slices (0 for pure-GDMA ops)
  int64_t nSlice = 0, cSlice = 0, hSlice = 0; // slice extents (output n, c, h)
  unsigned buffers = 1;      // 2 = double-buffered
  uint64_t lmemBytes = 0;    // per lane
  uint64_t tiuCommands = 0, gdmaCommands = 0;
  double cycles = 0;         // estimated (timing library + cmd-id schedule)
};

struct CompileReport {
  std::vector<OpReport> ops;
  uint64_t coeffBytes = 0, neuronBytes = 0, activationBytesNoReuse = 0;
  double totalCycles = 0;
  std::string text() const; // the human-readable report, one line per op
};

Result<bmodel::Model> compileToBmodel(const Graph &g, const Options &opt,
                                      CompileReport *report = nullptr);
Status writeBmodel(const Graph &g, const Options &opt, const std::string &path,
                   CompileReport *report = nullptr);

// One line comparing the estimated cycles with layer groups (`grouped`,
// from a compile with opt.layerGroups) against op by op, compiling the
// latter: "layer groups: 13 segments, 23522100 cycles vs 58117100 op by op
// (59.5% less)".
Result<std::string> layerGroupGain(const Graph &g, const Options &opt, const CompileReport &grouped);

// Estimated cycles of one command group: each engine runs its queue in
// order; a command starts when its engine is free and the other engine has
// completed the id it waits for; durations from timing/. DDR
// sharing between engines is ignored (one GDMA engine).
Result<double> estimateCycles(const CommandBuilder::Group &group, const isa::HwConfig &hw);

} // namespace tpu::backend
