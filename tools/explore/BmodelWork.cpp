#include "tools/explore/BmodelWork.h"

#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "memory/GdmaAccess.h"
#include "timing/TiuTiming.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace tpu::explore {

namespace {

// The work of one net, independent of the timing model: per command group its
// command counts and layers (in first-command order), per layer its commands,
// the multiply-accumulates of its TIU commands (recomputed halo rows included)
// and the payload bytes its GDMA commands read from DDR (and how many of them
// from the coefficient area) and write to DDR. A DDR->DDR copy counts on both sides.
Result<nlohmann::ordered_json> netWork(const bmodel::Net &net) {
  using Json = nlohmann::ordered_json;
  const isa::HwConfig hw;
  Json groups = Json::array(), layers = Json::array();
  std::map<std::string, size_t> layerIndex;
  auto layer = [&](const std::string &name) -> Json & {
    auto [it, fresh] = layerIndex.emplace(name, layers.size());
    if (fresh) {
      Json l{{"name", name}};
      for (const char *key :
           {"tiu_commands", "tiu_macs", "gdma_commands", "ddr_read_bytes", "ddr_coeff_read_bytes", "ddr_written_bytes"})
        l[key] = 0;
      layers.push_back(std::move(l));
    }
    return layers[it->second];
  };
  auto add = [](Json &layer, const char *key, uint64_t n) { layer[key] = layer[key].get<uint64_t>() + n; };
  const uint64_t coeffEnd = net.coeffAddr + net.coeff.size();
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const bmodel::CmdGroup &group = net.groups[g];
    Json names = Json::array();
    auto seen = [&](const std::string &name) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    for (size_t i = 0; i < group.tiu.size(); ++i) {
      seen(group.tiuLayer[i]);
      Json &l = layer(group.tiuLayer[i]);
      add(l, "tiu_commands", 1);
      auto cmd = isa::decodeTiu(group.tiu[i].data());
      if (!cmd) return makeError("group ", g, ": TIU command ", i, ": ", cmd.message());
      add(l, "tiu_macs", timing::tiuCost(*cmd, hw).macs);
    }
    for (size_t i = 0; i < group.gdma.size(); ++i) {
      seen(group.gdmaLayer[i]);
      Json &l = layer(group.gdmaLayer[i]);
      add(l, "gdma_commands", 1);
      auto cmd = isa::decodeGdma(isa::GdmaRaw::decode(group.gdma[i].data()));
      if (!cmd) return makeError("group ", g, ": GDMA command ", i, ": ", cmd.message());
      auto plan = sim::planGdma(hw, *cmd);
      if (!plan) return makeError("group ", g, ": GDMA command ", i, ": ", plan.message());
      sim::GdmaAccess access = sim::gdmaAccess(*plan, *cmd);
      if (plan->readsSrc && !plan->src.local) {
        add(l, "ddr_read_bytes", access.read.bytes);
        if (plan->src.addr >= net.coeffAddr && plan->src.addr < coeffEnd)
          add(l, "ddr_coeff_read_bytes", access.read.bytes);
      }
      if (!plan->dst.local) add(l, "ddr_written_bytes", access.write.bytes);
    }
    groups.push_back(Json{{"tiu_commands", group.tiu.size()}, {"gdma_commands", group.gdma.size()}, {"layers", names}});
  }
  return Json{{"name", net.name}, {"coeff_bytes", net.coeff.size()}, {"groups", groups}, {"layers", layers}};
}

} // namespace

Result<std::string> workJson(const bmodel::Model &model) {
  nlohmann::ordered_json nets = nlohmann::ordered_json::array();
  for (const bmodel::Net &net : model.nets) {
    auto work = netWork(net);
    if (!work) return makeError("net ", net.name, ": ", work.message());
    nets.push_back(std::move(*work));
  }
  return nlohmann::ordered_json{{"nets", nets}}.dump(1) + "\n";
}

} // namespace tpu::explore
