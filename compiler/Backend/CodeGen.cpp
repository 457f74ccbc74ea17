#include "compiler/Backend/CodeGen.h"

#include "compiler/Backend/Emit.h"

#include "arith/IntArith.h"
#include "compiler/Backend/AddressAssigner.h"
#include "compiler/Backend/LmemAllocator.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/Ops/Cpu.h"
#include "isa/ProgramOrder.h"
#include "isa/bmodel/Bmodel.h"
#include "timing/GdmaTiming.h"
#include "timing/Schedule.h"
#include "timing/TiuTiming.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

namespace tpu::backend {

namespace {

using emit::Emitter;
using emit::emitSegment;

// Limits of the command fields an op's parameters go into: the kind's own
// (OpImpl::encodable), then every input's dimensions (a view and a host op
// issue no command).
Status checkEncodable(const Graph &g, const Op &op) {
  if (auto encodable = opImpl(op.kind).encodable) TPU_RETURN_IF_ERROR(encodable(g, op));
  if (opKindInfo(op.kind).sharesInputBytes || opImpl(op.kind).runsOnHost()) return Status::ok();
  for (int t : op.inputs) {
    auto s = g.tensors[t].nchw();
    for (int64_t d : s)
      if (d > kMaxDim) return makeError("dimension ", d, " of '", g.tensors[t].name, "' exceeds ", kMaxDim);
  }
  return Status::ok();
}

bmodel::DataType bmodelType(DType t) {
  switch (t) {
  case DType::F32: return bmodel::DataType::Float32;
  case DType::I8: return bmodel::DataType::Int8;
  case DType::U8: return bmodel::DataType::Uint8;
  case DType::I16: return bmodel::DataType::Int16;
  case DType::I32: return bmodel::DataType::Int32;
  case DType::F16:
  case DType::BF16:
    break; // refused by compileToBmodel
  }
  return bmodel::DataType::Float32;
}

bmodel::Tensor ioTensor(const Graph &g, const AddressMap &am, int t) {
  const Tensor &x = g.tensors[t];
  bmodel::Tensor d;
  d.name = x.name, d.dtype = bmodelType(x.dtype);
  d.storeMode = stored4N(x) ? bmodel::StoreMode::N4 : bmodel::StoreMode::N1;
  d.deviceAddr = am.addr[t];
  for (int64_t v : x.shape) d.shape.push_back(uint64_t(v));
  d.size = activationBytes(x);
  d.scale = x.dtype == DType::F32 ? 1.0f : x.scale;
  return d;
}

} // namespace

Result<double> estimateCycles(const CommandBuilder::Group &group, const isa::HwConfig &hw) {
  std::vector<isa::SyncIds> tiuIds, gdmaIds;
  for (const auto &c : group.tiu) tiuIds.push_back({c.cmdIdTpu, c.cmdIdGdma});
  for (const auto &c : group.gdma) gdmaIds.push_back({c.cmdId, c.eng0SyncId});
  auto order = isa::programOrder(tiuIds, gdmaIds);
  if (!order) return order.status();
  std::vector<timing::ScheduledCommand> tiu, gdma;
  for (size_t i = 0; i < group.tiu.size(); ++i) {
    const uint16_t wait = tiuIds[i].waitId, previous = i ? tiuIds[i - 1].waitId : 0;
    tiu.push_back({wait, timing::syncCost(wait, previous, hw) + double(timing::cycles(group.tiu[i], hw))});
  }
  const double bw = timing::ddrBytesPerCycle(hw);
  for (size_t i = 0; i < group.gdma.size(); ++i) {
    auto cost = timing::gdmaCost(group.gdma[i], hw);
    if (!cost) return cost.status();
    const uint16_t wait = gdmaIds[i].waitId, previous = i ? gdmaIds[i - 1].waitId : 0;
    gdma.push_back({wait, timing::syncCost(wait, previous, hw) + cost->cycles(bw)});
  }
  return timing::scheduleCycles(*order, tiu, gdma);
}

std::string CompileReport::text() const {
  std::ostringstream os;
  size_t groups = 0;
  for (const OpReport &r : ops) groups += r.ops > 1;
  os << "code generation: " << ops.size() << " segments (" << groups << " layer groups), coeff " << coeffBytes << " bytes, neuron "
     << neuronBytes << " bytes (" << activationBytesNoReuse << " without reuse)\n";
  char line[256];
  for (const OpReport &r : ops) {
    // A group's name joins all its outputs; keep the line readable (and whole:
    // the fixed buffer must never cut off the numbers or the newline).
    std::string name = r.name.size() <= 48 ? r.name
                                           : r.name.substr(0, 22) + "..." + r.name.substr(r.name.size() - 23);
    std::snprintf(line, sizeof line, "  %-14s %-48s slices %4llu (n %lld c %lld h %lld) x%u  lmem %7llu B  tiu %5llu gdma %5llu  ~%.0f cycles\n",
                  opKindName(r.kind), name.c_str(), (unsigned long long)r.slices, (long long)r.nSlice,
                  (long long)r.cSlice, (long long)r.hSlice, r.buffers, (unsigned long long)r.lmemBytes,
                  (unsigned long long)r.tiuCommands, (unsigned long long)r.gdmaCommands, r.cycles);
    os << line;
  }
  std::snprintf(line, sizeof line, "estimated total: %.0f cycles\n", totalCycles);
  os << line;
  return os.str();
}

Result<bmodel::Model> compileToBmodel(const Graph &g, const Options &opt, CompileReport *report) {
  TPU_RETURN_IF_ERROR(g.validate());
  for (const Tensor &t : g.tensors)
    if (isHalf(t.dtype))
      return makeError("tensor '", t.name, "' is ", dtypeName(t.dtype), ": the BM1684 has no 16-bit float arithmetic");
  TPU_RETURN_IF_ERROR(opt.hw.validate());
  for (const Op &op : g.ops) {
    Status st = checkEncodable(g, op);
    if (!st) return st.prefix(std::string(opKindName(op.kind)) + " '" + op.name + "'");
  }
  // Op-by-op liveness while the segments are searched (addresses do not
  // change a segment's cost); the final placement follows the segments.
  auto trialAm = assignAddresses(g, opt.hw);
  if (!trialAm) return trialAm.status();
  // Emits ops [i, j] as one command group of `cb` and fills its report.
  auto emitInto = [&](const AddressMap &map, CommandBuilder &cb, size_t i, size_t j, OpReport &r) -> Status {
    Emitter se{g, opt, opt.hw, map, &cb};
    const Op &first = g.ops[i];
    r.name = first.name, r.kind = first.kind, r.ops = j - i + 1;
    for (size_t k = i + 1; k <= j; ++k) r.name += "+" + g.ops[k].name;
    cb.beginGroup();
    Status st = emitSegment(se, i, j, r);
    if (!st)
      return st.prefix(j == i ? std::string(opKindName(first.kind)) + " '" + first.name + "'"
                              : "layer group '" + r.name + "'");
    const auto &grp = cb.groups().back();
    r.tiuCommands = grp.tiu.size(), r.gdmaCommands = grp.gdma.size();
    auto cyc = estimateCycles(grp, opt.hw);
    if (!cyc) return Status(cyc.status()).prefix("'" + r.name + "'");
    r.cycles = *cyc;
    return Status::ok();
  };
  // Dynamic programming over cut points: best[j] = cheapest way to run ops
  // [0, j); a segment's cost is its estimated cycles.
  const size_t M = g.ops.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(M + 1, inf);
  std::vector<size_t> from(M + 1, 0);
  best[0] = 0;
  const size_t maxLen = opt.layerGroups ? std::max(1u, opt.maxGroupOps) : 1;
  auto onHost = [&](size_t k) { return opImpl(g.ops[k].kind).runsOnHost(); };
  for (size_t j = 0; j < M && opt.segmentStarts.empty(); ++j)
    for (size_t len = 1; len <= std::min(maxLen, j + 1); ++len) {
      const size_t i = j + 1 - len;
      if (best[i] == inf) continue;
      // A host op is a segment of its own (a CPU sub-net), costing no cycles.
      if (onHost(j)) {
        best[j + 1] = best[i], from[j + 1] = i;
        break;
      }
      if (len > 1 && onHost(i)) break; // every longer segment holds it too
      CommandBuilder trial;
      OpReport r;
      Status st = emitInto(*trialAm, trial, i, j, r);
      if (!st) {
        if (len == 1) return st; // an op that cannot be compiled at all
        continue;                // not a valid group: other cuts remain
      }
      if (best[i] + r.cycles < best[j + 1]) best[j + 1] = best[i] + r.cycles, from[j + 1] = i;
    }
  std::vector<std::pair<size_t, size_t>> segments;
  for (size_t j = M; j > 0; j = from[j]) segments.emplace_back(from[j], j - 1);
  std::reverse(segments.begin(), segments.end());
  if (!opt.segmentStarts.empty()) {
    segments.clear();
    for (size_t k = 0; k < opt.segmentStarts.size(); ++k) {
      size_t i = opt.segmentStarts[k], j = k + 1 < opt.segmentStarts.size() ? opt.segmentStarts[k + 1] : M;
      if (j <= i || j > M || (k == 0 && i != 0))
        return makeError("segmentStarts must increase from 0 and stay below the op count ", M);
      segments.emplace_back(i, j - 1);
    }
  }

  for (auto [i, j] : segments)
    for (size_t k = i; k <= j && i < j; ++k)
      if (onHost(k)) return makeError("segment [", i, ", ", j, "] holds the host op '", g.ops[k].name, "'");

  auto am = assignAddresses(g, opt.hw, segments);
  if (!am) return am.status();
  CommandBuilder b;
  CompileReport rep;
  std::vector<bmodel::Subnet> subnets;
  size_t groupCount = 0;
  for (auto [i, j] : segments) {
    OpReport r;
    if (onHost(i)) {
      const Op &op = g.ops[i];
      r.name = op.name, r.kind = op.kind;
      rep.ops.push_back(r);
      bmodel::Subnet cpu;
      cpu.mode = bmodel::Subnet::Mode::Cpu;
      cpu.cpuOpType = op.params<CpuParams>().call.code;
      cpu.cpuParam = op.params<CpuParams>().call.serialize();
      for (int t : op.inputs) cpu.inputs.push_back(ioTensor(g, *am, t));
      cpu.outputs.push_back(ioTensor(g, *am, op.output));
      subnets.push_back(std::move(cpu));
      continue;
    }
    TPU_RETURN_IF_ERROR(emitInto(*am, b, i, j, r));
    rep.totalCycles += r.cycles;
    rep.ops.push_back(r);
    // Consecutive chip segments share one TPU sub-net; a segment without
    // commands (a reshape) has no group (CommandBuilder::finish drops it).
    if (b.groups().back().tiu.empty() && b.groups().back().gdma.empty()) continue;
    if (subnets.empty() || subnets.back().mode != bmodel::Subnet::Mode::Tpu) {
      subnets.emplace_back();
      subnets.back().firstGroup = groupCount;
    }
    ++subnets.back().groupCount, ++groupCount;
  }
  auto groups = b.finish();
  if (!groups) return groups.status();

  bmodel::Model m;
  m.type = bmodel::kToolkitModelType;
  m.version = "1";
  bmodel::Net net;
  net.name = g.name;
  for (int t : g.inputs) net.inputs.push_back(ioTensor(g, *am, t));
  for (int t : g.outputs) net.outputs.push_back(ioTensor(g, *am, t));
  net.ctxAddr = am->neuronAddr, net.ctxSize = am->neuronSize;
  net.coeffAddr = am->coeffAddr, net.coeff = am->coeff;
  net.groups = groups.take();
  // Without host ops the net is one TPU step, written without sub-nets.
  if (std::any_of(subnets.begin(), subnets.end(),
                  [](const bmodel::Subnet &s) { return s.mode == bmodel::Subnet::Mode::Cpu; }))
    net.subnets = std::move(subnets);
  m.neuronSize = am->neuronSize;
  m.nets.push_back(std::move(net));
  rep.coeffBytes = am->coeffSize, rep.neuronBytes = am->neuronSize;
  rep.activationBytesNoReuse = am->activationTotal;
  if (report) *report = std::move(rep);
  return m;
}

Result<std::string> layerGroupGain(const Graph &g, const Options &opt, const CompileReport &grouped) {
  Options single = opt;
  single.layerGroups = false;
  single.segmentStarts.clear();
  CompileReport ops;
  auto m = compileToBmodel(g, single, &ops);
  if (!m) return m.status();
  char line[200];
  double gain = ops.totalCycles > 0 ? 100.0 * (ops.totalCycles - grouped.totalCycles) / ops.totalCycles : 0;
  std::snprintf(line, sizeof line, "layer groups: %zu segments, %.0f cycles vs %.0f op by op (%.1f%% %s)",
                grouped.ops.size(), grouped.totalCycles, ops.totalCycles, gain >= 0 ? gain : -gain,
                gain >= 0 ? "less" : "more");
  return std::string(line);
}

Status writeBmodel(const Graph &g, const Options &opt, const std::string &path, CompileReport *report) {
  auto m = compileToBmodel(g, opt, report);
  if (!m) return m.status();
  return bmodel::writeFile(*m, path);
}

} // namespace tpu::backend

